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

}  // namespace piranha::ts::detail
