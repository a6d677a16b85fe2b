// What Client and FiberClient share beyond the connection (internal): the
// checks made before a request is sent and the reading of its answer, which
// do not depend on how a client waits (a blocking poll for Client, a
// dispatcher fiber for FiberClient). Each client encodes a request with the
// protocol's encoders, waits its own way, and hands the Reply here.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>
#include <vector>

#include "piranha/tuplespace/client.h"

namespace piranha::ts::detail {

// Throws TupleSpaceError(Code::BadRequest), naming `op`, unless `lease` > 0:
// what in_many_leased and prefetch need before anything is sent.
void require_lease(std::chrono::milliseconds lease, std::string_view op);

// The answer to an in: the tuple under its lease (0 without one), or nullopt
// when the wait ended with none.
std::optional<Leased> taken_of(Reply&& r);
// The answer to an rd: the tuple, or nullopt when the wait ended with none.
std::optional<Tuple> read_of(Reply&& r);
// The answer to an in_many under leases: each tuple with its own lease.
// Throws TupleSpaceError(Code::BadReply) when the server sent no lease ids.
std::vector<Leased> leased_of(Reply&& r);

// Runs `request` (a call that throws TupleSpaceError on an error reply):
// true when it succeeded, false when the server answered with `refusal`
// (complete: Code::UnknownLease; remove: Code::UnknownSpace); other errors
// are thrown.
template <class Request>
bool unless_refused(Code refusal, Request&& request) {
  try {
    request();
    return true;
  } catch (const TupleSpaceError& e) {
    if (e.code() == refusal) return false;
    throw;
  }
}

// The one stats entry of stats(space): nullopt when the space does not exist.
template <class Request>
std::optional<SpaceStats> stats_of_one(Request&& request) {
  std::vector<SpaceStats> all;
  if (!unless_refused(Code::UnknownSpace, [&] { all = request(); }) || all.empty()) return std::nullopt;
  return all.front();
}

}  // namespace piranha::ts::detail
