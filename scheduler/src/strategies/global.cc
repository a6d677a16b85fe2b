// FCFS, TSK, SRT, SPT, SET, LET and ROR(q) as strategies: every node gets the
// top job of the priority (priorities.cc), or with spill each job at most as
// many nodes as it has tasks left.
#include <algorithm>

#include "strategies.h"

namespace piranha::sched {

void GlobalStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  if (!inv.spill || inv.queue.empty()) {
    if (!inv.eligible || inv.queue.empty()) {
      std::fill(out.begin(), out.end(), order_.top(inv));
      return;
    }
    order_.order(inv, ranked_);
    first_.begin(inv);
    for (std::size_t n = 0; n < out.size(); ++n) out[n] = first_.of(inv, n, ranked_);
    return;
  }
  // Spill: walk x's order handing each job at most tasks_left nodes.
  order_.order(inv, ranked_);
  const std::size_t nodes = out.size();
  room_.assign(inv.queue.size(), 0);
  std::size_t left = nodes;
  for (Slot j : ranked_) {
    const auto give = static_cast<std::size_t>(
        std::min<std::int64_t>(inv.queue[j].tasks_left, static_cast<std::int64_t>(left)));
    room_[static_cast<std::size_t>(j)] = give;
    left -= give;
  }
  // First every node keeps its current job if that job still has room...
  std::fill(out.begin(), out.end(), kIdle);
  for (std::size_t n = 0; n < nodes; ++n) {
    const Slot cur = inv.current[n];
    if (cur != kIdle && room_[static_cast<std::size_t>(cur)] > 0 && may_run(inv, n, cur)) {
      out[n] = cur;
      --room_[static_cast<std::size_t>(cur)];
    }
  }
  // ...then the others take the remaining room in x's order. With
  // requirements, each the first job with room that it may run; and a node
  // that may run none of those the first it may run that has tasks left for
  // one more node (its room went to nodes that could not run the others).
  if (inv.eligible) {
    given_.assign(inv.queue.size(), 0);
    for (std::size_t n = 0; n < nodes; ++n)
      if (out[n] != kIdle) ++given_[static_cast<std::size_t>(out[n])];
    for (bool beyond_room : {false, true})
      for (std::size_t n = 0; n < nodes; ++n) {
        if (out[n] != kIdle) continue;
        for (Slot j : ranked_) {
          const auto k = static_cast<std::size_t>(j);
          const bool open = beyond_room ? given_[k] < inv.queue[j].tasks_left : room_[k] > 0;
          if (!open || !may_run(inv, n, j)) continue;
          out[n] = j;
          if (room_[k] > 0) --room_[k];
          ++given_[k];
          break;
        }
      }
    return;
  }
  auto next = ranked_.begin();
  for (std::size_t n = 0; n < nodes; ++n) {
    if (out[n] != kIdle) continue;
    while (next != ranked_.end() && room_[static_cast<std::size_t>(*next)] == 0) ++next;
    if (next == ranked_.end()) break;
    out[n] = *next;
    --room_[static_cast<std::size_t>(*next)];
  }
}

}  // namespace piranha::sched
