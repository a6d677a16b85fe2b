// piranha study: the paper's whole evaluation on one trace, as an HTML
// report (the paper, §4–7; docs/scheduling.md).
#include "piranha/scheduler/study.h"

#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "piranha/scheduler/study_report.h"
#include "sched_cli.h"

namespace piranha::apps {
namespace {

struct StudyArgs {
  std::string trace, report, discussion, seeds = "20", jobs = "20", interarrival = "60", period = "1",
                                         window = "10", predictor = "REC_HIST", max_window = "60",
                                         other_seeds = "2,3", threads = "0";
  bool json = false;
};

void run(const StudyArgs& a) {
  using namespace schedcli;
  if (a.trace.empty()) bad_input("study: --trace is required");
  sched::StudyOptions o;
  o.seeds = static_cast<int>(to_int("--seeds", a.seeds, 1));
  o.workload.jobs = static_cast<int>(to_int("--jobs", a.jobs, 1));
  o.workload.interarrival = to_real("--interarrival", a.interarrival, 1e-9, 1e12);
  o.sim.period = to_int("--period", a.period, 1);
  o.sim.window = to_int("--window", a.window, 1);
  o.sim.predictor = a.predictor;
  o.max_window = to_int("--max-window", a.max_window, 1);
  o.threads = static_cast<unsigned>(to_int("--threads", a.threads, 0));
  o.other_trace_seeds.clear();
  for (const auto& s : split_list(a.other_seeds))
    o.other_trace_seeds.push_back(static_cast<std::uint64_t>(to_int("--other-trace-seeds", s, 0)));
  std::string discussion;
  if (!a.discussion.empty()) {
    std::ifstream in(a.discussion);
    if (!in) bad_input(a.discussion + ": cannot open");
    std::ostringstream s;
    s << in.rdbuf();
    discussion = s.str();
  }
  const AvailabilityTrace trace = read_trace(a.trace);
  if (o.max_window > trace.length) bad_input("--max-window " + a.max_window + " is longer than the trace");
  sched::validate(o.sim, trace);
  Progress progress("study");
  auto r = sched::run_study(trace, a.trace, o,
                            [&](const std::string& stage, double f) { progress.update(f, stage); });
  progress.finish();
  if (!a.report.empty())
    write_whole_file(a.report, sched::render_study_report(r, sched::judge(r), discussion));
  if (a.json) {
    nlohmann::ordered_json out;
    nlohmann::ordered_json summary = nlohmann::ordered_json::object();
    for (const auto& s : r.strategies.summary)
      summary[s.strategy] = {{"mean_turnaround", s.mean_turnaround},
                             {"normalized_turnaround", s.normalized_turnaround},
                             {"unfinished", s.unfinished}};
    out["summary"] = summary;
    nlohmann::ordered_json pred = nlohmann::ordered_json::array();
    for (const auto& c : r.prediction) {
      nlohmann::ordered_json w;
      w["window"] = c.window;
      for (const auto& s : c.scores) {
        nlohmann::ordered_json per = nlohmann::ordered_json::object();
        for (std::size_t k = 0; k < o.tolerances.size(); ++k)
          per[std::to_string(o.tolerances[k]).substr(0, 3)] = s.fraction(k);
        w[s.predictor] = per;
      }
      pred.push_back(w);
    }
    out["prediction"] = pred;
    nlohmann::ordered_json beyond = nlohmann::ordered_json::object();
    for (const auto& t : r.beyond) {
      nlohmann::ordered_json m = nlohmann::ordered_json::object();
      for (const auto& s : t.experiment.summary) m[s.strategy] = s.normalized_turnaround;
      beyond[t.name] = m;
    }
    out["beyond"] = beyond;
    out["seconds"] = {{"prediction", r.seconds_prediction},
                      {"strategies", r.seconds_strategies},
                      {"beyond", r.seconds_beyond}};
    std::cout << out.dump() << "\n";
    return;
  }
  std::cout << std::left << std::setw(16) << "strategy" << std::right << std::setw(12) << "normalized"
            << "\n";
  for (const auto& s : r.strategies.summary)
    std::cout << std::left << std::setw(16) << s.strategy << std::right << std::fixed << std::setprecision(3)
              << std::setw(12) << s.normalized_turnaround << "\n";
  std::cout << std::setprecision(2) << "predictors " << r.seconds_prediction << " s, strategies "
            << r.seconds_strategies << " s, beyond " << r.seconds_beyond << " s\n";
}

}  // namespace

void add_study(CLI::App& app) {
  auto a = std::make_shared<StudyArgs>();
  auto* cmd =
      app.add_subcommand("study", "reproduce the paper's study on a trace (Figures 1-3, 5-7) as a report");
  cmd->add_option("--trace", a->trace, "availability trace (*.avail.csv)");
  cmd->add_option("--report", a->report, "write the self-contained HTML report here");
  cmd->add_option("--discussion", a->discussion, "an HTML fragment to include as the report's discussion");
  cmd->add_option("--seeds", a->seeds, "random workloads per strategy")->capture_default_str();
  cmd->add_option("--jobs", a->jobs, "jobs per workload")->capture_default_str();
  cmd->add_option("--interarrival", a->interarrival, "mean minutes between arrivals")->capture_default_str();
  cmd->add_option("--period", a->period, "scheduler period")->capture_default_str();
  cmd->add_option("--window", a->window, "prediction window of the strategies")->capture_default_str();
  cmd->add_option("--predictor", a->predictor, "AP-length predictor of the FIT strategies")
      ->capture_default_str();
  cmd->add_option("--max-window", a->max_window, "Figures 1-3: n = 1..N")->capture_default_str();
  cmd->add_option("--other-trace-seeds", a->other_seeds,
                  "synthetic traces for the beyond-the-paper comparison")
      ->capture_default_str();
  cmd->add_option("--threads", a->threads, "parallel runs (0: one per core)")->capture_default_str();
  cmd->add_flag("--json", a->json, "print a JSON summary on stdout");
  schedcli::add_progress_flag(*cmd);
  cmd->callback([a] { schedcli::guarded([&] { run(*a); }); });
}

}  // namespace piranha::apps
