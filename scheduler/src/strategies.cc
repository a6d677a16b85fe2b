#include "strategies.h"

#include <algorithm>

namespace piranha::sched {

void GlobalStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  if (!inv.spill || inv.queue.empty()) {
    std::fill(out.begin(), out.end(), order_.top(inv));
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
    if (cur != kIdle && room_[static_cast<std::size_t>(cur)] > 0) {
      out[n] = cur;
      --room_[static_cast<std::size_t>(cur)];
    }
  }
  // ...then the others take the remaining room in x's order.
  auto next = ranked_.begin();
  for (std::size_t n = 0; n < nodes; ++n) {
    if (out[n] != kIdle) continue;
    while (next != ranked_.end() && room_[static_cast<std::size_t>(*next)] == 0) ++next;
    if (next == ranked_.end()) break;
    out[n] = *next;
    --room_[static_cast<std::size_t>(*next)];
  }
}

void RandomStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  const auto n = inv.queue.size();
  for (Slot& s : out) s = n == 0 ? kIdle : static_cast<Slot>(inv.rng->below(n));
}

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
    if (n == 0) {
      cur = kIdle;
    } else if (cur == kIdle) {
      cur = static_cast<Slot>(inv.rng->below(n));
    } else if (first_new < n && consecutive) {
      // Flipping a 1/(j+1) coin for each new job j in turn and keeping the
      // last success ends on job j with probability 1/n for every new j, and
      // keeps the current job with probability first_new/n: one uniform draw
      // gives that same distribution in O(1).
      const auto u = static_cast<std::size_t>(inv.rng->below(n));
      if (u >= first_new) cur = static_cast<Slot>(u);
    } else {
      // Jobs completed since some arrival: a 1/q coin per new job, in queue
      // order, the last success wins.
      for (std::size_t pos = first_new; pos < n; ++pos)
        if (inv.rng->bernoulli(1.0 / static_cast<double>(q_of(pos)))) cur = static_cast<Slot>(pos);
    }
    out[node] = cur;
  }
  last_ = inv.now;
}

void FitStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  if (inv.queue.empty()) {
    std::fill(out.begin(), out.end(), kIdle);
    return;
  }
  order_.order(inv, ranked_);
  // prefix_min_[i]: the shortest task time among the first i + 1 jobs in x's
  // order; the first job that fits is where it first drops to <= the prediction.
  prefix_min_.resize(ranked_.size());
  double m = inv.queue[ranked_[0]].task_time;
  for (std::size_t i = 0; i < ranked_.size(); ++i)
    prefix_min_[i] = m = std::min(m, inv.queue[ranked_[i]].task_time);
  const Slot fallback = tsk_top(inv.queue);
  for (std::size_t node = 0; node < out.size(); ++node) {
    const double ap = inv.outlook->ap_length(node);
    auto it = std::partition_point(prefix_min_.begin(), prefix_min_.end(),
                                   [&](double v) { return v > ap; });
    out[node] =
        it == prefix_min_.end() ? fallback : ranked_[static_cast<std::size_t>(it - prefix_min_.begin())];
  }
}

void AdaptiveStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
  const Slot top = order_.top(inv), fallback = tsk_top(inv.queue);
  for (std::size_t node = 0; node < out.size(); ++node)
    out[node] = inv.outlook->available_fraction(node) >= threshold_ ? top : fallback;
}

void MixFitStrategy::assign(const Invocation& inv, std::span<Slot> out) {
  order_.begin(inv);
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
