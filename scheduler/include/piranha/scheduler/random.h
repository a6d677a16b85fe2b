// A small, stable pseudo-random generator for workloads, traces and the
// randomized strategies.
//
// The engine is std::mt19937_64, whose output sequence the C++ standard fixes
// exactly. The distributions on top of it are written out here rather than
// taken from <random>, whose distributions may differ between standard
// libraries; so a seed gives the same workload, trace and schedule everywhere.
#pragma once

#include <cstdint>
#include <random>

namespace piranha::sched {

// SplitMix64 of `x`: spreads related seeds (0, 1, 2, ...) over the whole
// 64-bit space before they seed the engine.
std::uint64_t splitmix64(std::uint64_t x);

// Deterministic generator. Not thread-safe; cheap to copy.
class Rng {
 public:
  // The engine is seeded with splitmix64(seed ^ splitmix64(stream)): distinct streams of
  // one seed (the workload, a strategy's coin flips) never share a sequence.
  explicit Rng(std::uint64_t seed, std::uint64_t stream = 0);

  // The next raw 64-bit output of the engine.
  std::uint64_t next() { return engine_(); }

  // Uniform integer in [0, n), n >= 1, by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t n);

  // Uniform integer in [lo, hi], lo <= hi.
  std::int64_t uniform_int(std::int64_t lo, std::int64_t hi);

  // Uniform real in [0, 1) with 53 random bits.
  double uniform01();

  // True with probability p (p <= 0: never, p >= 1: always).
  bool bernoulli(double p);

  // Exponentially distributed real with the given mean (> 0), by inversion:
  // -mean * ln(1 - u).
  double exponential(double mean);

 private:
  std::mt19937_64 engine_;
};

}  // namespace piranha::sched
