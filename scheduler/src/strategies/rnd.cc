// RND: every node a uniformly random job (of those it may run) at every invocation.
#include "strategies.h"

namespace piranha::sched {

void RandomStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  for (std::size_t node = 0; node < out.size(); ++node) out[node] = random_job(inv, node);
}

}  // namespace piranha::sched
