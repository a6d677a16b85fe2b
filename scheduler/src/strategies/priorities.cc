#include "priorities.h"

#include <algorithm>
#include <numeric>

namespace piranha::sched {
namespace {

// The key each priority minimizes.
double key(Priority p, const JobView& j) {
  switch (p) {
    case Priority::TSK: return j.task_time;
    case Priority::SRT: return static_cast<double>(j.tasks_left) * j.task_time;
    case Priority::SPT: return static_cast<double>(j.tasks) * j.task_time;
    case Priority::SET: return j.attained;
    case Priority::LET: return -j.attained;
    case Priority::FCFS:
    case Priority::ROR: return 0;
  }
  return 0;
}

bool queue_less(const JobView& a, const JobView& b) {
  return a.arrival != b.arrival ? a.arrival < b.arrival : a.id < b.id;
}

}  // namespace

Slot tsk_top(std::span<const JobView> queue) {
  Slot best = kIdle;
  for (Slot i = 0; i < static_cast<Slot>(queue.size()); ++i)
    if (best == kIdle || queue[i].task_time < queue[best].task_time) best = i;
  return best;
}

void FirstAllowed::begin(const Invocation& inv) {
  memo_.assign(inv.eligible ? inv.eligible->groups() : 1, kUnknown);
}

Slot FirstAllowed::of(const Invocation& inv, std::size_t node, std::span<const Slot> ranked) {
  Slot& m = memo_[inv.eligible ? inv.eligible->group(node) : 0];
  if (m != kUnknown) return m;
  m = kIdle;
  for (Slot j : ranked)
    if (may_run(inv, node, j)) {
      m = j;
      break;
    }
  return m;
}

Slot random_job(const Invocation& inv, std::size_t node) {
  const auto n = inv.queue.size();
  if (!inv.eligible) return n == 0 ? kIdle : static_cast<Slot>(inv.rng->below(n));
  std::uint64_t allowed = 0;
  for (Slot j = 0; j < static_cast<Slot>(n); ++j) allowed += may_run(inv, node, j) ? 1 : 0;
  if (allowed == 0) return kIdle;
  auto k = inv.rng->below(allowed);
  for (Slot j = 0; j < static_cast<Slot>(n); ++j)
    if (may_run(inv, node, j) && k-- == 0) return j;
  return kIdle;
}

void GlobalOrder::begin(const Invocation& inv) {
  if (priority_ != Priority::ROR) return;
  const auto& q = inv.queue;
  const auto n = static_cast<Slot>(q.size());
  holder_slot_ = kIdle;
  if (n == 0) {
    holder_.reset();
    return;
  }
  Slot pos = kIdle;
  if (holder_)
    for (Slot i = 0; i < n; ++i)
      if (q[i].id == holder_->id) pos = i;
  if (!holder_) {
    pos = 0;
    since_ = inv.now;
  } else if (pos == kIdle) {
    // The holder completed: the next job after it in queue order, wrapping.
    pos = 0;
    for (Slot i = 0; i < n; ++i)
      if (queue_less(*holder_, q[i])) {
        pos = i;
        break;
      }
    since_ = inv.now;
  } else if (inv.now - since_ >= quantum_) {
    pos = (pos + 1) % n;
    since_ = inv.now;
  }
  holder_ = q[pos];
  holder_slot_ = pos;
}

Slot GlobalOrder::top(const Invocation& inv) const {
  if (priority_ == Priority::ROR) return holder_slot_;
  const auto& q = inv.queue;
  Slot best = kIdle;
  double best_key = 0;
  for (Slot i = 0; i < static_cast<Slot>(q.size()); ++i) {
    const double k = key(priority_, q[i]);
    if (best == kIdle || k < best_key) best = i, best_key = k;
  }
  return best;
}

void GlobalOrder::order(const Invocation& inv, std::vector<Slot>& out) const {
  const auto n = static_cast<Slot>(inv.queue.size());
  out.resize(static_cast<std::size_t>(n));
  if (priority_ == Priority::ROR) {
    for (Slot i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = (holder_slot_ + i) % n;
    return;
  }
  std::iota(out.begin(), out.end(), 0);
  std::stable_sort(out.begin(), out.end(), [&](Slot a, Slot b) {
    return key(priority_, inv.queue[a]) < key(priority_, inv.queue[b]);
  });
}

}  // namespace piranha::sched
