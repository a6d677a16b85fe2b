// Availability predictors (the paper, §4, docs/scheduling.md, "Availability prediction"): each predicts
// the average AP length of a node over the next `window` steps from what that
// node's NodeHistory holds. Predictions are O(1) per call; no predictor
// rescans the history.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/base/input_error.h"
#include "piranha/scheduler/node_history.h"

namespace piranha::sched {

// Day and week lengths in steps for a trace of `step_seconds`: 86400 /
// step_seconds and 604800 / step_seconds, rounded to the nearest integer.
struct Calendar {
  std::int64_t day = 1440;
  std::int64_t week = 10080;
  static Calendar for_step_seconds(std::int64_t step_seconds);
};

class Predictor {
 public:
  virtual ~Predictor() = default;

  // The canonical name, e.g. "REC_HIST".
  virtual std::string name() const = 0;

  // The longest look-back (in steps) behind now that predict() reads: a
  // NodeHistory must keep at least this much. Also the "L" of spec §4's
  // evaluation: w for REC_HIST, L_BURST, X_BURST, AVAIL; a day for DTD_HIST; a
  // week for WTW_HIST.
  virtual std::int64_t lookback() const = 0;

  // Learning predictors update their state for `node` here, once per step,
  // right after `history` observed a step. The simple ones ignore it.
  virtual void observe(std::size_t node, const NodeHistory& history);

  // Predicted average AP length of `node` over [now, now + window).
  virtual double predict(std::size_t node, const NodeHistory& history) const = 0;

  std::int64_t window() const { return window_; }

 protected:
  explicit Predictor(std::int64_t window) : window_(window) {}
  std::int64_t window_;
};

// The paper's six predictors, in its order.
const std::vector<std::string>& paper_predictors();

// Every predictor name make_predictor accepts: the paper's six and MIX (a
// multiplicative-weights combination of REC_HIST, DTD_HIST, WTW_HIST, L_BURST
// and X_BURST learned online per node; see mix_predictor.h).
const std::vector<std::string>& all_predictors();

// Makes a predictor for windows of `window` >= 1 steps over `nodes` nodes.
// Names are case-insensitive. Throws InputError for an unknown name, its
// source `predictor "NAME"`.
std::unique_ptr<Predictor> make_predictor(std::string_view name, std::int64_t window,
                                          const Calendar& calendar, std::size_t nodes);

// The six simple predictors of spec §4 as one class.
class SimplePredictor : public Predictor {
 public:
  enum class Kind { RecHist, DtdHist, WtwHist, LBurst, XBurst, Avail };
  SimplePredictor(Kind kind, std::int64_t window, const Calendar& calendar);
  std::string name() const override;
  std::int64_t lookback() const override;
  double predict(std::size_t node, const NodeHistory& history) const override;
  // The same prediction, free of the virtual call (used by MIX).
  double predict(const NodeHistory& history) const;

 private:
  Kind kind_;
  Calendar calendar_;
};

}  // namespace piranha::sched
