// xFIT (TSKFIT, SRTFIT, ...): the first job in x's order whose task time fits
// the node's predicted availability period.
#include <algorithm>

#include "strategies.h"

namespace piranha::sched {

void FitStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  if (inv.queue.empty()) {
    std::fill(out.begin(), out.end(), kIdle);
    return;
  }
  order_.order(inv, ranked_);
  if (inv.eligible) {
    // Per node, the first job it may run that fits, else TSK's first it may run.
    tsk_.order(inv, tsk_ranked_);
    fallback_.begin(inv);
    for (std::size_t node = 0; node < out.size(); ++node) {
      const double ap = inv.outlook->ap_length(node);
      out[node] = kIdle;
      for (Slot j : ranked_)
        if (may_run(inv, node, j) && inv.queue[j].task_time <= ap) {
          out[node] = j;
          break;
        }
      if (out[node] == kIdle) out[node] = fallback_.of(inv, node, tsk_ranked_);
    }
    return;
  }
  // prefix_min_[i]: the shortest task time among the first i + 1 jobs in x's
  // order; the first job that fits is where it first drops to <= the prediction.
  prefix_min_.resize(ranked_.size());
  double m = inv.queue[ranked_[0]].task_time;
  for (std::size_t i = 0; i < ranked_.size(); ++i)
    prefix_min_[i] = m = std::min(m, inv.queue[ranked_[i]].task_time);
  const Slot fallback = tsk_top(inv.queue);
  for (std::size_t node = 0; node < out.size(); ++node) {
    const double ap = inv.outlook->ap_length(node);
    auto it = std::partition_point(prefix_min_.begin(), prefix_min_.end(), [&](double v) { return v > ap; });
    out[node] =
        it == prefix_min_.end() ? fallback : ranked_[static_cast<std::size_t>(it - prefix_min_.begin())];
  }
}

}  // namespace piranha::sched
