// RND: every node a uniformly random job at every invocation.
#include "strategies.h"

namespace piranha::sched {

void RandomStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  const auto n = inv.queue.size();
  for (Slot& s : out) s = n == 0 ? kIdle : static_cast<Slot>(inv.rng->below(n));
}

}  // namespace piranha::sched
