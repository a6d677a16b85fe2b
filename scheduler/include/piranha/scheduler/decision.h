// One strategy invocation, built in one place for every caller (one strategy library:
// nothing written twice): the simulator (PoolModel, simulate()), the live NPS
// scheduler and the agent's native policy all hand a strategy its input
// through here, so the queue order, the mapping of current jobs to queue
// positions and FAIR's q are never written twice.
//
// Times are in the caller's unit (strategy.h). Pure: no I/O, no clock. Not
// thread-safe; an instance may be reused for any number of invocations.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "piranha/scheduler/requirement.h"
#include "piranha/scheduler/strategy.h"

namespace piranha::sched {

// A job as a scheduler knows it at one invocation.
struct QueuedJob {
  JobId id = 0;
  double arrival = 0;    // caller's time unit
  double task_time = 0;  // believed task time (caller's unit)
  std::int64_t tasks = 1;
  std::int64_t tasks_left = 1;
  double attained = 0;                       // service so far, node-time in the caller's unit
  std::int64_t queue_length_at_arrival = 0;  // FAIR's q; 0: its 1-based queue position
  Requirement requirement{};                 // what a node must offer to run it (requirement.h)
};

// The index-based core: the queue is given in queue order and current jobs as
// queue positions. The simulator uses it directly; Decider wraps it for
// callers that know jobs by id.
class InvocationBuilder {
 public:
  // Starts an invocation for `nodes` nodes: an empty queue, every node idle.
  void clear(std::size_t nodes);
  // Appends `job` to the queue; the caller keeps (arrival, id) order.
  void push(const QueuedJob& job) {
    views_.push_back({job.id, job.arrival, job.task_time, job.tasks, job.tasks_left, job.attained});
    arrival_lengths_.push_back(job.queue_length_at_arrival);
  }
  // Node n's current job is at queue position `position` (kIdle: none).
  void set_current(std::size_t n, Slot position) { current_[n] = position; }
  // Which node may run which queue position (strategy.h); nullopt, as after
  // clear(): every node every job.
  void set_eligibility(std::optional<Eligibility> e) { eligible_ = std::move(e); }

  std::size_t queue_size() const { return views_.size(); }
  const JobView& queued(Slot position) const { return views_[static_cast<std::size_t>(position)]; }

  // Runs `strategy` on the queue and current positions given since clear();
  // returns, per node, the chosen queue position (kIdle: idle). The span
  // stays valid until the next call on this builder. `outlook` may be null
  // unless strategy.uses_outlook(), `rng` unless strategy.uses_rng().
  std::span<const Slot> assign(Strategy& strategy, double now, const NodeOutlook* outlook, Rng* rng,
                               bool spill);

 private:
  std::vector<JobView> views_;
  std::vector<std::int64_t> arrival_lengths_;
  std::vector<Slot> current_, chosen_;
  std::optional<Eligibility> eligible_;
};

// One invocation of a strategy for a caller that knows jobs by id.
class Decider {
 public:
  // Sorts `queue` into (arrival, id) order, maps each node's current job id
  // (nullopt: none, or a job no longer queued) to its queue position, runs
  // `strategy` and returns, per node (current.size() of them), the chosen job
  // id (nullopt: idle). `outlook` may be null unless strategy.uses_outlook();
  // `rng` may be null unless strategy.uses_rng(). The strategy keeps its own
  // memory between calls (strategy.h): give one instance non-decreasing `now`.
  // `attributes`, one per node, are what each node offers: a node is given
  // only jobs whose requirement it satisfies (idle when none). Empty: the
  // requirements are not looked at (every node may run every job).
  std::vector<std::optional<JobId>> decide(Strategy& strategy, double now, std::vector<QueuedJob> queue,
                                           std::span<const std::optional<JobId>> current,
                                           const NodeOutlook* outlook, Rng* rng, bool spill,
                                           std::span<const NodeAttributes> attributes = {});

 private:
  InvocationBuilder builder_;
};

// An outlook given as numbers (what the NPS monitors report): per node, the
// predicted average AP length (caller's unit) and available fraction of the
// next window. Both vectors have one entry per node.
class FixedOutlook : public NodeOutlook {
 public:
  FixedOutlook(std::vector<double> ap_length, std::vector<double> fraction)
      : ap_length_(std::move(ap_length)), fraction_(std::move(fraction)) {}
  double ap_length(std::size_t n) const override { return ap_length_.at(n); }
  double available_fraction(std::size_t n) const override { return fraction_.at(n); }

 private:
  std::vector<double> ap_length_, fraction_;
};

}  // namespace piranha::sched
