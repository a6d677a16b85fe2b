#include "piranha/scheduler/study_claims.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>

namespace piranha::sched {
namespace {

using Norms = std::map<std::string, double>;

// An experiment whose summary gives each strategy its normalized turnaround;
// every strategy of Figures 5–7 not named is at TSK's, 1.
Experiment experiment(const Norms& norms) {
  Experiment e;
  std::vector<std::string> names = figure5_strategies();
  for (const auto& group : {figure6_strategies(), figure7_strategies(), beyond_strategies()})
    names.insert(names.end(), group.begin(), group.end());
  for (const auto& n : names) {
    const auto it = norms.find(n);
    e.summary.push_back({n, 0, it == norms.end() ? 1.0 : it->second, 20, 0});
  }
  return e;
}

StudyResult study(const Norms& norms) {
  StudyResult r;
  r.strategies = experiment(norms);
  return r;
}

// A copy, so that a claim of a temporary judgement outlives it.
Claim claim(const StudyClaims& c, const std::string& statement) {
  for (const auto& x : c.strategies)
    if (x.statement == statement) return x;
  FAIL("no claim " << statement);
  return {};
}

Verdict verdict(const Norms& norms, const std::string& statement) {
  return claim(judge(study(norms)), statement).verdict;
}

// Prediction curves: per window, each predictor's fraction matched at the one
// tolerance (out of 1000 points).
StudyResult curves(const std::vector<std::map<std::string, double>>& per_window) {
  StudyResult r;
  r.options.tolerances = {0.1};
  std::int64_t n = 0;
  for (const auto& w : per_window) {
    PredictionCurve c{++n, {}};
    for (const auto& [p, f] : w) c.scores.push_back({p, 1000, {std::llround(f * 1000)}});
    r.prediction.push_back(c);
  }
  return r;
}

std::map<std::string, double> window(double rec, double dtd, double wtw, double l, double x, double avail) {
  return {{"REC_HIST", rec}, {"DTD_HIST", dtd}, {"WTW_HIST", wtw},
          {"L_BURST", l},    {"X_BURST", x},    {"AVAIL", avail}};
}

}  // namespace

TEST_CASE("claim: SRT gives the best turnaround: below TSK's and no worse than SPT's") {
  const std::string c = "SRT gives the best turnaround";
  CHECK(verdict({{"SRT", 0.8}, {"SPT", 0.9}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRT", 0.8}, {"SPT", 0.8}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRT", 0.8}, {"SPT", 0.7}}, c) == Verdict::kDisagrees);
  CHECK(verdict({{"SRT", 1.0}, {"SPT", 1.1}}, c) == Verdict::kDisagrees);
  const auto& x = claim(judge(study({{"SRT", 0.8124}, {"SPT", 0.9}})), c);
  CHECK(x.figures == std::vector<Figure>{{"SRT", 0.8124}, {"SPT", 0.9}});
  CHECK(x.here == "SRT at 0.812 of TSK");
  CHECK(x.paper == "yes");
}

TEST_CASE("claim: TSK is about 22% worse than SRT: within 5 points agrees, else the direction is judged") {
  const std::string c = "TSK is about 22% worse than SRT";
  CHECK(verdict({{"SRT", 1 / 1.22}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRT", 1 / 1.265}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRT", 1 / 1.175}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRT", 1 / 1.165}}, c) == Verdict::kWeaker);
  CHECK(verdict({{"SRT", 1 / 1.275}}, c) == Verdict::kStronger);
  CHECK(verdict({{"SRT", 1.1}}, c) == Verdict::kDisagrees);  // TSK better than SRT
  const auto& x = claim(judge(study({{"SRT", 0.8}})), c);
  CHECK(x.figures.at(0).name == "TSK over SRT");
  CHECK(x.figures.at(0).value == doctest::Approx(0.25));
  CHECK(x.here == "25.0%");
}

TEST_CASE("claim: TSK beats every non-SRT strategy: every knowledge-free one is above 1") {
  const std::string c = "TSK beats every non-SRT strategy";
  const Norms above{{"FCFS", 1.1}, {"SET", 1.5}, {"LET", 1.05}, {"ROR", 1.3}, {"RND", 1.4}, {"FAIR", 1.2}};
  CHECK(verdict(above, c) == Verdict::kAgrees);
  const auto& x = claim(judge(study(above)), c);
  CHECK(x.figures == std::vector<Figure>{{"LET", 1.05}});
  CHECK(x.here == "best non-SRT: LET at 1.050");
  Norms ror_wins = above;
  ror_wins["ROR"] = 0.99;
  CHECK(verdict(ror_wins, c) == Verdict::kDisagrees);
  // SPT and the adaptive strategies do not count.
  Norms others_win = above;
  others_win["SPT"] = 0.5;
  others_win["LETA(0.5)"] = 0.6;
  CHECK(verdict(others_win, c) == Verdict::kAgrees);
}

TEST_CASE("claim: FCFS and LET are the best knowledge-free strategies: the two lowest of the six") {
  const std::string c = "FCFS and LET are the best knowledge-free strategies";
  const Norms base{{"FCFS", 1.1}, {"SET", 1.5}, {"LET", 1.05}, {"ROR", 1.3}, {"RND", 1.4}, {"FAIR", 1.2}};
  CHECK(verdict(base, c) == Verdict::kAgrees);
  Norms fair_second = base;
  fair_second["FAIR"] = 1.07;
  CHECK(verdict(fair_second, c) == Verdict::kDisagrees);
  const auto& x = claim(judge(study(fair_second)), c);
  CHECK(x.here == "best two: LET, FAIR");
  CHECK(x.figures.size() == 6);
  CHECK(x.figures.front() == Figure{"LET", 1.05});
}

TEST_CASE("claim: no SRTA(T) improves on SRT: every threshold at or above SRT") {
  const std::string c = "no SRTA(T) improves on SRT";
  CHECK(verdict({{"SRT", 0.8}, {"SRTA(0.5)", 0.8}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRT", 0.8}, {"SRTA(0.5)", 0.79}}, c) == Verdict::kDisagrees);
  CHECK(verdict({{"SRT", 0.8}, {"SRTFIT", 0.7}}, c) == Verdict::kAgrees);  // SRTFIT is no SRTA(T)
}

TEST_CASE("claim: SRTFIT is (almost) uniformly behind the SRTA variants: at most 0.02 below the worst") {
  const std::string c = "SRTFIT is (almost) uniformly behind the SRTA variants";
  CHECK(verdict({{"SRTA(0.0)", 0.9}, {"SRTFIT", 1.2}}, c) == Verdict::kAgrees);
  // Every other SRTA(T) is at 1: SRTFIT must be at least 0.98.
  CHECK(verdict({{"SRTFIT", 0.985}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"SRTFIT", 0.97}}, c) == Verdict::kDisagrees);
  const auto& x = claim(judge(study({{"SRTA(0.0)", 0.9}, {"SRTFIT", 1.2}})), c);
  CHECK(x.here == "SRTFIT 1.200, SRTA range 0.900–1.000");
}

TEST_CASE("claim: LETA with a high threshold (0.8 to 1.0) is about 24% better than LET") {
  const std::string c = "LETA with a high threshold is about 24% better than LET";
  CHECK(verdict({{"LET", 1.0}, {"LETA(0.9)", 0.76}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"LET", 1.0}, {"LETA(0.8)", 0.9}}, c) == Verdict::kWeaker);
  CHECK(verdict({{"LET", 1.0}, {"LETA(1.0)", 0.6}}, c) == Verdict::kStronger);
  // A low threshold does not count.
  CHECK(verdict({{"LET", 1.0}, {"LETA(0.5)", 0.76}}, c) == Verdict::kDisagrees);
  const auto& x = claim(judge(study({{"LET", 1.0}, {"LETA(0.9)", 0.76}})), c);
  CHECK(x.here == "LETA(0.9): 24.0% better");
}

TEST_CASE("claim: LETFIT is behind the LETA variants: above the best of every threshold") {
  const std::string c = "LETFIT is behind the LETA variants";
  CHECK(verdict({{"LETA(0.2)", 0.9}, {"LETFIT", 0.95}}, c) == Verdict::kAgrees);
  CHECK(verdict({{"LETA(0.2)", 0.9}, {"LETFIT", 0.9}}, c) == Verdict::kDisagrees);
  CHECK(claim(judge(study({{"LETA(0.2)", 0.9}, {"LETFIT", 0.95}})), c).figures ==
        std::vector<Figure>{{"LETFIT", 0.95}, {"best LETA", 0.9}});
}

TEST_CASE("claims: the eight of §7.3 in the report's order, a missing strategy judged against") {
  const auto c = judge(study({}));
  REQUIRE(c.strategies.size() == 8);
  CHECK(c.strategies.front().statement == "SRT gives the best turnaround");
  CHECK(c.strategies.back().statement == "LETFIT is behind the LETA variants");
  // A missing strategy fails every comparison: it is neither best nor beaten.
  StudyResult r;
  CHECK(claim(judge(r), "SRT gives the best turnaround").verdict == Verdict::kDisagrees);
  r.strategies.summary = {{"SET", 0, 1.5, 20, 0}, {"LET", 0, 1.05, 20, 0}};
  CHECK(claim(judge(r), "TSK beats every non-SRT strategy").verdict == Verdict::kAgrees);
  CHECK(claim(judge(r), "TSK beats every non-SRT strategy").here == "best non-SRT: LET at 1.050");
  CHECK(judge(r).prediction.empty());
  CHECK(std::string(verdict_text(Verdict::kWeaker)) == "same direction, weaker");
}

TEST_CASE("Figures 1–3: the crossover is the first window where DTD_HIST matches more than REC_HIST") {
  auto r = curves({window(0.9, 0.5, 0.1, 0.4, 0.3, 0.2), window(0.8, 0.8, 0.1, 0.4, 0.3, 0.2),
                   window(0.6, 0.7, 0.1, 0.4, 0.3, 0.2), window(0.8, 0.7, 0.1, 0.4, 0.3, 0.2)});
  auto f = judge(r).prediction.at(0);
  CHECK(f.tolerance == 0.1);
  REQUIRE(f.crossover);
  CHECK(*f.crossover == 3);  // a tie at n = 2 is no crossover
  r = curves({window(0.9, 0.5, 0.1, 0.4, 0.3, 0.2)});
  CHECK_FALSE(judge(r).prediction.at(0).crossover);
}

TEST_CASE("Figures 1–3: the best predictor at n = 1 and at n = 10 (the last window when fewer)") {
  std::vector<std::map<std::string, double>> w(12, window(0.5, 0.6, 0.1, 0.4, 0.3, 0.2));
  w[0] = window(0.9, 0.5, 0.1, 0.4, 0.3, 0.2);
  w[9] = window(0.5, 0.6, 0.1, 0.4, 0.7, 0.2);
  auto r = curves(w);
  CHECK(comparison_window(r) == 9);
  auto f = judge(r).prediction.at(0);
  CHECK(f.best_at_first == "REC_HIST");
  CHECK(f.best_at_comparison == "X_BURST");
  // MIX is not one of the paper's predictors.
  r.prediction[0].scores.push_back({"MIX", 1000, {1000}});
  CHECK(judge(r).prediction.at(0).best_at_first == "REC_HIST");
  r = curves({window(0.9, 0.5, 0.1, 0.4, 0.3, 0.2), window(0.1, 0.5, 0.1, 0.4, 0.3, 0.2)});
  CHECK(comparison_window(r) == 1);
  CHECK(judge(r).prediction.at(0).best_at_comparison == "DTD_HIST");
}

TEST_CASE("Figures 1–3: the paper's predictors ordered by their mean rank over every window") {
  // REC_HIST first at n = 1 and third at n = 2 (mean 2); DTD_HIST second then first (mean 1.5).
  auto r = curves({window(0.9, 0.8, 0.1, 0.4, 0.3, 0.2), window(0.6, 0.9, 0.1, 0.4, 0.7, 0.2)});
  const auto f = judge(r).prediction.at(0);
  CHECK(f.by_mean_rank ==
        std::vector<std::string>{"DTD_HIST", "REC_HIST", "X_BURST", "L_BURST", "AVAIL", "WTW_HIST"});
}

TEST_CASE("beyond: a MIX strategy beats TSK only when below 0.99 of TSK on some trace") {
  StudyResult r;
  r.beyond.push_back({"bundled", 0.78, experiment({{"LETMIX(1.0)", 0.995}, {"FCFSMIX(1.0)", 1.2}})});
  r.beyond.push_back({"synthetic seed 2", 0.7, experiment({{"LETMIX(2.0)", 0.991}})});
  auto m = judge(r).mix;
  CHECK_FALSE(m.beats_tsk);
  REQUIRE(m.per_trace.size() == 2);
  CHECK(m.per_trace[0].trace == "bundled");
  CHECK(m.per_trace[0].strategy == "LETMIX(1.0)");
  CHECK(m.per_trace[0].normalized_turnaround == 0.995);
  CHECK(m.per_trace[1].strategy == "LETMIX(2.0)");
  r.beyond[1] = {"synthetic seed 2", 0.7, experiment({{"FCFSMIX(1.0)", 0.98}})};
  m = judge(r).mix;
  CHECK(m.beats_tsk);
  CHECK(m.per_trace[1].strategy == "FCFSMIX(1.0)");
  // Other strategies beating TSK do not count.
  r.beyond[1] = {"synthetic seed 2", 0.7, experiment({{"LETA(0.9)", 0.5}})};
  CHECK_FALSE(judge(r).mix.beats_tsk);
}

}  // namespace piranha::sched
