// xA(T) (SRTA, FCFSA, ...): x's top job where the node's predicted available
// fraction reaches T, TSK's top job elsewhere.
#include "strategies.h"

namespace piranha::sched {

void AdaptiveStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  if (inv.eligible) {
    order_.order(inv, ranked_);
    tsk_.order(inv, tsk_ranked_);
    top_.begin(inv);
    fallback_.begin(inv);
    for (std::size_t node = 0; node < out.size(); ++node)
      out[node] = inv.outlook->available_fraction(node) >= threshold_ ? top_.of(inv, node, ranked_)
                                                                      : fallback_.of(inv, node, tsk_ranked_);
    return;
  }
  const Slot top = order_.top(inv), fallback = tsk_top(inv.queue);
  for (std::size_t node = 0; node < out.size(); ++node)
    out[node] = inv.outlook->available_fraction(node) >= threshold_ ? top : fallback;
}

}  // namespace piranha::sched
