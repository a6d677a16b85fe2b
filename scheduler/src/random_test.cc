#include "piranha/scheduler/random.h"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using piranha::sched::Rng;

TEST_CASE("Rng: a seed and stream give one sequence, streams differ") {
  Rng a(7), b(7), c(7, 1);
  bool differs = false;
  for (int i = 0; i < 100; ++i) {
    auto x = a.next();
    CHECK(x == b.next());
    differs |= x != c.next();
  }
  CHECK(differs);
}

TEST_CASE("Rng: uniform_int stays in range and reaches both ends") {
  Rng r(1);
  std::vector<int> seen(10, 0);
  for (int i = 0; i < 10000; ++i) {
    auto v = r.uniform_int(1, 10);
    REQUIRE(v >= 1);
    REQUIRE(v <= 10);
    ++seen[static_cast<std::size_t>(v - 1)];
  }
  for (int c : seen) CHECK(c > 800);  // each about 1000
}

TEST_CASE("Rng: exponential has the asked mean, uniform01 is in 0 to 1, 1 excluded") {
  Rng r(3);
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double u = r.uniform01();
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += r.exponential(60);
  }
  CHECK(std::abs(sum / n - 60) < 1.0);
}
