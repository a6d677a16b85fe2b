// SimPool and simulate_program (simulate.h).
#include <algorithm>
#include <set>

#include "piranha/nps/node_types.h"
#include "piranha/nps/program.h"
#include "piranha/nps/simulate.h"
#include "piranha/trellis/deterministic.h"

namespace piranha::nps {

namespace {

std::vector<std::size_t> all_nodes(const sched::PoolModel& model) {
  std::vector<std::size_t> nodes(model.nodes());
  for (std::size_t n = 0; n < nodes.size(); ++n) nodes[n] = n;
  return nodes;
}

}  // namespace

SimPool::SimPool(sched::PoolModel& model, const AvailabilityTrace& trace, std::int64_t start)
    : SimPool(model, trace, start, all_nodes(model), {}) {}

SimPool::SimPool(sched::PoolModel& model, const AvailabilityTrace& trace, std::int64_t start,
                 std::vector<std::size_t> nodes, std::function<bool(JobId)> owns)
    : model_(model),
      nodes_(std::move(nodes)),
      owns_(std::move(owns)),
      assigned_(nodes_.size()),
      trace_(trace),
      start_(start) {
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    index_.try_emplace(model_.node_name(nodes_[k]), nodes_[k], k);
}

double SimPool::now() const {
  return static_cast<double>(model_.now());
}
std::int64_t SimPool::epoch() const {
  return model_.now();
}

std::vector<std::string> SimPool::node_names() const {
  std::vector<std::string> names;
  names.reserve(nodes_.size());
  for (std::size_t n : nodes_) names.push_back(model_.node_name(n));
  return names;
}

std::optional<std::size_t> SimPool::index(std::string_view node) const {
  const auto it = index_.find(node);
  if (it == index_.end()) return std::nullopt;
  return it->second.first;
}

std::optional<NodeStatus> SimPool::node(std::string_view name) const {
  const auto n = index(name);
  if (!n) return std::nullopt;
  NodeStatus s;
  s.name = std::string(name);
  // What the last simulated step showed (nothing is known before step 0).
  const bool up = model_.now() > 0 && model_.was_available(*n);
  s.state = up ? "available" : "unavailable";
  s.available = up;
  s.running = model_.job(*n);
  s.by = "scheduler 0";
  if (const std::size_t k = index_.find(name)->second.second; k < attributes_.size())
    s.attributes = attributes_[k];
  return s;
}

std::vector<bool> SimPool::steps(std::string_view node, std::int64_t from) const {
  std::vector<bool> out;
  const auto n = index(node);
  if (!n) return out;
  for (std::int64_t s = from; s < model_.now(); ++s)
    out.push_back(trace_.available(*n, (start_ + s) % trace_.length));
  return out;
}

std::vector<JobInfo> SimPool::jobs() const {
  std::vector<JobInfo> out;
  for (const sched::QueuedJob& q : model_.queue()) {
    if (owns_ && !owns_(q.id)) continue;
    JobInfo j;
    j.id = q.id;
    j.name = "job " + std::to_string(q.id);
    j.arrival = q.arrival;
    j.mean_task_time = q.task_time;  // the model's belief: known, or observed with its cold start
    j.measured = true;
    j.tasks = q.tasks;
    j.tasks_left = q.tasks_left;
    j.attained = q.attained;
    j.queue_length_at_arrival = q.queue_length_at_arrival;
    if (const auto r = requirements_.find(q.id); r != requirements_.end()) j.requirement = r->second;
    out.push_back(j);
  }
  return out;
}

void SimPool::assign(std::int64_t, std::int64_t, std::string_view node, std::optional<JobId> job) {
  const auto it = index_.find(node);
  if (it == index_.end()) return;
  model_.set_job(it->second.first, job);
  assigned_[it->second.second] = job;
}

void check_covers(const trellis::Program& p, const std::vector<std::string>& nodes) {
  std::set<std::string, std::less<>> watched;
  for (const auto& n : p.nodes) {
    if (n.type != "monitor") continue;
    const auto it = n.params.find("node");
    const std::string node = it != n.params.end() && it->second.is_string() ? it->second.as_string() : "";
    if (std::find(nodes.begin(), nodes.end(), node) == nodes.end())
      throw InputError(
          p.source, n.line,
          "monitor \"" + n.name + "\" watches node \"" + node + "\", which the trace does not have");
    watched.insert(node);
  }
  std::string missing;
  for (const auto& n : nodes)
    if (!watched.count(n)) missing += (missing.empty() ? "" : ", ") + n;
  if (!missing.empty())
    throw InputError(p.source, 0,
                     "no monitor watches the trace's node(s) " + missing +
                         ": their availability would go unused (piranha nps init --nodes ... "
                         "writes a program with one monitor per node)");
}

void apply_overrides(trellis::Program& p, const Overrides& o) {
  for (auto& n : p.nodes) {
    const bool scheduler0 =
        n.type == "scheduler" && n.params.count("id") && n.params.at("id") == trellis::Value(0);
    if (scheduler0) {
      if (o.strategy) n.params["strategy"] = *o.strategy;
      if (o.period) n.params["period"] = *o.period;
      if (o.on_events) n.params["on_events"] = *o.on_events;
    }
    if (scheduler0 || n.type == "monitor") {
      if (o.window) n.params["window"] = *o.window;
      if (o.predictor) n.params["predictor"] = *o.predictor;
    }
  }
}

sched::SimResult simulate_program(const std::optional<trellis::Program>& program,
                                  const AvailabilityTrace& trace, const std::vector<sched::Job>& jobs,
                                  const std::string& strategy, const sched::SimOptions& options,
                                  std::uint64_t seed, const std::function<void()>& tick,
                                  const SimRequirements& requirements) {
  sched::PoolModel model(trace, jobs, options, sched::canonical_strategy_name(strategy), seed);
  SimPool pool(model, trace, options.start);
  if (!requirements.attributes.empty() || !requirements.requirements.empty()) {
    std::vector<std::optional<sched::NodeAttributes>> offers(trace.nodes.size());
    for (std::size_t n = 0; n < trace.nodes.size(); ++n)
      if (const auto a = requirements.attributes.find(trace.nodes[n]); a != requirements.attributes.end())
        offers[n] = a->second;
    pool.set_requirements(std::move(offers), requirements.requirements);
  }
  trellis::Registry types;
  add_nps_types(types, Environment{&pool, make_memory()});
  trellis::Program p;
  if (program) {
    p = *program;
    apply_overrides(p, Overrides{strategy, static_cast<double>(options.period), options.window,
                                 options.predictor, options.on_events});
  } else {
    StandardOptions s;
    s.nodes = pool.node_names();
    s.strategy = strategy;
    s.period = static_cast<double>(options.period);
    s.predictor = options.predictor;
    s.window = options.window;
    s.spill = options.spill;
    s.on_events = options.on_events;
    s.evaluator = false;  // nothing here would read it
    p = standard_program(s, types);
  }
  // The run's seed drives scheduler 0's coin flips, as it does the simulator's.
  for (auto& n : p.nodes)
    if (n.type == "scheduler" && n.params.count("id") && n.params.at("id") == trellis::Value(0))
      n.params["seed"] = static_cast<std::int64_t>(seed);
  trellis::validate(p, types);
  check_nps_program(p);
  check_covers(p, pool.node_names());
  trellis::DeterministicTrellis t(p, types);
  t.record_commands(false);  // nothing reads them, and a long run sends millions
  const std::string enabler = enabler_name(p);
  if (tick) tick();
  while (model.running()) {
    model.arrive();
    t.probe(enabler);
    t.run();
    t.clear_steps();
    model.step();
    if (options.progress && model.now() % options.progress_every == 0) options.progress(model.now());
    if (tick) tick();
  }
  return model.result();
}

}  // namespace piranha::nps
