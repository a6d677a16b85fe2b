#include "piranha/scheduler/mix_predictor.h"

#include <algorithm>
#include <cmath>

namespace piranha::sched {
namespace {

double round_step(double x) {
  return std::floor(x + 0.5);
}

}  // namespace

MixPredictor::MixPredictor(std::int64_t window, const Calendar& calendar, std::size_t nodes)
    : Predictor(window),
      simple_{SimplePredictor(SimplePredictor::Kind::RecHist, window, calendar),
              SimplePredictor(SimplePredictor::Kind::DtdHist, window, calendar),
              SimplePredictor(SimplePredictor::Kind::WtwHist, window, calendar),
              SimplePredictor(SimplePredictor::Kind::LBurst, window, calendar),
              SimplePredictor(SimplePredictor::Kind::XBurst, window, calendar)},
      nodes_(nodes) {
  for (auto& n : nodes_) n.pending.resize(static_cast<std::size_t>(window));
}

std::int64_t MixPredictor::lookback() const {
  std::int64_t l = window_;
  for (const auto& p : simple_) l = std::max(l, p.lookback());
  return l;
}

std::array<double, MixPredictor::kExperts> MixPredictor::experts(const NodeHistory& h) const {
  std::array<double, kExperts> out{};
  for (std::size_t i = 0; i < kExperts; ++i) out[i] = simple_[i].predict(h);
  return out;
}

void MixPredictor::observe(std::size_t node, const NodeHistory& h) {
  NodeState& s = nodes_.at(node);
  const std::int64_t t = h.now();
  auto& slot = s.pending[static_cast<std::size_t>(t % window_)];
  if (t > window_) {
    // slot holds the predictions made at t - w for [t - w, t), which is now over
    // (the first predictions are made at t = 1, after the first observed step).
    const double actual = round_step(h.average_ap_length(t - window_, t));
    double top = 0;
    for (std::size_t i = 0; i < kExperts; ++i) {
      const double loss = std::min(1.0, std::abs(round_step(slot[i]) - actual) / std::max(actual, 1.0));
      s.weight[i] *= std::exp(-kLearningRate * loss);
      top = std::max(top, s.weight[i]);
    }
    for (double& w : s.weight) w = std::max(w / top, kWeightFloor);
  }
  slot = experts(h);
}

double MixPredictor::predict(std::size_t node, const NodeHistory& h) const {
  const NodeState& s = nodes_.at(node);
  const auto preds = experts(h);
  std::array<std::size_t, kExperts> order{0, 1, 2, 3, 4};
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return preds[a] < preds[b]; });
  double total = 0;
  for (double w : s.weight) total += w;
  double acc = 0;
  for (std::size_t i : order) {
    acc += s.weight[i];
    if (acc >= total / 2) return preds[i];
  }
  return preds[order.back()];
}

}  // namespace piranha::sched
