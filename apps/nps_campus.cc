// piranha nps simulate-campus: the hierarchical NPS simulated -- a campus of subnets with lending,
// the same subnets isolated, and one flat pool (docs/nps.md, "Hierarchy").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "commands.h"
#include "piranha/nps/campus_live.h"
#include "piranha/nps/campus_sim.h"
#include "sched_cli.h"
#include "stop_signals.h"

namespace piranha::apps {
namespace {

struct CampusArgs {
  std::string file, modes = "campus,isolated,flat", max_steps, threads = "0";
  bool json = false, quiet = false;
};

const char* kWhy[] = {"their job ended", "the borrower was relieved", "the lender needed them"};

std::string fixed(double v, int digits = 1) {
  char s[64];
  std::snprintf(s, sizeof s, "%.*f", digits, v);
  return s;
}

nlohmann::json outcome_json(const nps::CampusOutcome& o, double step_seconds) {
  nlohmann::json j{{"mean_turnaround_steps", o.result.mean_turnaround},
                   {"mean_turnaround_s", o.result.mean_turnaround * step_seconds},
                   {"finished", o.result.finished},
                   {"steps", o.result.steps},
                   {"busy_node_steps", o.result.busy_steps},
                   {"lost_node_steps", o.result.lost_steps},
                   {"owner_retreats", o.result.owner_retreats},
                   {"scheduler_retreats", o.result.scheduler_retreats},
                   {"wall_s", o.wall_seconds},
                   {"tick_ms_mean", o.tick_ms_mean}};
  if (o.mode == nps::CampusMode::kCampus)
    j["overhead"] = {{"decisions", o.decisions},
                     {"loans_started", o.loans_started},
                     {"nodes_lent", o.nodes_lent},
                     {"nodes_returned_job_ended", o.nodes_returned[0]},
                     {"nodes_returned_relieved", o.nodes_returned[1]},
                     {"nodes_returned_lender_needed", o.nodes_returned[2]},
                     {"lent_node_steps", o.lent_node_steps},
                     {"lent_node_seconds", static_cast<double>(o.lent_node_steps) * step_seconds},
                     {"peak_nodes_lent", o.peak_nodes_lent},
                     {"most_congested_subnets", o.borrowing_subnets_max}};
  return j;
}

void run(const CampusArgs& a) {
  nps::CampusConfig config = nps::load_campus(a.file);
  if (!a.max_steps.empty()) config.max_steps = schedcli::to_int("--max-steps", a.max_steps, 0);
  std::vector<nps::CampusMode> modes;
  for (const std::string& m : schedcli::split_list(a.modes)) {
    if (m == "campus")
      modes.push_back(nps::CampusMode::kCampus);
    else if (m == "isolated")
      modes.push_back(nps::CampusMode::kIsolated);
    else if (m == "flat")
      modes.push_back(nps::CampusMode::kFlat);
    else
      schedcli::bad_input("--modes: unknown mode \"" + m + "\" (expected campus, isolated or flat)");
  }
  if (modes.empty()) schedcli::bad_input("--modes: give at least one of campus, isolated, flat");

  const auto wall_start = std::chrono::steady_clock::now();
  if (!a.quiet) std::cerr << "nps simulate-campus: building the campus's trace and jobs\n";
  const nps::CampusWorld world = nps::build_world(config);
  std::int64_t nodes = 0;
  for (const auto& s : config.subnets) nodes += s.nodes;
  const double step_seconds = static_cast<double>(world.trace.step_seconds);

  // The runs are independent: up to --threads of them at once, each on its own thread. Progress is
  // a line per run every five seconds at most, from whichever thread.
  std::size_t threads = static_cast<std::size_t>(schedcli::to_int("--threads", a.threads, 0));
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<nps::CampusOutcome> outcomes(modes.size());
  std::mutex mu;
  auto say = [&](const std::string& line) {
    std::lock_guard lock(mu);
    std::cerr << "nps simulate-campus: " << line << "\n";
  };
  std::atomic<std::size_t> next{0};
  std::exception_ptr failed;
  auto worker = [&] {
    for (std::size_t i; (i = next++) < modes.size();) {
      const nps::CampusMode mode = modes[i];
      nps::CampusProgress progress;
      progress.every = 50;
      auto last = std::chrono::steady_clock::now();
      if (!a.quiet)
        progress.report = [&](nps::CampusMode, std::int64_t step, std::size_t done, std::size_t jobs,
                              std::int64_t lent) {
          const auto now = std::chrono::steady_clock::now();
          if (now - last < std::chrono::seconds(5)) return;
          last = now;
          say(std::string(nps::to_string(mode)) + ": step " + std::to_string(step) + ", " +
              std::to_string(done) + "/" + std::to_string(jobs) + " jobs done" +
              (mode == nps::CampusMode::kCampus ? ", " + std::to_string(lent) + " nodes lent" : ""));
        };
      try {
        outcomes[i] = nps::simulate_campus(config, world, mode, progress);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!failed) failed = std::current_exception();
        return;
      }
      const auto& o = outcomes[i];
      if (!a.quiet)
        say(std::string(nps::to_string(mode)) + ": " + std::to_string(o.result.steps) + " steps in " +
            fixed(o.wall_seconds) + " s (" + fixed(o.tick_ms_mean, 2) + " ms per step)");
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < std::min(threads, modes.size()); ++k) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failed) std::rethrow_exception(failed);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  std::size_t busiest = 0;
  for (std::size_t s = 0; s < world.jobs_per_subnet.size(); ++s)
    if (world.jobs_per_subnet[s] > world.jobs_per_subnet[busiest]) busiest = s;

  if (a.json) {
    nlohmann::json j{{"subnets", config.subnets.size()},
                     {"nodes", nodes},
                     {"jobs", world.jobs.size()},
                     {"step_seconds", world.trace.step_seconds},
                     {"strategy", config.strategy},
                     {"subnet_period_steps", config.subnet_period},
                     {"spill", config.spill},
                     {"campus",
                      {{"period_steps", config.campus.period},
                       {"congested_steps", config.campus.congested},
                       {"relieved_steps", config.campus.relieved},
                       {"hold_steps", config.campus.hold},
                       {"cooldown_steps", config.campus.cooldown},
                       {"reserve", config.campus.reserve}}},
                     {"busiest_subnet",
                      {{"name", config.subnets[busiest].name}, {"jobs", world.jobs_per_subnet[busiest]}}},
                     {"wall_s", wall}};
    for (const auto& o : outcomes) {
      const std::string m = nps::to_string(o.mode);
      j[m + "_mean_turnaround_s"] = o.result.mean_turnaround * step_seconds;
      j[m] = outcome_json(o, step_seconds);
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::cout << "campus " << a.file << ": " << config.subnets.size() << " subnets, " << nodes << " nodes, "
            << world.jobs.size() << " jobs (the busiest subnet, " << config.subnets[busiest].name << ", got "
            << world.jobs_per_subnet[busiest] << "); subnets: " << config.strategy << " every "
            << config.subnet_period << " step(s); campus every " << config.campus.period << " steps\n";
  std::printf("%-18s %16s %10s %8s %9s\n", "scheduled as", "mean turnaround", "finished", "steps", "wall");
  for (const auto& o : outcomes) {
    const char* label = o.mode == nps::CampusMode::kCampus     ? "campus (lending)"
                        : o.mode == nps::CampusMode::kIsolated ? "isolated subnets"
                                                               : "one flat pool";
    std::printf("%-18s %16s %10s %8lld %9s\n", label,
                schedcli::readable_duration(o.result.mean_turnaround * step_seconds).c_str(),
                o.result.finished ? "all" : "not all", static_cast<long long>(o.result.steps),
                (fixed(o.wall_seconds) + " s").c_str());
  }
  for (const auto& o : outcomes) {
    if (o.mode != nps::CampusMode::kCampus) continue;
    std::cout << "campus overhead: " << o.decisions << " decisions, " << o.loans_started << " loans, "
              << o.nodes_lent << " nodes lent (returned: " << o.nodes_returned[0] << " as " << kWhy[0] << ", "
              << o.nodes_returned[1] << " as " << kWhy[1] << ", " << o.nodes_returned[2] << " as " << kWhy[2]
              << "), " << schedcli::readable_duration(static_cast<double>(o.lent_node_steps) * step_seconds)
              << " of lent node time, at most " << o.peak_nodes_lent << " nodes lent and "
              << o.borrowing_subnets_max << " subnets congested at once\n";
  }
}

}  // namespace

void add_nps_simulate_campus(CLI::App& nps) {
  auto a = std::make_shared<CampusArgs>();
  auto* c =
      nps.add_subcommand("simulate-campus",
                         "simulate a campus of subnets, each under its own NPS, with the campus lending idle "
                         "nodes between them; compared with isolated subnets and one flat pool");
  c->add_option("campus", a->file, "the campus file (YAML, docs/nps.md \"The campus file\")")->required();
  c->add_option("--modes", a->modes, "which runs, comma-separated: campus, isolated, flat")
      ->capture_default_str();
  schedcli::int_option(c->add_option("--max-steps", a->max_steps,
                                     "stop each run after this many steps (0: the file's, "
                                     "else 20 × the trace's length)"),
                       0);
  schedcli::int_option(
      c->add_option("--threads", a->threads,
                    "runs at once, each on a thread of its own (0: as many as the machine has cores)"),
      0)
      ->capture_default_str();
  c->add_flag("--json", a->json, "one JSON object instead of the table");
  c->add_flag("--quiet", a->quiet, "no progress on stderr");
  c->callback([a] { schedcli::guarded([&] { run(*a); }); });
}

void add_nps_campus(CLI::App& nps) {
  auto file = std::make_shared<std::string>();
  auto* c =
      nps.add_subcommand("campus",
                         "run a campus above several pools: every period, lend idle nodes of one pool to "
                         "a job of a congested one (docs/nps.md, \"Hierarchy\")");
  c->add_option("campus", *file, "the live campus file (YAML, docs/nps.md \"The live campus file\")")
      ->required();
  c->callback([file] {
    schedcli::guarded([&] {
      const nps::LiveCampusConfig config = nps::load_live_campus(*file);
      std::atomic<bool> stop{false};
      StopOnSignals signals(stop);
      const int status = nps::run_campus(config, stop, std::cerr);
      if (status != 0) std::exit(status);
    });
  });
}

}  // namespace piranha::apps
