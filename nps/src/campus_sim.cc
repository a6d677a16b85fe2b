// The campus file, the campus's world and its simulation (campus_sim.h).
#include "piranha/nps/campus_sim.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <set>
#include <tuple>
#include <unordered_map>

#include "piranha/base/yaml_reader.h"
#include "piranha/nps/node_types.h"
#include "piranha/nps/program.h"
#include "piranha/nps/simulate.h"
#include "piranha/scheduler/pool_model.h"
#include "piranha/scheduler/random.h"
#include "piranha/scheduler/strategy.h"
#include "piranha/trellis/deterministic.h"

namespace piranha::nps {
namespace {

constexpr std::int64_t kMaxNodes = 1'000'000;

// [lo, hi] as a two-element list of integers.
std::pair<std::int64_t, std::int64_t> range(const yaml::Reader& r, const YAML::Node& map,
                                            const std::string& key, const std::string& what,
                                            std::int64_t lo) {
  const YAML::Node v = map[key];
  const YAML::Mark at = yaml::Reader::mark_of(map, key);
  if (!v.IsSequence() || v.size() != 2)
    r.fail(at, what + " must be a list [low, high], got " + r.describe(v));
  YAML::Node pair;
  pair["low"] = v[0];
  pair["high"] = v[1];
  const auto low = r.integer<std::int64_t>(pair, "low", what + "'s low", lo, kMaxNodes * 1000);
  const auto high = r.integer<std::int64_t>(pair, "high", what + "'s high", lo, kMaxNodes * 1000);
  if (low > high)
    r.fail(at,
           what + " must have low <= high, got [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  return {low, high};
}

void parse_subnets(const yaml::Reader& r, const YAML::Node& v, CampusConfig& c) {
  if (v.IsSequence()) {
    std::set<std::string> names;
    for (const YAML::Node& s : v) {
      r.check_keys(s, "a subnet", {"name", "nodes", "weight"});
      CampusSubnet sub;
      sub.name = r.text(s, "name", "a subnet's name");
      if (!names.insert(sub.name).second) r.fail(s, "subnet \"" + sub.name + "\" is listed twice");
      sub.nodes = r.integer<std::int64_t>(s, "nodes", "subnet " + sub.name + "'s nodes", 1, kMaxNodes);
      if (s["weight"]) sub.weight = r.number(s, "weight", "subnet " + sub.name + "'s weight", 0, false, 1e9);
      c.subnets.push_back(sub);
    }
    if (c.subnets.empty()) r.fail(v, "subnets must list at least one subnet");
    return;
  }
  r.check_keys(v, "subnets", {"count", "nodes", "skew"});
  const auto count = r.integer<std::int64_t>(v, "count", "subnets' count", 1, 100'000);
  const auto nodes = r.integer<std::int64_t>(v, "nodes", "subnets' nodes", 1, kMaxNodes);
  const double skew = v["skew"] ? r.number(v, "skew", "subnets' skew", 0, false, 10) : 1.0;
  const int width = count >= 1000 ? 4 : 3;
  for (std::int64_t k = 1; k <= count; ++k) {
    char name[32];
    std::snprintf(name, sizeof name, "net%0*lld", width, static_cast<long long>(k));
    c.subnets.push_back({name, nodes, 1.0 / std::pow(static_cast<double>(k), skew)});
  }
}

std::string node_name(const std::string& subnet, std::int64_t k, std::int64_t nodes) {
  char name[32];
  std::snprintf(name, sizeof name, "-ws%0*lld", nodes >= 1000 ? 4 : 3, static_cast<long long>(k + 1));
  return subnet + name;
}

}  // namespace

CampusConfig parse_campus(const std::string& text, const std::string& name) {
  const yaml::Reader r(name);
  const YAML::Node root = yaml::parse_yaml(r, text);
  if (!root || root.IsNull()) r.fail(YAML::Mark::null_mark(), "the campus file is empty");
  r.check_keys(root, "the campus file", {"subnets", "trace", "jobs", "subnet_nps", "campus", "max_steps"});
  CampusConfig c;
  if (!root["subnets"]) r.fail(root, "the campus file needs a 'subnets' section");
  parse_subnets(r, root["subnets"], c);
  if (const YAML::Node t = root["trace"]) {
    r.check_keys(t, "trace", {"file", "synth", "start"});
    if (t["file"] && t["synth"]) r.fail(t, "trace: give either file or synth, not both");
    if (t["file"]) c.trace_file = r.text(t, "file", "trace's file");
    if (const YAML::Node s = t["synth"]) {
      r.check_keys(s, "trace's synth", {"days", "seed"});
      if (s["days"]) c.synth.days = r.integer<int>(s, "days", "synth's days", 1, 365);
      if (s["seed"])
        c.synth.seed =
            static_cast<std::uint64_t>(r.integer<std::int64_t>(s, "seed", "synth's seed", 0, INT64_MAX));
    }
    if (t["start"]) c.start = r.integer<std::int64_t>(t, "start", "trace's start", 0, INT64_MAX / 4);
  }
  if (const YAML::Node j = root["jobs"]) {
    r.check_keys(j, "jobs", {"count", "interarrival", "tasks", "task_time", "seed"});
    if (j["count"]) c.workload.jobs = r.integer<int>(j, "count", "jobs' count", 1, 10'000'000);
    if (j["interarrival"])
      c.workload.interarrival = r.number(j, "interarrival", "jobs' interarrival", 0, true, 1e9);
    if (j["tasks"])
      std::tie(c.workload.min_tasks, c.workload.max_tasks) = range(r, j, "tasks", "jobs' tasks", 1);
    if (j["task_time"])
      std::tie(c.workload.min_task_time, c.workload.max_task_time) =
          range(r, j, "task_time", "jobs' task_time", 1);
    if (j["seed"])
      c.jobs_seed =
          static_cast<std::uint64_t>(r.integer<std::int64_t>(j, "seed", "jobs' seed", 0, INT64_MAX));
  }
  if (const YAML::Node n = root["subnet_nps"]) {
    r.check_keys(n, "subnet_nps", {"strategy", "period", "on_events", "spill"});
    if (n["strategy"]) {
      c.strategy = r.text(n, "strategy", "subnet_nps' strategy");
      try {
        c.strategy = sched::canonical_strategy_name(c.strategy);
      } catch (const InputError& e) {
        r.fail(yaml::Reader::mark_of(n, "strategy"), e.message());
      }
    }
    if (n["period"])
      c.subnet_period = r.integer<std::int64_t>(n, "period", "subnet_nps' period", 1, 1'000'000);
    if (n["on_events"]) c.on_events = r.boolean(n, "on_events", "subnet_nps' on_events");
    if (n["spill"]) c.spill = r.boolean(n, "spill", "subnet_nps' spill");
  }
  c.campus.period = 10;
  if (const YAML::Node k = root["campus"]) {
    r.check_keys(k, "campus", {"period", "congested", "relieved", "hold", "cooldown", "reserve"});
    if (k["period"])
      c.campus.period =
          static_cast<double>(r.integer<std::int64_t>(k, "period", "campus' period", 1, 1'000'000));
    if (k["congested"]) c.campus.congested = r.number(k, "congested", "campus' congested", 0, false, 1e12);
    if (k["relieved"]) c.campus.relieved = r.number(k, "relieved", "campus' relieved", 0, false, 1e12);
    if (k["hold"]) c.campus.hold = r.number(k, "hold", "campus' hold", 0, false, 1e12);
    if (k["cooldown"]) c.campus.cooldown = r.number(k, "cooldown", "campus' cooldown", 0, false, 1e12);
    if (k["reserve"])
      c.campus.reserve = r.integer<std::int64_t>(k, "reserve", "campus' reserve", 0, kMaxNodes);
    if (c.campus.relieved > c.campus.congested)
      r.fail(k, "campus: relieved (" + yaml::fmt(c.campus.relieved) + ") must be <= congested (" +
                    yaml::fmt(c.campus.congested) +
                    "): the hysteresis band runs from relieved up to congested");
    if (c.campus.period <= static_cast<double>(c.subnet_period))
      r.fail(yaml::Reader::mark_of(k, "period"),
             "campus: period " + yaml::fmt(c.campus.period) + " must be longer than subnet_nps' period " +
                 std::to_string(c.subnet_period) + " (the campus runs at a slower rate than its subnets)");
  } else if (c.campus.period <= static_cast<double>(c.subnet_period)) {
    r.fail(root, "campus: the default period 10 must be longer than subnet_nps' period " +
                     std::to_string(c.subnet_period) + ": give campus: {period: ...}");
  }
  if (root["max_steps"])
    c.max_steps = r.integer<std::int64_t>(root, "max_steps", "max_steps", 0, INT64_MAX / 4);
  std::int64_t total = 0;
  for (const auto& s : c.subnets) total += s.nodes;
  if (total > kMaxNodes)
    r.fail(root["subnets"],
           "the campus has " + std::to_string(total) + " nodes, more than " + std::to_string(kMaxNodes));
  c.synth.nodes = static_cast<int>(total);
  return c;
}

CampusConfig load_campus(const std::string& path) {
  return parse_campus(yaml::read_file(path, "the campus file"), path);
}

CampusWorld build_world(const CampusConfig& c) {
  CampusWorld w;
  std::int64_t total = 0;
  for (const auto& s : c.subnets) total += s.nodes;
  AvailabilityTrace source;
  if (c.trace_file.empty()) {
    sched::SynthOptions o = c.synth;
    o.nodes = static_cast<int>(total);
    source = sched::synthesize_trace(o);
  } else {
    source = read_trace(c.trace_file);
    if (static_cast<std::int64_t>(source.nodes.size()) < total)
      throw InputError(c.trace_file, "the trace has " + std::to_string(source.nodes.size()) +
                                         " nodes, fewer than the campus's " + std::to_string(total));
  }
  w.trace.step_seconds = source.step_seconds;
  w.trace.length = source.length;
  std::size_t next = 0;
  for (const auto& s : c.subnets) {
    w.first_node.push_back(next);
    for (std::int64_t k = 0; k < s.nodes; ++k, ++next) {
      w.trace.nodes.push_back(node_name(s.name, k, s.nodes));
      w.trace.periods.push_back(std::move(source.periods[next]));
    }
  }
  w.jobs = sched::random_workload(c.jobs_seed, c.workload);
  // Each job's subnet by the weights, from a stream of its own: the same jobs whatever the weights.
  double sum = 0;
  for (const auto& s : c.subnets) sum += s.weight;
  sched::Rng rng(c.jobs_seed, 3);
  w.jobs_per_subnet.assign(c.subnets.size(), 0);
  for (std::size_t j = 0; j < w.jobs.size(); ++j) {
    double u = rng.uniform01() * sum;
    std::size_t s = 0;
    while (s + 1 < c.subnets.size() && u >= c.subnets[s].weight) u -= c.subnets[s++].weight;
    w.subnet_of.push_back(s);
    ++w.jobs_per_subnet[s];
  }
  return w;
}

const char* to_string(CampusMode mode) {
  switch (mode) {
    case CampusMode::kCampus: return "campus";
    case CampusMode::kIsolated: return "isolated";
    case CampusMode::kFlat: return "flat";
  }
  return "?";
}

sched::SubnetState subnet_state(const std::vector<JobInfo>& jobs, const std::vector<bool>& available,
                                const std::vector<bool>& own, const std::vector<double>& fraction,
                                std::span<const std::optional<sched::NodeAttributes>> attributes) {
  sched::SubnetState s;
  for (const JobInfo& j : jobs) {
    sched::CampusJob c{j.id, static_cast<double>(j.tasks_left) * j.mean_task_time, j.tasks_left};
    if (!j.requirement.empty()) {
      c.requirement = sched::read_requirement(j.requirement);
      c.stranded = std::none_of(attributes.begin(), attributes.end(),
                                [&](const auto& a) { return a && sched::satisfies(c.requirement, *a); });
    }
    s.jobs.push_back(std::move(c));
  }
  for (std::size_t k = 0; k < available.size(); ++k) {
    s.available += fraction[k];
    if (!available[k] || own[k]) continue;
    ++s.idle;
    if (k >= attributes.size() || !attributes[k]) continue;
    const auto g = std::find_if(s.idle_nodes.begin(), s.idle_nodes.end(),
                                [&](const sched::IdleNodes& i) { return i.attributes == *attributes[k]; });
    if (g != s.idle_nodes.end())
      ++g->count;
    else
      s.idle_nodes.push_back({*attributes[k], 1});
  }
  return s;
}

namespace {

// One subnet's NPS: its slice of the model, its node types and its trellis.
struct SubnetNps {
  std::unique_ptr<SimPool> pool;
  trellis::Registry types;
  std::unique_ptr<trellis::DeterministicTrellis> trellis;
  std::string enabler;
  std::vector<std::string> monitors;  // per node of the slice
};

}  // namespace

CampusOutcome simulate_campus(const CampusConfig& c, const CampusWorld& w, CampusMode mode,
                              const CampusProgress& progress) {
  const auto wall_start = std::chrono::steady_clock::now();
  sched::SimOptions options;
  options.period = c.subnet_period;
  options.on_events = c.on_events;
  options.spill = c.spill;
  options.start = c.start;
  options.max_steps = c.max_steps;
  sched::PoolModel model(w.trace, w.jobs, options, c.strategy, 0);

  // The partition of nodes and jobs into pools: one per subnet, or one for everything.
  const bool flat = mode == CampusMode::kFlat;
  const std::size_t pools = flat ? 1 : c.subnets.size();
  std::unordered_map<JobId, std::size_t> subnet_of_job;
  for (std::size_t j = 0; j < w.jobs.size(); ++j) subnet_of_job[w.jobs[j].id] = w.subnet_of[j];
  std::vector<SubnetNps> nps(pools);
  for (std::size_t p = 0; p < pools; ++p) {
    std::vector<std::size_t> nodes;
    if (flat) {
      for (std::size_t n = 0; n < w.trace.nodes.size(); ++n) nodes.push_back(n);
    } else {
      for (std::int64_t k = 0; k < c.subnets[p].nodes; ++k)
        nodes.push_back(w.first_node[p] + static_cast<std::size_t>(k));
    }
    std::function<bool(JobId)> owns;
    if (!flat) owns = [&subnet_of_job, p](JobId j) { return subnet_of_job.at(j) == p; };
    SubnetNps& s = nps[p];
    s.pool = std::make_unique<SimPool>(model, w.trace, c.start, std::move(nodes), std::move(owns));
    add_nps_types(s.types, Environment{s.pool.get(), make_memory()});
    StandardOptions so;
    so.nodes = s.pool->node_names();
    so.strategy = c.strategy;
    so.period = static_cast<double>(c.subnet_period);
    so.on_events = c.on_events;
    so.spill = c.spill;
    so.evaluator = false;
    trellis::Program program = standard_program(so, s.types);
    for (auto& n : program.nodes)
      if (n.type == "scheduler") n.params["seed"] = std::int64_t{0};
    s.trellis = std::make_unique<trellis::DeterministicTrellis>(program, s.types);
    s.trellis->record_commands(false);  // nothing reads them, and a long run sends millions
    s.enabler = enabler_name(program);
    for (const auto& n : so.nodes) s.monitors.push_back("monitor_" + n);
  }

  CampusOutcome out;
  out.mode = mode;
  out.borrowed_node_steps.assign(c.subnets.size(), 0);
  std::optional<sched::CampusStrategy> campus;
  if (mode == CampusMode::kCampus) campus.emplace(c.campus);
  const auto campus_period = static_cast<std::int64_t>(c.campus.period);
  // Per node of the model: the loan it served at the last step.
  std::vector<std::optional<sched::LoanKey>> serving(w.trace.nodes.size());
  std::vector<sched::SubnetState> states(pools);
  std::vector<std::vector<sched::Loan>> loans_of(pools);  // per lender
  std::int64_t lent_now = 0;
  std::size_t done = 0;
  const std::size_t total_jobs = w.jobs.size();

  while (model.running()) {
    const std::int64_t t = model.now();
    model.arrive();
    for (SubnetNps& s : nps) {
      s.trellis->probe(s.enabler);
      s.trellis->run();
      s.trellis->clear_steps();
    }
    if (campus) {
      if (t % campus_period == 0) {
        for (std::size_t p = 0; p < pools; ++p) {
          const SimPool& pool = *nps[p].pool;
          const auto& nodes = pool.model_nodes();
          std::vector<bool> available(nodes.size()), own(nodes.size());
          std::vector<double> fraction(nodes.size());
          for (std::size_t k = 0; k < nodes.size(); ++k) {
            available[k] = t > 0 && model.was_available(nodes[k]);
            own[k] = pool.assigned(k).has_value();
            const trellis::Value& f = nps[p].trellis->state(nps[p].monitors[k])["fraction"];
            fraction[k] = f.is_number() ? f.as_number() : (available[k] ? 1.0 : 0.0);
          }
          states[p] = subnet_state(pool.jobs(), available, own, fraction);
        }
        const sched::CampusDecision d = campus->decide(static_cast<double>(t), states);
        ++out.decisions;
        out.loans_started += d.loans_started;
        out.nodes_lent += d.nodes_lent;
        for (int r = 0; r < 3; ++r) out.nodes_returned[r] += d.nodes_returned[r];
        for (auto& l : loans_of) l.clear();
        lent_now = 0;
        for (const sched::Loan& l : d.loans) {
          loans_of[l.lender].push_back(l);
          lent_now += l.nodes;
        }
        out.peak_nodes_lent = std::max(out.peak_nodes_lent, lent_now);
        out.borrowing_subnets_max = std::max<std::int64_t>(
            out.borrowing_subnets_max, std::count(d.congested.begin(), d.congested.end(), true));
      }
      // Each lender's tick: its own jobs first, then its idle nodes serve its loans.
      for (std::size_t p = 0; p < pools; ++p) {
        const SimPool& pool = *nps[p].pool;
        const auto& nodes = pool.model_nodes();
        if (loans_of[p].empty() &&
            std::none_of(nodes.begin(), nodes.end(), [&](std::size_t n) { return serving[n].has_value(); }))
          continue;
        // Arrays, not vector<bool>: lend_idle takes spans of bool.
        const std::size_t size = nodes.size();
        const auto own = std::make_unique<bool[]>(size), available = std::make_unique<bool[]>(size);
        std::vector<std::optional<sched::LoanKey>> was(size);
        for (std::size_t k = 0; k < nodes.size(); ++k) {
          own[k] = pool.assigned(k).has_value();
          available[k] = t > 0 && model.was_available(nodes[k]);
          was[k] = serving[nodes[k]];
        }
        const auto now = sched::lend_idle(loans_of[p], std::span<const bool>(own.get(), size),
                                          std::span<const bool>(available.get(), size), was);
        for (std::size_t k = 0; k < nodes.size(); ++k) {
          const std::size_t n = nodes[k];
          serving[n] = now[k];
          const std::optional<JobId> want = own[k]   ? pool.assigned(k)
                                            : now[k] ? std::optional(now[k]->job)
                                                     : std::nullopt;
          if (model.job(n) != want) model.set_job(n, want);
        }
      }
    }
    model.step();
    if (campus)
      for (std::size_t n = 0; n < serving.size(); ++n)
        if (serving[n] && model.was_available(n)) {
          ++out.lent_node_steps;
          ++out.borrowed_node_steps[serving[n]->borrower];
        }
    if (progress.report && (t + 1) % progress.every == 0) {
      done = 0;
      for (const auto& j : model.result().jobs) done += j.completion.has_value();
      progress.report(mode, t + 1, done, total_jobs, lent_now);
    }
  }
  out.result = model.result();
  // Per subnet: the mean turnaround of the jobs submitted to it.
  std::vector<double> sum(c.subnets.size(), 0);
  std::vector<std::int64_t> count(c.subnets.size(), 0);
  const std::int64_t end = out.result.steps;
  for (std::size_t j = 0; j < out.result.jobs.size(); ++j) {
    const auto& o = out.result.jobs[j];
    const std::size_t s = subnet_of_job.at(o.id);
    sum[s] += static_cast<double>(o.completion.value_or(end) - o.arrival);
    ++count[s];
  }
  for (std::size_t s = 0; s < sum.size(); ++s)
    out.subnet_mean_turnaround.push_back(count[s] ? sum[s] / static_cast<double>(count[s]) : 0);
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  out.tick_ms_mean = out.result.steps ? 1e3 * out.wall_seconds / static_cast<double>(out.result.steps) : 0;
  return out;
}

}  // namespace piranha::nps
