// The Network Piranha Scheduler on a live pool: a real server, real agents
// (replaying always-available traces), real `spin` jobs, `piranha nps run`
// started, killed with SIGKILL and restarted, switched by its evaluator from
// a poor scheduler to a better shadow, and its records kept within bound.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "harness.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/testing/raw_http.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

// A pool: a server and agents that are always available; their scheduler 0
// goes stale after 2 s. The agents run their piranhas at their own priority:
// at SCHED_IDLE (the agents' default) a machine whose every core is busy
// gives the piranhas next to nothing, as it should, and no job would end.
struct Pool {
  ServerProcess server;
  Scratch s;
  std::string trace = s.write("up.avail.csv",
                              "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\n"
                              "node,start,end\nup,0,100000\n");
  std::string config = s.write("agent.yaml", "policy: FAIR\nscheduler:\n  stale_seconds: 2\n");
  std::map<std::string, std::unique_ptr<Process>> agents;

  void add_agent(const std::string& node) {
    agents[node] = std::make_unique<Process>(std::vector<std::string>{
        bin("piranha"), "agent", "--node", node, "--server", server.endpoint(), "--config", config, "--trace",
        trace, "--trace-node", "up", "--piranha-output", s.dir + "/" + node + ".piranhas",
        "--piranha-priority", "normal"});
  }
  // `piranha nps run` with a program of an enabler ticking every 0.5 s, the
  // jobs node, monitors m1, m2, ... for `nodes`, and then `rest` (YAML node
  // lines: schedulers and an evaluator).
  std::unique_ptr<Process> nps_program(const std::vector<std::string>& nodes, const std::string& rest) {
    std::string yaml =
        "program: nps\nnodes:\n"
        "  - {name: enabler, type: enabler, params: {period: 0.5}}\n"
        "  - {name: jobs, type: jobs, inferiors: [enabler]}\n";
    for (std::size_t i = 0; i < nodes.size(); ++i)
      yaml += "  - {name: m" + std::to_string(i + 1) +
              ", type: monitor, inferiors: [enabler], params: {node: " + nodes[i] + "}}\n";
    return std::make_unique<Process>(std::vector<std::string>{
        bin("piranha"), "nps", "run", s.write("nps.yaml", yaml + rest), "--server", server.endpoint()});
  }
  std::unique_ptr<Process> nps(std::vector<std::string> extra) {
    std::vector<std::string> argv = {bin("piranha"),    "nps",      "run", "--server",
                                     server.endpoint(), "--period", "1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(argv);
  }
  // `piranha submit spin --tasks N --task-ms T`, in the background.
  std::unique_ptr<Process> spin(int tasks, int task_ms) {
    return std::make_unique<Process>(std::vector<std::string>{
        "/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), bin("piranha"), "submit", bin("spin"),
        "--tasks", std::to_string(tasks), "--task-ms", std::to_string(task_ms)});
  }
  ts::Client client() { return ts::Client(server.endpoint()); }
};

// What each node's agent says it runs, and on whose word.
std::map<std::string, sys::NodeRun> runs(ts::Client& c) {
  std::map<std::string, sys::NodeRun> out;
  for (const auto& n : sys::list_nodes(c))
    if (auto t = c.rd(sys::kSpace, sys::running_template(n.name), 0ms))
      if (auto r = sys::NodeRun::from_tuple(*t)) out[n.name] = *r;
  return out;
}

bool all_by(ts::Client& c, const std::string& by, std::size_t nodes) {
  auto r = runs(c);
  if (r.size() != nodes) return false;
  for (const auto& [node, run] : r)
    if (run.by != by) return false;
  return true;
}

// The job's end time once it has one.
double end_of(ts::Client& c, std::int64_t id) {
  auto t = sys::find_jobtimes(c, id);
  return t ? t->end_time : 0;
}

// Runs a job with long tasks but little work (submitted first) against one
// with short tasks and much work, under `strategy`; returns their end times.
std::pair<double, double> race(const std::string& strategy) {
  Pool pool;
  for (const char* n : {"ws01", "ws02", "ws03"}) pool.add_agent(n);
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 3; }));
  auto nps = pool.nps({"--strategy", strategy});
  REQUIRE(nps->wait_for_err("scheduling ws01 ws02 ws03"));
  auto few_long = pool.spin(16, 200);  // 3.2 s of work in 200 ms tasks: job 1
  REQUIRE(wait_until([&] { return sys::list_jobs(c).size() == 1; }));
  auto many_short = pool.spin(800, 10);  // 8 s of work in 10 ms tasks: job 2
  REQUIRE(few_long->wait(60s) == 0);
  REQUIRE(many_short->wait(60s) == 0);
  INFO(nps->err());
  nps->signal(SIGTERM);
  CHECK(nps->wait() == 0);
  double long_end = 0, short_end = 0;
  REQUIRE(wait_until([&] { return (long_end = end_of(c, 1)) > 0 && (short_end = end_of(c, 2)) > 0; }));
  return {long_end, short_end};
}

}  // namespace

TEST_CASE("nps live: with TSK the job of shorter tasks gets the nodes and finishes first") {
  auto [long_end, short_end] = race("TSK");
  CHECK(short_end < long_end);
}

TEST_CASE("nps live: with SRT the job with less work left finishes first, long tasks or not") {
  auto [long_end, short_end] = race("SRT");
  CHECK(long_end < short_end);
}

TEST_CASE(
    "nps live: killed, agents fall back to their native policy and jobs finish, and a restart is obeyed "
    "again") {
  Pool pool;
  for (const char* n : {"ws01", "ws02"}) pool.add_agent(n);
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 2; }));
  auto nps = pool.nps({"--strategy", "TSK"});
  // The NPS has seen both nodes idle (its first tick has assigned them)
  // before the job comes, so its evaluator closes a span on each when the
  // job starts there.
  REQUIRE(wait_until([&] {
    return c.rd(sys::kSpace, sys::assign_template(0, "ws01"), 0ms) &&
           c.rd(sys::kSpace, sys::assign_template(0, "ws02"), 0ms);
  }));
  // 20 s of work: it outlasts the kill, the fallback and the restart.
  auto job = pool.spin(400, 50);
  REQUIRE(wait_until([&] { return all_by(c, "scheduler 0", 2); }));
  REQUIRE(wait_until([&] {
    auto r = runs(c);
    return r["ws01"].job_id == 1 && r["ws02"].job_id == 1;
  }));
  auto kinds = [&] {
    std::map<std::string, int> n;
    for (const auto& r : sys::list_eval_records(c)) ++n[r.kind];
    return n;
  };
  REQUIRE(wait_until([&] { return kinds()["span"] >= 2; }));
  nps->signal(SIGKILL);
  REQUIRE(nps->wait() == 128 + SIGKILL);
  // Its newest heartbeat stays (a rewrite writes the new one before it takes
  // the old) and goes stale 2 s after it was written: the agents fall back
  // then, not before, whenever the kill came between two beats.
  double last_beat = 0;
  for (const auto& t : c.rd_many(sys::kSpace, sys::scheduler_heartbeat_template(0), 10))
    if (auto hb = sys::SchedulerHeartbeat::from_tuple(t)) last_beat = std::max(last_beat, hb->time);
  REQUIRE(last_beat > 0);
  REQUIRE(wait_until([&] { return all_by(c, "FAIR", 2); }));
  for (const auto& [node, run] : runs(c)) {
    CAPTURE(node);
    CHECK(run.since - last_beat >= 2.0);
    CHECK(pool.agents[node]->wait_for_err("scheduler 0 is stale"));
  }
  auto restarted = pool.nps({"--strategy", "TSK"});
  CHECK(wait_until([&] { return all_by(c, "scheduler 0", 2); }));
  CHECK(job->wait(90s) == 0);
  CHECK(job->out().find("every task done once") != std::string::npos);
  // The evaluator's records are in the system space, from both NPS
  // processes: the first one's spans outlive it, the restarted one adds its
  // record of the job.
  CHECK(wait_until([&] { return kinds()["job"] == 1 && kinds()["estimate"] >= 1; }));
  CHECK(kinds()["span"] >= 2);
  restarted->signal(SIGTERM);
  CHECK(restarted->wait() == 0);
  // A clean stop withdraws the heartbeat: agents fall back at once, because
  // it is gone rather than once it is stale.
  CHECK(wait_until([&] { return all_by(c, "FAIR", 2); }));
  for (const auto& [node, agent] : pool.agents) {
    CAPTURE(node);
    CHECK(agent->wait_for_err("scheduler 0 is gone"));
  }
}

// With a 10-s tick, a job submitted just after a tick would wait up to 10 s
// for the next one; the NPS watches the system space and decides at once
// (an event tick), for the job's arrival and for its end.
TEST_CASE(
    "nps live: a job submitted just after a tick is assigned within a second, not at the next tick, and its "
    "end too") {
  Pool pool;
  // Agents that trust scheduler 0 between its 10-s heartbeats.
  pool.config = pool.s.write("patient.yaml", "policy: FAIR\nscheduler:\n  stale_seconds: 30\n");
  for (const char* n : {"ws01", "ws02"}) pool.add_agent(n);
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 2; }));
  Process nps({bin("piranha"), "nps", "run", "--server", pool.server.endpoint(), "--strategy", "TSK",
               "--tick", "10", "--period", "10"});
  REQUIRE(nps.wait_for_err("scheduling ws01 ws02"));  // the first tick: the next is 10 s away
  auto job = pool.spin(40, 50);                       // 2 s of work: job 1
  auto assigned = [&](std::int64_t id) -> std::optional<sys::Assignment> {
    for (const char* n : {"ws01", "ws02"})
      if (auto t = c.rd(sys::kSpace, sys::assign_template(0, n), 0ms))
        if (auto a = sys::Assignment::from_tuple(*t); a && a->job_id == id) return a;
    return std::nullopt;
  };
  std::optional<sys::Assignment> first;
  REQUIRE(wait_until([&] { return (first = assigned(1)).has_value(); }, 8s));
  // Its record is absent for a moment while an agent or the feeder rewrites
  // it (marking it running): a listing then finds none.
  std::vector<sys::JobRecord> record;
  REQUIRE(wait_until([&] { return (record = sys::list_jobs(c)).size() == 1; }));
  INFO(nps.err());
  MESSAGE("registration to assignment: ", (first->epoch / 1000.0 - record[0].submit_time) * 1000, " ms");
  CHECK(first->epoch / 1000.0 - record[0].submit_time < 1.0);
  // An agent ran it as soon as the assignment's watch event reached it.
  std::optional<sys::JobTimes> times;
  REQUIRE(wait_until([&] { return (times = sys::find_jobtimes(c, 1)) && times->start_time > 0; }, 8s));
  CHECK(times->start_time - record[0].submit_time < 1.5);
  // Its end is news too: the nodes are given back at once (job 0: none).
  REQUIRE(job->wait(60s) == 0);
  REQUIRE(wait_until([&] { return (times = sys::find_jobtimes(c, 1)) && times->end_time > 0; }));
  std::optional<sys::Assignment> none;
  REQUIRE(wait_until([&] { return (none = assigned(0)).has_value() && none->epoch > first->epoch; }, 8s));
  MESSAGE("end to nodes given back: ", (none->epoch / 1000.0 - times->end_time) * 1000, " ms");
  CHECK(none->epoch / 1000.0 - times->end_time < 1.0);
  nps.signal(SIGTERM);
  CHECK(nps.wait() == 0);
}

TEST_CASE("nps live: a node whose agent starts after the NPS is scheduled and gets work") {
  Pool pool;
  pool.add_agent("ws01");
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 1; }));
  auto nps = pool.nps({"--strategy", "TSK"});
  REQUIRE(nps->wait_for_err("scheduling ws01"));
  auto job = pool.spin(400, 40);
  REQUIRE(wait_until([&] { return runs(c)["ws01"].job_id == 1; }));
  pool.add_agent("ws02");
  CHECK(nps->wait_for_err("rescheduling with ws02"));
  CHECK(wait_until([&] {
    auto r = runs(c);
    return r.count("ws02") && r["ws02"].job_id == 1 && r["ws02"].by == "scheduler 0";
  }));
  // ...and does work there.
  CHECK(wait_until([&] {
    for (const auto& w : sys::list_jobwork(c, 1))
      if (w.node == "ws02" && w.tasks > 0) return true;
    return false;
  }));
  // A second NPS for the same pool waits while the first beats, rather than
  // overwrite its assignments.
  auto second = pool.nps({"--strategy", "SRT"});
  CHECK(second->wait_for_err("another NPS is serving this pool"));
  second->signal(SIGTERM);
  CHECK(second->wait() == 0);
  CHECK(runs(c)["ws02"].by == "scheduler 0");
  nps->signal(SIGTERM);
  CHECK(nps->wait() == 0);
  job->signal(SIGTERM);
  job->wait();
}

TEST_CASE("nps live: spread over hosts, each monitor in its own process, and a host killed is left out") {
  Pool pool;
  for (const char* n : {"ws01", "ws02"}) pool.add_agent(n);
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 2; }));
  auto endpoint = [] { return "tcp://127.0.0.1:" + std::to_string(free_port()); };
  const std::string program = pool.s.write(
      "nps.yaml",
      "program: nps\nlink_timeout_ms: 500\nhosts:\n  hub: " + endpoint() + "\n  ws01: " + endpoint() +
          "\n  ws02: " + endpoint() +
          "\nnodes:\n"
          "  - {name: enabler, type: enabler, host: hub, params: {period: 0.5}}\n"
          "  - {name: jobs, type: jobs, host: hub, inferiors: [enabler]}\n"
          "  - {name: m1, type: monitor, host: ws01, inferiors: [enabler], params: {node: ws01}}\n"
          "  - {name: m2, type: monitor, host: ws02, inferiors: [enabler], params: {node: ws02}}\n"
          "  - {name: s0, type: scheduler, host: hub, inferiors: [jobs, m1, m2],\n"
          "     params: {id: 0, strategy: TSK, period: 1}}\n");
  auto part = [&](const std::string& host) {
    return std::make_unique<Process>(std::vector<std::string>{
        bin("piranha"), "nps", "run", program, "--server", pool.server.endpoint(), "--host", host});
  };
  auto hub = part("hub"), ws01 = part("ws01"), ws02 = part("ws02");
  // Serving before the job comes: a job this short could otherwise end
  // under the agents' own policy while the three processes link.
  REQUIRE(wait_until([&] { return all_by(c, "scheduler 0", 2); }));
  auto first = pool.spin(60, 20);
  // Each node's assignment was written by its own host's process.
  REQUIRE(wait_until([&] {
    auto r = runs(c);
    return r["ws01"].job_id == 1 && r["ws02"].job_id == 1 && r["ws01"].by == "scheduler 0";
  }));
  REQUIRE(first->wait(60s) == 0);
  ws02->signal(SIGKILL);
  REQUIRE(ws02->wait() == 128 + SIGKILL);
  // The hub goes on scheduling ws01; ws02's agent keeps its last assignment
  // (scheduler 0's heartbeat is still fresh) but no new one reaches it.
  auto second = pool.spin(60, 20);
  CHECK(wait_until([&] { return runs(c)["ws01"].job_id == 2; }));
  CHECK(second->wait(60s) == 0);
  INFO(hub->err());
  for (auto* p : {hub.get(), ws01.get()}) {
    p->signal(SIGTERM);
    CHECK(p->wait() == 0);
  }
}

namespace {

// The job scheduler `scheduler`'s assignment (the `assign` tuple agents
// read) names for `node`; 0 for none or no tuple.
std::int64_t assigned(ts::Client& c, std::int64_t scheduler, const std::string& node) {
  if (auto t = c.rd(sys::kSpace, sys::assign_template(scheduler, node), 0ms))
    if (auto a = sys::Assignment::from_tuple(*t)) return a->job_id;
  return 0;
}

// Every job each scheduler's `decision` records ever gave `node`.
std::map<std::int64_t, std::set<std::int64_t>> decided_jobs(ts::Client& c, const std::string& node) {
  std::map<std::int64_t, std::set<std::int64_t>> out;
  for (const auto& r : sys::list_eval_records(c)) {
    if (r.kind != "decision") continue;
    const auto j = nlohmann::json::parse(r.json);
    if (j["node"] == node && j["job"].is_number_integer())
      out[j["scheduler"].get<std::int64_t>()].insert(j["job"].get<std::int64_t>());
  }
  return out;
}

// The evaluator's job, estimate and switch records, one a line, for failure messages.
std::string evidence(ts::Client& c) {
  std::string out;
  for (const auto& r : sys::list_eval_records(c))
    if (r.kind == "job" || r.kind == "estimate" || r.kind == "switch")
      out += r.kind + " " + std::to_string(r.time) + " " + r.json + "\n";
  return out;
}

}  // namespace

TEST_CASE(
    "nps live: the evaluator switches from a poor scheduler to a better shadow, logs its evidence, and the "
    "monitors obey the shadow") {
  Pool pool;
  for (const char* n : {"ws01", "ws02"}) pool.add_agent(n);
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 2; }));
  // Scheduler 0 runs FCFS, which makes a short job wait behind a long one;
  // shadow 1 runs SRT. The rule may switch as soon as two jobs have ended.
  auto nps = pool.nps_program(
      {"ws01", "ws02"},
      "  - {name: s0, type: scheduler, inferiors: [jobs, m1, m2],\n"
      "     params: {id: 0, strategy: FCFS, period: 1, on_events: true}}\n"
      "  - {name: s1, type: scheduler, inferiors: [jobs, m1, m2],\n"
      "     params: {id: 1, strategy: SRT, period: 1, on_events: true}}\n"
      "  - {name: evaluator, type: evaluator, inferiors: [jobs, s0, s1, m1, m2],\n"
      "     params: {switch: {among: [1], after_hours: 0, after_jobs: 2, margin_percent: 10}}}\n");
  REQUIRE(wait_until([&] { return all_by(c, "scheduler 0", 2); }));

  // A long job (6 s of work in 250 ms tasks), then a short one (1.5 s) once
  // the long one runs on both nodes: FCFS runs the long one first.
  auto long1 = pool.spin(24, 250);
  REQUIRE(wait_until([&] {
    auto r = runs(c);
    return r["ws01"].job_id == 1 && r["ws02"].job_id == 1;
  }));
  auto short2 = pool.spin(60, 25);
  REQUIRE(long1->wait(60s) == 0);
  REQUIRE(short2->wait(60s) == 0);
  INFO(nps->err());
  INFO(evidence(c));

  // The switch, with its evidence: in the log, in the system space, in the report.
  REQUIRE(nps->wait_for_err("evaluator: switched from scheduler 0 (FCFS) to scheduler 1 (SRT)", 30s));
  CHECK(nps->err().find("over 2 finished jobs") != std::string::npos);
  std::vector<nlohmann::json> switches;
  for (const auto& r : sys::list_eval_records(c))
    if (r.kind == "switch") switches.push_back(nlohmann::json::parse(r.json));
  REQUIRE(switches.size() == 1);
  const auto& sw = switches[0];
  CHECK(sw["from"] == 0);
  CHECK(sw["to"] == 1);
  CHECK(sw["to_strategy"] == "SRT");
  CHECK(sw["ended_jobs"] == 2);
  CHECK(sw["rule"]["after_jobs"] == 2);
  CHECK(sw["estimates"]["1"]["estimate"].get<double>() <
        0.9 * sw["estimates"]["0"]["estimate"].get<double>());
  Process report({bin("piranha"), "nps", "report", "--json", "--server", pool.server.endpoint()});
  REQUIRE(report.wait() == 0);
  const auto r = nlohmann::json::parse(report.out());
  REQUIRE(r["switches"].size() == 1);
  CHECK(r["switches"][0]["to_strategy"] == "SRT");

  // After the switch: a long job 3, and once it runs on both nodes a short
  // job 4. FCFS would keep ws01 on job 3 (a new job is probed on the last
  // node, ws02); SRT gives both nodes to job 4 once it is measured. What
  // reaches the agents, under scheduler id 0, is SRT's word. Job 3 has
  // 120 s of work, so that its work left is still far above job 4's 3 s
  // however long job 4 takes to start and be measured on a loaded host
  // (with 12 s, job 3 could be nearly done by then: SRT then kept ws01 on it,
  // and it ended before ws01 went to job 4); it is cancelled at the end.
  auto long3 = pool.spin(480, 250);
  REQUIRE(wait_until([&] {
    auto r = runs(c);
    return r["ws01"].job_id == 3 && r["ws02"].job_id == 3;
  }));
  auto short4 = pool.spin(100, 30);
  CHECK(wait_until(
      [&] {
        auto r = runs(c);
        return r["ws01"].job_id == 4 && r["ws01"].by == "scheduler 0" && assigned(c, 0, "ws01") == 4;
      },
      30s));
  CHECK(end_of(c, 3) == 0);  // job 3 still had work: ws01 left it for job 4
  REQUIRE(short4->wait(60s) == 0);
  // The evaluator's records agree: SRT gave ws01 job 4, FCFS never did.
  CHECK(wait_until([&] { return decided_jobs(c, "ws01")[1].count(4) == 1; }));
  CHECK(decided_jobs(c, "ws01")[0].count(4) == 0);
  Process cancel({bin("piranha"), "cancel", "3", "--server", pool.server.endpoint()});
  CHECK(cancel.wait() == 0);
  CHECK(long3->wait(60s) == 130);
  nps->signal(SIGTERM);
  CHECK(nps->wait() == 0);
}

TEST_CASE("nps live: the evaluator's retention keeps the records in the system space within their bound") {
  Pool pool;
  pool.add_agent("ws01");
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 1; }));
  auto nps = pool.nps_program({"ws01"},
                              "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, "
                              "strategy: TSK, on_events: true}}\n"
                              "  - {name: evaluator, type: evaluator, inferiors: [jobs, s0, m1], params: "
                              "{retention: {records: 10}}}\n");
  REQUIRE(nps->wait_for_err("serving"));
  // Each job writes a few records (spans, decisions, the job, an estimate):
  // six of them write several times the bound.
  for (int i = 0; i < 6; ++i) REQUIRE(pool.spin(4, 20)->wait(60s) == 0);
  INFO(nps->err());
  INFO(evidence(c));
  // At most the bound, a tenth more between prunings, and the latest
  // estimate kept whatever its age; the latest job's record is among them.
  CHECK(wait_until([&] {
    const auto records = sys::list_eval_records(c);
    return records.size() <= 10 + 1 + 1 && !records.empty();
  }));
  auto job_ids = [&] {
    std::set<std::int64_t> ids;
    for (const auto& r : sys::list_eval_records(c))
      if (r.kind == "job") ids.insert(nlohmann::json::parse(r.json)["id"].get<std::int64_t>());
    return ids;
  };
  CHECK(wait_until([&] { return job_ids().count(6) == 1; }));
  CHECK(job_ids().count(1) == 0);  // the first job's records went
  nps->signal(SIGTERM);
  CHECK(nps->wait() == 0);
}

TEST_CASE(
    "nps live: SIGTERM and SIGINT stop it cleanly in every mode, a live page and its readers included") {
  // Agents that would trust a dead NPS for a minute: they can fall back
  // at once only if the heartbeat is withdrawn.
  Pool pool;
  pool.config = pool.s.write("patient.yaml", "policy: FAIR\nscheduler:\n  stale_seconds: 60\n");
  pool.add_agent("ws01");
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 1; }));
  const std::string program =
      pool.s.write("one.yaml",
                   "program: nps\nnodes:\n"
                   "  - {name: enabler, type: enabler, params: {period: 0.5}}\n"
                   "  - {name: jobs, type: jobs, inferiors: [enabler]}\n"
                   "  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}\n"
                   "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0}}\n");
  enum class Mode { Standard, Program, Page, PageRead };
  int fallbacks = 0;  // the agent's "scheduler 0 is gone" so far
  for (const Mode mode : {Mode::Standard, Mode::Program, Mode::Page, Mode::PageRead}) {
    for (const int sig : {SIGTERM, SIGINT}) {
      CAPTURE(static_cast<int>(mode));
      CAPTURE(sig);
      std::vector<std::string> argv = {bin("piranha"), "nps", "run", "--server", pool.server.endpoint()};
      if (mode == Mode::Program) argv.push_back(program);
      if (mode == Mode::Page || mode == Mode::PageRead) argv.insert(argv.end(), {"--http", "127.0.0.1:0"});
      Process nps(argv);
      INFO(nps.err());
      // Serving: scheduler 0 beats and the agent obeys it.
      REQUIRE(wait_until(
          [&] { return c.rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms).has_value(); }));
      REQUIRE(wait_until([&] { return all_by(c, "scheduler 0", 1); }));
      std::unique_ptr<piranha::testing::RawHttp> reader;
      if (mode == Mode::PageRead) {
        REQUIRE(nps.wait_for_err("the live page is at http://127.0.0.1:"));
        const std::string err = nps.err();
        const int port = std::stoi(err.substr(err.find("http://127.0.0.1:") + 17));
        reader = std::make_unique<piranha::testing::RawHttp>(port, piranha::testing::RawHttp::get("/events"));
        REQUIRE(reader->wait_for("data: {", kPatience));
      }
      nps.signal(sig);
      CHECK(nps.wait() == 0);
      CHECK(contains(nps.err(), "nps: stopped"));
      // The heartbeat is withdrawn, the last assignment stays written, and
      // the agent falls back at once, not a minute later.
      CHECK_FALSE(c.rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms).has_value());
      CHECK(c.rd(sys::kSpace, sys::assign_template(0, "ws01"), 0ms).has_value());
      ++fallbacks;
      CHECK(wait_until([&] {
        const std::string log = pool.agents["ws01"]->err();
        int n = 0;
        for (auto at = log.find("scheduler 0 is gone"); at != std::string::npos;
             at = log.find("scheduler 0 is gone", at + 1))
          ++n;
        return n == fallbacks;
      }));
      CHECK(all_by(c, "FAIR", 1));
      if (reader) CHECK(reader->wait_closed(kPatience));  // the stream ended with the NPS
    }
  }
}

TEST_CASE(
    "nps live: SIGTERM stops it in seconds when its server is gone, not after the client's 30-s patience") {
  Pool pool;
  pool.add_agent("ws01");
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 1; }));
  auto nps = pool.nps({});
  INFO(nps->err());
  REQUIRE(wait_until([&] { return all_by(c, "scheduler 0", 1); }));
  // The server dies: the NPS's connection waits for it to come back, for up
  // to its request timeout (30 s), in every request.
  pool.server.process().signal(SIGKILL);
  REQUIRE(pool.server.process().wait() == 128 + SIGKILL);
  std::this_thread::sleep_for(1500ms);  // well into a reconnection
  const auto asked = std::chrono::steady_clock::now();
  nps->signal(SIGTERM);
  REQUIRE(nps->wait(40s) == 0);
  const auto took = std::chrono::steady_clock::now() - asked;
  MESSAGE("stopped ", std::chrono::duration_cast<std::chrono::milliseconds>(took).count(),
          " ms after SIGTERM");
  // Its last writes wait a few seconds at most; the old stop waited out the
  // reconnection (30 s) and then the withdrawal's own.
  CHECK(took < 15s);
  CHECK(contains(nps->err(), "could not withdraw the heartbeat"));
  CHECK(contains(nps->err(), "nps: stopped"));
}
