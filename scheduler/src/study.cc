#include "piranha/scheduler/study.h"

#include <algorithm>
#include <chrono>

#include "piranha/scheduler/predictor.h"

namespace piranha::sched {
namespace {

std::vector<std::string> thresholds(const std::string& x) {
  std::vector<std::string> out;
  for (int k = 10; k >= 0; --k)
    out.push_back(x + "A(" + std::to_string(k / 10) + "." + std::to_string(k % 10) + ")");
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<std::string> figure5_strategies() {
  return {"FCFS", "TSK", "SRT", "SPT", "SET", "LET", "ROR", "RND", "FAIR"};
}

std::vector<std::string> figure6_strategies() {
  auto s = thresholds("SRT");
  s.insert(s.begin(), "SRT");
  s.push_back("SRTFIT");
  return s;
}

std::vector<std::string> figure7_strategies() {
  auto s = thresholds("LET");
  s.insert(s.begin(), "LET");
  s.push_back("LETFIT");
  return s;
}

std::vector<std::string> beyond_strategies() {
  return {"TSK", "SRT", "FCFS", "LET", "LETA(0.9)", "LETFIT", "LETMIX(1.0)", "LETMIX(2.0)", "FCFSMIX(1.0)"};
}

AvailabilityTrace worked_example_trace() {
  AvailabilityTrace t;
  t.length = 600;
  t.nodes = {"node"};
  t.periods.emplace_back();
  for (std::int64_t s = 0; s < 200; s += 2) t.periods[0].push_back({s, s + 1});
  t.periods[0].push_back({200, 600});
  return t;
}

std::vector<Job> worked_example_jobs() {
  return {{1, 0, 1, 100}, {2, 0, 2, 20}};
}

StudyResult run_study(const AvailabilityTrace& trace, const std::string& trace_name, const StudyOptions& o,
                      const std::function<void(const std::string&, double)>& progress) {
  StudyResult r;
  r.trace_name = trace_name;
  r.trace = trace;
  r.stats = trace_stats(trace);
  r.options = o;
  auto report = [&](const std::string& stage) {
    return [&, stage](std::size_t done, std::size_t total) {
      if (progress) progress(stage, static_cast<double>(done) / static_cast<double>(total));
    };
  };

  // Figures 1–3: every predictor, every window, all tolerances in one pass.
  auto t0 = std::chrono::steady_clock::now();
  r.prediction.resize(static_cast<std::size_t>(o.max_window));
  parallel_for(
      r.prediction.size(), o.threads,
      [&](std::size_t i) {
        const auto w = static_cast<std::int64_t>(i + 1);
        r.prediction[i] = {w, evaluate_predictors(trace, all_predictors(), w, o.tolerances)};
      },
      report("predictors"));
  r.seconds_prediction = seconds_since(t0);

  // Figures 5–7: every strategy once, on the same workloads.
  t0 = std::chrono::steady_clock::now();
  std::vector<std::string> names = figure5_strategies();
  for (const auto& group : {figure6_strategies(), figure7_strategies()})
    for (const auto& n : group)
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  const auto workloads = random_workloads(o.seeds, o.workload);
  r.strategies = run_experiment(trace, names, workloads, o.sim, o.threads, report("strategies"));
  r.seconds_strategies = seconds_since(t0);

  // The §6.1 example, period 10.
  SimOptions ex;
  ex.period = 10;
  auto srt = make_strategy("SRT"), tsk = make_strategy("TSK");
  r.example_srt = simulate(worked_example_trace(), worked_example_jobs(), *srt, ex);
  r.example_tsk = simulate(worked_example_trace(), worked_example_jobs(), *tsk, ex);

  // Beyond the paper: MIX-based strategies against TSK here and on other traces.
  t0 = std::chrono::steady_clock::now();
  r.beyond.push_back(
      {"bundled trace", trace.available_fraction(),
       run_experiment(trace, beyond_strategies(), workloads, o.sim, o.threads, report("beyond"))});
  for (auto seed : o.other_trace_seeds) {
    SynthOptions so;
    so.seed = seed;
    auto other = synthesize_trace(so);
    r.beyond.push_back(
        {"synthetic seed " + std::to_string(seed), other.available_fraction(),
         run_experiment(other, beyond_strategies(), workloads, o.sim, o.threads, report("beyond"))});
  }
  r.seconds_beyond = seconds_since(t0);
  return r;
}

}  // namespace piranha::sched
