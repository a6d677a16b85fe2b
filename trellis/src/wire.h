// The messages between the hosts of a trellis program (internal).
//
// Each ZeroMQ message is one msgpack array whose first element is its kind:
//   [0, sent_ns]                      ping: a heartbeat; answered by a pong
//   [1, sent_ns]                      pong: the ping's sent_ns, echoed
//   [2, cause, from, to, data, trace_id, origin, elapsed_ns]
//                                     an activation of node `to` (a name) by
//                                     node `from`; cause is a Cause code; data
//                                     a Value; trace_id 0 when untraced, else
//                                     the probe of `origin` that began
//                                     elapsed_ns ago (sender's view)
// Values: nil, bool, int (int64 range), float64 (always 8 bytes, so 3.0
// stays a double), str, array, map with string keys. Nodes are named, not
// numbered, so hosts with differing program files drop what they do not
// know instead of misdelivering it. docs/trellis.md documents this format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "piranha/base/wire_error.h"
#include "piranha/trellis/node.h"
#include "piranha/trellis/value.h"

namespace piranha::trellis::wire {

enum class Kind : std::uint8_t { Ping = 0, Pong = 1, Activation = 2 };

struct Message {
  Kind kind = Kind::Ping;
  std::int64_t sent_ns = 0;  // ping, pong
  Cause cause = Cause::Probe;
  std::string from, to, origin;
  Value data;
  std::uint64_t trace_id = 0;
  std::int64_t elapsed_ns = 0;
};

void encode(std::string& out, const Message& m);
// Throws WireError for anything that is not a well-formed message.
Message decode(std::string_view bytes);

// Values alone (also used by tests).
void encode_value(std::string& out, const Value& v);
Value decode_value(std::string_view bytes);

}  // namespace piranha::trellis::wire
