// The scheduler node type (node_types.h): one strategy of the strategy
// library, deciding from the jobs node and its monitors.
#include <algorithm>
#include <cmath>

#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {
namespace {

bool is_monitor(const Value& state) {
  return state["node"].is_string() && state["decisions"].is_map();
}
bool is_jobs(const Value& state) {
  return state["jobs"].is_list();
}

}  // namespace

Scheduler::Scheduler(Environment env, const trellis::Params& p)
    : env_(std::move(env)),
      id_(p.integer("id")),
      period_(p.number("period", 1)),
      predictor_(p.string("predictor", "REC_HIST")),
      window_(p.integer("window", 10)),
      spill_(p.boolean("spill", false)),
      on_events_(p.boolean("on_events", false)),
      cold_start_(p.number("cold_start", 0)) {
  if (id_ < 0) throw trellis::BadParameter("id", "a scheduler id must not be negative");
  if (!(period_ > 0)) throw trellis::BadParameter("period", "period must be positive");
  if (window_ < 1) throw trellis::BadParameter("window", "window must be at least 1 history step");
  if (!(cold_start_ >= 0)) throw trellis::BadParameter("cold_start", "cold_start must not be negative");
  const std::string strategy = p.string("strategy", "TSK");
  const auto seed = static_cast<std::uint64_t>(p.integer("seed", 0));
  SchedulerMemory& m = env_.memory->schedulers[id_];
  std::string canonical;
  try {
    canonical = sched::canonical_strategy_name(strategy);
    if (!m.strategy || m.strategy_name != canonical) {
      m = SchedulerMemory{};
      m.strategy = sched::make_strategy(strategy);
      m.strategy_name = canonical;
      m.rng = std::make_unique<sched::Rng>(seed, 2);  // the simulator's stream for strategies
    }
  } catch (const sched::StrategyError& e) {
    throw trellis::BadParameter("strategy", e.what());
  }
  memory_ = &m;
}

bool Scheduler::ready(const trellis::Context& ctx, std::int64_t tick) const {
  bool jobs = false;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    const Value& s = ctx.inferior(i);
    if (is_jobs(s)) jobs = true;
    if (ctx.inferior_link(i) != trellis::LinkState::Up) {
      if (is_jobs(s) || s.is_null()) return false;  // no job list, no decision
      continue;                                     // a monitor out of reach is left out
    }
    if (int_of(s, "tick") < tick) return false;
  }
  return jobs;
}

Value Scheduler::calculate(trellis::Context& ctx) {
  SchedulerMemory& m = *memory_;
  const std::int64_t tick = newest_tick(ctx);
  if (tick > m.last_tick && ready(ctx, tick)) {
    const double now = env_.pool->now();
    bool due = !m.next_due || now >= *m.next_due - env_.pool->slack();
    if (on_events_ && !due) {
      std::vector<JobId> ids;
      for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
        if (is_jobs(ctx.inferior(i)))
          for (const Value& j : ctx.inferior(i)["jobs"].as_list()) ids.push_back(int_of(j, "id"));
      due = ids != m.last_queue;
    }
    m.last_tick = tick;
    if (due) decide(ctx);
    // Alive and deciding: beaten every tick, so that a period longer than
    // the agents' stale time does not make them fall back between decisions.
    env_.pool->heartbeat(id_);
  }
  // Re-send a decision a monitor has not recorded by a later tick (its host
  // came back, or it was rebuilt): monitors are the only way decisions
  // reach the agents.
  const std::string key = std::to_string(id_);
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    const Value& s = ctx.inferior(i);
    if (!is_monitor(s) || ctx.inferior_link(i) != trellis::LinkState::Up) continue;
    const std::string& node = s["node"].as_string();
    const auto it = m.decided.find(node);
    if (it == m.decided.end()) continue;
    const Value& recorded = s["decisions"];
    if (recorded.as_map().count(key) && job_of(recorded[key]) == it->second) continue;
    if (int_of(s, "tick") <= m.sent_tick[node]) continue;  // it has not had the chance yet
    send(ctx, i, node, it->second);
  }
  Value::Map assignments;
  for (const auto& [node, job] : m.decided) assignments[node] = job_value(job);
  return Fields()("id", id_)("strategy", m.strategy_name)("tick", m.last_tick)("decisions", m.decisions)(
      "assignments", std::move(assignments));
}

void Scheduler::send(trellis::Context& ctx, std::size_t monitor, const std::string& node,
                     std::optional<JobId> job, std::optional<std::int64_t> epoch) {
  ctx.command(monitor,
              Fields()("scheduler", id_)("epoch", epoch.value_or(env_.pool->epoch()))("job", job_value(job)));
  memory_->sent_tick[node] = memory_->last_tick;
}

void Scheduler::decide(trellis::Context& ctx) {
  SchedulerMemory& m = *memory_;
  Pool& pool = *env_.pool;
  const double now = pool.now();
  std::vector<sched::QueuedJob> queue;
  std::vector<std::size_t> monitors;
  std::vector<std::optional<JobId>> current;
  std::vector<double> ap, fraction;
  m.last_queue.clear();
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    const Value& s = ctx.inferior(i);
    if (is_jobs(s)) {
      for (const Value& j : s["jobs"].as_list()) {
        sched::QueuedJob q;
        q.id = int_of(j, "id");
        q.arrival = number_of(j, "arrival");
        const bool measured = j["measured"].is_bool() && j["measured"].as_bool();
        q.task_time = measured ? number_of(j, "task_time") : cold_start_;
        q.tasks = int_of(j, "tasks", 1);
        q.tasks_left = int_of(j, "tasks_left", 1);
        q.attained = number_of(j, "attained");
        q.queue_length_at_arrival = int_of(j, "q", 0);
        queue.push_back(q);
        m.last_queue.push_back(q.id);
      }
    } else if (is_monitor(s)) {
      monitors.push_back(i);
      const auto it = m.decided.find(s["node"].as_string());
      current.push_back(it == m.decided.end() ? std::nullopt : it->second);
      ap.push_back(number_of(s, "ap_length"));
      fraction.push_back(number_of(s, "fraction", 1));
    }
  }
  sched::FixedOutlook outlook(std::move(ap), std::move(fraction));
  const auto chosen =
      m.decider.decide(*m.strategy, now, std::move(queue), current, &outlook, m.rng.get(), spill_);
  const std::int64_t epoch = pool.epoch();
  for (std::size_t k = 0; k < monitors.size(); ++k) {
    const std::string& node = ctx.inferior(monitors[k])["node"].as_string();
    m.decided[node] = chosen[k];
    if (chosen[k] != current[k] || m.decisions == 0) send(ctx, monitors[k], node, chosen[k], epoch);
  }
  ++m.decisions;
  // The next due time is a whole number of periods after the first decision,
  // so a late tick does not shift every later one.
  if (!m.next_due) m.next_due = now;
  while (*m.next_due <= now + env_.pool->slack()) *m.next_due += period_;
}

}  // namespace piranha::nps
