// Presentation of rigid-job runs (docs/rigid.md): the HTML report of one
// `piranha sim rigid` run, and the page of the study (study.h) that
// reproduces each seed's main experiment on one workload
// (docs/rigid-report.html). Self-contained HTML with inline SVG
// (piranha/scheduler/html.h). Not part of the pure library.
#pragma once

#include <string>
#include <vector>

#include "piranha/rigid/algorithm.h"
#include "piranha/rigid/study.h"

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

// The study's page (docs/rigid-report.html): each seed's experiment with its
// charts and tables, `findings` (judge(result)) at the end of their seed's
// section, and all of them again in a closing summary. Pure: the same
// arguments give the same bytes.
std::string render_study_report(const StudyResult& result, const std::vector<Finding>& findings);

}  // namespace piranha::rigid
