#include "piranha/base/progress.h"

#include <doctest/doctest.h>

using piranha::ProgressMeter;
using piranha::time_left_words;

TEST_CASE("progress: no estimate before progress over time, then what remains at the rate") {
  ProgressMeter m(30);
  CHECK_FALSE(m.rate());
  CHECK_FALSE(m.seconds_left(100));
  m.observe(0, 0);
  CHECK_FALSE(m.seconds_left(100));
  m.observe(0.5, 10);  // half a second: too short to say
  CHECK_FALSE(m.rate());
  m.observe(10, 0 + 100);
  REQUIRE(m.rate());
  CHECK(*m.rate() == doctest::Approx(10));  // 100 tasks in 10 s
  CHECK(*m.seconds_left(900) == doctest::Approx(90));
  CHECK(*m.seconds_left(0) == 0);  // done: nothing left, rate or not
  ProgressMeter idle;
  idle.observe(0, 5);
  idle.observe(20, 5);
  CHECK_FALSE(idle.seconds_left(10));  // no progress: no estimate, not "forever"
}

TEST_CASE("progress: the rate is the last window's, so a slow start is forgotten") {
  ProgressMeter m(30);
  // 100 s at 1 a second, then 5 a second.
  for (int t = 0; t <= 100; ++t) m.observe(t, t);
  for (int t = 101; t <= 160; ++t) m.observe(t, 100 + 5.0 * (t - 100));
  REQUIRE(m.rate());
  CHECK(*m.rate() == doctest::Approx(5));
  CHECK(*m.seconds_left(500) == doctest::Approx(100));
  // A count that starts again starts the measure again.
  m.observe(161, 3);
  CHECK_FALSE(m.rate());
  // Time going backwards is ignored.
  m.observe(150, 4);
  m.observe(171, 13);
  CHECK(*m.rate() == doctest::Approx(1));
}

TEST_CASE("progress: a time left in words") {
  CHECK(time_left_words(0) == "0 s");
  CHECK(time_left_words(7.2) == "8 s");
  CHECK(time_left_words(250) == "4 min 10 s");
  CHECK(time_left_words(2 * 3600 + 4 * 60 + 1) == "2 h 05 min");
  CHECK(time_left_words(-3) == "0 s");
}
