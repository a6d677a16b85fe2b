#include "piranha/tuplespace/status.h"

#include <array>
#include <utility>

namespace piranha::ts {
namespace {

// In the enum's order, so code_to_wire is an index.
constexpr std::array<std::pair<Code, std::string_view>, 20> kWords{{
    {Code::BadRequest, "bad_request"},
    {Code::UnsupportedVersion, "unsupported_version"},
    {Code::UnknownOp, "unknown_op"},
    {Code::TooLarge, "too_large"},
    {Code::UnknownSpace, "unknown_space"},
    {Code::UnknownLease, "unknown_lease"},
    {Code::UnknownWatch, "unknown_watch"},
    {Code::SpaceRemoved, "space_removed"},
    {Code::NotPermitted, "not_permitted"},
    {Code::DiskFull, "disk_full"},
    {Code::Unreachable, "unreachable"},
    {Code::UnknownOutcome, "unknown_outcome"},
    {Code::DeadlineExceeded, "deadline_exceeded"},
    {Code::AuthFailed, "auth_failed"},
    {Code::Interrupted, "interrupted"},
    {Code::Closed, "closed"},
    {Code::BadReply, "bad_reply"},
    {Code::Timeout, "timeout"},
    {Code::WrongPool, "wrong_pool"},
    {Code::Unrecognized, "unrecognized"},
}};

constexpr bool in_enum_order() {
  for (std::size_t i = 0; i < kWords.size(); ++i)
    if (static_cast<std::size_t>(kWords[i].first) != i) return false;
  return kWords.back().first == Code::Unrecognized;
}
static_assert(in_enum_order(), "kWords must list every Code once, in the enum's order");

}  // namespace

std::string_view code_to_wire(Code code) {
  return kWords[static_cast<std::size_t>(code)].second;
}

Code code_from_wire(std::string_view word) {
  for (const auto& [code, w] : kWords)
    if (w == word) return code;
  return Code::Unrecognized;
}

bool sent_by_server(Code code) {
  return code <= Code::DiskFull;
}

}  // namespace piranha::ts
