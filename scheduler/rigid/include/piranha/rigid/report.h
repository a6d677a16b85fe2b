// Presentation of rigid-job runs (docs/rigid.md): the HTML report of one
// `piranha sim rigid` run, and the study that reproduces each seed's main
// experiment on one workload (docs/rigid-report.html). Self-contained HTML
// with inline SVG (piranha/scheduler/html.h). Not part of the pure library.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "piranha/rigid/algorithm.h"

namespace piranha::rigid {

struct RunReportInput {
  const Workload& workload;
  const Machine& machine;
  std::string estimates;
  double load = 1;
  const std::vector<RunResult>& results;
};

// One run: the workload, the machine, a table of every metric, bar charts.
std::string render_run_report(const RunReportInput& in);

struct StudyOptions {
  std::size_t multi_site_jobs =
      1500;  // seed 002 takes the first 5000 jobs of each trace; fewer keep it quick
  std::size_t interference_jobs = 3000;  // seed 004: the first jobs of the workload
  // Called with a short description of each step and the fraction done; may be empty.
  std::function<void(const std::string&, double)> progress;
};

// Runs every experiment of the study on `w` (a 256-node workload such as
// data/lublin_256.swf) and returns the whole HTML page. Deterministic.
std::string run_study(const Workload& w, const StudyOptions& o);

}  // namespace piranha::rigid
