// piranha nps report: what the pool did and what the NPS's evaluator learned
// over a period, as one self-contained HTML file and/or JSON (report.h).
#include <fstream>
#include <iostream>

#include "commands.h"
#include "piranha/nps/report.h"
#include "piranha/runtime/sysspace.h"
#include "pool_command.h"

using namespace std::chrono_literals;

namespace piranha::apps {
namespace {

struct ReportArgs {
  std::shared_ptr<std::string> server;
  std::string since, html, from;
  bool json = false;
};

// Writes `r` as the options ask: --html FILE, --json, or a summary.
int output(const ReportArgs& a, const nlohmann::json& r);

int report(const ReportArgs& a) {
  if (!a.from.empty()) {
    // A report saved with --json, rendered again (no server involved).
    std::ifstream in(a.from);
    if (!in) throw CommandFailure(2, "--from " + a.from + ": cannot open it");
    const nlohmann::json r = nlohmann::json::parse(in, nullptr, false);
    if (!r.is_object() || !r.contains("gantt") || !r.contains("since"))
      throw CommandFailure(2, "--from " + a.from + ": not a report saved by piranha nps report --json");
    return output(a, r);
  }
  nps::ReportInput in;
  in.now = sys::wall_now();
  if (!a.since.empty()) {
    std::optional<double> t;
    if (a.since[0] == '-') {
      if (auto d = parse_duration(a.since.substr(1))) t = in.now - *d;
    } else {
      t = parse_time(a.since, in.now);
    }
    if (!t)
      throw CommandFailure(2, "--since \"" + a.since +
                                  "\": expected -DURATION (-2h: the last two hours), HH:MM[:SS], "
                                  "YYYY-MM-DD HH:MM[:SS], now, or epoch seconds");
    if (*t > in.now) throw CommandFailure(2, "--since \"" + a.since + "\" is in the future");
    in.since = *t;
  }
  auto c = connect(*a.server);
  in.jobs = sys::list_jobs(*c);
  in.times = sys::jobtimes_by_job(*c);
  for (const auto& j : in.jobs) in.work[j.id] = sys::list_jobwork(*c, j.id);
  in.records = sys::list_eval_records(*c);
  in.complaints = sys::list_complaints(*c);
  // Only while an NPS runs (scheduler 0 beats) do the agents' records
  // continue what its evaluator recorded.
  bool nps_running = false;
  if (auto t = c->rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms))
    if (auto hb = sys::SchedulerHeartbeat::from_tuple(*t)) nps_running = in.now - hb->time < 30;
  for (const auto& n : nps_running ? sys::list_nodes(*c) : std::vector<sys::NodeRecord>{}) {
    nps::ReportInput::Current now{n.name, std::string(sys::name(n.state)), std::nullopt};
    if (auto t = c->rd(sys::kSpace, sys::running_template(n.name), 0ms))
      if (auto r = sys::NodeRun::from_tuple(*t); r && r->job_id != 0) now.job = r->job_id;
    in.current.push_back(now);
  }
  return output(a, nps::build_report(in));
}

int output(const ReportArgs& a, const nlohmann::json& r) {
  if (!a.html.empty()) {
    std::ofstream out(a.html);
    out << nps::report_html(r);
    if (!out) throw CommandFailure(1, "cannot write " + a.html);
    std::cerr << "wrote " << a.html << "\n";
  }
  if (a.json) {
    std::cout << r.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else if (a.html.empty()) {
    // A summary for people on the terminal.
    if (r["empty"] == true) {
      std::cout << r["message"].get<std::string>() << "\n";
      return 0;
    }
    std::cout << r["jobs"].size() << " job(s), " << r["nodes"].size() << " node(s), " << r["switches"].size()
              << " switch(es)\n"
              << r["verdict"].get<std::string>() << "\n"
              << "(--html FILE for the whole report, --json for its data)\n";
  }
  if (r["empty"] == true) std::cerr << "note: " << r["message"].get<std::string>() << "\n";
  return 0;
}

}  // namespace

void add_nps_report(CLI::App& nps) {
  auto a = std::make_shared<ReportArgs>();
  auto* cmd = nps.add_subcommand(
      "report",
      "what the pool did and what the evaluator learned: jobs, schedulers (obeyed and shadows), "
      "nodes, complaints, a Gantt chart");
  a->server = add_server_option(*cmd);
  cmd->add_option("--since", a->since,
                  "the report's start: -DURATION (-2h), HH:MM, YYYY-MM-DD HH:MM, epoch seconds; default: "
                  "everything recorded");
  cmd->add_option("--html", a->html, "write the report as one self-contained HTML file");
  cmd->add_flag("--json", a->json, "print the report's data as one JSON object");
  cmd->add_option("--from", a->from, "render a report saved with --json instead of reading the server");
  cmd->callback([a] { run_command("nps report", *a->server, [&] { return report(*a); }); });
}

}  // namespace piranha::apps
