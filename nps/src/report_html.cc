// report_html (report.h): the report as one self-contained page; the
// Gantt chart of jobs on nodes over time is drawn here, the rest with the
// scheduler library's HTML helpers.
#include <cmath>
#include <ctime>
#include <map>
#include <sstream>

#include "piranha/nps/report.h"
#include "piranha/scheduler/html.h"

namespace piranha::nps {
namespace {

using json = nlohmann::json;
namespace html = sched::html;

// Okabe–Ito, then more distinct hues: one per job, in job order.
const char* kJobColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                             "#332288", "#882255", "#117733", "#AA4499", "#44AA99", "#999933"};

std::string utc(double t) {
  const std::time_t s = static_cast<std::time_t>(t);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&s));
  return buf;
}

std::string num(const json& v, int digits) {
  return v.is_number() ? html::fixed(v.get<double>(), digits) : "–";
}

std::string state_fill(const std::string& state) {
  if (state == "available") return "#e3f2e1";
  if (state == "owner-blocked") return "#f8d7d3";
  if (state == "down") return "#9e9e9e";
  return "#e0e0e0";  // unavailable
}

// Which job ran on which node over time: one row per node, its state as the
// row's background, each job a coloured bar; x in seconds (or minutes) since
// the report's start.
std::string gantt(const json& r) {
  std::vector<std::string> nodes;
  std::map<std::int64_t, std::string> colour;
  for (const auto& s : r["gantt"]) {
    const std::string n = s["node"];
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end()) nodes.push_back(n);
    if (s["job"].is_number_integer()) colour.emplace(s["job"].get<std::int64_t>(), "");
  }
  if (nodes.empty()) return "<p>No node activity was recorded in this period.</p>";
  std::size_t k = 0;
  for (auto& [job, c] : colour) c = kJobColours[k++ % std::size(kJobColours)];
  // The time axis spans the recorded activity, not idle time around it.
  double t0 = r["until"], t1 = r["since"];
  for (const auto& g : r["gantt"]) {
    t0 = std::min(t0, g["start"].get<double>());
    t1 = std::max(t1, g["end"].get<double>());
  }
  t1 = std::max(t1, t0 + 1);
  const bool minutes = t1 - t0 > 1200;
  const double unit = minutes ? 60 : 1;
  const double left = 110, right = 20, top = 30, row = 30, w = 960;
  const double h =
      top + row * static_cast<double>(nodes.size()) + 50 + 22 * std::ceil((colour.size() + 4) / 6.0);
  auto px = [&](double t) { return left + (t - t0) / (t1 - t0) * (w - left - right); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << w << ' ' << h << "\" width=\"" << w
    << "\" height=\"" << h << "\" role=\"img\" aria-label=\"jobs on nodes over time\">\n"
    << "<text x=\"" << w / 2
    << "\" y=\"18\" text-anchor=\"middle\" class=\"t\">Which job ran on which node</text>\n";
  // Time axis: a whole number of seconds or minutes per tick.
  const double span = (t1 - t0) / unit;
  double step = 1;
  for (double m : {1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0})
    if (span / m <= 10) {
      step = m;
      break;
    }
  if (span / step > 10) step = std::ceil(span / 10);
  const double bottom = top + row * static_cast<double>(nodes.size());
  for (double v = 0; v <= span + 1e-9; v += step) {
    const double x = px(t0 + v * unit);
    s << "<line x1=\"" << x << "\" y1=\"" << top << "\" x2=\"" << x << "\" y2=\"" << bottom
      << "\" class=\"g\"/><text x=\"" << x << "\" y=\"" << bottom + 14 << "\" text-anchor=\"middle\">"
      << static_cast<long long>(std::llround(v)) << "</text>\n";
  }
  s << "<text x=\"" << (left + w - right) / 2 << "\" y=\"" << bottom + 32
    << "\" text-anchor=\"middle\">time since " << html::escape(utc(t0)) << " (" << (minutes ? "min" : "s")
    << ")</text>\n";
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const double y = top + row * static_cast<double>(i);
    s << "<text x=\"" << left - 8 << "\" y=\"" << y + row / 2 + 4 << "\" text-anchor=\"end\">"
      << html::escape(nodes[i]) << "</text>\n";
    for (const auto& g : r["gantt"]) {
      if (g["node"] != nodes[i]) continue;
      const double a = px(g["start"]), b = std::max(px(g["end"]), a + 0.5);
      s << "<rect x=\"" << a << "\" y=\"" << y + 2 << "\" width=\"" << b - a << "\" height=\"" << row - 4
        << "\" fill=\"" << state_fill(g["state"]) << "\"/>\n";
      if (!g["job"].is_number_integer()) continue;
      const auto job = g["job"].get<std::int64_t>();
      s << "<rect x=\"" << a << "\" y=\"" << y + 7 << "\" width=\"" << b - a << "\" height=\"" << row - 14
        << "\" fill=\"" << colour[job] << "\"><title>job " << job << " on " << html::escape(nodes[i]) << ", "
        << html::fixed(g["end"].get<double>() - g["start"].get<double>(), 1) << " s ("
        << html::escape(g["state"].get<std::string>()) << ")"
        << (g["retreat"].is_string()
                ? std::string(g["retreat"] == "owner" ? ", then it left: the node stopped being available"
                                                      : ", then it left: the node was given to another job")
                : "")
        << (g.value("open", false) ? ", still going" : "") << "</title></rect>\n";
    }
  }
  // Legend: jobs, then node states.
  std::vector<std::pair<std::string, std::string>> legend;
  for (const auto& [job, c] : colour) legend.emplace_back(c, "job " + std::to_string(job));
  for (const char* st : {"available", "unavailable", "owner-blocked", "down"})
    legend.emplace_back(state_fill(st), std::string("node ") + st);
  for (std::size_t i = 0; i < legend.size(); ++i) {
    const double x = left + 140 * static_cast<double>(i % 6),
                 y = bottom + 46 + 22 * static_cast<double>(i / 6);
    s << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"14\" height=\"14\" fill=\"" << legend[i].first
      << "\" stroke=\"#888\"/><text x=\"" << x + 19 << "\" y=\"" << y + 11 << "\">"
      << html::escape(legend[i].second) << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

// "12 (11)": a job's or node's retreats, and of those its owner's, as the
// job's records count them. A job in a report saved before the count had
// causes shows its count alone ("piranha_retreats"); a node there, none.
std::string retreats(const json& j) {
  if (j.contains("piranha_retreats")) return std::to_string(j["piranha_retreats"].get<std::int64_t>());
  if (!j.contains("retreats")) return "–";
  return std::to_string(j["retreats"].get<std::int64_t>()) + " (" +
         std::to_string(j.value("owner_retreats", std::int64_t{0})) + ")";
}

}  // namespace

std::string report_html(const json& r) {
  std::ostringstream b;
  b << "<h1>Piranha NPS report</h1>\n<p>From " << utc(r["since"]) << " to " << utc(r["until"]) << ".</p>\n";
  if (r.value("empty", false)) {
    b << "<p class=\"note\">Nothing was recorded in this period: no job, no evaluator record, no "
         "complaint.</p>\n";
    return html::page("Piranha NPS report (empty)", b.str());
  }
  b << "<h2>Which strategy would have served this pool best</h2>\n<p class=\"note\">"
    << html::escape(r["verdict"].get<std::string>()) << "</p>\n";
  const json& cmp = r.contains("comparison") ? r["comparison"] : json::object();
  const bool same = cmp.contains("observed_mean_seconds");
  std::vector<std::pair<std::string, double>> bars;
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : r["schedulers"]) {
    const std::string label = "scheduler " + std::to_string(s["id"].get<std::int64_t>()) +
                              (s["strategy"].is_string() ? " " + s["strategy"].get<std::string>() : "");
    const json& figure =
        same ? s.value("same_jobs_mean_turnaround_seconds", json()) : s["estimated_mean_turnaround_seconds"];
    if (figure.is_number())
      bars.emplace_back((s["strategy"].is_string() ? s["strategy"].get<std::string>() : "?") + " (" +
                            std::to_string(s["id"].get<std::int64_t>()) +
                            (s["obeyed"] == true ? ", obeyed)" : ")"),
                        figure.get<double>());
    rows.push_back({label, s["obeyed"] == true ? "obeyed" : "shadow", num(figure, 1),
                    num(s["estimated_mean_turnaround_seconds"], 1),
                    std::to_string(s["assignment_changes"].get<std::int64_t>()),
                    std::to_string(s["ended_jobs"].get<std::int64_t>())});
  }
  const json& observed = same ? cmp["observed_mean_seconds"] : r["observed_mean_turnaround_seconds"];
  if (observed.is_number()) bars.emplace_back("observed", observed.get<double>());
  if (!bars.empty())
    b << html::bar_chart(
        {same ? "Mean turnaround over the same " + std::to_string(cmp["jobs"].size()) + " jobs"
              : "Mean turnaround by scheduler",
         "", "mean turnaround (s)"},
        bars);
  b << "<p>Each scheduler's estimate replays the pool's own history (when each node was available, when each "
       "job arrived, its tasks and task times) through the simulator's model under that scheduler's "
       "strategy, "
       "the code <code>piranha nps simulate</code> runs; \"observed\" is what the jobs' own records "
       "say.</p>\n";
  if (cmp.contains("basis")) b << "<p>" << html::escape(cmp["basis"].get<std::string>()) << "</p>\n";
  if (cmp.contains("explanation"))
    b << "<p>" << html::escape(cmp["explanation"].get<std::string>()) << "</p>\n";
  b << html::table({"scheduler", "role", "mean turnaround, same jobs (s)", "estimate as recorded (s)",
                    "assignment changes", "jobs replayed"},
                   rows);
  if (cmp.contains("per_job") && !cmp["per_job"].empty()) {
    rows.clear();
    for (const auto& j : cmp["per_job"])
      rows.push_back({std::to_string(j["id"].get<std::int64_t>()), num(j["observed_seconds"], 1),
                      num(j["replayed_seconds"], 1),
                      num(json(j["replayed_seconds"].get<double>() - j["observed_seconds"].get<double>()), 1),
                      num(j["replay_work_seconds"], 1), num(j["task_seconds"], 1)});
    b << "<h3>Observed and replayed, job by job (the obeyed scheduler)</h3>\n"
      << html::table({"job", "observed turnaround (s)", "replayed turnaround (s)", "difference (s)",
                      "work the replay gave it (s)", "its tasks' time (s)"},
                     rows);
  }
  if (cmp.contains("left_out") && !cmp["left_out"].empty()) {
    rows.clear();
    for (const auto& j : cmp["left_out"])
      rows.push_back({std::to_string(j["id"].get<std::int64_t>()), j["why"].get<std::string>()});
    b << "<p>Finished jobs not in the comparison:</p>\n" << html::table({"job", "why"}, rows);
  }
  b << "<h3>Switches</h3>\n";
  if (r["switches"].empty()) {
    b << "<p>None (switching is off unless the evaluator has a <code>switch</code> rule).</p>\n";
  } else {
    rows.clear();
    for (const auto& s : r["switches"])
      rows.push_back({utc(s["time"]),
                      std::to_string(s["from"].get<std::int64_t>()) + " " + s.value("from_strategy", ""),
                      std::to_string(s["to"].get<std::int64_t>()) + " " + s.value("to_strategy", ""),
                      std::to_string(s.value("ended_jobs", 0)), s["estimates"].dump()});
    b << html::table({"when", "from", "to", "ended jobs", "evidence (estimates, s)"}, rows);
  }
  b << "<h2>Jobs on nodes over time</h2>\n" << gantt(r);
  b << "<h2>Jobs</h2>\n";
  rows.clear();
  for (const auto& j : r["jobs"]) {
    std::string nodes;
    for (const auto& n : j["nodes"]) nodes += (nodes.empty() ? "" : ", ") + n.get<std::string>();
    rows.push_back({std::to_string(j["id"].get<std::int64_t>()) + " " + j["name"].get<std::string>(),
                    j["state"], num(j["turnaround_seconds"], 1),
                    j["first_start"].is_number()
                        ? html::fixed(j["first_start"].get<double>() - j["submit"].get<double>(), 1)
                        : "–",
                    html::fixed(j["node_seconds"].get<double>(), 1),
                    std::to_string(j["tasks"].get<std::int64_t>()), nodes, retreats(j)});
  }
  b << html::table({"job", "state", "turnaround (s)", "wait for first piranha (s)", "node-seconds", "tasks",
                    "nodes", "retreats (the owner's)"},
                   rows);
  b << "<p>Observed mean turnaround of the finished jobs: " << num(r["observed_mean_turnaround_seconds"], 1)
    << " s.</p>\n<h2>Nodes</h2>\n";
  rows.clear();
  std::vector<std::vector<std::string>> complaints;
  for (const auto& n : r["nodes"]) {
    const auto& ap = n["availability_periods"];
    const auto& p = n["prediction"];
    rows.push_back(
        {n["name"],
         n["available_fraction"].is_number() ? html::fixed(100 * n["available_fraction"].get<double>(), 1)
                                             : "–",
         std::to_string(ap["count"].get<std::int64_t>()), num(ap.value("mean_seconds", json()), 1),
         num(ap.value("max_seconds", json()), 1),
         p.is_object() ? html::fixed(100 * p["fraction"].get<double>(), 1) + " (" + p.value("predictor", "") +
                             ", " + std::to_string(p.value("points", 0)) + " points)"
                       : "not enough history",
         retreats(n)});
    for (const auto& c : n["complaints"]) {
      std::string did = c["job"].is_number_integer()
                            ? "running job " + std::to_string(c["job"].get<std::int64_t>())
                        : c["state"].is_string() ? "running no job"
                                                 : "no record of the node then";
      if (c["state"].is_string()) did += " (node " + c["state"].get<std::string>() + ")";
      if (c["retreat"].is_object())
        did += "; job " + std::to_string(c["retreat"]["job"].get<std::int64_t>()) + "'s piranha left " +
               html::fixed(c["retreat"]["seconds"].get<double>(), 1) + " s after the node became unavailable";
      complaints.push_back({n["name"], utc(c["time"]), c["text"], did});
    }
  }
  b << html::table({"node", "available (%)", "availability periods", "mean AP (s)", "longest AP (s)",
                    "AP predictions matched (%)", "retreats (the owner's)"},
                   rows);
  b << "<h3>Owners' complaints</h3>\n";
  if (complaints.empty())
    b << "<p>None.</p>\n";
  else
    b << html::table({"node", "when", "complaint", "what Piranha did there then"}, complaints);
  return html::page("Piranha NPS report", b.str());
}

}  // namespace piranha::nps
