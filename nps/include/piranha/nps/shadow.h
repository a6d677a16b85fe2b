// Shadow schedulers' counterfactuals (seed 003 §9.1: the evaluator's
// "comparative data"): the pool's own history -- when each node was
// available, when each job arrived, how many tasks it had and how long they
// took -- replayed through the Piranha simulator's model under a strategy,
// with simulate_program (simulate.h), the code `piranha nps simulate` runs.
// The obeyed scheduler is replayed the same way, so estimates compare like
// with like; the observed turnarounds stand beside them.
//
// Pure: no I/O, no clock. Times are pool units (seconds live).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "piranha/nps/pool.h"
#include "piranha/nps/simulate.h"
#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/job_list.h"

namespace piranha::nps {

// A stretch of time in which a node was available or not, and the job it
// ran (if any).
struct ObservedSpan {
  std::string node;
  double start = 0, end = 0;
  bool available = false;
  std::optional<JobId> job;
};

// A job as the pool saw it: ended (`end` set) or still live.
struct ObservedJob {
  JobId id = 0;
  double arrival = 0;
  std::int64_t tasks = 1;
  double task_time = 0;  // mean seconds per task as measured; 0 when never seen measured
  std::optional<double> end;
  std::string requirement{};  // its ("jobreq", ...) text; empty: none
};

struct Observation {
  std::vector<std::string> nodes;  // the trace's node order
  std::vector<ObservedSpan> spans;
  std::vector<ObservedJob> jobs;
  double end = 0;  // the observation's end (now)
  // What each node offers jobs' requirements (requirement.h); a node not here offers nothing.
  std::map<std::string, sched::NodeAttributes> attributes{};
};

// The observation as a simulator input of `step` seconds per step (made
// coarser when the observation would take more than `max_steps` steps),
// from the earliest span or arrival: a node is available in a step when an
// available span covers the step's middle. A job's work is what it needed
// here: the node-seconds it held available nodes (its available spans; a
// node its owner had taken back did no work for it), or tasks x task_time if
// that is more, spread evenly over its tasks; so the runtime's costs on
// the nodes (starting piranhas, taking and returning tasks) count as work,
// and a job that ended before it was seen measured counts with the time it
// held nodes. A job with neither (not measured, never on a node) is left out.
// Tasks shorter than a step are merged k at a time (k = ceil(step /
// task_time)) so the total work is kept; every task lasts at least one
// step. The trace's length is the observation's, at least one step; the
// simulator repeats it if jobs outlast it.
struct Replay {
  AvailabilityTrace trace;
  std::vector<sched::Job> jobs;
  std::vector<JobId> ended;      // the jobs whose turnaround counts
  std::map<JobId, double> work;  // seconds of work each replayed job was given, in whole steps
  double step = 1, origin = 0;
  // The nodes' attributes and the jobs' requirements, which the replay respects as the live
  // schedulers do: a job runs only on nodes that satisfy it.
  SimRequirements requirements;
};
Replay make_replay(const Observation& o, double step, std::int64_t max_steps = 20000);

// A scheduler as replayed: its strategy (make_strategy's names), decision
// period (seconds) and whether it also decides on queue changes.
struct ShadowPlan {
  std::string strategy = "TSK";
  double period = 1;
  bool on_events = false;
};

// The mean turnaround (seconds) the plan gives the replay's ended jobs;
// nullopt when none ended. The replay stops at twice the observation's
// length; an ended job unfinished by then counts as finishing then. Throws InputError for a bad
// strategy.
std::optional<double> estimate_mean_turnaround(const Replay& r, const ShadowPlan& plan,
                                               std::uint64_t seed = 0);

// Each ended job's turnaround (seconds) under the plan, the mean of which
// estimate_mean_turnaround returns; empty when none ended. Same rules and
// errors.
std::map<JobId, double> replay_turnarounds(const Replay& r, const ShadowPlan& plan, std::uint64_t seed = 0);

// One round of the evaluator's replays, self-contained (copied) so that it
// may run on a thread of its own: every scheduler's plan on one
// observation, and each node's predictor scored on the same history cut
// into the pool's history steps (as `piranha predict` scores a trace).
struct ReplayRound {
  Observation observation;
  double step = 0.1;
  std::int64_t max_steps = 5000;
  std::map<std::int64_t, ShadowPlan> plans;  // by scheduler id
  std::uint64_t seed = 0;
  double history_step = 60;
  std::int64_t step_seconds = 60;
  double tolerance = 0.1;
  std::map<std::string, std::pair<std::string, std::int64_t>> predictors;  // node -> (predictor, window)
};
struct ReplayOutcome {
  double step = 0;  // the replay's step, after make_replay's coarsening
  std::map<std::int64_t, std::optional<double>> estimates;  // nullopt: none ended, or a bad plan
  // Each plan's turnaround of each ended job (the estimate is their mean),
  // and the work (seconds) each job was given: what a report compares with
  // the jobs' observed turnarounds and task times.
  std::map<std::int64_t, std::map<JobId, double>> turnarounds;
  std::map<JobId, double> work;
  struct Accuracy {
    double fraction = 0;
    std::int64_t points = 0;
  };
  std::map<std::string, std::optional<Accuracy>> accuracy;  // nullopt: too little history
};
ReplayOutcome run_round(const ReplayRound& round);

}  // namespace piranha::nps
