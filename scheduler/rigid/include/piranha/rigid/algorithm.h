// The rigid-job algorithms behind one interface (docs/rigid.md): each runs a
// whole workload on a machine and reports per-job outcomes and the metrics.
//
//   auto a = rigid::make_algorithm("EASY");
//   rigid::RunResult r = a->run(workload, machine, options);
//
// run() is a pure function of its arguments (the randomized ones draw from
// an Rng seeded by options.seed): no clock, no I/O. An Algorithm keeps no
// state between runs, so one instance may run on several threads at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/base/input_error.h"
#include "piranha/rigid/machine.h"
#include "piranha/rigid/workload.h"

namespace piranha::rigid {

// Where predicted run times come from (docs/rigid.md, "Predictions").
enum class Estimates {
  kSwf,    // the requested time where the SWF gives one, else learned
  kLearn,  // always learned from finished jobs
  kExact,  // the actual run time (the papers' perfect knowledge)
};

struct RunOptions {
  Estimates estimates = Estimates::kSwf;
  double alpha = 0.5;        // runtime learning's weight of the old average, 0 <= alpha < 1
  std::uint64_t seed = 0;    // Random's draws
  Time slowdown_bound = 10;  // bounded slowdown's threshold, seconds >= 1
  // Called now and then with the fraction of jobs submitted so far; may be empty.
  std::function<void(double)> progress;
};

// What happened to one job (indexed like Workload::jobs).
struct Outcome {
  int site = -1;
  double start = 0;       // first start
  double completion = 0;  // end of its last second of work
  Time dedicated = 0;     // its run time at that site, alone
  double ideal = 0;       // interference algorithms: the best projected completion at arrival
};

struct Metrics {
  std::size_t jobs = 0;
  double makespan = 0;                 // last completion - first submit
  double mean_flow = 0;                // mean (completion - submit)
  double mean_wait = 0, max_wait = 0;  // (start - submit)
  double mean_bounded_slowdown = 0;    // mean max(1, flow / max(dedicated, bound))
  double utilization = 0;              // sum width*dedicated / (total nodes * makespan)
  double effective_utilization = 0;    // sum width*best dedicated / (total nodes * makespan)
  double weighted_completion = 0;      // sum width*runtime*completion
  double weighted_flow = 0;            // sum width*runtime*(completion - submit)
  std::optional<double> mean_delay;    // interference algorithms: mean (completion - ideal)
};

struct RunResult {
  std::string algorithm;
  std::vector<Outcome> jobs;
  std::int64_t preemptions = 0;
  Metrics metrics;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  const std::string& name() const { return name_; }  // canonical, e.g. "MR(2,CONS,COMPLETION,FCFS,LOAD)"

  // Throws InputError (source `algorithm "NAME"`) if the machine does not
  // suit (a single-site algorithm on several sites). The workload must fit
  // (check_fits).
  virtual void check(const Machine& m) const;
  virtual RunResult run(const Workload& w, const Machine& m, const RunOptions& o) const = 0;

 protected:
  explicit Algorithm(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// Names, case-insensitive (docs/rigid.md, "Algorithms"):
//   FIFO (FCFS)  FirstFit  Random  LPT  SPT  Backfill  EASY  Conservative (CONS)
//   PFCFS1(wait,slice,penalty)  PFCFS2(wait,slice,penalty)  PFCFS3(wait,penalty)
//   Greedy  MR(K[,EASY|CONS[,START|COMPLETION[,FCFS|EFFICACY[,LOAD|COMPLETION]]]])
//   MTI  MCT  MNI
// Throws InputError for an unknown name or a bad parameter, its source
// `algorithm "NAME"` (NAME as given), e.g.
// `algorithm "PFCFS1(x)": wait "X" is not a whole number >= 0`.
std::unique_ptr<Algorithm> make_algorithm(std::string_view name);

// The metrics of finished outcomes (docs/rigid.md, "Metrics").
Metrics measure(const Workload& w, const Machine& m, const std::vector<Outcome>& jobs, Time slowdown_bound);

}  // namespace piranha::rigid
