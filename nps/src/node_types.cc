// Registration of the NPS node types (node_types.h).
#include "piranha/nps/node_types.h"

#include "node_kinds.h"

namespace piranha::nps {

std::shared_ptr<Memory> make_memory() {
  return std::make_shared<Memory>();
}

void add_nps_types(trellis::Registry& types, Environment env) {
  if (!env.memory) env.memory = make_memory();
  types.add(
      "enabler", [env](const trellis::Params& p) { return std::make_unique<Enabler>(env, p); },
      "NPS: each probe is a tick that activates the monitors, owners and jobs node");
  types.add(
      "owner", [env](const trellis::Params& p) { return std::make_unique<Owner>(env, p); },
      "NPS: the owner blocks of one node (params: node)");
  types.add(
      "monitor", [env](const trellis::Params& p) { return std::make_unique<Monitor>(env, p); },
      "NPS: one node's availability and predictions; writes the obeyed scheduler's assignment "
      "(params: node, obey, predictor, window)");
  types.add(
      "jobs", [env](const trellis::Params& p) { return std::make_unique<Jobs>(env, p); },
      "NPS: the live jobs and their statistics");
  types.add(
      "scheduler", [env](const trellis::Params& p) { return std::make_unique<Scheduler>(env, p); },
      "NPS: runs one strategy and commands its monitors (params: id, strategy, period, predictor, "
      "window, spill, on_events, cold_start, seed)");
  types.add(
      "evaluator", [env](const trellis::Params& p) { return std::make_unique<Evaluator>(env, p); },
      "NPS: decisions per scheduler and availability per node");
}

void add_detached_nps_types(trellis::Registry& types) {
  static DetachedPool detached;
  add_nps_types(types, Environment{&detached, make_memory()});
}

}  // namespace piranha::nps
