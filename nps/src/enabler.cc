// The enabler and owner node types (node_types.h).
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

Owner::Owner(Environment env, const trellis::Params& p) : env_(std::move(env)), node_(p.string("node")) {}

Value Owner::calculate(trellis::Context&) {
  const double now = env_.pool->now();
  Value::List blocks;
  bool blocked = false;
  for (const Block& b : env_.pool->blocks(node_)) {
    Value::List span;
    span.emplace_back(b.start);
    span.emplace_back(b.end);
    blocks.emplace_back(std::move(span));
    blocked = blocked || (b.start <= now && now < b.end);
  }
  Value::List complaints;
  for (const Complaint& c : env_.pool->complaints(node_))
    complaints.push_back(Fields()("time", c.time)("text", c.text));
  return Fields()("node", node_)("blocks", std::move(blocks))("blocked", blocked)("complaints",
                                                                                  std::move(complaints));
}

}  // namespace piranha::nps
