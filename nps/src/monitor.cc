// The monitor node type (node_types.h): one per physical node.
#include <algorithm>
#include <utility>

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
  const NodeStatus* status = pool.node_into(node_, status_) ? &status_ : nullptr;
  // The newest tick and whether an owner blocks the node, in one pass: the
  // enabler's state is {tick} and an owner's {blocked, blocks, complaints,
  // node}, each looked for first where it sits.
  std::int64_t tick = -1;
  bool blocked = false;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    const Value& s = ctx.inferior(i);
    tick = std::max(tick, int_at(s, "tick", 0));
    if (const Value& b = s.get("blocked", 0); b.is_bool() && b.as_bool()) blocked = true;
  }
  MonitorView v;
  v.ap_length = m.predictor->predict(0, *m.history) * pool.history_step();
  // What the node offers, where its agent said (a simulated pool's nodes
  // have none): rebuilt only when it changes, like the decisions.
  static const std::optional<sched::NodeAttributes> kNone;
  const std::optional<sched::NodeAttributes>& offers = status ? status->attributes : kNone;
  if (offers != m.attributes) {
    m.attributes = offers;
    m.attributes_value = offers ? attributes_value(*offers) : Value();
  }
  v.attributes = m.attributes_value;
  v.available = status && status->available && !blocked;
  v.decisions = m.decisions_value;
  v.fraction = m.history->available_fraction(m.window);
  v.history = m.history->now();
  v.node = node_;
  v.obeys = obeys;
  v.predictor = m.predictor_name;
  v.reason = status ? status->reason : std::string();
  v.running = status ? job_value(status->running) : Value();
  v.state = status ? status->state : std::string("unknown");
  v.suspect = status && status->suspect;
  v.tick = tick;
  v.window = m.window;
  update_monitor_state(m.state, m.spare, v);
  return m.state;
}

Value monitor_state(const MonitorView& v) {
  // In key order (Fields).
  return Fields()("ap_length", v.ap_length)("attributes", v.attributes)("available", v.available)(
      "decisions", v.decisions)("fraction", v.fraction)("history", v.history)("node", v.node)(
      "obeys", v.obeys)("predictor", v.predictor)("reason", v.reason)("running", v.running)("state", v.state)(
      "suspect", v.suspect)("tick", v.tick)("window", v.window);
}

void update_monitor_state(Value& state, Value& spare, const MonitorView& v) {
  constexpr std::size_t kFields = MonitorFields::kCount;
  if (!state.is_map() || std::as_const(state).as_map().size() != kFields) {
    state = monitor_state(v);
    return;
  }
  // The fields in key order, as monitor_state builds them; a field is
  // written only when it differs, so an unshared state is not touched more
  // than it changes.
  const Value fields[kFields] = {v.ap_length, v.attributes, v.available, v.decisions, v.fraction,
                                 v.history,   v.node,       v.obeys,     v.predictor, v.reason,
                                 v.running,   v.state,      v.suspect,   v.tick,      v.window};
  const Value::Map& now = std::as_const(state).as_map();
  std::size_t k = 0;
  while (k < kFields && (now.begin() + static_cast<std::ptrdiff_t>(k))->second == fields[k]) ++k;
  if (k == kFields) return;
  // A spare of the state's shape is overwritten entry by entry (copied
  // first, by as_map, only if something still holds it); without one, the
  // state is copied.
  Value next = std::move(spare);
  const bool reuse = next.is_map() && std::as_const(next).as_map().size() == kFields;
  if (!reuse) next = state;
  Value::Map& out = next.as_map();
  if (reuse)
    for (std::size_t j = 0; j < k; ++j) {
      auto& [key, value] = *(out.begin() + static_cast<std::ptrdiff_t>(j));
      const auto& [now_key, now_value] = *(now.begin() + static_cast<std::ptrdiff_t>(j));
      if (key != now_key) key = now_key;
      if (!(value == now_value)) value = now_value;
    }
  for (auto it = out.begin() + static_cast<std::ptrdiff_t>(k); k < kFields; ++k, ++it) {
    if (const std::string& now_key = (now.begin() + static_cast<std::ptrdiff_t>(k))->first;
        it->first != now_key)
      it->first = now_key;
    if (!(it->second == fields[k])) it->second = fields[k];
  }
  spare = std::move(state);
  state = std::move(next);
}

}  // namespace piranha::nps
