// Many simulator runs at once: strategies × workloads on one trace, with the
// per-strategy summary of docs/scheduling.md, "Output" (normalized by TSK).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "piranha/scheduler/simulator.h"

namespace piranha::sched {

struct Workload {
  std::uint64_t seed = 0;
  std::vector<Job> jobs;
};

// The random workloads of seeds 0 .. seeds − 1.
std::vector<Workload> random_workloads(int seeds, const WorkloadOptions& options);

struct StrategySummary {
  std::string strategy;
  double mean_turnaround = 0;        // mean over workloads of the run's mean turnaround
  double normalized_turnaround = 0;  // mean over workloads of (run mean ÷ TSK's run mean)
  int runs = 0;
  int unfinished = 0;  // runs stopped by max-steps
};

struct Experiment {
  std::vector<SimResult> results;        // strategy-major, workloads in order
  std::vector<StrategySummary> summary;  // one per strategy, in the order run
};

// One run of one strategy on one workload: simulate() by default; the NPS
// passes its own (the same model driven through its trellis).
using RunFunction =
    std::function<SimResult(const AvailabilityTrace& trace, const std::vector<Job>& jobs,
                            const std::string& strategy, const SimOptions& options, std::uint64_t seed)>;

// Runs every strategy (names as make_strategy takes them; duplicates by
// canonical name dropped) on every workload. TSK is appended when absent, as
// the normalization needs it. Runs are spread over `threads` threads (0: the
// hardware's); the result does not depend on the thread count. `progress`, if
// set, is called from the calling thread as runs finish (done, total).
// Throws InputError / std::invalid_argument before running anything.
Experiment run_experiment(const AvailabilityTrace& trace, const std::vector<std::string>& strategies,
                          const std::vector<Workload>& workloads, const SimOptions& options,
                          unsigned threads = 0,
                          const std::function<void(std::size_t, std::size_t)>& progress = {},
                          const RunFunction& run = {});

// Runs `work(i)` for i in [0, count) on up to `threads` threads (0: the
// hardware's), calling `progress(done, count)` on the calling thread.
void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& work,
                  const std::function<void(std::size_t, std::size_t)>& progress = {});

}  // namespace piranha::sched
