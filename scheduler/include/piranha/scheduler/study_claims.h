// The paper's claims judged on a study's result (study.h): which predictor
// wins in Figures 1–3, whether each claim of its §7.3 about Figures 5–7
// holds, and whether a MIX-based strategy beats TSK (the comparison beyond
// the paper).
//
// judge() is pure: numbers in, claims out; no HTML, no I/O, no clock.
// render_study_report() (study_report.h) lays them out beside the figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "piranha/scheduler/study.h"

namespace piranha::sched {

// How a figure measured here compares with the paper's.
enum class Verdict {
  kAgrees,     // a yes/no claim holds; a quantitative one is within 5 percentage points
  kWeaker,     // quantitative: an effect in the paper's direction, smaller by more than 5 points
  kStronger,   // quantitative: an effect in the paper's direction, larger by more than 5 points
  kDisagrees,  // the claim does not hold, or the effect has the other sign
};

// "agrees", "same direction, weaker", "same direction, stronger", "does not agree".
const char* verdict_text(Verdict verdict);

// A number a verdict rests on, named for what it measures: a strategy's name
// for its turnaround normalized by TSK's ("SRT"), or a derived quantity
// ("TSK over SRT", a fraction: 0.22 is 22%).
struct Figure {
  std::string name;
  double value = 0;
  friend bool operator==(const Figure&, const Figure&) = default;
};

// One claim of the paper's §7.3, checked on this run.
struct Claim {
  std::string statement;        // the paper's claim: "SRT gives the best turnaround"
  std::string paper;            // the paper's figure: "yes", or "22%"
  std::vector<Figure> figures;  // what the verdict rests on
  std::string here;             // the figures as the report shows them: "SRT at 0.812 of TSK"
  Verdict verdict = Verdict::kDisagrees;
};

// What Figures 1–3 show at one tolerance, set against the paper's statements
// (REC_HIST best for small n, DTD_HIST beyond; AVAIL and WTW_HIST poorest).
// Only the paper's six predictors (paper_predictors()) take part.
struct PredictionFinding {
  double tolerance = 0;
  std::string best_at_first;              // matches most at the first window (n = 1)
  std::string best_at_comparison;         // matches most at comparison_window()
  std::optional<std::int64_t> crossover;  // the first n where DTD_HIST matches more than REC_HIST
  // The six by mean rank over every window, best first: rank 1 + the number
  // matching more at that window; ties keep alphabetical order.
  std::vector<std::string> by_mean_rank;
};

// The best MIX-based strategy (LETMIX(1.0), LETMIX(2.0), FCFSMIX(1.0)) on one
// trace of StudyResult::beyond.
struct MixBest {
  std::string trace;     // BeyondTrace::name
  std::string strategy;  // the first of the three with the lowest normalized turnaround
  double normalized_turnaround = 0;
};

struct MixFinding {
  std::vector<MixBest> per_trace;  // in the order of StudyResult::beyond
  // Some MIX-based strategy is below 0.99 of TSK on some trace: less than 1%
  // is within the spread of 20 workloads.
  bool beats_tsk = false;
};

struct StudyClaims {
  std::vector<PredictionFinding> prediction;  // one per StudyOptions::tolerances, in order
  std::vector<Claim> strategies;              // the eight claims of §7.3, in the report's order
  MixFinding mix;
};

// The index into StudyResult::prediction of the window the report compares
// predictors at: n = 10, or the last window when there are fewer.
// Requires a non-empty StudyResult::prediction.
std::size_t comparison_window(const StudyResult& result);

// Judges `result`. Reads only its options' tolerances, its prediction curves
// (empty curves give no prediction findings), the summary of its
// strategies and of each beyond trace; a strategy missing from a summary
// counts as NaN, so every comparison with it fails. Never throws but
// std::bad_alloc.
StudyClaims judge(const StudyResult& result);

}  // namespace piranha::sched
