// xMIX(c), beyond the paper: x's top job where the MIX predictor's AP length
// is at least c task times, TSK's top job elsewhere.
#include <algorithm>

#include "strategies.h"

namespace piranha::sched {

void MixFitStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  if (inv.eligible) {
    order_.order(inv, ranked_);
    tsk_.order(inv, tsk_ranked_);
    top_.begin(inv);
    fallback_.begin(inv);
    for (std::size_t node = 0; node < out.size(); ++node) {
      const Slot mine = top_.of(inv, node, ranked_);
      out[node] = mine == kIdle || inv.outlook->ap_length(node) >= factor_ * inv.queue[mine].task_time
                      ? mine
                      : fallback_.of(inv, node, tsk_ranked_);
    }
    return;
  }
  const Slot top = order_.top(inv), fallback = tsk_top(inv.queue);
  if (top == kIdle) {
    std::fill(out.begin(), out.end(), kIdle);
    return;
  }
  const double need = factor_ * inv.queue[top].task_time;
  for (std::size_t node = 0; node < out.size(); ++node)
    out[node] = inv.outlook->ap_length(node) >= need ? top : fallback;
}

}  // namespace piranha::sched
