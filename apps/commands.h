// The piranha program's subcommands; each file registers one.
#pragma once

#include <CLI/CLI.hpp>

namespace piranha::apps {

void add_demo(CLI::App& app);
void add_agent(CLI::App& app);
// The pool commands (pool_command.h): submit, jobs, nodes, cancel, release, owner.
void add_submit(CLI::App& app);
void add_jobs(CLI::App& app);
void add_nodes(CLI::App& app);
void add_cancel(CLI::App& app);
void add_release(CLI::App& app);
void add_owner(CLI::App& app);
// CURVE key pairs (keys.cc): keys new.
void add_keys(CLI::App& app);
void add_ts_demo(CLI::App& ts);
void add_ts_serve(CLI::App& ts);
void add_ts_stats(CLI::App& ts);
void add_ts_bench(CLI::App& ts);
// The scheduler's commands (sim.cc, predict.cc, trace.cc, study.cc).
void add_sim_piranha(CLI::App& app);
// The "sim" command group, created by the first simulator that asks (sim.cc).
CLI::App* sim_group(CLI::App& app);
// Rigid jobs on SWF workloads (sim_rigid.cc, rigid_study.cc): sim rigid, sim rigid-study.
void add_sim_rigid(CLI::App& app);
void add_sim_rigid_study(CLI::App& app);
// Synthetic SWF workloads (swf.cc): swf synth.
void add_swf(CLI::App& app);
void add_predict(CLI::App& app);
void add_trace(CLI::App& app);
void add_study(CLI::App& app);
// The process trellis (trellis_run.cc, trellis_bench.cc): run, check, types, bench.
void add_trellis(CLI::App& app);
// The Network Piranha Scheduler (nps.cc): run, init, check, simulate.
void add_nps(CLI::App& app);
void add_nps_report(CLI::App& nps);
// nps simulate-campus (nps_campus.cc).
void add_nps_simulate_campus(CLI::App& nps);
// nps campus: the live campus above several pools (nps_campus.cc).
void add_nps_campus(CLI::App& nps);
void add_trellis_run(CLI::App& trellis);
void add_trellis_bench(CLI::App& trellis);

}  // namespace piranha::apps
