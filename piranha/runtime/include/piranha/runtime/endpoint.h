// Endpoint syntax, checked in one place for every --server, --bind and
// --connect option and every `server:` in a configuration file, so that a
// typo fails at once with the problem named instead of reaching ZeroMQ
// (which wraps a port of 99999 round to 34463 and fails on "garbage" only
// when connecting, again and again).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace piranha {

enum class EndpointUse { Connect, Bind };

// What is wrong with `endpoint`, or nullopt when it is well formed:
//   tcp://HOST:PORT   HOST a name, an IPv4 address or [IPv6]; PORT 1-65535
//                     (Bind also takes HOST "*" and PORT "*": any free port)
//   ipc://PATH        PATH not empty
//   inproc://NAME     NAME not empty
// The problem reads after the option's name: "port 99999 is out of range
// (1-65535) in 'tcp://127.0.0.1:99999'".
std::optional<std::string> endpoint_problem(std::string_view endpoint,
                                            EndpointUse use = EndpointUse::Connect);

// True when only this machine can reach a well-formed `endpoint`: ipc://,
// inproc://, and tcp:// on a loopback host (127.x.x.x, [::1], localhost, or
// the interface lo). A host name other than localhost counts as reachable
// from elsewhere, whatever it resolves to.
bool endpoint_is_local(std::string_view endpoint);

// Whether `name` may name a pool (docs/operations.md, "Pools"): 1 to 64
// letters, digits, '-', '_' or '.'; what `piranha ts serve --pool`, every
// --pool and an agent's `pool:` accept.
bool valid_pool_name(std::string_view name);

}  // namespace piranha
