#include "piranha/scheduler/report.h"

#include <sstream>

#include "piranha/scheduler/html.h"

namespace piranha::sched {

std::string render_sim_report(const SimReportInput& in) {
  using html::fixed;
  std::ostringstream b;
  const auto& o = in.options;
  b << "<h1>Piranha simulation</h1>\n<p>Trace <code>" << html::escape(in.trace_path)
    << "</code>: " << in.trace.nodes.size() << " nodes, " << in.trace.length << " steps of "
    << in.trace.step_seconds << " s, " << fixed(100 * in.trace.available_fraction(), 1) << "% available. ";
  if (in.jobs_file.empty())
    b << in.workloads << " random workloads (seeds 0.." << in.workloads - 1 << ").";
  else
    b << "Jobs from <code>" << html::escape(in.jobs_file) << "</code>.";
  b << " Period " << o.period << ", window " << o.window << ", predictor " << html::escape(o.predictor)
    << ", start " << o.start << (o.spill ? ", spill" : "") << (o.on_events ? ", on events" : "") << ".</p>\n";
  std::vector<std::pair<std::string, double>> bars;
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : in.experiment.summary) {
    bars.emplace_back(s.strategy, s.normalized_turnaround);
    rows.push_back({s.strategy, fixed(s.mean_turnaround, 1), fixed(s.normalized_turnaround, 3),
                    std::to_string(s.runs), std::to_string(s.unfinished)});
  }
  b << html::bar_chart({"Mean turnaround normalized by TSK (lower is better)", "", "normalized turnaround"},
                       bars, 1.0);
  b << html::table({"strategy", "mean turnaround (steps)", "normalized", "runs", "unfinished"}, rows);
  b << "<h2>Runs</h2>\n";
  std::vector<std::vector<std::string>> runs;
  for (const auto& r : in.experiment.results)
    runs.push_back({r.strategy, std::to_string(r.seed), fixed(r.mean_turnaround, 1),
                    r.finished ? "yes" : "no", std::to_string(r.owner_retreats),
                    std::to_string(r.scheduler_retreats), std::to_string(r.lost_steps)});
  b << html::table({"strategy", "seed", "mean turnaround", "finished", "owner retreats", "scheduler retreats",
                    "lost node-steps"},
                   runs);
  return html::page("Piranha simulation", b.str());
}

}  // namespace piranha::sched
