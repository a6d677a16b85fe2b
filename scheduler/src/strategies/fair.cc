// FAIR, Piranha's native policy (the agent's default): a random job for an
// idle node, and each newly arrived job taken with probability 1/q.
#include "strategies.h"

namespace piranha::sched {

void FairStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  const auto n = inv.queue.size();
  // Jobs that arrived since the previous invocation sit at the queue's tail.
  std::size_t first_new = n;
  while (first_new > 0 && inv.queue[first_new - 1].arrival > last_) --first_new;
  // q of each new job; `consecutive` when every q is the job's 1-based position.
  auto q_of = [&](std::size_t pos) {
    const std::int64_t q = pos < inv.arrival_queue_length.size() ? inv.arrival_queue_length[pos] : 0;
    return q > 0 ? q : static_cast<std::int64_t>(pos + 1);
  };
  bool consecutive = true;
  for (std::size_t pos = first_new; pos < n; ++pos)
    consecutive = consecutive && q_of(pos) == static_cast<std::int64_t>(pos + 1);
  for (std::size_t node = 0; node < out.size(); ++node) {
    Slot cur = inv.current[node];
    if (cur != kIdle && !may_run(inv, node, cur))
      cur = kIdle;  // the node's attributes changed since: it draws again
    if (n == 0) {
      cur = kIdle;
    } else if (cur == kIdle) {
      cur = random_job(inv, node);
    } else if (first_new < n && consecutive) {
      // Flipping a 1/(j+1) coin for each new job j in turn and keeping the
      // last success ends on job j with probability 1/n for every new j, and
      // keeps the current job with probability first_new/n: one uniform draw
      // gives that same distribution in O(1).
      const auto u = static_cast<std::size_t>(inv.rng->below(n));
      if (u >= first_new && may_run(inv, node, static_cast<Slot>(u))) cur = static_cast<Slot>(u);
    } else {
      // Jobs completed since some arrival: a 1/q coin per new job, in queue
      // order, the last success wins.
      for (std::size_t pos = first_new; pos < n; ++pos)
        if (inv.rng->bernoulli(1.0 / static_cast<double>(q_of(pos))) &&
            may_run(inv, node, static_cast<Slot>(pos)))
          cur = static_cast<Slot>(pos);
    }
    out[node] = cur;
  }
  last_ = inv.now;
}

}  // namespace piranha::sched
