// What the scheduler has seen of one node's availability: the AvailabilityPeriods
// observed so far, kept so that every window query and every prediction costs
// O(1) however long the history is (docs/scheduling.md, "Strategies" and "Availability prediction").
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace piranha::sched {

// The availability of one node at steps 0, 1, ..., now() - 1, fed one step at
// a time. Only the most recent `keep` steps can be queried by window; older
// steps still count in the burst statistics (last AP, exponential average).
class NodeHistory {
 public:
  // `keep` >= 1: the longest look-back any query will use (see Predictor::lookback).
  explicit NodeHistory(std::int64_t keep);

  // Appends the availability of step now(); now() grows by one.
  void observe(bool available);

  // Number of steps observed: the history covers [0, now()).
  std::int64_t now() const { return now_; }

  // The window [a, b) clipped to the known steps [max(0, now() - keep), now()).
  // Available steps and maximal runs of available steps inside it (a run
  // that crosses the window's edge counts, clipped).
  std::int64_t available_steps(std::int64_t a, std::int64_t b) const;
  std::int64_t runs(std::int64_t a, std::int64_t b) const;

  // Mean length of the maximal runs of available steps inside [a, b), clipped
  // as above; 0 when there is none (spec §4).
  double average_ap_length(std::int64_t a, std::int64_t b) const;

  // Fraction of available steps in [now() - w, now()), counting only steps
  // >= 0; 1 when that is empty (at now() == 0).
  double available_fraction(std::int64_t w) const;

  // Length of the last AP that ended, i.e. was followed by an observed
  // unavailable step (an AP starting at step 0 counts from 0); nullopt if none.
  std::optional<std::int64_t> last_ap() const { return last_ap_; }

  // Exponential average of the lengths of the APs that ended (X_BURST, α = 0.5):
  // τ1 = first length, τk+1 = α·ℓk+1 + (1 − α)·τk; nullopt if none.
  std::optional<double> burst_average() const { return burst_; }

  // Whether step s (in the queryable range) was available.
  bool available(std::int64_t s) const;

  static constexpr double kBurstAlpha = 0.5;

 private:
  // Prefix counts at step boundary s: available steps and run starts in [0, s).
  std::int64_t prefix_available(std::int64_t s) const { return avail_[slot(s)]; }
  std::int64_t prefix_runs(std::int64_t s) const { return starts_[slot(s)]; }
  std::size_t slot(std::int64_t s) const { return static_cast<std::size_t>(s % size_); }
  std::int64_t oldest() const;

  std::int64_t keep_;
  std::int64_t size_;  // ring size: keep + 2 boundaries
  std::vector<std::int64_t> avail_, starts_;
  std::int64_t now_ = 0;
  bool last_available_ = false;
  std::int64_t run_start_ = 0;
  std::optional<std::int64_t> last_ap_;
  std::optional<double> burst_;
};

}  // namespace piranha::sched
