// The evaluator node type (node_types.h): comparative data on every
// scheduler's decisions and on the availability each node showed.
#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {

Evaluator::Evaluator(Environment env, const trellis::Params&) : env_(std::move(env)) {}

Value Evaluator::calculate(trellis::Context& ctx) {
  EvaluatorMemory& m = env_.memory->evaluator;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    const Value& s = ctx.inferior(i);
    if (s["assignments"].is_map() && s["strategy"].is_string()) {
      auto& e = m.schedulers[int_of(s, "id")];
      e.strategy = s["strategy"].as_string();
      const std::int64_t count = int_of(s, "decisions", 0);
      if (count == e.last_count) continue;  // no new decision
      e.last_count = count;
      ++e.decisions;
      for (const auto& [node, job] : s["assignments"].as_map()) {
        const auto before = e.last.find(node);
        if (before != e.last.end() && before->second != job_of(job)) ++e.changes;
        e.last[node] = job_of(job);
      }
    } else if (s["node"].is_string() && s["available"].is_bool()) {
      auto& n = m.nodes[s["node"].as_string()];
      const std::int64_t tick = int_of(s, "tick");
      if (tick <= n.last_tick) continue;  // one sample per tick
      n.last_tick = tick;
      ++n.ticks;
      if (s["available"].as_bool()) ++n.available_ticks;
    }
  }
  Value::Map schedulers, nodes;
  for (const auto& [id, e] : m.schedulers)
    schedulers[std::to_string(id)] =
        Fields()("strategy", e.strategy)("decisions", e.decisions)("changes", e.changes)("obeyed", id == 0);
  for (const auto& [name, n] : m.nodes)
    nodes[name] = Fields()("ticks", n.ticks)("available_ticks", n.available_ticks)(
        "fraction",
        n.ticks == 0 ? 0.0 : static_cast<double>(n.available_ticks) / static_cast<double>(n.ticks));
  return Fields()("tick", newest_tick(ctx))("schedulers", std::move(schedulers))("nodes", std::move(nodes));
}

}  // namespace piranha::nps
