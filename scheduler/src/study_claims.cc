// judge (study_claims.h): the paper's claims checked on a study's numbers.
#include "piranha/scheduler/study_claims.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "piranha/scheduler/html.h"
#include "piranha/scheduler/predictor.h"

namespace piranha::sched {
namespace {

using html::fixed;  // the numbers' spelling, shared with the rest of the report

// The strategies that need no job lengths (Figure 5 without TSK, SRT, SPT).
constexpr const char* kKnowledgeFree[] = {"FCFS", "SET", "LET", "ROR", "RND", "FAIR"};

double norm_of(const Experiment& e, const std::string& name) {
  for (const auto& s : e.summary)
    if (s.strategy == name) return s.normalized_turnaround;
  return NAN;
}

std::string pct(double v) {
  return fixed(100 * v, 1) + "%";
}

Verdict verdict(bool agrees) {
  return agrees ? Verdict::kAgrees : Verdict::kDisagrees;
}

// A quantitative claim: within 5 percentage points agrees; otherwise say
// whether the effect has the paper's direction.
Verdict verdict_near(double here, double paper) {
  if (std::abs(here - paper) <= 0.05) return Verdict::kAgrees;
  if (here > 0 && paper > 0) return here < paper ? Verdict::kWeaker : Verdict::kStronger;
  return Verdict::kDisagrees;
}

// Fraction matched of `predictor` at window index i, tolerance index k.
double fm(const StudyResult& r, std::size_t i, const std::string& predictor, std::size_t k) {
  for (const auto& s : r.prediction[i].scores)
    if (s.predictor == predictor) return s.fraction(k);
  return NAN;
}

PredictionFinding judge_prediction(const StudyResult& r, std::size_t k) {
  PredictionFinding f;
  f.tolerance = r.options.tolerances[k];
  auto best_at = [&](std::size_t i) {
    std::string best;
    double v = -1;
    for (const auto& p : paper_predictors())
      if (fm(r, i, p, k) > v) v = fm(r, i, p, k), best = p;
    return best;
  };
  f.best_at_first = best_at(0);
  f.best_at_comparison = best_at(comparison_window(r));
  for (std::size_t i = 0; i < r.prediction.size() && !f.crossover; ++i)
    if (fm(r, i, "DTD_HIST", k) > fm(r, i, "REC_HIST", k)) f.crossover = r.prediction[i].window;
  std::vector<std::pair<double, std::string>> ranks;
  for (const auto& p : paper_predictors()) {
    double sum = 0;
    for (std::size_t i = 0; i < r.prediction.size(); ++i) {
      int rank = 1;
      for (const auto& q : paper_predictors())
        if (fm(r, i, q, k) > fm(r, i, p, k)) ++rank;
      sum += rank;
    }
    ranks.emplace_back(sum / static_cast<double>(r.prediction.size()), p);
  }
  std::sort(ranks.begin(), ranks.end());
  for (const auto& [rank, p] : ranks) f.by_mean_rank.push_back(p);
  return f;
}

std::vector<Claim> judge_strategies(const Experiment& e) {
  const double srt = norm_of(e, "SRT"), let = norm_of(e, "LET"), letfit = norm_of(e, "LETFIT"),
               srtfit = norm_of(e, "SRTFIT");
  double best_non_srt = INFINITY;
  std::string best_non_srt_name;
  for (const auto& n : kKnowledgeFree)
    if (norm_of(e, n) < best_non_srt) best_non_srt = norm_of(e, n), best_non_srt_name = n;
  // "A high threshold" is 0.8 to 1.0; every threshold counts against LETFIT.
  double best_leta = INFINITY, worst_srta = -INFINITY, best_srta = INFINITY;
  std::string best_leta_name;
  double min_leta = INFINITY;
  for (const auto& n : figure7_strategies())
    if (n.find("A(") != std::string::npos) {
      min_leta = std::min(min_leta, norm_of(e, n));
      if (n == "LETA(0.9)" || n == "LETA(1.0)" || n == "LETA(0.8)")
        if (norm_of(e, n) < best_leta) best_leta = norm_of(e, n), best_leta_name = n;
    }
  for (const auto& n : figure6_strategies())
    if (n.find("A(") != std::string::npos) {
      worst_srta = std::max(worst_srta, norm_of(e, n));
      best_srta = std::min(best_srta, norm_of(e, n));
    }
  const double tsk_vs_srt = 1 / srt - 1;
  const double leta_gain = 1 - best_leta / let;
  // FCFS and LET best among knowledge-free: both in the top two of that group.
  std::vector<std::pair<double, std::string>> free;
  for (const auto& n : kKnowledgeFree) free.emplace_back(norm_of(e, n), n);
  std::sort(free.begin(), free.end());
  const bool fcfs_let_best = (free[0].second == "FCFS" || free[0].second == "LET") &&
                             (free[1].second == "FCFS" || free[1].second == "LET");
  std::vector<Figure> free_figures;
  for (const auto& [v, n] : free) free_figures.push_back({n, v});
  return {
      {"SRT gives the best turnaround",
       "yes",
       {{"SRT", srt}, {"SPT", norm_of(e, "SPT")}},
       "SRT at " + fixed(srt, 3) + " of TSK",
       verdict(srt <= norm_of(e, "SPT") && srt < 1)},
      {"TSK is about 22% worse than SRT",
       "22%",
       {{"TSK over SRT", tsk_vs_srt}},
       pct(tsk_vs_srt),
       verdict_near(tsk_vs_srt, 0.22)},
      {"TSK beats every non-SRT strategy",
       "yes",
       {{best_non_srt_name, best_non_srt}},
       "best non-SRT: " + best_non_srt_name + " at " + fixed(best_non_srt, 3),
       verdict(best_non_srt > 1)},
      {"FCFS and LET are the best knowledge-free strategies", "yes", free_figures,
       "best two: " + free[0].second + ", " + free[1].second, verdict(fcfs_let_best)},
      {"no SRTA(T) improves on SRT",
       "yes",
       {{"best SRTA", best_srta}, {"SRT", srt}},
       "best SRTA at " + fixed(best_srta, 3) + " vs SRT " + fixed(srt, 3),
       verdict(best_srta >= srt - 1e-9)},
      {"SRTFIT is (almost) uniformly behind the SRTA variants",
       "yes",
       {{"SRTFIT", srtfit}, {"best SRTA", best_srta}, {"worst SRTA", worst_srta}},
       "SRTFIT " + fixed(srtfit, 3) + ", SRTA range " + fixed(best_srta, 3) + "–" + fixed(worst_srta, 3),
       verdict(srtfit >= worst_srta - 0.02)},
      {"LETA with a high threshold is about 24% better than LET",
       "24%",
       {{best_leta_name + " over LET", leta_gain}},
       best_leta_name + ": " + pct(leta_gain) + " better",
       verdict_near(leta_gain, 0.24)},
      {"LETFIT is behind the LETA variants",
       "yes",
       {{"LETFIT", letfit}, {"best LETA", min_leta}},
       "LETFIT " + fixed(letfit, 3) + ", best LETA " + fixed(min_leta, 3),
       verdict(letfit > min_leta)},
  };
}

MixFinding judge_mix(const StudyResult& r) {
  MixFinding f;
  for (const auto& t : r.beyond) {
    MixBest best{t.name, "", INFINITY};
    for (const auto& n : {"LETMIX(1.0)", "LETMIX(2.0)", "FCFSMIX(1.0)"})
      if (norm_of(t.experiment, n) < best.normalized_turnaround)
        best.normalized_turnaround = norm_of(t.experiment, n), best.strategy = n;
    f.beats_tsk |= best.normalized_turnaround < 0.99;
    f.per_trace.push_back(best);
  }
  return f;
}

}  // namespace

const char* verdict_text(Verdict v) {
  switch (v) {
    case Verdict::kAgrees: return "agrees";
    case Verdict::kWeaker: return "same direction, weaker";
    case Verdict::kStronger: return "same direction, stronger";
    case Verdict::kDisagrees: return "does not agree";
  }
  return "does not agree";
}

std::size_t comparison_window(const StudyResult& r) {
  return std::min<std::size_t>(9, r.prediction.size() - 1);
}

StudyClaims judge(const StudyResult& r) {
  StudyClaims c;
  if (!r.prediction.empty())
    for (std::size_t k = 0; k < r.options.tolerances.size(); ++k)
      c.prediction.push_back(judge_prediction(r, k));
  c.strategies = judge_strategies(r.strategies);
  c.mix = judge_mix(r);
  return c;
}

}  // namespace piranha::sched
