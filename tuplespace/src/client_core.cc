#include "client_core.h"

#include <string>
#include <utility>

namespace piranha::ts::detail {

void require_lease(std::chrono::milliseconds lease, std::string_view op) {
  if (lease.count() <= 0)
    throw TupleSpaceError::of(Code::BadRequest, std::string(op) + ": lease must be > 0 ms");
}

std::optional<Leased> taken_of(Reply&& r) {
  if (r.status == Reply::Status::Timeout) return std::nullopt;
  return Leased{std::move(r.tuples.at(0)), r.number};
}

std::optional<Tuple> read_of(Reply&& r) {
  if (r.status == Reply::Status::Timeout) return std::nullopt;
  return std::move(r.tuples.at(0));
}

std::vector<Leased> leased_of(Reply&& r) {
  if (r.leases.size() != r.tuples.size())
    throw TupleSpaceError::of(Code::BadReply, "in_many under a lease answered without lease ids");
  std::vector<Leased> taken;
  taken.reserve(r.tuples.size());
  for (std::size_t i = 0; i < r.tuples.size(); ++i)
    taken.push_back(Leased{std::move(r.tuples[i]), r.leases[i]});
  return taken;
}

WatchId WatchTable::add(std::string_view space, const Template& t, WatchId server_id) {
  WatchId id = next_++;
  watches_.emplace(id, Watched{std::string(space), t, server_id});
  return id;
}

WatchId WatchTable::remove(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end())
    throw TupleSpaceError::of(Code::UnknownWatch,
                              "watch " + std::to_string(id) + " is not one of this client's watches");
  WatchId server_id = it->second.server_id;
  watches_.erase(it);
  return server_id;
}

WatchId WatchTable::caller_id(WatchId server_id) const {
  WatchId id = server_id;
  for (const auto& [mine, w] : watches_)
    if (w.server_id == server_id) id = mine;
  return id;
}

}  // namespace piranha::ts::detail
