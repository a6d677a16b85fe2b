// The enabler node type (node_types.h): each probe is a tick.
#include <utility>

#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {

Enabler::Enabler(Environment env, const trellis::Params& p) : env_(std::move(env)) {
  // The period is the live shell's business (it probes the enabler right
  // after refreshing the pool); it is read here so that a bad one is an error.
  if (!(p.number("period", 10) > 0)) throw trellis::BadParameter("period", "period must be positive");
}

Value Enabler::calculate(trellis::Context& ctx) {
  std::int64_t& tick =
      env_.memory->enabler_ticks.try_emplace(ctx.name(), int_of(ctx.state(), "tick")).first->second;
  if (ctx.activated_by(trellis::Cause::Probe)) ++tick;
  Value::Map state;
  state["tick"] = tick;
  return state;
}

}  // namespace piranha::nps
