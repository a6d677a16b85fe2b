#include "piranha/scheduler/prediction_eval.h"

#include <doctest/doctest.h>

#include "brute_force.h"
#include "piranha/scheduler/random.h"

using namespace piranha::sched;

TEST_CASE("prediction_matches: rounding halves up, tolerance relative to the actual") {
  CHECK(prediction_matches(2.5, 3, 0.0));  // 2.5 rounds to 3
  CHECK_FALSE(prediction_matches(2.49, 3, 0.0));
  CHECK(prediction_matches(27, 30, 0.1));
  CHECK_FALSE(prediction_matches(26, 30, 0.1));
  CHECK(prediction_matches(63, 90, 0.7 - 0.4));  // 0.3 × 90 is 27 exactly, though not in binary
  CHECK(prediction_matches(153, 90, 0.7));       // 0.7 × 90 computes as 62.99999999999999
  CHECK(prediction_matches(0.4, 0, 0.2));        // both round to 0
  CHECK_FALSE(prediction_matches(1, 0, 0.2));
}

TEST_CASE("evaluate_predictors: REC_HIST and AVAIL scored as the spec defines, at every point") {
  piranha::AvailabilityTrace t;
  t.length = 400;
  Rng rng(2);
  std::vector<std::vector<bool>> bits(3);
  for (std::size_t n = 0; n < 3; ++n) {
    t.nodes.push_back("n" + std::to_string(n));
    t.periods.emplace_back();
    bool up = true;
    for (std::int64_t s = 0; s < t.length; ++s) {
      if (rng.bernoulli(0.1)) up = !up;
      bits[n].push_back(up);
      if (!up) continue;
      if (!t.periods[n].empty() && t.periods[n].back().end == s)
        t.periods[n].back().end = s + 1;
      else
        t.periods[n].push_back({s, s + 1});
    }
  }
  const std::int64_t w = 6, stride = 4;
  auto scores = evaluate_predictors(t, {"REC_HIST", "avail"}, w, {0.0, 0.2}, stride);
  std::int64_t points = 0, rec0 = 0, rec2 = 0, av2 = 0;
  for (std::size_t n = 0; n < 3; ++n)
    for (std::int64_t s = w; s + w <= t.length; s += stride) {
      ++points;
      const double actual = brute::average_ap_length(bits[n], s, s + w);
      const double rec = brute::average_ap_length(bits[n], s - w, s);
      rec0 += prediction_matches(rec, actual, 0.0);
      rec2 += prediction_matches(rec, actual, 0.2);
      av2 += prediction_matches(double(w), actual, 0.2);
    }
  REQUIRE(scores.size() == 2);
  CHECK(scores[0].predictor == "REC_HIST");
  CHECK(scores[1].predictor == "AVAIL");
  CHECK(scores[0].points == points);
  CHECK(scores[0].matched == std::vector<std::int64_t>{rec0, rec2});
  CHECK(scores[1].matched[1] == av2);
}

TEST_CASE("evaluate_predictors: bad windows and too-short traces are errors") {
  piranha::AvailabilityTrace t;
  t.length = 2000;
  t.nodes = {"a"};
  t.periods = {{{0, 2000}}};
  CHECK_THROWS_WITH(evaluate_predictors(t, {"REC_HIST"}, 2001, {0.1}),
                    "--window: 2001 is longer than the trace (2000 steps)");
  CHECK_THROWS_WITH(
      evaluate_predictors(t, {"WTW_HIST"}, 10, {0.1}),
      "--window: the trace (2000 steps) is too short for window 10 after a look-back of 10080 steps");
  CHECK_THROWS(evaluate_predictors(t, {"NOPE"}, 10, {0.1}));
  CHECK_THROWS(evaluate_predictors(t, {"AVAIL"}, 0, {0.1}));
  auto s = evaluate_predictors(t, {"DTD_HIST", "AVAIL"}, 10, {0.0});
  CHECK(s[0].points == (2000 - 1440 - 10) / 10 + 1);
  CHECK(s[0].fraction(0) == 1.0);
  CHECK(s[1].fraction(0) == 1.0);
}
