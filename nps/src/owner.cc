// The owner node type (node_types.h): one node's owner blocks and complaints.
#include <utility>

#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {

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
  return Fields()("blocked", blocked)("blocks", std::move(blocks))("complaints", std::move(complaints))(
      "node", node_);  // in key order (Fields)
}

}  // namespace piranha::nps
