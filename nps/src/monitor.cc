// The monitor node type (node_types.h): one per physical node.
#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {

Value decisions_value(const std::map<std::int64_t, std::optional<JobId>>& decisions) {
  Value::Map out;
  for (const auto& [id, job] : decisions) out[std::to_string(id)] = job_value(job);
  return out;
}

Monitor::Monitor(Environment env, const trellis::Params& p)
    : env_(std::move(env)), node_(p.string("node")), obey_(p.integer("obey", 0)) {
  const std::string predictor = p.string("predictor", "REC_HIST");
  const std::int64_t window = p.integer("window", 10);
  if (window < 1) throw trellis::BadParameter("window", "window must be at least 1 history step");
  MonitorMemory& m = env_.memory->monitors[node_];
  if (!m.predictor || m.predictor_name != predictor || m.window != window) {
    try {
      m.predictor = sched::make_predictor(predictor, window,
                                          sched::Calendar::for_step_seconds(env_.pool->step_seconds()), 1);
    } catch (const InputError& e) {
      throw trellis::BadParameter("predictor", e.what());
    }
    m.predictor_name = predictor;
    m.window = window;
    m.history = std::make_unique<sched::NodeHistory>(std::max(m.predictor->lookback(), window) + 1);
  }
  memory_ = &m;
}

Value Monitor::calculate(trellis::Context& ctx) {
  Pool& pool = *env_.pool;
  MonitorMemory& m = *memory_;
  // Commands first: a scheduler's decision for this node, or an
  // evaluator's switch to another scheduler. Whichever scheduler it obeys,
  // its decisions go out under the `obey` id, the one agents listen to.
  const std::int64_t before = m.obeys.value_or(obey_);
  for (const auto& c : ctx.commands()) {
    if (const std::int64_t to = int_of(c.data, "obey"); to >= 0) {
      m.obeys = to;
      continue;
    }
    const std::int64_t id = int_of(c.data, "scheduler");
    if (id < 0) continue;
    const std::optional<JobId> job = job_of(c.data["job"]);
    if (const auto [it, added] = m.decisions.try_emplace(id, job); added || it->second != job) {
      it->second = job;
      m.decisions_value = decisions_value(m.decisions);
    }
    if (id == m.obeys.value_or(obey_)) pool.assign(obey_, int_of(c.data, "epoch", pool.epoch()), node_, job);
  }
  const std::int64_t obeys = m.obeys.value_or(obey_);
  if (obeys != before)
    if (const auto d = m.decisions.find(obeys); d != m.decisions.end())
      pool.assign(obey_, pool.epoch(), node_, d->second);
  // Then the node's availability since it was last looked at.
  for (bool up : pool.steps(node_, m.history->now())) {
    m.history->observe(up);
    m.predictor->observe(0, *m.history);
  }
  const auto status = pool.node(node_);
  bool blocked = false;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
    if (const Value& b = ctx.inferior(i)["blocked"]; b.is_bool() && b.as_bool()) blocked = true;
  // In key order (Fields).
  return Fields()("ap_length", m.predictor->predict(0, *m.history) * pool.history_step())(
      "available", status && status->available && !blocked)("decisions", m.decisions_value)(
      "fraction", m.history->available_fraction(m.window))("history", m.history->now())("node", node_)(
      "obeys", obeys)("predictor", m.predictor_name)("reason", status ? status->reason : std::string())(
      "running", status ? job_value(status->running) : Value())(
      "state", status ? status->state : std::string("unknown"))("suspect", status && status->suspect)(
      "tick", newest_tick(ctx))("window", m.window);
}

}  // namespace piranha::nps
