// Scoring availability predictors against a trace (the paper, §4, Figures 1–3;
// docs/scheduling.md, "Availability prediction"): how often each predictor's average AP length for
// the next `window` steps matches the actual one within a tolerance.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "piranha/scheduler/avail_trace.h"

namespace piranha::sched {

struct PredictionScore {
  std::string predictor;
  std::int64_t points = 0;            // evaluation points (node, t)
  std::vector<std::int64_t> matched;  // per tolerance, in the order asked
  double fraction(std::size_t tolerance_index) const {
    return points == 0 ? 0.0 : static_cast<double>(matched.at(tolerance_index)) / static_cast<double>(points);
  }
};

// Whether a prediction matches: both rounded to the nearest step (halves up),
// |pred − actual| <= tolerance × actual. The comparison allows 1e-9 of
// floating-point slack, so 0.1 × 30 counts as exactly 3.
bool prediction_matches(double predicted, double actual, double tolerance);

// Evaluates `predictors` (names as make_predictor takes them) on every node
// at t = L, L + stride, ... while t + window <= length, L the largest
// look-back among them; stride 0 means stride = window. All tolerances are
// scored in one pass. Throws InputError whose source is the option at fault
// ("--window", "--stride", "--tolerance", "--predictors") for window < 1, a window longer than the trace,
// stride < 0, a negative tolerance, an unknown predictor, or a trace too short to leave any evaluation point
// after the look-back.
std::vector<PredictionScore> evaluate_predictors(const AvailabilityTrace& trace,
                                                 const std::vector<std::string>& predictors,
                                                 std::int64_t window, const std::vector<double>& tolerances,
                                                 std::int64_t stride = 0);

}  // namespace piranha::sched
