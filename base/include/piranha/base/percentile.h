// percentile(): the nearest-rank percentile, the one way every report in the
// tree (the bench, the swarm, the NPS's tick timer) summarises a sample.
//
// percentile(sorted, q) is the smallest value with at least a fraction q of
// the values at or below it: sorted[ceil(q * n) - 1], and sorted[0] when
// q * n rounds up to 0. It never interpolates, so the result is always one of
// the values.
//
// `sorted` must be in ascending order; the function does not check this (that
// would cost the O(n) it saves) and returns a meaningless value when it is
// not. The caller keeps ownership of the values; nothing is copied.
//
// Errors: std::invalid_argument when `sorted` is empty (there is no value to
// return; callers decide what an empty report says) or when q is not in
// [0, 1] (a NaN included).
//
// A pure function: safe from any number of threads on any data.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>

namespace piranha {

inline double percentile(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile of no values");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("percentile: q must be in [0, 1]");
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(k, 1, sorted.size()) - 1];
}

}  // namespace piranha
