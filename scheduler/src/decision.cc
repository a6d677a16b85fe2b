#include "piranha/scheduler/decision.h"

#include <algorithm>

namespace piranha::sched {

void InvocationBuilder::clear(std::size_t nodes) {
  views_.clear();
  arrival_lengths_.clear();
  current_.assign(nodes, kIdle);
  chosen_.resize(nodes);
  eligible_.reset();
}

std::span<const Slot> InvocationBuilder::assign(Strategy& strategy, double now, const NodeOutlook* outlook,
                                                Rng* rng, bool spill) {
  Invocation inv;
  inv.now = now;
  inv.queue = views_;
  inv.current = current_;
  inv.outlook = outlook;
  inv.rng = rng;
  inv.spill = spill;
  inv.arrival_queue_length = arrival_lengths_;
  inv.eligible = eligible_ ? &*eligible_ : nullptr;
  strategy.assign(inv, chosen_);
  return chosen_;
}

std::vector<std::optional<JobId>> Decider::decide(Strategy& strategy, double now,
                                                  std::vector<QueuedJob> queue,
                                                  std::span<const std::optional<JobId>> current,
                                                  const NodeOutlook* outlook, Rng* rng, bool spill,
                                                  std::span<const NodeAttributes> attributes) {
  std::stable_sort(queue.begin(), queue.end(), [](const QueuedJob& a, const QueuedJob& b) {
    return a.arrival != b.arrival ? a.arrival < b.arrival : a.id < b.id;
  });
  builder_.clear(current.size());
  for (const QueuedJob& j : queue) builder_.push(j);
  for (std::size_t n = 0; n < current.size(); ++n) {
    if (!current[n]) continue;
    auto it =
        std::find_if(queue.begin(), queue.end(), [&](const QueuedJob& j) { return j.id == *current[n]; });
    if (it != queue.end()) builder_.set_current(n, static_cast<Slot>(it - queue.begin()));
  }
  if (!attributes.empty()) {
    std::vector<const Requirement*> requirements;
    for (const QueuedJob& j : queue) requirements.push_back(&j.requirement);
    builder_.set_eligibility(make_eligibility(attributes, requirements));
  }
  auto chosen = builder_.assign(strategy, now, outlook, rng, spill);
  std::vector<std::optional<JobId>> out(chosen.size());
  for (std::size_t n = 0; n < chosen.size(); ++n)
    if (chosen[n] != kIdle) out[n] = builder_.queued(chosen[n]).id;
  return out;
}

}  // namespace piranha::sched
