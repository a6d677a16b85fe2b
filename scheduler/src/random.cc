#include "piranha/scheduler/random.h"

#include <cmath>

namespace piranha::sched {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

Rng::Rng(std::uint64_t seed, std::uint64_t stream) : engine_(splitmix64(seed ^ splitmix64(stream))) {}

std::uint64_t Rng::below(std::uint64_t n) {
  // Accept only draws below the largest multiple of n that fits in 64 bits.
  const std::uint64_t limit = (~std::uint64_t{0} / n) * n;
  std::uint64_t x = next();
  while (x >= limit) x = next();
  return x % n;
}

std::int64_t Rng::uniform_int(std::int64_t lo, std::int64_t hi) {
  const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo);
  if (span == ~std::uint64_t{0}) return static_cast<std::int64_t>(next());
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + below(span + 1));
}

double Rng::uniform01() {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

bool Rng::bernoulli(double p) {
  return uniform01() < p;
}

double Rng::exponential(double mean) {
  return -mean * std::log1p(-uniform01());
}

}  // namespace piranha::sched
