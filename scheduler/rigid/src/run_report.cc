#include <sstream>

#include "piranha/rigid/report.h"
#include "piranha/scheduler/html.h"

namespace piranha::rigid {

namespace h = sched::html;

std::string render_run_report(const RunReportInput& in) {
  std::ostringstream b;
  b << "<h1>piranha sim rigid</h1>\n<p>Workload <code>" << h::escape(in.workload.source)
    << "</code>: " << in.workload.jobs.size() << " jobs (" << in.workload.skipped
    << " lines skipped); machine <code>" << h::escape(to_string(in.machine)) << "</code> ("
    << in.machine.total_nodes() << " nodes); estimates " << h::escape(in.estimates) << "; load factor "
    << h::fixed(in.load, 2) << ". The model and every metric: docs/rigid.md.</p>\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : in.results) {
    const auto& x = r.metrics;
    rows.push_back({r.algorithm, h::fixed(x.makespan, 0), h::fixed(x.mean_flow, 0), h::fixed(x.mean_wait, 0),
                    h::fixed(x.max_wait, 0), h::fixed(x.mean_bounded_slowdown, 2), h::fixed(x.utilization, 3),
                    h::fixed(x.effective_utilization, 3), x.mean_delay ? h::fixed(*x.mean_delay, 0) : "",
                    std::to_string(r.preemptions)});
  }
  b << h::table({"algorithm", "makespan (s)", "mean flow (s)", "mean wait (s)", "max wait (s)",
                 "bounded slowdown", "utilization", "effective utilization", "mean delay (s)", "preemptions"},
                rows);
  auto bars = [&](const std::string& title, const std::string& unit, auto get) {
    std::vector<std::pair<std::string, double>> v;
    for (const auto& r : in.results) v.emplace_back(r.algorithm, get(r.metrics));
    b << h::bar_chart({title, "", unit}, v);
  };
  bars("Makespan", "seconds", [](const Metrics& x) { return x.makespan; });
  bars("Mean flow time", "seconds", [](const Metrics& x) { return x.mean_flow; });
  bars("Maximum wait", "seconds", [](const Metrics& x) { return x.max_wait; });
  bars("Mean bounded slowdown", "", [](const Metrics& x) { return x.mean_bounded_slowdown; });
  return h::page("piranha sim rigid", b.str());
}

}  // namespace piranha::rigid
