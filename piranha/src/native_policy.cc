#include "piranha/native_policy.h"

#include <algorithm>
#include <cctype>

namespace piranha {

std::optional<NativePolicyKind> native_policy_from(std::string_view s) {
  std::string up;
  for (char c : s) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (up == "FAIR") return NativePolicyKind::Fair;
  if (up == "FCFS") return NativePolicyKind::Fcfs;
  return std::nullopt;
}

std::string_view name(NativePolicyKind k) { return k == NativePolicyKind::Fair ? "FAIR" : "FCFS"; }

std::size_t NativePolicy::uniform(std::size_t n) {
  // Rejection sampling keeps it exactly uniform.
  std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do {
    x = rng_();
  } while (x >= limit);
  return static_cast<std::size_t>(x % n);
}

std::optional<std::int64_t> NativePolicy::choose(std::vector<LiveJob> live, std::optional<std::int64_t> current) {
  std::sort(live.begin(), live.end(), [](const LiveJob& a, const LiveJob& b) {
    return a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.id < b.id;
  });
  if (live.empty()) {
    seen_.clear();
    return std::nullopt;
  }
  if (kind_ == NativePolicyKind::Fcfs) return live.front().id;

  auto is_live = [&](std::int64_t id) {
    return std::any_of(live.begin(), live.end(), [id](const LiveJob& j) { return j.id == id; });
  };
  std::erase_if(seen_, [&](std::int64_t id) { return !is_live(id); });
  std::optional<std::int64_t> job = current && is_live(*current) ? current : std::nullopt;
  std::vector<LiveJob> arrived;
  for (const auto& j : live)
    if (!seen_.count(j.id)) arrived.push_back(j);
  if (!job) {
    job = live[uniform(live.size())].id;
    for (const auto& j : live) seen_.insert(j.id);
    return job;
  }
  // q counts the live jobs up to and including each arrival.
  std::size_t q = live.size() - arrived.size();
  for (const auto& j : arrived) {
    ++q;
    seen_.insert(j.id);
    if (uniform(q) == 0) job = j.id;
  }
  return job;
}

}  // namespace piranha
