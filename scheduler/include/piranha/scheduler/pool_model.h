// Spec/scheduling.md §2 made steppable: the state of a simulated pool (JOB,
// PREV and ACTIVE per node; tasks_left, attained and completion per job; the
// queue; the trace cursor) and its steps, with step 2 (the decision) left to
// the caller. simulate() drives it with a strategy; the NPS drives the same
// model from its trellis, so both give the same numbers.
//
// One step at time t is: arrive(); optionally set_job() for nodes (step 2);
// step(). Pure: no I/O, no clock, no randomness. Not thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/decision.h"
#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/simulator.h"
#include "piranha/scheduler/task_time.h"

namespace piranha::sched {

class PoolModel {
 public:
  // A pool on `trace` with `jobs` (any order; queued by (arrival, id)).
  // Validates `options` like simulate() (throws std::invalid_argument or
  // InputError). `strategy_name` and `seed` are only copied into result().
  // The trace must outlive the model.
  PoolModel(const AvailabilityTrace& trace, std::vector<Job> jobs, const SimOptions& options,
            std::string strategy_name, std::uint64_t seed);

  // t: the step about to be simulated (the number of steps done).
  std::int64_t now() const { return t_; }
  // Some job is unfinished and t < max_steps.
  bool running() const { return remaining_ > 0 && t_ < max_steps_; }

  // Step 1 at t: jobs with arrival == t join the queue. Returns whether the
  // queue changed since the previous step's decision (an arrival now or a
  // completion in the previous step): --on-events invokes the strategy then.
  bool arrive();

  // The queue as strategies see it at t, in queue order (task times per
  // options.task_times; with kObserved, rounded to whole steps).
  std::vector<QueuedJob> queue() const;

  std::size_t nodes() const { return trace_.nodes.size(); }
  const std::string& node_name(std::size_t n) const { return trace_.nodes[n]; }
  // The availability of node n at step t - 1 (what a node history observes
  // after a step). Only valid for t >= 1.
  bool was_available(std::size_t n) const { return cursor_[n].available; }

  // JOB[n]: nullopt when none.
  std::optional<JobId> job(std::size_t n) const;
  // Step 2's outcome for node n. `job` must be nullopt or a job of the
  // model (throws std::invalid_argument otherwise).
  void set_job(std::size_t n, std::optional<JobId> job);

  // Steps 3 and 4 at t, then t += 1.
  void step();

  // What simulate() returns, as of now (finished only when every job completed).
  SimResult result() const;

  // The index-based fast path of step 2, for simulate(): fill() puts the
  // queue and every node's current position into `builder`; apply() sets
  // JOB from the positions a strategy chose on that same fill.
  void fill(InvocationBuilder& builder);
  void apply(std::span<const Slot> chosen);

 private:
  QueuedJob queued(int j) const;

  const AvailabilityTrace& trace_;
  SimOptions options_;
  std::vector<Job> jobs_;  // in queue order; a job's index is its place here
  std::unordered_map<JobId, int> index_of_;
  std::int64_t max_steps_ = 0;
  std::string strategy_;
  std::uint64_t seed_ = 0;

  std::vector<std::int64_t> tasks_left_, attained_;
  std::vector<std::optional<std::int64_t>> completion_;
  std::vector<TaskTimeEstimator> estimate_;
  std::vector<std::int64_t> length_at_arrival_;  // queue length right after the job arrived
  std::vector<int> queue_;                       // job indices in queue order
  std::vector<Slot> position_;                   // job index -> queue position at the last fill()

  struct Cursor {  // availability of one node, touching the trace only where it changes
    bool available = false;
    std::int64_t until = 0;  // availability holds for trace steps < until
  };
  std::vector<int> job_, prev_;  // JOB[n], PREV[n] as job indices, -1 for none
  std::vector<std::int64_t> active_;
  std::vector<Cursor> cursor_;  // after a step, availability at step t - 1

  std::size_t next_arrival_ = 0, remaining_ = 0;
  bool completed_last_step_ = false;
  std::int64_t s_ = 0;  // trace step of t
  std::int64_t t_ = 0;

  std::int64_t busy_steps_ = 0, lost_steps_ = 0, owner_retreats_ = 0, scheduler_retreats_ = 0;
};

}  // namespace piranha::sched
