// MIX: a predictor beyond the paper that combines the simple ones online.
//
// The paper (§4) suspects that "more intelligent combinations" of week-to-week,
// day-to-day and recent history could beat each simple predictor. MIX keeps,
// per node, one weight per expert (REC_HIST, DTD_HIST, WTW_HIST, L_BURST,
// X_BURST) and learns them by multiplicative weights:
//
// - at every step t each expert's prediction for [t, t + w) is remembered;
// - at step t + w, when that window is over, each expert's loss is
//   min(1, |round(pred) − round(actual)| / max(round(actual), 1)) and its
//   weight is multiplied by exp(−η · loss), η = kLearningRate; weights are
//   rescaled so the largest is 1 and floored at kWeightFloor, so an expert
//   that was bad last week can win again;
// - the prediction is the weighted median of the experts' current predictions
//   (a median, not a mean, because success is judged within a tolerance and a
//   mean of two disagreeing experts is usually right for neither).
//
// State is O(w) per node; each step costs O(experts). A node whose windows
// have not finished yet predicts with equal weights.
#pragma once

#include <array>
#include <vector>

#include "piranha/scheduler/predictor.h"

namespace piranha::sched {

class MixPredictor : public Predictor {
 public:
  static constexpr std::size_t kExperts = 5;
  static constexpr double kLearningRate = 0.3;
  static constexpr double kWeightFloor = 1e-3;

  MixPredictor(std::int64_t window, const Calendar& calendar, std::size_t nodes);
  std::string name() const override { return "MIX"; }
  std::int64_t lookback() const override;
  void observe(std::size_t node, const NodeHistory& history) override;
  double predict(std::size_t node, const NodeHistory& history) const override;

  // The current weights of `node`'s experts (REC, DTD, WTW, L_BURST, X_BURST).
  std::array<double, kExperts> weights(std::size_t node) const { return nodes_.at(node).weight; }

 private:
  struct NodeState {
    std::array<double, kExperts> weight{1, 1, 1, 1, 1};
    std::vector<std::array<double, kExperts>> pending;  // ring: predictions made at steps t % w
  };
  std::array<double, kExperts> experts(const NodeHistory& h) const;

  std::array<SimplePredictor, kExperts> simple_;
  std::vector<NodeState> nodes_;
};

}  // namespace piranha::sched
