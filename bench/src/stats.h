// Latency summaries and clocks for the benchmark (internal).
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

#include "piranha/base/clock.h"

namespace piranha::bench {

inline double micros(Clock::duration d) {
  return std::chrono::duration<double, std::micro>(d).count();
}
inline double seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Percentiles of a set of latency samples, in microseconds.
struct Latency {
  std::size_t samples = 0;
  double p50 = 0, p90 = 0, p99 = 0, mean = 0, min = 0;
};

// Nearest-rank percentiles. Empty input gives all zeros.
Latency summarize(std::vector<double> us);

}  // namespace piranha::bench
