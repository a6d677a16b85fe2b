// The study (docs/rigid.md, "The study"): each seed's main experiment on one
// 256-node SWF workload, in three steps:
//   run_study()  makes the 135 runs and returns what they measured;
//   judge()      checks each paper's findings against those numbers;
//   render_study_report() (report.h) lays both out as docs/rigid-report.html.
// None does I/O (run_study() reports progress through its callback) and
// each gives the same result for the same arguments; judge() is cheap,
// run_study() takes about 40 s.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "piranha/rigid/algorithm.h"

namespace piranha::rigid {

struct StudyOptions {
  std::size_t multi_site_jobs =
      1500;  // seed 002 takes the first 5000 jobs of each trace; fewer keep it quick
  std::size_t interference_jobs = 3000;  // seed 004: the first jobs of the workload
  // Called with a short description of each step and the fraction done; may be empty.
  std::function<void(const std::string&, double)> progress;
};

// Seed 000: FIFO, FirstFit, Random, LPT, SPT, Backfilling and EASY on one
// site of 256 nodes, run times known exactly.
struct Seed000Result {
  std::vector<std::string> algorithms;
  std::vector<double> loads;                            // load factors, the last 1
  std::map<std::string, std::vector<Metrics>> by_load;  // algorithm -> one per load
  Metrics learned;  // Backfilling with learned run times, on the workload as it is
};

// Seed 001: PFCFS1–3 against non-preemptive FCFS, each 30-day month alone.
// A change is in percent: 100 × (PFCFS's / FCFS's − 1).
struct Seed001Result {
  static constexpr int kMetrics = 3;  // makespan, weighted completion, weighted flow
  using Changes = std::array<std::array<double, kMetrics>, 3>;  // [PFCFS1..3][metric]
  struct Month {
    int number = 0;  // from 1
    std::size_t jobs = 0;
    Changes change{};
  };
  struct Size {
    int nodes = 0;  // jobs wider are left out
    std::vector<Month> months;
    Changes total{};  // the change of the sums over the months
  };
  std::vector<Size> sizes;  // 128 and 256 nodes
  // PFCFS1(wait, slice, 0)'s change in weighted flow on the whole workload,
  // 256 nodes: [wait][slice] for waits and slices of 60, 600, 3600 s.
  std::vector<int> waits, slices;
  std::vector<std::vector<double>> sensitivity;
  // PFCFS1(600, 600, penalty)'s change in weighted flow, one per penalty.
  std::vector<int> penalties;
  std::vector<double> penalty_change;
};

// Seed 002: four heterogeneous sites (kNasSites), loads by scaling run times.
struct Seed002Result {
  std::string sites;     // the machine, as --sites takes it
  std::size_t jobs = 0;  // four copies of the first jobs
  std::vector<std::string>
      algorithms;  // Greedy, MR(4), MR(4,CONS,COMPLETION), MR(4,CONS,COMPLETION,EFFICACY)
  std::vector<double> loads;
  std::map<std::string, std::vector<Metrics>> by_load;  // algorithm -> one per load
  // The same jobs on one site of 256 nodes, run times a quarter: one per load.
  std::vector<Metrics> easy_one_site, conservative_one_site;
  // Mean flow of MR(K,CONS,COMPLETION,EFFICACY,...) at loads[1] for K = 1..4,
  // its K sites chosen by load or by predicted completion.
  std::vector<double> k_by_load, k_by_completion;
};

// Seed 004: MTI, MCT and MNI on four 64-node clusters for heterogeneities H.
struct Seed004Result {
  std::size_t jobs = 0;  // the first jobs no wider than 64
  std::vector<int> heterogeneities;
  std::vector<double> loads;
  std::vector<std::string> algorithms;
  // H -> algorithm -> mean delay (s), one per load.
  std::map<int, std::map<std::string, std::vector<double>>> delay;
  // H -> MNI's delay / MTI's at the highest load.
  std::map<int, double> mni_over_mti;
};

struct StudyResult {
  std::string source;  // the workload's file
  std::size_t jobs = 0;
  std::size_t wide_jobs = 0, short_wide_jobs = 0;  // wider than 128 nodes; of them, run 60 s or less
  Seed000Result seed000;
  Seed001Result seed001;
  Seed002Result seed002;
  Seed004Result seed004;
};

// Runs every experiment of the study on `w` (a 256-node workload such as
// data/lublin_256.swf). Throws what the algorithms throw on a workload that
// does not fit (check_fits first).
StudyResult run_study(const Workload& w, const StudyOptions& o);

// A number a finding rests on, named for what it measures.
struct Figure {
  std::string name;
  double value = 0;
  friend bool operator==(const Figure&, const Figure&) = default;
};

// One paper's finding checked on the study's numbers.
struct Finding {
  int seed = 0;                 // 0, 1, 2 or 4: the section it belongs to
  std::string claim;            // the paper's finding, in a few words
  bool agrees = false;          // whether this run agrees with it
  std::vector<Figure> figures;  // what `agrees` rests on
  std::string what;             // what this run shows, with the figures (HTML)
  std::string why;              // the reason (HTML)
};

// The findings of the four seeds, seed by seed in the report's order. Pure;
// needs the per-load vectors of `result` as run_study() fills them (the
// algorithms named in Seed*Result's comments, at least two loads each).
std::vector<Finding> judge(const StudyResult& result);

}  // namespace piranha::rigid
