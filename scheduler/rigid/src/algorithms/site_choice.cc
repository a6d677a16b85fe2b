// MR's and Greedy's choice of sites (seed 002): by load or by predicted
// completion, the lower site on a tie.
#include "site_choice.h"

#include <algorithm>

#include "prediction.h"

namespace piranha::rigid {

namespace {

// The k first of `candidates` after a stable sort by `less`, ascending again.
template <typename Less>
std::vector<int> first_k(std::vector<int> candidates, std::size_t k, Less less) {
  if (candidates.size() <= k) return candidates;
  std::stable_sort(candidates.begin(), candidates.end(), less);
  candidates.resize(k);
  std::sort(candidates.begin(), candidates.end());
  return candidates;
}

}  // namespace

__int128 site_load(const SiteView& v) {
  __int128 load = 0;
  for (const auto& q : v.queue)
    if (q.predicted != kUnknown) load += static_cast<__int128>(q.predicted) * q.width;
  for (const auto& r : v.running)
    if (r.predicted_end != kUnknown) load += static_cast<__int128>(end_of(r, v.now) - v.now) * r.width;
  return load;
}

Time completion_if_appended(const SiteView& v, WaitingJob job) {
  std::vector<WaitingJob> queue(v.queue.begin(), v.queue.end());
  queue.push_back(job);
  SiteView with = v;
  with.queue = queue;
  const Time at = reservations(with).back();
  return at == kNever || job.predicted == kUnknown ? kNever : at + job.predicted;
}

std::vector<int> least_loaded(std::vector<int> candidates, std::size_t k, std::span<const __int128> load,
                              std::span<const int> nodes) {
  return first_k(std::move(candidates), k, [&](int a, int b) {
    const auto ua = static_cast<std::size_t>(a), ub = static_cast<std::size_t>(b);
    return load[ua] * nodes[ub] < load[ub] * nodes[ua];
  });
}

std::vector<int> earliest_completion(std::vector<int> candidates, std::size_t k,
                                     std::span<const Time> completion) {
  return first_k(std::move(candidates), k, [&](int a, int b) {
    return completion[static_cast<std::size_t>(a)] < completion[static_cast<std::size_t>(b)];
  });
}

}  // namespace piranha::rigid
