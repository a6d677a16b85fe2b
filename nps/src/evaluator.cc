// The evaluator node type (node_types.h): comparative data on every
// scheduler's decisions, on every job and on the availability each node
// showed, kept as records in the pool (so they outlive the NPS), shadow
// schedulers' counterfactual turnarounds, and the switching rule.
#include <nlohmann/json.hpp>

#include "node_kinds.h"
#include "piranha/scheduler/strategy.h"
#include "values.h"

namespace piranha::nps {
namespace {

using json = nlohmann::json;

// At most this many steps per observation (a coarser step beyond), and a
// replay runs at most twice as many: about 0.1 ms a step on a 15-node pool,
// so at most about a second per strategy.
constexpr std::int64_t kReplaySteps = 5000;
constexpr std::size_t kReplayJobs = 100;
// How often the retention is applied (pool units: seconds live), besides
// whenever the records exceed their bound by a tenth.
constexpr double kPruneEvery = 3600;
// The largest `records` of a retention: with a tenth more between prunings,
// the records stay below the 100,000 a restart reads back
// (sys::list_eval_records).
constexpr std::int64_t kMaxRecords = 90'000;
// From this many nodes on, the state's entries of nodes whose state has not
// changed count their open span up to now in turns, a tenth at each call
// (Evaluator::state).
constexpr std::size_t kLargePool = 1000;
constexpr std::uint64_t kRefreshTurns = 10;
const std::string kUnknown = "unknown";

json job_json(const std::optional<JobId>& job) {
  return job ? json(*job) : json(nullptr);
}
std::optional<JobId> job_from(const json& j) {
  return j.is_number_integer() ? std::optional<JobId>(j.get<JobId>()) : std::nullopt;
}

// The fields are looked for where the states have them (MonitorFields; a
// scheduler's {assignments, decisions, id, on_events, period, strategy,
// tick}; the jobs node's {jobs, tick}): ten thousand monitors are read at
// every tick.
bool is_monitor_state(const Value& s) {
  return s.get("node", MonitorFields::kNode).is_string() &&
         s.get("available", MonitorFields::kAvailable).is_bool();
}
bool is_scheduler_state(const Value& s) {
  return s.get("assignments", 0).is_map() && s.get("strategy", 5).is_string();
}
bool is_jobs_state(const Value& s) {
  return s.get("jobs", 0).is_list();
}

// The latest ended jobs, which the evaluator's state lists (the live page
// keeps them listed with their turnaround, as the report counts them).
constexpr std::size_t kRecentEnded = 20;
void remember_ended(EvaluatorMemory& m, EvaluatorMemory::Ended e) {
  m.recent_ended.push_back(std::move(e));
  if (m.recent_ended.size() > kRecentEnded) m.recent_ended.erase(m.recent_ended.begin());
}

}  // namespace

Evaluator::Evaluator(Environment env, const trellis::Params& p)
    : env_(std::move(env)),
      tolerance_(p.number("tolerance", 0.1)),
      step_(p.number("step", env_.pool->history_step() > 1 ? 0.1 : env_.pool->history_step())),
      seed_(static_cast<std::uint64_t>(p.integer("seed", 0))),
      estimates_(p.boolean("estimate", true)),
      recording_(env_.pool->keeps_records()),
      retention_(retention_param(p.value("retention"))),
      rule_(switch_param(p.value("switch"))) {
  if (!(tolerance_ >= 0)) throw trellis::BadParameter("tolerance", "tolerance must not be negative");
  if (!(step_ > 0)) throw trellis::BadParameter("step", "step must be positive");
  if (rule_ && !estimates_)
    throw trellis::BadParameter("switch", "switch needs estimates: remove estimate: false");
  // Estimates are for people to see (in the records a pool keeps) or for a
  // rule to act on: a simulated pool without a rule needs no replays.
  estimates_ = estimates_ && (recording_ || rule_);
}

Retention Evaluator::retention_param(const Value& keep) {
  Retention r;
  if (keep.is_null()) return r;
  if (!keep.is_map()) throw trellis::BadParameter("retention", "retention must be a map: {days, records}");
  for (const auto& [key, v] : keep.as_map())
    if (key != "days" && key != "records")
      throw trellis::BadParameter("retention",
                                  "retention: unknown key \"" + key + "\" (keys: days, records)");
  const Value &days = keep["days"], &count = keep["records"];
  r.days = days.is_null() ? r.days : days.is_number() ? days.as_number() : -1;
  const std::int64_t records = count.is_null()  ? static_cast<std::int64_t>(r.max_records)
                               : count.is_int() ? count.as_int()
                                                : -1;
  if (!(r.days > 0) || records < 1 || records > kMaxRecords)
    throw trellis::BadParameter(
        "retention", "retention: days must be positive and records an integer from 1 to " +
                         std::to_string(kMaxRecords) + " (a restart reads at most 100,000 records back)");
  r.max_records = static_cast<std::size_t>(records);
  return r;
}

std::optional<Evaluator::SwitchRule> Evaluator::switch_param(const Value& rule) {
  if (rule.is_null()) return std::nullopt;
  if (!rule.is_map())
    throw trellis::BadParameter("switch",
                                "switch must be a map: {among: [ids], after_hours, after_jobs, "
                                "margin_percent}");
  SwitchRule r;
  const Value& among = rule["among"];
  if (among.is_list())
    for (const Value& id : among.as_list()) {
      if (!id.is_int() || id.as_int() < 0)
        throw trellis::BadParameter("switch", "switch: among lists scheduler ids (integers >= 0)");
      r.among.push_back(id.as_int());
    }
  if (r.among.empty())
    throw trellis::BadParameter("switch",
                                "switch names no scheduler to switch to: give among: [id, ...], the ids "
                                "of shadow schedulers below this evaluator");
  r.after_hours = number_of(rule, "after_hours", 0);
  r.after_jobs = int_of(rule, "after_jobs", 1);
  r.margin_percent = number_of(rule, "margin_percent", 10);
  for (const auto& [key, v] : rule.as_map())
    if (key != "among" && key != "after_hours" && key != "after_jobs" && key != "margin_percent")
      throw trellis::BadParameter("switch", "switch: unknown key \"" + key +
                                                "\" (keys: among, after_hours, after_jobs, margin_percent)");
  if (r.after_hours < 0 || r.after_jobs < 0 || r.margin_percent < 0)
    throw trellis::BadParameter("switch",
                                "switch: after_hours, after_jobs and margin_percent must not be negative");
  return r;
}

void Evaluator::load() {
  EvaluatorMemory& m = env_.memory->evaluator;
  m.loaded = true;
  const std::vector<EvalRecord> records = env_.pool->records();
  m.record_count = records.size();
  for (const EvalRecord& r : records) {
    const json j = json::parse(r.json, nullptr, false);
    if (!j.is_object()) continue;  // a stray record is skipped, not fatal
    if (m.first_time < 0 || r.time < m.first_time) m.first_time = r.time;
    if (r.kind == "span") {
      const ObservedSpan s{j.value("node", ""), j.value("start", 0.0), j.value("end", 0.0),
                           j.value("available", false), job_from(j.value("job", json()))};
      auto& n = m.nodes[s.node];
      n.observed_seconds += s.end - s.start;
      if (s.available) n.available_seconds += s.end - s.start;
      const std::string retreat = j.value("retreat", "");
      if (const auto job = job_from(j.value("job", json())); job && !retreat.empty())
        (retreat == "owner" ? n.owner_retreats : n.scheduler_retreats) += 1;
      m.spans.push_back(s);
    } else if (r.kind == "decision") {
      auto& e = m.schedulers[j.value("scheduler", std::int64_t{0})];
      ++e.changes;
    } else if (r.kind == "job") {
      ObservedJob o{j.value("id", JobId{0}),   j.value("arrival", 0.0), j.value("tasks", std::int64_t{1}),
                    j.value("task_time", 0.0), j.value("end", 0.0),     j.value("requires", "")};
      m.jobs[o.id] = o;
      // The job's own count: its retreats, of which its owner's; the rest gave way.
      const auto owner = j.value("owner_retreats", std::int64_t{0});
      remember_ended(m, {o.id, j.value("name", ""), o.arrival, o.end.value_or(r.time), owner,
                         j.value("retreats", owner) - owner});
    } else if (r.kind == "switch") {
      m.obeyed = j.value("to", std::int64_t{0});
      ++m.switches;
    } else if (r.kind == "estimate") {
      m.schedulers[j.value("scheduler", std::int64_t{0})].estimate = j.value("estimate", 0.0);
    }
  }
  m.estimate_due = std::any_of(m.jobs.begin(), m.jobs.end(), [](const auto& kv) { return kv.second.end; });
}

void Evaluator::write(const std::string& kind, double time, const nlohmann::json& j) {
  env_.pool->record(EvalRecord{kind, time, j.dump()});
  ++env_.memory->evaluator.record_count;
}

void Evaluator::prune(double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  m.next_prune = now + kPruneEvery;
  const std::vector<EvalRecord> records = env_.pool->records();
  const std::vector<std::size_t> gone = records_to_prune(records, retention_, now);
  m.record_count = records.size() - gone.size();
  // The next pruning by count once a tenth of the bound has been written
  // again (the records kept whatever their age may exceed the bound).
  m.prune_at_count = std::max(retention_.max_records, m.record_count) +
                     std::max<std::size_t>(1, retention_.max_records / 10);
  if (gone.empty()) return;
  const double cut = retention_cut(records, retention_, now);
  env_.pool->forget(gone);
  // What the pool no longer has goes from memory too, as a restart would
  // find it: spans that ended before the cut, ended jobs that arrived before.
  std::erase_if(m.spans, [&](const ObservedSpan& s) { return s.end < cut; });
  std::erase_if(m.jobs, [&](const auto& kv) {
    const bool gone = kv.second.end && kv.second.arrival < cut;
    if (gone) {
      m.retreats.erase(kv.first);
      names_.erase(kv.first);
    }
    return gone;
  });
}

void Evaluator::observe_node(std::size_t i, const Value& s, const std::set<JobId>& live, double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  const std::string& name = s.get("node", MonitorFields::kNode).as_string();
  if (slots_.size() <= i) slots_.resize(i + 1);
  Slot& slot = slots_[i];
  if (!slot.memory || slot.node != name) {
    slot.node = name;
    slot.memory = &m.nodes.try_emplace(name).first->second;  // map entries stay put
  }
  auto& n = *slot.memory;
  const std::int64_t tick = int_at(s, "tick", MonitorFields::kTick);
  if (tick <= n.last_tick) return;  // one sample per tick
  n.last_tick = tick;
  if (const Value& p = s.get("predictor", MonitorFields::kPredictor);
      p.is_string() && p.as_string() != n.predictor)
    n.predictor = p.as_string();
  n.window = int_at(s, "window", MonitorFields::kWindow, n.window);
  const Value& state = s.get("state", MonitorFields::kState);
  const std::string& state_name = state.is_string() ? state.as_string() : kUnknown;
  const bool available = s.get("available", MonitorFields::kAvailable).as_bool();
  const std::optional<JobId> job = job_of(s.get("running", MonitorFields::kRunning));
  // Most ticks change nothing: compared before anything is copied.
  if (n.open && n.open->state == state_name && n.open->available == available && n.open->job == job) return;
  EvaluatorMemory::OpenSpan now_span{state_name, available, job, now};
  if (n.open) {
    const auto& o = *n.open;
    std::string retreat;
    // A job taken off a node while it still had work: its owner came back,
    // or a scheduler gave the node to another job.
    if (o.job && now_span.job != o.job && live.count(*o.job))
      retreat = now_span.available ? "scheduler" : "owner";
    if (!retreat.empty()) {
      (retreat == "owner" ? n.owner_retreats : n.scheduler_retreats) += 1;
      m.recent.push_back({now, name, *o.job, retreat});
      if (m.recent.size() > 20) m.recent.erase(m.recent.begin());
    }
    if (recording_) {
      json j = {{"node", name},           {"state", o.state}, {"available", o.available},
                {"job", job_json(o.job)}, {"start", o.start}, {"end", now}};
      if (!retreat.empty()) j["retreat"] = retreat;
      write("span", now, j);
    }
    if (estimates_) m.spans.push_back({name, o.start, now, o.available, o.job});  // kept for replays only
    n.observed_seconds += now - o.start;
    if (o.available) n.available_seconds += now - o.start;
  }
  n.open = now_span;
}

void Evaluator::observe_scheduler(const Value& s, double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  const std::int64_t id = int_of(s, "id");
  auto& e = m.schedulers[id];
  e.strategy = s["strategy"].as_string();
  e.period = number_of(s, "period", e.period);
  if (s["on_events"].is_bool()) e.on_events = s["on_events"].as_bool();
  const std::int64_t count = int_of(s, "decisions", 0);
  if (count == e.last_count) return;  // no new decision
  e.last_count = count;
  ++e.decisions;
  for (const auto& [node, job] : s["assignments"].as_map()) {
    const auto before = e.last.find(node);
    if (before == e.last.end() || before->second != job_of(job)) {
      ++e.changes;
      if (recording_)
        write("decision", now,
              {{"scheduler", id}, {"strategy", e.strategy}, {"node", node}, {"job", job_json(job_of(job))}});
    }
    e.last[node] = job_of(job);
  }
}

void Evaluator::observe_jobs(const Value& s, std::set<JobId>& live, double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  for (const Value& j : s["jobs"].as_list()) {
    const JobId id = int_of(j, "id");
    live.insert(id);
    auto& o = m.jobs[id];
    o.id = id;
    o.arrival = number_of(j, "arrival");
    o.tasks = int_of(j, "tasks", 1);
    if (j["measured"].is_bool() && j["measured"].as_bool()) o.task_time = number_of(j, "task_time");
    if (j["requires"].is_string()) o.requirement = j["requires"].as_string();
    m.retreats[id] = {int_of(j, "retreats", 0), int_of(j, "owner_retreats", 0)};
    names_[id] = j["name"].is_string() ? j["name"].as_string() : "";
  }
  for (auto& [id, o] : m.jobs) {
    if (o.end || live.count(id)) continue;
    o.end = now;
    m.estimate_due = true;
    const auto r = m.retreats[id];
    remember_ended(m, {id, names_[id], o.arrival, now, r.second, r.first - r.second});
    if (!recording_) continue;
    json record{{"id", id},
                {"name", names_[id]},
                {"arrival", o.arrival},
                {"end", now},
                {"turnaround", now - o.arrival},
                {"tasks", o.tasks},
                {"task_time", o.task_time},
                {"retreats", r.first},
                {"owner_retreats", r.second}};
    // Only where there is one, so that a pool without requirements writes what it did before.
    if (!o.requirement.empty()) record["requires"] = o.requirement;
    write("job", now, record);
  }
}

void Evaluator::estimate(double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  m.estimate_due = false;
  // The replay covers the latest kReplayJobs ended jobs and the live ones,
  // from the earliest of their arrivals: its cost stays bounded on a pool
  // that runs for months.
  std::vector<const ObservedJob*> ended_jobs;
  for (const auto& [id, j] : m.jobs)
    if (j.end) ended_jobs.push_back(&j);
  std::sort(ended_jobs.begin(), ended_jobs.end(), [](auto* a, auto* b) { return *a->end > *b->end; });
  if (ended_jobs.size() > kReplayJobs) ended_jobs.resize(kReplayJobs);
  Observation o;
  o.end = now;
  double from = now;
  for (auto* j : ended_jobs) {
    o.jobs.push_back(*j);
    from = std::min(from, j->arrival);
  }
  for (const auto& [id, j] : m.jobs)
    if (!j.end) {
      o.jobs.push_back(j);
      from = std::min(from, j.arrival);
    }
  for (const auto& s : m.spans)
    if (s.end > from) o.spans.push_back({s.node, std::max(s.start, from), s.end, s.available, s.job});
  for (const auto& [name, n] : m.nodes) {
    o.nodes.push_back(name);
    // What it offers now: a replay respects the jobs' requirements as the live schedulers do.
    if (const auto st = env_.pool->node(name); st && st->attributes) o.attributes[name] = *st->attributes;
    if (n.open) o.spans.push_back({name, std::max(n.open->start, from), now, n.open->available, n.open->job});
  }
  double sum = 0;
  std::int64_t ended = 0;
  for (auto* j : ended_jobs) {
    sum += *j->end - j->arrival;
    ++ended;
  }
  if (ended > 0) m.observed_mean = sum / static_cast<double>(ended);
  ReplayRound round;
  round.observation = std::move(o);
  round.step = step_;
  round.max_steps = kReplaySteps;
  round.seed = seed_;
  round.history_step = env_.pool->history_step();
  round.step_seconds = env_.pool->step_seconds();
  round.tolerance = tolerance_;
  for (const auto& [id, e] : m.schedulers)
    if (!e.strategy.empty()) round.plans[id] = ShadowPlan{e.strategy, e.period, e.on_events};
  for (const auto& [name, n] : m.nodes) round.predictors[name] = {n.predictor, n.window};
  // Live, the replays run on a thread of their own and their outcome is
  // taken at a later tick; elsewhere (simulated, tested) at once.
  if (env_.pool->background_work())
    m.pending = std::async(std::launch::async, [round = std::move(round)] { return run_round(round); });
  else
    apply(run_round(round), now);
}

void Evaluator::apply(const ReplayOutcome& outcome, double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  Value::List recent_ended;
  for (const auto& e : m.recent_ended)
    recent_ended.push_back(Fields()("id", e.id)("name", e.name)("arrival", e.arrival)("end", e.end)(
        "turnaround", e.end - e.arrival)("owner_retreats", e.owner_retreats)("scheduler_retreats",
                                                                             e.scheduler_retreats));
  // The jobs a round replayed, with the work each was given: a report
  // compares each job's replayed turnaround with its observed one on them.
  // The record's observed mean is over the same jobs, as this evaluator saw
  // them arrive and end.
  json work = json::object();
  double observed = 0;
  for (const auto& [job, seconds] : outcome.work) {
    work[std::to_string(job)] = seconds;
    if (const auto j = m.jobs.find(job); j != m.jobs.end() && j->second.end)
      observed += *j->second.end - j->second.arrival;
  }
  if (!outcome.work.empty()) observed /= static_cast<double>(outcome.work.size());
  for (const auto& [id, estimate] : outcome.estimates) {
    auto& e = m.schedulers[id];
    e.estimate = estimate;
    if (!estimate) continue;
    json jobs = json::object();
    if (const auto t = outcome.turnarounds.find(id); t != outcome.turnarounds.end())
      for (const auto& [job, seconds] : t->second) jobs[std::to_string(job)] = seconds;
    write("estimate", now,
          {{"scheduler", id},
           {"strategy", e.strategy},
           {"obeyed", id == m.obeyed},
           {"estimate", *estimate},
           {"observed", observed},
           {"ended_jobs", static_cast<std::int64_t>(outcome.work.size())},
           {"step", outcome.step},
           {"period", e.period},
           {"on_events", e.on_events},
           {"jobs", jobs},
           {"work", work}});
  }
  for (const auto& [name, a] : outcome.accuracy) {
    auto& n = m.nodes[name];
    n.accuracy.reset();
    if (!a) continue;
    n.accuracy = a->fraction;
    n.accuracy_points = a->points;
    write("accuracy", now,
          {{"node", name},
           {"predictor", n.predictor},
           {"window", n.window},
           {"tolerance", tolerance_},
           {"points", a->points},
           {"fraction", a->fraction}});
  }
  maybe_switch(now);
}

void Evaluator::maybe_switch(double now) {
  EvaluatorMemory& m = env_.memory->evaluator;
  if (!rule_) return;
  Value::List recent_ended;
  for (const auto& e : m.recent_ended)
    recent_ended.push_back(Fields()("id", e.id)("name", e.name)("arrival", e.arrival)("end", e.end)(
        "turnaround", e.end - e.arrival)("owner_retreats", e.owner_retreats)("scheduler_retreats",
                                                                             e.scheduler_retreats));
  std::int64_t ended = 0;
  for (const auto& [id, j] : m.jobs) ended += j.end ? 1 : 0;
  const double hours = m.first_time < 0 ? 0 : (now - m.first_time) / 3600;
  if (ended < rule_->after_jobs || hours < rule_->after_hours) return;
  const auto current = m.schedulers.find(m.obeyed);
  if (current == m.schedulers.end() || !current->second.estimate) return;
  std::optional<std::int64_t> best;
  for (std::int64_t id : rule_->among) {
    const auto it = m.schedulers.find(id);
    if (id == m.obeyed || it == m.schedulers.end() || !it->second.estimate) continue;
    if (!best || *it->second.estimate < *m.schedulers[*best].estimate) best = id;
  }
  if (!best) return;
  const double mine = *current->second.estimate, theirs = *m.schedulers[*best].estimate;
  if (!(theirs < mine * (1 - rule_->margin_percent / 100))) return;
  json estimates = json::object();
  for (const auto& [id, e] : m.schedulers)
    if (e.estimate) estimates[std::to_string(id)] = {{"strategy", e.strategy}, {"estimate", *e.estimate}};
  write("switch", now,
        {{"from", m.obeyed},
         {"to", *best},
         {"from_strategy", current->second.strategy},
         {"to_strategy", m.schedulers[*best].strategy},
         {"estimates", estimates},
         {"observed", m.observed_mean.value_or(0)},
         {"ended_jobs", ended},
         {"hours", hours},
         {"rule",
          {{"among", rule_->among},
           {"after_hours", rule_->after_hours},
           {"after_jobs", rule_->after_jobs},
           {"margin_percent", rule_->margin_percent}}}});
  last_switch_ = "switched from scheduler " + std::to_string(m.obeyed) + " (" + current->second.strategy +
                 ") to scheduler " + std::to_string(*best) + " (" + m.schedulers[*best].strategy +
                 "): estimated mean turnaround " + std::to_string(theirs) + " s against " +
                 std::to_string(mine) + " s over " + std::to_string(ended) + " finished jobs";
  m.obeyed = *best;
  ++m.switches;
}

Value Evaluator::calculate(trellis::Context& ctx) {
  // In a pool that keeps no records (a simulated one), without a rule to
  // apply, nothing it observed could be seen or acted on.
  if (!recording_ && !rule_) return Value();
  EvaluatorMemory& m = env_.memory->evaluator;
  const double now = env_.pool->now();
  if (!m.loaded) load();
  if (m.first_time < 0) m.first_time = now;
  std::set<JobId> live;
  bool have_jobs = false;
  std::int64_t tick = -1;  // the newest enabler tick its inferiors report
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
    if (const Value& s = ctx.inferior(i); is_jobs_state(s)) {
      observe_jobs(s, live, now);
      have_jobs = true;
    }
  static const std::set<JobId> kNone;
  const std::set<JobId>& live_jobs = have_jobs ? live : kNone;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    const Value& s = ctx.inferior(i);
    if (is_monitor_state(s)) {
      observe_node(i, s, live_jobs, now);
      tick = std::max(tick, int_at(s, "tick", MonitorFields::kTick));
      continue;
    }
    if (is_scheduler_state(s)) observe_scheduler(s, now);
    tick = std::max(tick, int_of(s, "tick"));
  }
  if (m.pending.valid() && m.pending.wait_for(std::chrono::seconds(0)) == std::future_status::ready)
    apply(m.pending.get(), now);
  if (m.estimate_due && estimates_ && !m.pending.valid()) estimate(now);
  // Retention: hourly, and whenever the records exceed their bound by a tenth.
  if (recording_ && (now >= m.next_prune || m.record_count > m.prune_at_count)) prune(now);
  // Monitors obey scheduler 0 until a switch: from then on, tell each one
  // whose state says it obeys another scheduler (after a switch back to 0,
  // a rebuild or a restart, or a monitor that was not reporting yet).
  if (m.switches > 0)
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
      if (const Value& s = ctx.inferior(i);
          is_monitor_state(s) && int_at(s, "obeys", MonitorFields::kObeys) != m.obeyed)
        ctx.command(i, Fields()("obey", m.obeyed));
  return state(tick);
}

Value Evaluator::state(std::int64_t tick) const {
  EvaluatorMemory& m = env_.memory->evaluator;
  const double now = env_.pool->now();
  Value::Map schedulers, nodes;
  // The nodes in key order (memory's map is ordered as a Value's), and each
  // one's fields: each is appended, not searched for and moved into place,
  // which counts on a pool of thousands.
  nodes.reserve(m.nodes.size());
  for (const auto& [id, e] : m.schedulers)
    schedulers[std::to_string(id)] =
        Fields()("strategy", e.strategy)("decisions", e.decisions)("changes", e.changes)(
            "obeyed", id == m.obeyed)("estimate", e.estimate ? Value(*e.estimate) : Value());
  // A node's entry is rebuilt when what it counts changed. An open span
  // also counts the time up to now: on a pool of kLargePool nodes or more,
  // that is brought up to date for a tenth of the nodes at each call, in
  // turn (at most ten ticks old), rather than for every node at every tick,
  // which cost a tenth of a tick's work at 10,000 nodes (docs/scale.md).
  const bool large = m.nodes.size() >= kLargePool;
  const std::uint64_t turn = m.states_built++ % kRefreshTurns;
  std::uint64_t i = 0;
  for (auto& [name, n] : m.nodes) {
    EvaluatorMemory::PerNode::EntryInputs in{n.available_seconds,  n.observed_seconds, n.owner_retreats,
                                             n.scheduler_retreats, n.accuracy_points,  n.accuracy,
                                             std::nullopt};
    if (n.open) in.open = std::pair(n.open->start, n.open->available);
    const bool due =
        !large || n.entry.is_null() || !(in == n.entry_inputs) || (n.open && i % kRefreshTurns == turn);
    ++i;
    if (due) {
      double seen = n.observed_seconds, up = n.available_seconds;
      if (n.open) {
        seen += now - n.open->start;
        if (n.open->available) up += now - n.open->start;
      }
      n.entry = Fields()("accuracy", n.accuracy ? Value(*n.accuracy) : Value())(
          "accuracy_points", n.accuracy_points)("available_seconds", up)(
          "fraction", seen > 0 ? up / seen : 0.0)("observed_seconds", seen)(
          "owner_retreats", n.owner_retreats)("scheduler_retreats", n.scheduler_retreats);
      n.entry_inputs = std::move(in);
    }
    nodes.insert_or_assign(nodes.end(), name, n.entry);
  }
  Value::List recent;
  for (const auto& r : m.recent)
    recent.push_back(Fields()("time", r.time)("node", r.node)("job", r.job)("by", r.by));
  Value::List recent_ended;
  for (const auto& e : m.recent_ended)
    recent_ended.push_back(Fields()("id", e.id)("name", e.name)("arrival", e.arrival)("end", e.end)(
        "turnaround", e.end - e.arrival)("owner_retreats", e.owner_retreats)("scheduler_retreats",
                                                                             e.scheduler_retreats));
  std::int64_t ended = 0;
  for (const auto& [id, j] : m.jobs) ended += j.end ? 1 : 0;
  return Fields()("tick", tick)("obeyed", m.obeyed)("schedulers", std::move(schedulers))(
      "nodes", std::move(nodes))("ended", std::move(recent_ended))("ended_jobs", ended)(
      "observed_mean_turnaround", m.observed_mean ? Value(*m.observed_mean) : Value())(
      "retreats", std::move(recent))("switches", m.switches)("last_switch", last_switch_);
}

}  // namespace piranha::nps
