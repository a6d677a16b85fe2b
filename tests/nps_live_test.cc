// The Network Piranha Scheduler on a live pool: a real server, real agents
// (replaying always-available traces), real `spin` jobs, `piranha nps run`
// started, killed with SIGKILL and restarted.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <memory>

#include "harness.h"
#include "piranha/sysspace.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

// A pool: a server and agents that are always available; their scheduler 0
// goes stale after 2 s.
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
        trace, "--trace-node", "up", "--piranha-output", s.dir + "/" + node + ".piranhas", "--quiet"});
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
    if (auto t = c.rd(sys::kSpace, sys::running_template(n.name), 0))
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
    "nps live: killed, agents fall back to their native policy and jobs finish, and a restart is obeyed again") {
  Pool pool;
  for (const char* n : {"ws01", "ws02"}) pool.add_agent(n);
  auto c = pool.client();
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 2; }));
  auto nps = pool.nps({"--strategy", "TSK"});
  auto job = pool.spin(300, 50);  // 15 s of work
  REQUIRE(wait_until([&] { return all_by(c, "scheduler 0", 2); }));
  REQUIRE(wait_until([&] {
    auto r = runs(c);
    return r["ws01"].job_id == 1 && r["ws02"].job_id == 1;
  }));
  nps->signal(SIGKILL);
  REQUIRE(nps->wait() == 128 + SIGKILL);
  const auto killed = Clock::now();
  // The heartbeat goes stale after 2 s; agents notice within their next look.
  REQUIRE(wait_until([&] { return all_by(c, "FAIR", 2); }, 10s));
  CHECK(ms_since(killed) >= 1500);
  auto restarted = pool.nps({"--strategy", "TSK"});
  CHECK(wait_until([&] { return all_by(c, "scheduler 0", 2); }));
  CHECK(job->wait(90s) == 0);
  CHECK(job->out().find("every task done once") != std::string::npos);
  // The evaluator's records are in the system space, from both NPS
  // processes: the first one's spans, the restarted one's record of the job.
  auto kinds = [&] {
    std::map<std::string, int> n;
    for (const auto& r : sys::list_eval_records(c)) ++n[r.kind];
    return n;
  };
  CHECK(wait_until([&] { return kinds()["job"] == 1 && kinds()["estimate"] >= 1; }));
  CHECK(kinds()["span"] >= 2);
  restarted->signal(SIGTERM);
  CHECK(restarted->wait() == 0);
  // A clean stop withdraws the heartbeat: agents fall back at once.
  CHECK(wait_until([&] { return all_by(c, "FAIR", 2); }, 3s));
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
