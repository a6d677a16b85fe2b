// The owner node type (node_types.h): one node's owner blocks and complaints.
#include <algorithm>
#include <limits>
#include <utility>

#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {

Owner::Owner(Environment env, const trellis::Params& p) : env_(std::move(env)), node_(p.string("node")) {}

Value Owner::calculate(trellis::Context& ctx) {
  const double now = env_.pool->now();
  const auto version = env_.pool->owners_version();
  if (version && version == version_ && now < next_change_ && !ctx.state().is_null()) return ctx.state();
  auto in_blocks = env_.pool->blocks(node_);
  auto in_complaints = env_.pool->complaints(node_);
  bool blocked = false;
  version_ = version;
  next_change_ = std::numeric_limits<double>::infinity();
  for (const Block& b : in_blocks) {
    blocked = blocked || (b.start <= now && now < b.end);
    if (b.start > now) next_change_ = std::min(next_change_, b.start);
    if (b.end > now) next_change_ = std::min(next_change_, b.end);
  }
  if (!ctx.state().is_null() && blocked == blocked_ && in_blocks == blocks_ && in_complaints == complaints_)
    return ctx.state();
  blocks_ = std::move(in_blocks);
  complaints_ = std::move(in_complaints);
  blocked_ = blocked;
  Value::List blocks;
  for (const Block& b : blocks_) {
    Value::List span;
    span.emplace_back(b.start);
    span.emplace_back(b.end);
    blocks.emplace_back(std::move(span));
  }
  Value::List complaints;
  for (const Complaint& c : complaints_) complaints.push_back(Fields()("time", c.time)("text", c.text));
  return Fields()("blocked", blocked)("blocks", std::move(blocks))("complaints", std::move(complaints))(
      "node", node_);  // in key order (Fields)
}

}  // namespace piranha::nps
