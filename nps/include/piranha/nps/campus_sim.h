// `piranha nps simulate-campus`: the hierarchical NPS of the paper's Figure 9 simulated -- subnets,
// each a pool scheduled by its own NPS program, under a campus that lends idle nodes of one subnet
// to a job of a congested one (sched::CampusStrategy, scheduler/campus.h). docs/nps.md,
// "Hierarchy", describes the campus file and the output.
//
// Every subnet runs the standard NPS program on the deterministic trellis runner over a SimPool
// that is its slice of one simulator model (simulate.h): the same node types and strategies as
// `nps simulate`, no second scheduler. The campus decides every `campus.period` steps from the
// subnets' states; at every step each lending subnet's idle nodes serve its loans
// (sched::lend_idle) after its own scheduler has placed its own jobs. The same campus and jobs are
// also run with isolated subnets (no lending) and as one flat pool of all the nodes under one NPS:
// the ideal the hierarchy approaches.
//
// Pure but for the clock read to report wall time: no I/O (the caller reads the file and
// prints), no threads. Not thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "piranha/nps/pool.h"
#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/campus.h"
#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/simulator.h"
#include "piranha/scheduler/trace_tools.h"

namespace piranha::nps {

// One subnet of the campus.
struct CampusSubnet {
  std::string name;
  std::int64_t nodes = 0;
  double weight = 1;  // its share of the campus's jobs, relative to the others'
};

// A campus file, parsed (docs/nps.md, "The campus file"); defaults as documented there.
struct CampusConfig {
  std::vector<CampusSubnet> subnets;
  // The nodes' availability: a trace file (its first nodes, in order, are the subnets' nodes),
  // or, when empty, a synthetic trace of every node (`piranha trace synth`, with these options).
  std::string trace_file;
  sched::SynthOptions synth;
  // The jobs: a random workload for the whole campus (sched::random_workload), each job sent to a
  // subnet drawn by the subnets' weights, from `jobs_seed`.
  sched::WorkloadOptions workload;
  std::uint64_t jobs_seed = 1;
  // Each subnet's NPS: scheduler 0's strategy, its period and on_events (steps), spill, and the
  // simulator's start step and step limit (0: 20 × the trace's length). Spill is on by default
  // here: without it a global strategy gives every node of a pool to one job at a time, and a flat
  // pool of thousands of nodes runs its jobs one after the other.
  std::string strategy = "TSK";
  std::int64_t subnet_period = 1;
  bool on_events = true;
  bool spill = true;
  std::int64_t start = 0, max_steps = 0;
  // The campus strategy; its period is in steps and must exceed subnet_period.
  sched::CampusParams campus;
};

// Parses a campus file's text; `name` is the source of errors, which are InputError
// "NAME:LINE: problem" (unknown or duplicate keys, values out of range, a campus period not
// longer than the subnets', repeated subnet names).
CampusConfig parse_campus(const std::string& text, const std::string& name);
// Reads and parses the file at `path` (InputError also when it cannot be read).
CampusConfig load_campus(const std::string& path);

// The campus's nodes and jobs: a trace of every subnet's nodes (named SUBNET-wsNNN, subnet by
// subnet), the jobs in queue order, and which subnet each job was submitted to.
struct CampusWorld {
  AvailabilityTrace trace;
  std::vector<sched::Job> jobs;
  std::vector<std::size_t> subnet_of;   // per job of `jobs`
  std::vector<std::size_t> first_node;  // per subnet: its first node's index in `trace`
  std::vector<std::size_t> jobs_per_subnet;
};

// Builds the world of `config`: reads or synthesizes the trace (InputError when the file has
// fewer nodes than the campus, or cannot be read), draws the jobs and their subnets. Deterministic
// in the config.
CampusWorld build_world(const CampusConfig& config);

// How the campus's nodes are scheduled.
enum class CampusMode {
  kCampus,    // one NPS per subnet, and the campus lending between them
  kIsolated,  // one NPS per subnet, no lending
  kFlat,      // one NPS for all the nodes and all the jobs
};
const char* to_string(CampusMode mode);

// What a campus run did: the simulator's result over all the jobs and, in kCampus, the campus's
// overhead.
struct CampusOutcome {
  CampusMode mode = CampusMode::kCampus;
  sched::SimResult result;
  std::vector<double> subnet_mean_turnaround;  // per subnet, its own jobs (0: none)
  std::int64_t decisions = 0;                  // campus decisions
  std::int64_t loans_started = 0, nodes_lent = 0;
  std::int64_t nodes_returned[3] = {0, 0, 0};     // by sched::LoanEnd
  std::int64_t lent_node_steps = 0;               // node-steps a node served another subnet's job
  std::vector<std::int64_t> borrowed_node_steps;  // per subnet: of those, serving its jobs
  std::int64_t peak_nodes_lent = 0;               // most nodes lent at once by a decision
  std::int64_t borrowing_subnets_max = 0;         // most subnets congested at once
  double wall_seconds = 0;
  double tick_ms_mean = 0;  // wall time per simulated step
};

// Progress of a long run: called on the calling thread every `every` steps.
struct CampusProgress {
  std::int64_t every = 500;
  std::function<void(CampusMode mode, std::int64_t step, std::size_t jobs_done, std::size_t jobs,
                     std::int64_t nodes_lent)>
      report;
};

// Runs the campus's world in `mode`. Throws InputError for a bad strategy or options, as
// `nps simulate` does.
CampusOutcome simulate_campus(const CampusConfig& config, const CampusWorld& world, CampusMode mode,
                              const CampusProgress& progress = {});

// A subnet as the campus sees it, from its NPS's view: its live jobs (work left = tasks left ×
// mean task time), and per node whether it is available now, whether scheduler 0 gave it a job
// of the subnet's own, and its monitor's predicted available fraction. What a live campus would
// read from each subnet's NPS as well.
//
// `attributes` (empty, or one per node) is what each node offers jobs' requirements, nullopt for
// a node that offers nothing or whose agent is down: the idle nodes' attributes go in the state
// (SubnetState::idle_nodes), and a job with a requirement (JobInfo::requirement) that none of the
// nodes satisfies is stranded (CampusJob::stranded).
sched::SubnetState subnet_state(const std::vector<JobInfo>& jobs, const std::vector<bool>& available,
                                const std::vector<bool>& own, const std::vector<double>& fraction,
                                std::span<const std::optional<sched::NodeAttributes>> attributes = {});

}  // namespace piranha::nps
