// Direct, slow restatements of docs/scheduling.md, "Availability prediction" for the tests to compare
// the incremental code against.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace piranha::sched::brute {

// Mean length of maximal runs of true inside [a, b) ∩ [0, size), 0 if none.
inline double average_ap_length(const std::vector<bool>& v, std::int64_t a, std::int64_t b) {
  a = std::max<std::int64_t>(a, 0);
  b = std::min<std::int64_t>(b, static_cast<std::int64_t>(v.size()));
  std::int64_t total = 0, runs = 0;
  for (std::int64_t s = a; s < b; ++s) {
    if (!v[static_cast<std::size_t>(s)]) continue;
    ++total;
    if (s == a || !v[static_cast<std::size_t>(s - 1)]) ++runs;
  }
  return runs == 0 ? 0.0 : static_cast<double>(total) / static_cast<double>(runs);
}

// Lengths of the APs that ended (were followed by a false) before size.
inline std::vector<std::int64_t> ended_aps(const std::vector<bool>& v) {
  std::vector<std::int64_t> out;
  std::int64_t run = 0;
  for (bool b : v) {
    if (b) {
      ++run;
    } else {
      if (run > 0) out.push_back(run);
      run = 0;
    }
  }
  return out;
}

}  // namespace piranha::sched::brute
