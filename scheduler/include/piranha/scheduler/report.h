// The HTML report of one `piranha sim piranha` invocation: the summary as a
// bar chart and a table, the options, and per-run figures.
#pragma once

#include <string>

#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/experiment.h"

namespace piranha::sched {

struct SimReportInput {
  std::string trace_path;
  const AvailabilityTrace& trace;
  const SimOptions& options;
  std::size_t workloads = 0;
  std::string jobs_file;  // empty: random workloads
  const Experiment& experiment;
};

// A self-contained page (inline SVG, no scripts).
std::string render_sim_report(const SimReportInput& in);

}  // namespace piranha::sched
