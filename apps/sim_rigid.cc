// piranha sim rigid: rigid jobs from an SWF workload through the algorithms
// of seeds 000, 001, 002 and 004 (docs/rigid.md, "Command" and "Output").
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "piranha/rigid/algorithm.h"
#include "piranha/rigid/report.h"
#include "sched_cli.h"

namespace piranha::apps {
namespace {

struct RigidArgs {
  std::string swf, nodes, sites, algorithms, estimates = "swf", alpha = "0.5", seed = "0", load = "1",
                                             slowdown_bound = "10", report;
  bool json = false, per_job = false;
};

constexpr const char* kOneSite =
    "FIFO,FirstFit,Random,LPT,SPT,Backfill,EASY,Conservative,PFCFS1,PFCFS2,PFCFS3,MTI,MCT,MNI";
constexpr const char* kSites =
    "Greedy,MR(2),MR(all),MR(all,CONS,COMPLETION),MR(all,CONS,COMPLETION,EFFICACY),MTI,MCT,MNI";

nlohmann::ordered_json to_json(const rigid::Workload& w, const rigid::Machine& m, const RigidArgs& a,
                               const rigid::RunOptions& o, double load,
                               const std::vector<rigid::RunResult>& results) {
  nlohmann::ordered_json out;
  out["workload"] = {{"file", w.source}, {"jobs", w.jobs.size()}, {"skipped", w.skipped}};
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  for (const auto& s : m.sites) sites.push_back({{"nodes", s.nodes}, {"factors", s.factors}});
  out["machine"] = {{"sites", sites}};
  out["options"] = {{"estimates", a.estimates},
                    {"alpha", o.alpha},
                    {"seed", o.seed},
                    {"load", load},
                    {"slowdown_bound", o.slowdown_bound}};
  out["results"] = nlohmann::ordered_json::array();
  for (const auto& r : results) {
    const auto& x = r.metrics;
    nlohmann::ordered_json j;
    j["algorithm"] = r.algorithm;
    j["jobs"] = x.jobs;
    j["makespan"] = x.makespan;
    j["mean_flow"] = x.mean_flow;
    j["mean_wait"] = x.mean_wait;
    j["max_wait"] = x.max_wait;
    j["mean_bounded_slowdown"] = x.mean_bounded_slowdown;
    j["utilization"] = x.utilization;
    j["effective_utilization"] = x.effective_utilization;
    j["weighted_completion"] = x.weighted_completion;
    j["weighted_flow"] = x.weighted_flow;
    j["mean_delay"] = x.mean_delay ? nlohmann::ordered_json(*x.mean_delay) : nlohmann::ordered_json(nullptr);
    j["preemptions"] = r.preemptions;
    if (a.per_job) {
      nlohmann::ordered_json jobs = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < r.jobs.size(); ++i)
        jobs.push_back({{"id", w.jobs[i].id},
                        {"site", r.jobs[i].site},
                        {"start", r.jobs[i].start},
                        {"completion", r.jobs[i].completion}});
      j["per_job"] = jobs;
    }
    out["results"].push_back(j);
  }
  return out;
}

void run_rigid(const RigidArgs& a) {
  using namespace schedcli;
  if (a.swf.empty()) bad_input("sim rigid: --swf is required");
  if (!a.nodes.empty() && !a.sites.empty()) bad_input("sim rigid: give --nodes or --sites, not both");
  rigid::RunOptions o;
  if (a.estimates == "swf")
    o.estimates = rigid::Estimates::kSwf;
  else if (a.estimates == "learn")
    o.estimates = rigid::Estimates::kLearn;
  else if (a.estimates == "exact")
    o.estimates = rigid::Estimates::kExact;
  else
    bad_input("--estimates \"" + a.estimates + "\" is none of swf, learn, exact");
  o.alpha = to_real("--alpha", a.alpha, 0, 0.999999);
  o.seed = static_cast<std::uint64_t>(to_int("--seed", a.seed, 0));
  o.slowdown_bound = to_int("--slowdown-bound", a.slowdown_bound, 1);
  const double load = to_real("--load", a.load, 1e-6, 1e6);
  std::optional<rigid::Machine> machine;
  if (!a.nodes.empty()) machine = rigid::single_site(static_cast<int>(to_int("--nodes", a.nodes, 1)));
  if (!a.sites.empty()) machine = rigid::parse_sites(a.sites);
  const std::string list =
      a.algorithms.empty() ? (machine && machine->sites.size() > 1 ? kSites : kOneSite) : a.algorithms;
  std::vector<std::unique_ptr<rigid::Algorithm>> algorithms;
  for (const auto& name : split_list(list)) algorithms.push_back(rigid::make_algorithm(name));
  if (algorithms.empty()) bad_input("--algorithms is empty");
  rigid::Workload w = rigid::read_swf(a.swf);
  if (!machine) {
    if (w.max_nodes < 1) bad_input(a.swf + ": no \"; MaxNodes:\" header; give --nodes or --sites");
    machine = rigid::single_site(w.max_nodes);
  }
  rigid::check_fits(w, *machine);
  for (const auto& alg : algorithms) alg->check(*machine);
  if (load != 1) w = rigid::scale_load(w, load);
  std::vector<rigid::RunResult> results;
  for (const auto& alg : algorithms) {
    Progress progress("sim rigid " + alg->name());
    o.progress = [&](double f) { progress.update(f, "of the jobs submitted"); };
    results.push_back(alg->run(w, *machine, o));
    progress.finish();
  }
  if (!a.report.empty())
    write_whole_file(a.report, rigid::render_run_report({w, *machine, a.estimates, load, results}));
  if (a.json) {
    std::cout << to_json(w, *machine, a, o, load, results).dump() << "\n";
    return;
  }
  // Times in the unit that fits (12,482,549 s is "144.5 d"), then what the
  // abbreviated columns mean.
  std::cout << std::left << std::setw(40) << "algorithm" << std::right << std::setw(12) << "makespan"
            << std::setw(12) << "mean flow" << std::setw(12) << "mean wait" << std::setw(12) << "max wait"
            << std::setw(10) << "bsld" << std::setw(8) << "util" << std::setw(8) << "eff"
            << "\n";
  for (const auto& r : results) {
    const auto& x = r.metrics;
    std::cout << std::left << std::setw(40) << r.algorithm << std::right << std::setw(12)
              << readable_duration(x.makespan) << std::setw(12) << readable_duration(x.mean_flow)
              << std::setw(12) << readable_duration(x.mean_wait) << std::setw(12)
              << readable_duration(x.max_wait) << std::fixed << std::setprecision(2) << std::setw(10)
              << x.mean_bounded_slowdown << std::setprecision(3) << std::setw(8) << x.utilization
              << std::setw(8) << x.effective_utilization << "\n";
  }
  std::cout
      << "makespan: first submit to last completion; flow: submit to completion; wait: submit to start\n"
      << "bsld: mean bounded slowdown, flow / max(run time alone, " << o.slowdown_bound << " s), at least 1\n"
      << "util: utilization, node-seconds of the jobs' run times / (nodes x makespan)\n"
      << "eff: effective utilization, the same with each job's best run time on any site\n";
}

}  // namespace

void add_sim_rigid(CLI::App& app) {
  CLI::App* sim = sim_group(app);
  auto a = std::make_shared<RigidArgs>();
  auto* cmd = sim->add_subcommand(
      "rigid",
      "rigid (MPI-style) jobs from an SWF workload through the algorithms of seeds 000, 001, 002, 004 "
      "(docs/rigid.md)");
  cmd->add_option("--swf", a->swf, "workload in the Standard Workload Format (Parallel Workloads Archive)");
  cmd->add_option("--nodes", a->nodes, "one site of N nodes (default: the SWF's MaxNodes header)");
  cmd->add_option("--sites", a->sites, "sites NODES[*F or *F1/F2/...] comma-separated, e.g. 256*1.3/2.1,256");
  cmd->add_option("--algorithms", a->algorithms,
                  std::string("comma-separated; default one site: ") + kOneSite +
                      "; several sites: " + kSites + " (MR(all,...) or MR(0,...): K = all sites)");
  cmd->add_option("--estimates", a->estimates, "swf (requested time, else learned) | learn | exact")
      ->capture_default_str();
  cmd->add_option("--alpha", a->alpha, "runtime learning: weight of the old average")->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random's seed")->capture_default_str();
  cmd->add_option("--load", a->load, "multiply run times and estimates by this (rounded up)")
      ->capture_default_str();
  cmd->add_option("--slowdown-bound", a->slowdown_bound, "bounded slowdown's threshold, seconds")
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "print one JSON object on stdout");
  cmd->add_flag("--per-job", a->per_job, "with --json: each job's site, start and completion");
  cmd->add_option("--report", a->report, "write a self-contained HTML report here");
  schedcli::add_progress_flag(*cmd);
  cmd->callback([a] { schedcli::guarded([&] { run_rigid(*a); }); });
}

}  // namespace piranha::apps
