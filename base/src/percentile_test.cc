#include "piranha/base/percentile.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

using piranha::percentile;

TEST_CASE("percentile: the smallest value with at least q of them at or below") {
  const std::vector<double> v{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  CHECK(percentile(v, 0.5) == 5);   // 5 of 10 at or below 5
  CHECK(percentile(v, 0.51) == 6);  // 5.1 rounds up to the 6th
  CHECK(percentile(v, 0.9) == 9);
  CHECK(percentile(v, 0.99) == 10);
  CHECK(percentile(v, 1) == 10);
}

TEST_CASE("percentile: q = 0 is the smallest value, one value is every percentile") {
  const std::vector<double> v{2.5, 4, 8};
  CHECK(percentile(v, 0) == 2.5);
  CHECK(percentile(v, 0.01) == 2.5);
  const std::vector<double> one{7};
  CHECK(percentile(one, 0) == 7);
  CHECK(percentile(one, 0.5) == 7);
  CHECK(percentile(one, 1) == 7);
}

TEST_CASE("percentile: never interpolates between two values") {
  const std::vector<double> v{10, 20};
  CHECK(percentile(v, 0.5) == 10);
  CHECK(percentile(v, 0.75) == 20);
}

TEST_CASE("percentile: no values, or q below 0 or above 1, is std::invalid_argument") {
  const std::vector<double> v{1, 2};
  CHECK_THROWS_AS(percentile(std::vector<double>{}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(percentile(v, -0.01), std::invalid_argument);
  CHECK_THROWS_AS(percentile(v, 1.01), std::invalid_argument);
  CHECK_THROWS_AS(percentile(v, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}
