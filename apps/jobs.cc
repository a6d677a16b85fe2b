// piranha jobs: the pool's jobs and their progress, from the ("job", ...),
// ("jobstat", ...), ("jobtime", ...), ("jobheld", ...) and ("joblost", ...)
// tuples of the system space. Without --all: queued, running and held jobs
// (a held job's reason under its row); with --all also the finished ones,
// with their start and end times, the feeder's exit status (condor_history's
// view) and, under a job whose feeder was lost, why it failed. Under a job
// submitted with --require, its requirement ("jobreq"), and while no node
// whose agent is up satisfies it, why it waits (the nodes' ("nodeattr", ...)
// records, scheduler/requirement.h).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "piranha/runtime/node_liveness.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/scheduler/requirement.h"
#include "pool_command.h"

namespace piranha::apps {
namespace {

struct JobsArgs {
  std::shared_ptr<std::string> server;
  bool json = false;
  bool all = false;
};

struct JobRow {
  sys::JobRecord job;
  std::optional<sys::JobStat> stat;
  sys::JobTimes times;  // 0: not yet
  std::optional<sys::JobHold> hold;
  std::optional<sys::JobLost> lost;
  std::optional<std::int64_t> exit_status;  // the feeder's, once the job has ended
  std::optional<std::string> requirement;   // its ("jobreq", ...) text
  std::optional<std::string> waiting;       // why no node may run it now (a live job with a requirement)
  // Seconds from submission to the end; 0 while the job runs.
  double turnaround() const { return times.end_time != 0 ? times.end_time - job.submit_time : 0; }
};

// A time, or null while it is not known (0).
nlohmann::json known(double t) {
  return t != 0 ? nlohmann::json(t) : nlohmann::json(nullptr);
}

nlohmann::json to_json(const JobRow& r) {
  nlohmann::json j = {{"id", r.job.id},
                      {"name", r.job.name},
                      {"space", r.job.space},
                      {"state", std::string(sys::name(r.job.state))},
                      {"submit_time", r.job.submit_time}};
  const sys::JobStat s = r.stat.value_or(sys::JobStat{});
  j["tasks_done"] = s.tasks_done;
  j["tasks_left"] = s.tasks_left;
  j["tasks"] = s.tasks_done + s.tasks_left;
  j["mean_task_seconds"] = s.mean_task_seconds;
  j["stat_updated_at"] = r.stat ? nlohmann::json(s.updated_at) : nlohmann::json(nullptr);
  j["start_time"] = known(r.times.start_time);
  j["end_time"] = known(r.times.end_time);
  j["turnaround_seconds"] = r.times.end_time != 0 ? nlohmann::json(r.turnaround()) : nlohmann::json(nullptr);
  j["exit_status"] = r.exit_status ? nlohmann::json(*r.exit_status) : nlohmann::json(nullptr);
  j["held"] = r.hold
                  ? nlohmann::json{{"node", r.hold->node}, {"reason", r.hold->reason}, {"time", r.hold->time}}
                  : nlohmann::json(nullptr);
  j["requirement"] = r.requirement ? nlohmann::json(*r.requirement) : nlohmann::json(nullptr);
  j["waiting"] = r.waiting ? nlohmann::json(*r.waiting) : nlohmann::json(nullptr);
  j["lost"] = r.lost
                  ? nlohmann::json{{"node", r.lost->node}, {"reason", r.lost->reason}, {"time", r.lost->time}}
                  : nlohmann::json(nullptr);
  return j;
}

// A time of day for people, "-" while not known.
std::string when(double t, double now) {
  return t != 0 ? local_time(t, now) : "-";
}

// `history` adds the STARTED and ENDED columns (--all).
void print_table(const std::vector<JobRow>& rows, double now, bool history) {
  int name_w = 4;
  for (const auto& r : rows) name_w = std::max(name_w, static_cast<int>(r.job.name.size()));
  std::printf("%-5s %-*s %-10s %-10s %8s %8s %10s %10s", "ID", name_w, "NAME", "STATE", "SUBMITTED", "DONE",
              "LEFT", "MEAN TASK", "TURNAROUND");
  if (history) std::printf(" %-16s %-16s %4s", "STARTED", "ENDED", "EXIT");
  std::printf("\n");
  for (const auto& r : rows) {
    std::string done = r.stat ? std::to_string(r.stat->tasks_done) : "-";
    std::string left = r.stat ? std::to_string(r.stat->tasks_left) : "-";
    std::string mean = r.stat ? seconds_for_people(r.stat->mean_task_seconds) : "-";
    std::printf("%-5lld %-*s %-10s %-10s %8s %8s %10s %10s", static_cast<long long>(r.job.id), name_w,
                r.job.name.c_str(), std::string(sys::name(r.job.state)).c_str(),
                age(r.job.submit_time, now).c_str(), done.c_str(), left.c_str(), mean.c_str(),
                seconds_for_people(r.turnaround()).c_str());
    if (history)
      std::printf(" %-16s %-16s %4s", when(r.times.start_time, now).c_str(),
                  when(r.times.end_time, now).c_str(),
                  r.exit_status ? std::to_string(*r.exit_status).c_str() : "-");
    std::printf("\n");
    if (r.requirement)
      std::printf("      requires %s%s\n", r.requirement->c_str(),
                  r.waiting ? ("; waiting: " + *r.waiting).c_str() : "");
    if (r.hold && r.job.state == sys::JobState::Held) {
      std::string reason = r.hold->reason;
      for (std::size_t at = reason.find('\n'); at != std::string::npos; at = reason.find('\n', at + 1))
        reason.replace(at, 1, "\n        ");
      std::printf("      held by %s %s: %s\n", r.hold->node.c_str(), age(r.hold->time, now).c_str(),
                  reason.c_str());
    }
    if (r.lost && r.job.state == sys::JobState::Failed)
      std::printf("      failed, recorded by %s %s: %s\n", r.lost->node.c_str(),
                  age(r.lost->time, now).c_str(), r.lost->reason.c_str());
  }
}

// The attributes of the nodes whose agents are up (not down, not stale by
// node_liveness.h); a node that published none offers nothing.
std::vector<sched::NodeAttributes> nodes_up(ts::Client& c, double now) {
  std::map<std::string, double> heard;
  for (const auto& n : sys::list_nodes(c))
    if (n.state != sys::NodeState::Down) heard[n.name] = n.updated_at;
  for (const auto& h : sys::list_agent_heartbeats(c))
    if (auto it = heard.find(h.node); it != heard.end()) it->second = std::max(it->second, h.time);
  std::map<std::string, sched::NodeAttributes> offers;
  for (const auto& a : sys::list_node_attrs(c)) offers[a.node] = {a.cores, a.memory, a.arch, a.labels};
  std::vector<sched::NodeAttributes> up;
  for (const auto& [node, at] : heard)
    if (node_liveness(at, now) != Liveness::Stale) up.push_back(offers[node]);
  return up;
}

int jobs(const JobsArgs& a) {
  auto client = connect(*a.server);
  std::map<std::int64_t, sys::JobStat> stats;
  for (auto& s : sys::list_jobstats(*client)) {
    auto& slot = stats[s.id];
    if (s.updated_at >= slot.updated_at) slot = s;  // a racing duplicate: the newer wins
  }
  auto times = sys::jobtimes_by_job(*client);
  auto holds = sys::holds_by_job(*client);
  auto exits = sys::exit_status_by_job(*client);
  auto losses = sys::losses_by_job(*client);
  auto requirements = sys::requirements_by_job(*client);
  std::optional<std::vector<sched::NodeAttributes>> up;  // read once, when a live job has a requirement
  std::vector<JobRow> rows;
  std::size_t finished = 0;
  for (auto& j : sys::list_jobs(*client)) {
    if (!a.all && sys::is_finished(j.state)) {
      ++finished;
      continue;
    }
    auto it = stats.find(j.id);
    auto t = times.find(j.id);
    rows.push_back({j, it == stats.end() ? std::nullopt : std::optional<sys::JobStat>(it->second),
                    t == times.end() ? sys::JobTimes{j.id, 0, 0} : t->second, std::nullopt, std::nullopt,
                    std::nullopt, std::nullopt, std::nullopt});
    if (auto h = holds.find(j.id); h != holds.end()) rows.back().hold = h->second;
    if (auto e = exits.find(j.id); e != exits.end()) rows.back().exit_status = e->second;
    if (auto l = losses.find(j.id); l != losses.end()) rows.back().lost = l->second;
    if (auto r = requirements.find(j.id); r != requirements.end()) {
      rows.back().requirement = r->second;
      if (sys::is_live(j.state)) {
        if (!up) up = nodes_up(*client, sys::wall_now());
        rows.back().waiting = sched::why_no_node(sched::read_requirement(r->second), *up);
      }
    }
  }
  std::sort(rows.begin(), rows.end(), [](const JobRow& x, const JobRow& y) { return x.job.id < y.job.id; });

  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) out.push_back(to_json(r));
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (rows.empty()) {
    std::cout << (finished ? "no queued, running or held jobs (" + std::to_string(finished) +
                                 " finished; --all shows them)"
                           : std::string("no jobs"))
              << "\n";
    return 0;
  }
  print_table(rows, sys::wall_now(), a.all);
  if (finished)
    std::cout << "(" << finished << " finished job" << (finished == 1 ? "" : "s") << " not shown; --all)\n";
  return 0;
}

}  // namespace

void add_jobs(CLI::App& app) {
  auto a = std::make_shared<JobsArgs>();
  auto* cmd = app.add_subcommand(
      "jobs",
      "list the pool's jobs: state (and why a job is held), age, tasks done and left, mean task time, "
      "turnaround");
  a->server = add_server_option(*cmd);
  cmd->add_flag("--all", a->all,
                "also list finished jobs (done, failed, cancelled), with their start and end times");
  cmd->add_flag("--json", a->json, "print one JSON array of job objects instead of the table");
  cmd->callback([a] { run_command("jobs", *a->server, [&] { return jobs(*a); }); });
}

}  // namespace piranha::apps
