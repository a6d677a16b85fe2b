// The Piranha job simulator: the paper's Figure 4 made exact by
// docs/scheduling.md, "One simulated step". One run = one availability trace, one job list, one
// strategy; everything is deterministic given the seed.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/strategy.h"

namespace piranha::sched {

// What strategies are told a job's task time is.
enum class TaskTimes {
  kKnown,    // the true task time (spec default)
  kObserved  // the running mean of its completed tasks, cold start before (task_time.h)
};

struct SimOptions {
  std::int64_t period = 1;             // invoke the strategy when t % period == 0
  std::int64_t window = 10;            // prediction window (steps)
  std::string predictor = "REC_HIST";  // AP-length predictor for FIT strategies
  std::int64_t start = 0;              // trace step at which the run begins
  std::int64_t max_steps = 0;          // 0: 20 × trace length
  bool on_events = false;              // also invoke on an arrival or a completion
  bool spill = false;                  // global strategies: no job holds more nodes than tasks left
  TaskTimes task_times = TaskTimes::kKnown;
  double cold_start = 0.0;  // with kObserved: the task time assumed before a job's first task completes
  // Called about every `progress_every` steps with the current step (never when empty).
  std::function<void(std::int64_t step)> progress;
  std::int64_t progress_every = 100000;
};

struct JobOutcome {
  JobId id = 0;
  std::int64_t arrival = 0;
  std::optional<std::int64_t> completion;  // nullopt: unfinished at max_steps
};

struct SimResult {
  std::string strategy;
  std::uint64_t seed = 0;
  bool finished = true;
  std::int64_t steps = 0;               // steps simulated
  double mean_turnaround = 0;           // unfinished jobs count max_steps − arrival
  std::vector<JobOutcome> jobs;         // in queue order
  std::int64_t busy_steps = 0;          // node-steps that advanced a task
  std::int64_t lost_steps = 0;          // node-steps of task work lost to retreats
  std::int64_t owner_retreats = 0;      // tasks cut short because the node became unavailable
  std::int64_t scheduler_retreats = 0;  // tasks cut short because the node was given another job
};

// Checks options against the trace: period >= 1, window >= 1, 0 <= start <
// length, max_steps >= 0, a known predictor. Throws InputError whose source
// is the option ("--window: 0 must be at least 1").
void validate(const SimOptions& options, const AvailabilityTrace& trace);

// Runs `jobs` (any order; they are queued by (arrival, id)) through `strategy`
// (fresh: one instance per run) on `trace`. `seed` seeds the strategy's Rng
// (stream 2) and is copied into the result. A loop over PoolModel
// (pool_model.h): arrive, decide when t % period == 0 (or on an event with
// on_events), step, then feed the node histories.
SimResult simulate(const AvailabilityTrace& trace, const std::vector<Job>& jobs, Strategy& strategy,
                   const SimOptions& options, std::uint64_t seed = 0);

}  // namespace piranha::sched
