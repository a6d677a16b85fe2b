// piranha sim piranha: the Piranha job simulator (docs/scheduling.md, "One simulated step" and "Output").
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "piranha/scheduler/experiment.h"
#include "piranha/scheduler/report.h"
#include "sched_cli.h"
#include "sim_run.h"

namespace piranha::apps {
namespace {

nlohmann::ordered_json to_json(const sched::Experiment& e) {
  nlohmann::ordered_json out;
  out["results"] = nlohmann::ordered_json::array();
  for (const auto& r : e.results) {
    nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
    for (const auto& j : r.jobs) {
      nlohmann::ordered_json o;
      o["id"] = j.id;
      o["arrival"] = j.arrival;
      o["completion"] =
          j.completion ? nlohmann::ordered_json(*j.completion) : nlohmann::ordered_json(nullptr);
      jobs.push_back(o);
    }
    nlohmann::ordered_json o;
    o["strategy"] = r.strategy;
    o["seed"] = r.seed;
    o["mean_turnaround"] = r.mean_turnaround;
    o["finished"] = r.finished;
    o["steps"] = r.steps;
    o["owner_retreats"] = r.owner_retreats;
    o["scheduler_retreats"] = r.scheduler_retreats;
    o["lost_steps"] = r.lost_steps;
    o["jobs"] = jobs;
    out["results"].push_back(o);
  }
  nlohmann::ordered_json summary = nlohmann::ordered_json::object();
  for (const auto& s : e.summary) {
    nlohmann::ordered_json o;
    o["mean_turnaround"] = s.mean_turnaround;
    o["normalized_turnaround"] = s.normalized_turnaround;
    o["runs"] = s.runs;
    o["unfinished"] = s.unfinished;
    summary[s.strategy] = o;
  }
  out["summary"] = summary;
  return out;
}

}  // namespace

void run_sim(const SimArgs& a, const sched::RunFunction& runner) {
  using namespace schedcli;
  if (a.trace.empty()) bad_input(a.what + ": --trace is required");
  sched::SimOptions o;
  o.period = to_int("--period", a.period, 1);
  o.window = to_int("--window", a.window, 1);
  o.predictor = a.predictor;
  o.start = to_int("--start", a.start, 0);
  o.max_steps = to_int("--max-steps", a.max_steps, 0);
  o.spill = a.spill;
  o.on_events = a.on_events;
  if (a.task_times == "observed")
    o.task_times = sched::TaskTimes::kObserved;
  else if (a.task_times != "known")
    bad_input("--task-times \"" + a.task_times + "\" is neither known nor observed");
  o.cold_start = to_real("--cold-start", a.cold_start, 0, 1e9);
  const auto threads = static_cast<unsigned>(to_int("--threads", a.threads, 0));
  const auto names = split_list(a.strategies);
  if (names.empty()) bad_input("--strategies is empty");
  for (const auto& n : names) sched::make_strategy(n);  // every name checked before any file is read
  const AvailabilityTrace trace = read_trace(a.trace);
  std::vector<sched::Workload> workloads;
  if (!a.jobs_file.empty()) {
    workloads.push_back({0, sched::read_jobs(a.jobs_file)});
  } else {
    sched::WorkloadOptions w;
    w.jobs = static_cast<int>(to_int("--jobs", a.jobs, 1));
    w.interarrival = to_real("--interarrival", a.interarrival, 1e-9, 1e12);
    workloads = sched::random_workloads(static_cast<int>(to_int("--seeds", a.seeds, 1)), w);
  }
  sched::validate(o, trace);
  // The spec counts an unfinished job as max-steps − arrival: negative for a
  // job that arrives after the run stopped. Kept (other tools compare
  // against it), but said, so that such a mean is not read as a result.
  {
    const std::int64_t max_steps =
        o.max_steps > 0 ? o.max_steps : 20 * static_cast<std::int64_t>(trace.length);
    std::int64_t last = 0;
    for (const auto& w : workloads)
      for (const auto& j : w.jobs) last = std::max(last, j.arrival);
    if (last >= max_steps)
      std::cerr << "piranha: " << a.what << ": warning: "
                << (o.max_steps > 0 ? "--max-steps " + std::to_string(max_steps)
                                    : "the default --max-steps (20 x the trace's length, " +
                                          std::to_string(max_steps) + ")")
                << " stops the runs before the last job arrives (step " << last
                << "); unfinished jobs count as max-steps - arrival, which is negative for those arriving "
                   "after it\n";
  }
  Progress progress(a.what);
  auto e = sched::run_experiment(
      trace, names, workloads, o, threads,
      [&](std::size_t done, std::size_t total) {
        progress.update(static_cast<double>(done) / static_cast<double>(total),
                        std::to_string(done) + "/" + std::to_string(total) + " runs");
      },
      runner);
  progress.finish();
  if (!a.report.empty()) {
    sched::SimReportInput in{a.trace, trace, o, workloads.size(), a.jobs_file, e};
    write_whole_file(a.report, sched::render_sim_report(in));
  }
  if (a.json) {
    std::cout << to_json(e).dump() << "\n";
    return;
  }
  std::cout << std::left << std::setw(20) << "strategy" << std::right << std::setw(24)
            << "mean turnaround (steps)" << std::setw(12) << "normalized" << std::setw(12) << "unfinished"
            << "\n";
  for (const auto& s : e.summary)
    std::cout << std::left << std::setw(20) << s.strategy << std::right << std::fixed << std::setprecision(1)
              << std::setw(24) << s.mean_turnaround << std::setprecision(3) << std::setw(12)
              << s.normalized_turnaround << std::setw(12) << s.unfinished << "\n";
  std::cout << "steps: the trace's steps (" << trace.step_seconds
            << " s each); normalized: each workload's mean over TSK's, averaged; unfinished: runs stopped "
               "by --max-steps before every job finished\n";
}

void add_sim_options(CLI::App& cmd, SimArgs& a) {
  cmd.add_option("--trace", a.trace, "availability trace (*.avail.csv)");
  cmd.add_option("--jobs-file", a.jobs_file, "job list (*.jobs.csv); one run, seed 0");
  schedcli::int_option(cmd.add_option("--seeds", a.seeds, "random workloads, seeds 0..N-1"), 1)
      ->capture_default_str();
  schedcli::int_option(cmd.add_option("--jobs", a.jobs, "jobs per random workload"), 1)
      ->capture_default_str();
  schedcli::real_option(cmd.add_option("--interarrival", a.interarrival, "mean minutes between arrivals"),
                        1e-9, 1e12)
      ->capture_default_str();
  schedcli::int_option(cmd.add_option("--period", a.period, "invoke the strategy every N steps"), 1)
      ->capture_default_str();
  schedcli::int_option(cmd.add_option("--window", a.window, "prediction window (steps)"), 1)
      ->capture_default_str();
  cmd.add_option("--predictor", a.predictor, "AP-length predictor for FIT strategies")->capture_default_str();
  schedcli::int_option(cmd.add_option("--start", a.start, "trace step at which runs begin"), 0)
      ->capture_default_str();
  schedcli::int_option(
      cmd.add_option("--max-steps", a.max_steps, "stop a run after N steps (0: 20 x trace length)"), 0)
      ->capture_default_str();
  cmd.add_flag("--spill", a.spill, "global strategies give a job at most tasks-left nodes");
  cmd.add_flag("--on-events", a.on_events, "also invoke the strategy on arrivals and completions");
  cmd.add_option("--task-times", a.task_times, "known | observed (running mean, see --cold-start)")
      ->capture_default_str();
  schedcli::real_option(
      cmd.add_option("--cold-start", a.cold_start, "task time assumed before a job's first task completes"),
      0, 1e9)
      ->capture_default_str();
  schedcli::int_option(cmd.add_option("--threads", a.threads, "parallel runs (0: one per core)"), 0)
      ->capture_default_str();
  cmd.add_flag("--json", a.json, "print one JSON object on stdout");
  cmd.add_option("--report", a.report, "write a self-contained HTML report here");
  schedcli::add_progress_flag(cmd);
}

CLI::App* sim_group(CLI::App& app) {
  // "sim" groups the simulators; another one may have created it already.
  for (CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
    if (s->get_name() == "sim") return s;
  CLI::App* sim = app.add_subcommand("sim", "simulators");
  sim->require_subcommand(1);
  return sim;
}

void add_sim_piranha(CLI::App& app) {
  CLI::App* sim = sim_group(app);
  auto a = std::make_shared<SimArgs>();
  auto* cmd =
      sim->add_subcommand("piranha", "simulate Piranha jobs on an availability trace (docs/scheduling.md)");
  add_sim_options(*cmd, *a);
  cmd->add_option("--strategies", a->strategies, "comma-separated strategies, e.g. TSK,SRTA(0.5),ROR(20)")
      ->capture_default_str();
  cmd->callback([a] { schedcli::guarded([&] { run_sim(*a, {}); }); });
}

}  // namespace piranha::apps
