// What Client and FiberClient share beyond the connection (internal): the
// checks made before a request is sent, the reading of its answer, what a
// lost connection means for a request, and the table of watches, none of
// which depend on how a client waits (a blocking poll for Client, a
// dispatcher fiber for FiberClient). Each client encodes a request with the
// protocol's encoders, waits its own way, and hands the Reply here. What
// stays apart is how each waits and what it keeps of posted requests (Client
// reads answers in order from one queue; FiberClient's dispatcher settles
// them by request id among its fibers' pending calls).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/tuplespace/client.h"

namespace piranha::ts::detail {

// What a lost connection means for the request in flight (client.h,
// "Faults"): sent again on the new session, failed with unknown_outcome, or
// done (unwatch: the watch ended with the session).
enum class Retry : std::uint8_t { Resend, Fail, Done };

// A client's watches by the id its caller holds. The server's ids change
// with each session, so a reconnecting client re-watches each entry and
// records the new server id in it. Not thread-safe.
class WatchTable {
 public:
  struct Watched {
    std::string space;
    Template tmpl;
    WatchId server_id;
  };
  // Records a watch the server knows as `server_id`: the caller's id for it.
  WatchId add(std::string_view space, const Template& t, WatchId server_id);
  // Forgets watch `id` and returns its server id. Throws
  // TupleSpaceError(Code::UnknownWatch) when `id` is not one of these.
  WatchId remove(WatchId id);
  // The caller's id of the watch the server knows as `server_id`;
  // `server_id` itself when there is none (an event of a watch just ended).
  WatchId caller_id(WatchId server_id) const;
  // Every watch by the caller's id, to re-watch after a reconnect.
  std::map<WatchId, Watched>& all() { return watches_; }

 private:
  std::map<WatchId, Watched> watches_;
  WatchId next_ = 1;
};

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
