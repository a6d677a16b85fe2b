// What `piranha sim piranha` and `piranha nps simulate` share: the
// simulator's options, the experiment loop and its table or JSON output
// (docs/scheduling.md, "Output"), with the run itself pluggable.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "piranha/scheduler/experiment.h"

namespace piranha::apps {

struct SimArgs {
  std::string what = "sim piranha";  // the command, for messages
  std::string trace, jobs_file, seeds = "20", jobs = "20", interarrival = "60";
  std::string strategies = "FCFS,TSK,SRT,SPT,SET,LET,ROR,RND,FAIR";
  std::string period = "1", window = "10", predictor = "REC_HIST", start = "0", max_steps = "0";
  std::string task_times = "known", cold_start = "0", threads = "0";
  std::string report;
  bool json = false, spill = false, on_events = false;
};

// Adds every option but the strategy list to `cmd`.
void add_sim_options(CLI::App& cmd, SimArgs& a);

// Reads the trace and the workloads, runs every strategy (TSK added) through
// `runner` (empty: the simulator itself), and prints the table or the JSON
// object of spec §5. Exits with status 2 on bad input (sched_cli.h).
void run_sim(const SimArgs& a, const sched::RunFunction& runner);

}  // namespace piranha::apps
