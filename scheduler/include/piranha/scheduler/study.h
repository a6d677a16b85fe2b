// The paper's study (§4 Figures 1–3, §7 Figures 5–7, the §6.1
// example) and the comparison beyond it, run end to end on one trace. The
// claims are judged by study_claims.h, the report rendered by study_report.h.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "piranha/scheduler/experiment.h"
#include "piranha/scheduler/prediction_eval.h"
#include "piranha/scheduler/trace_tools.h"

namespace piranha::sched {

struct StudyOptions {
  int seeds = 20;  // random workloads per strategy
  WorkloadOptions workload;
  SimOptions sim;                                 // period, window, predictor of every run
  std::int64_t max_window = 60;                   // Figures 1–3: n = 1..max_window
  std::vector<double> tolerances{0.1, 0.2, 0.0};  // Figures 1, 2, 3
  // Beyond the paper: the same comparison on synthetic traces of these seeds
  // (same model as the bundled trace: 15 nodes, 21 days).
  std::vector<std::uint64_t> other_trace_seeds{2, 3};
  unsigned threads = 0;
};

// The strategies of each figure.
std::vector<std::string> figure5_strategies();
std::vector<std::string> figure6_strategies();  // SRT, SRTA(0.0..1.0), SRTFIT
std::vector<std::string> figure7_strategies();  // LET, LETA(0.0..1.0), LETFIT
std::vector<std::string> beyond_strategies();   // TSK against the MIX-based ones and their relatives

struct PredictionCurve {
  std::int64_t window = 0;
  std::vector<PredictionScore> scores;  // per predictor; matched per tolerance
};

struct BeyondTrace {
  std::string name;  // "bundled" or "synth seed N"
  double available_fraction = 0;
  Experiment experiment;  // beyond_strategies(), normalized by TSK
};

struct StudyResult {
  std::string trace_name;
  AvailabilityTrace trace;
  TraceStats stats;
  StudyOptions options;
  std::vector<PredictionCurve> prediction;  // n = 1..max_window, predictors of all_predictors()
  Experiment strategies;                    // Figures 5–7, every strategy once
  SimResult example_srt, example_tsk;       // the §6.1 example
  std::vector<BeyondTrace> beyond;
  double seconds_prediction = 0, seconds_strategies = 0, seconds_beyond = 0;
};

// Runs everything; `progress(stage, fraction)` is called from the calling thread.
StudyResult run_study(const AvailabilityTrace& trace, const std::string& trace_name,
                      const StudyOptions& options,
                      const std::function<void(const std::string&, double)>& progress = {});

// The paper's §6.1 example: its trace and its two jobs.
AvailabilityTrace worked_example_trace();
std::vector<Job> worked_example_jobs();

}  // namespace piranha::sched
