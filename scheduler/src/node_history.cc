#include "piranha/scheduler/node_history.h"

#include <algorithm>

namespace piranha::sched {

NodeHistory::NodeHistory(std::int64_t keep)
    : keep_(std::max<std::int64_t>(keep, 1)),
      size_(keep_ + 2),
      avail_(static_cast<std::size_t>(size_), 0),
      starts_(static_cast<std::size_t>(size_), 0) {}

void NodeHistory::observe(bool available) {
  const std::int64_t s = now_;
  const bool starts_run = available && (s == 0 || !last_available_);
  if (!available && s > 0 && last_available_) {
    const std::int64_t length = s - run_start_;
    last_ap_ = length;
    burst_ = burst_ ? kBurstAlpha * static_cast<double>(length) + (1 - kBurstAlpha) * *burst_
                    : static_cast<double>(length);
  }
  if (starts_run) run_start_ = s;
  avail_[slot(s + 1)] = prefix_available(s) + (available ? 1 : 0);
  starts_[slot(s + 1)] = prefix_runs(s) + (starts_run ? 1 : 0);
  last_available_ = available;
  ++now_;
}

std::int64_t NodeHistory::oldest() const {
  return std::max<std::int64_t>(0, now_ - keep_);
}

bool NodeHistory::available(std::int64_t s) const {
  return prefix_available(s + 1) != prefix_available(s);
}

std::int64_t NodeHistory::available_steps(std::int64_t a, std::int64_t b) const {
  a = std::max(a, oldest());
  b = std::min(b, now_);
  return a < b ? prefix_available(b) - prefix_available(a) : 0;
}

std::int64_t NodeHistory::runs(std::int64_t a, std::int64_t b) const {
  a = std::max(a, oldest());
  b = std::min(b, now_);
  if (a >= b) return 0;
  std::int64_t n = prefix_runs(b) - prefix_runs(a);
  // A run that began before a and is still going at a is cut by the window's edge.
  // Step a - 1 is queryable when a > oldest(); when a == oldest() > 0 it is the
  // boundary kept by the extra ring slot.
  if (a > 0 && available(a) && available(a - 1)) ++n;
  return n;
}

double NodeHistory::average_ap_length(std::int64_t a, std::int64_t b) const {
  const std::int64_t r = runs(a, b);
  return r == 0 ? 0.0 : static_cast<double>(available_steps(a, b)) / static_cast<double>(r);
}

double NodeHistory::available_fraction(std::int64_t w) const {
  const std::int64_t a = std::max<std::int64_t>(0, now_ - w);
  if (a >= now_) return 1.0;
  return static_cast<double>(available_steps(a, now_)) / static_cast<double>(now_ - a);
}

}  // namespace piranha::sched
