#include "fit_index.h"

#include <doctest/doctest.h>

#include <random>

namespace piranha::rigid {

TEST_CASE("FitIndex: the first waiting job that fits, from a position on") {
  FitIndex idx(5);
  CHECK(idx.next_fit(0, 100) == 5);
  CHECK(idx.next(0) == 5);
  idx.set(1, 4);
  idx.set(3, 2);
  CHECK(idx.next_fit(0, 4) == 1);
  CHECK(idx.next_fit(0, 3) == 3);
  CHECK(idx.next_fit(2, 4) == 3);
  CHECK(idx.next_fit(4, 4) == 5);
  CHECK(idx.next_fit(0, 1) == 5);
  CHECK(idx.next(2) == 3);
  idx.clear(3);
  CHECK(idx.next_fit(0, 3) == 5);
}

TEST_CASE("FitIndex finds what a scan of the positions finds, on random queues") {
  std::mt19937_64 rng(33);
  for (std::size_t n : {1, 2, 7, 64, 100}) {
    CAPTURE(n);
    FitIndex idx(n);
    std::vector<int> width(n, 0);  // 0: empty
    for (int step = 0; step < 2000; ++step) {
      const auto i = static_cast<std::size_t>(rng() % n);
      if (rng() % 2) {
        width[i] = static_cast<int>(rng() % 16) + 1;
        idx.set(i, width[i]);
      } else {
        width[i] = 0;
        idx.clear(i);
      }
      const auto from = static_cast<std::size_t>(rng() % (n + 1));
      const int free = static_cast<int>(rng() % 18);
      std::size_t expected = from;
      while (expected < n && (width[expected] == 0 || width[expected] > free)) ++expected;
      REQUIRE(idx.next_fit(from, free) == expected);
    }
  }
}

}  // namespace piranha::rigid
