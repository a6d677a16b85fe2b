#include "piranha/scheduler/prediction_eval.h"

#include <cmath>
#include <deque>
#include <memory>
#include <string>

#include "piranha/base/input_error.h"
#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/predictor.h"

namespace piranha::sched {
namespace {

double round_step(double x) {
  return std::floor(x + 0.5);
}

}  // namespace

bool prediction_matches(double predicted, double actual, double tolerance) {
  const double p = round_step(predicted), a = round_step(actual);
  return std::abs(p - a) <= tolerance * a + 1e-9;
}

std::vector<PredictionScore> evaluate_predictors(const AvailabilityTrace& trace,
                                                 const std::vector<std::string>& names, std::int64_t window,
                                                 const std::vector<double>& tolerances, std::int64_t stride) {
  if (window < 1) throw InputError("--window", std::to_string(window) + " must be at least 1");
  if (window > trace.length)
    throw InputError("--window", std::to_string(window) + " is longer than the trace (" +
                                     std::to_string(trace.length) + " steps)");
  if (stride < 0) throw InputError("--stride", std::to_string(stride) + " must not be negative");
  if (stride == 0) stride = window;
  for (double tol : tolerances)
    if (!(tol >= 0)) throw InputError("--tolerance", "a tolerance must not be negative");
  if (names.empty()) throw InputError("--predictors", "no predictors to evaluate");
  const std::size_t nodes = trace.nodes.size();
  const Calendar cal = Calendar::for_step_seconds(trace.step_seconds);
  std::vector<std::unique_ptr<Predictor>> ps;
  std::int64_t lookback = 0;
  for (const auto& n : names) {
    ps.push_back(make_predictor(n, window, cal, nodes));
    lookback = std::max(lookback, ps.back()->lookback());
  }
  if (lookback + window > trace.length)
    throw InputError("--window", "the trace (" + std::to_string(trace.length) +
                                     " steps) is too short for window " + std::to_string(window) +
                                     " after a look-back of " + std::to_string(lookback) + " steps");
  std::vector<PredictionScore> scores(ps.size());
  for (std::size_t i = 0; i < ps.size(); ++i) {
    scores[i].predictor = ps[i]->name();
    scores[i].matched.assign(tolerances.size(), 0);
  }
  struct Pending {
    std::int64_t t;
    std::vector<double> predicted;
  };
  for (std::size_t n = 0; n < nodes; ++n) {
    NodeHistory h(std::max(lookback, window) + 1);
    std::deque<Pending> pending;
    bool up = false;
    std::int64_t until = 0;  // `up` holds for steps < until
    for (std::int64_t s = 0; s < trace.length; ++s) {
      if (s >= until) {
        up = trace.available(n, s);
        until = trace.next_change(n, s);
      }
      if (s >= lookback && (s - lookback) % stride == 0 && s + window <= trace.length) {
        Pending p{s, {}};
        for (auto& pr : ps) p.predicted.push_back(pr->predict(n, h));
        pending.push_back(std::move(p));
      }
      h.observe(up);
      for (auto& pr : ps) pr->observe(n, h);
      while (!pending.empty() && pending.front().t + window == h.now()) {
        const double actual = h.average_ap_length(h.now() - window, h.now());
        for (std::size_t i = 0; i < ps.size(); ++i) {
          ++scores[i].points;
          for (std::size_t k = 0; k < tolerances.size(); ++k)
            if (prediction_matches(pending.front().predicted[i], actual, tolerances[k]))
              ++scores[i].matched[k];
        }
        pending.pop_front();
      }
    }
  }
  return scores;
}

}  // namespace piranha::sched
