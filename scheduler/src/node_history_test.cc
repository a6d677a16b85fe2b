#include "piranha/scheduler/node_history.h"

#include <doctest/doctest.h>

#include "brute_force.h"
#include "piranha/scheduler/random.h"

using namespace piranha::sched;

TEST_CASE("NodeHistory: window queries equal the direct definition, through ring wrap-around") {
  Rng rng(11);
  const std::int64_t keep = 37;
  NodeHistory h(keep);
  std::vector<bool> v;
  bool state = true;
  for (int step = 0; step < 500; ++step) {
    if (rng.bernoulli(0.2)) state = !state;
    h.observe(state);
    v.push_back(state);
    const std::int64_t now = h.now();
    for (std::int64_t a = now - keep; a <= now; a += 3)
      for (std::int64_t b = a; b <= now + 2; b += 4) {
        INFO("now " << now << " [" << a << ", " << b << ")");
        REQUIRE(h.average_ap_length(a, b) == doctest::Approx(brute::average_ap_length(v, a, b)));
      }
  }
}

TEST_CASE("NodeHistory: available fraction is 1 before any step and counts only steps >= 0") {
  NodeHistory h(10);
  CHECK(h.available_fraction(10) == 1.0);
  h.observe(true);
  h.observe(false);
  CHECK(h.available_fraction(10) == 0.5);
  CHECK(h.available_fraction(1) == 0.0);
}

TEST_CASE("NodeHistory: last AP and the exponential burst average count only APs that ended") {
  NodeHistory h(5);
  for (bool b : {true, true, true}) h.observe(b);  // a run from step 0, not yet ended
  CHECK_FALSE(h.last_ap());
  CHECK_FALSE(h.burst_average());
  h.observe(false);
  CHECK(h.last_ap() == 3);
  CHECK(*h.burst_average() == 3.0);
  for (bool b : {true, false}) h.observe(b);
  CHECK(h.last_ap() == 1);
  CHECK(*h.burst_average() == 0.5 * 1 + 0.5 * 3);
  for (bool b : {true, true, true, true, true, true, true, false}) h.observe(b);
  CHECK(h.last_ap() == 7);
  CHECK(*h.burst_average() == 0.5 * 7 + 0.5 * 2);
}
