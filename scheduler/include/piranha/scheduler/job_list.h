// Piranha jobs as the simulator sees them, the `*.jobs.csv` format and the
// random workload of docs/scheduling.md, "Files".
//
//   id,arrival,task_time,tasks
//   1,0,3,250
//   2,17,10,40
//
// All fields are integers: arrival >= 0 (a step), task_time >= 1 (steps per
// task), tasks >= 1; ids are unique. Ties between jobs are broken by
// (arrival, id): that is the queue order everywhere in this module.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <string>
#include <vector>

#include "piranha/base/input_error.h"

namespace piranha::sched {

using JobId = std::int64_t;

// The "no job" value of an assignment. No valid job has this id.
inline constexpr JobId kNoJob = std::numeric_limits<JobId>::min();

struct Job {
  JobId id = 0;
  std::int64_t arrival = 0;    // step at which the job joins the queue
  std::int64_t task_time = 1;  // steps of available time one task needs
  std::int64_t tasks = 1;      // number of tasks
  friend bool operator==(const Job&, const Job&) = default;
};

// The queue order: (arrival, id).
inline bool queue_before(const Job& a, const Job& b) {
  return a.arrival != b.arrival ? a.arrival < b.arrival : a.id < b.id;
}

// Parses a job list; `name` is used in messages. The header names the four
// columns in any order. Throws InputError for: a missing header, an unknown,
// missing or repeated column, a wrong number of fields, a non-integer field,
// arrival < 0, task_time < 1, tasks < 1, a repeated id, no jobs at all.
// The result is sorted in queue order.
std::vector<Job> parse_jobs(std::istream& in, const std::string& name);

// Reads a job list file; throws InputError (also when it cannot be opened).
std::vector<Job> read_jobs(const std::string& path);

// Writes jobs in the canonical column order; parse_jobs reads them back.
void write_jobs(std::ostream& out, const std::vector<Job>& jobs);

// The random workload of one seed (spec §1), with its documented parameters.
struct WorkloadOptions {
  int jobs = 20;
  double interarrival = 60.0;  // mean minutes (steps) between arrivals, > 0
  std::int64_t min_tasks = 1, max_tasks = 1000;
  std::int64_t min_task_time = 1, max_task_time = 10;
};

// Generates `options.jobs` jobs from `seed`, stably (see random.h):
// an Rng(seed, stream 1) draws, for each job k = 1, 2, ... in turn, first the
// gap to the previous arrival (none for k = 1, which arrives at 0) as an
// exponential with mean `interarrival`, then tasks, then task time, each
// uniform on its closed interval. Arrival = floor of the running sum of gaps
// (a Poisson process observed at whole steps). Ids are 1..jobs in arrival
// order.
std::vector<Job> random_workload(std::uint64_t seed, const WorkloadOptions& options = {});

}  // namespace piranha::sched
