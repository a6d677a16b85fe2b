// No ghost jobs, and no silent node shown as well: with real processes, a
// feeder killed outright (outside `piranha submit`) is recorded failed,
// feeder lost, by the agent that finds it silent past its patience, and its
// piranhas stop; a feeder frozen that long finds so when it resumes, and
// stops; an agent that is frozen shows as suspect by its own
// heartbeat, long before it is stale; a piranha cut off from a frozen
// server past its patience exits 75, not counted as a failure, and the job
// goes on. The long faults (a server frozen for 30 s, a feeder for 32 s)
// are in pool_fault_test (slow).
#include <doctest/doctest.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "harness.h"
#include "piranha/runtime/sysspace.h"

using namespace piranha::it;
using piranha::Clock;
namespace sys = piranha::sys;
using Json = nlohmann::json;

namespace {

std::string always(const Scratch& s, const std::string& node) {
  return s.write(node + ".avail.csv",
                 "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\n" +
                     node + ",0,100000\n");
}

std::vector<std::string> agent_argv(const ServerProcess& server, const Scratch& s, const std::string& node,
                                    std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {bin("piranha"),
                                   "agent",
                                   "--node",
                                   node,
                                   "--server",
                                   server.endpoint(),
                                   "--trace",
                                   always(s, node),
                                   "--piranha-output",
                                   s.dir + "/" + node + ".piranhas",
                                   "--piranha-priority",
                                   "normal"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// A pool command's JSON output (it must exit 0).
Json pool_json(const ServerProcess& server, const std::vector<std::string>& words) {
  std::vector<std::string> argv = {bin("piranha")};
  argv.insert(argv.end(), words.begin(), words.end());
  argv.insert(argv.end(), {"--json", "--server", server.endpoint()});
  Process p(argv);
  auto rc = p.wait(20s);
  REQUIRE_MESSAGE(rc == 0, p.command(), "\n", p.err());
  return Json::parse(p.out());
}

// `piranha nodes` as a table.
std::string nodes_table(const ServerProcess& server) {
  Process p({bin("piranha"), "nodes", "--server", server.endpoint()});
  auto rc = p.wait(20s);
  REQUIRE_MESSAGE(rc == 0, p.err());
  return p.out();
}

// A server, an agent on node n1 and a job of 1000 tasks of 100 ms whose feeder
// has a patience of 2 s (lost after 2 s + kFeederSlack, 10 s, of silence),
// not through `piranha submit`, which would record the job's end itself;
// ready once n1's piranha took a task.
struct JobAtWork {
  ServerProcess server;
  Scratch s;
  Process agent{agent_argv(server, s, "n1", {"--cores", "1"})};
  Process feeder{{"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_PATIENCE_SECONDS=2",
                  bin("sleepy_job"), "1000", "100"}};
  ts::Client c{server.endpoint(), quick_client_options()};
  JobAtWork() {
    REQUIRE_MESSAGE(wait_until([&] { return contains(s.read("n1.piranhas"), "took task"); }, 30s),
                    feeder.err(), agent.err());
  }
};

}  // namespace

TEST_CASE_FIXTURE(
    JobAtWork,
    "feeder loss: a feeder killed outright is recorded failed, feeder lost, and its piranhas stop") {
  auto patience = sys::find_patience(c, 1);
  REQUIRE(patience);
  CHECK(*patience == 2);

  feeder.signal(SIGKILL);
  REQUIRE(feeder.wait() == 128 + SIGKILL);
  const double killed = sys::wall_now();
  // Its last jobstat is a moment old when it dies: lost about 12 s later.
  // Within 40 s, so that the agent's safety-net read (every 5 minutes) is not what finds
  // it (a read that met the jobstat being replaced once scheduled none).
  REQUIRE_MESSAGE(wait_until(
                      [&] {
                        auto t = c.rd(sys::kSpace, sys::job_template(1), 0ms);
                        auto j = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
                        return j && j->state == sys::JobState::Failed;
                      },
                      40s),
                  agent.err());
  MESSAGE("a feeder of patience 2 s killed outright: its job recorded failed ", sys::wall_now() - killed,
          " s later");
  CHECK(agent.wait_for_err("job 1 recorded failed: feeder lost"));

  auto jobs = pool_json(server, {"jobs", "--all"});
  REQUIRE(jobs.size() == 1);
  CHECK(jobs[0]["state"] == "failed");
  REQUIRE(jobs[0]["lost"].is_object());
  CHECK(jobs[0]["lost"]["node"] == "n1");
  CHECK(contains(jobs[0]["lost"]["reason"].get<std::string>(), "feeder lost: not heard from for"));
  CHECK(jobs[0]["lost"]["time"].get<double>() > killed);
  CHECK(jobs[0]["end_time"].get<double>() == doctest::Approx(jobs[0]["lost"]["time"].get<double>()));
  Process table({bin("piranha"), "jobs", "--all", "--server", server.endpoint()});
  REQUIRE(table.wait(20s) == 0);
  CHECK(contains(table.out(), "failed, recorded by n1"));

  // The agent stops the job's piranhas: it runs nothing now.
  CHECK(wait_until(
      [&] {
        auto t = c.rd(sys::kSpace, sys::running_template("n1"), 0ms);
        auto r = t ? sys::NodeRun::from_tuple(*t) : std::nullopt;
        return r && r->job_id == 0;
      },
      30s));
  CHECK(agent.running());
}

TEST_CASE_FIXTURE(JobAtWork,
                  "feeder loss: a feeder frozen past its patience finds its job failed when it resumes, and "
                  "stops") {
  feeder.signal(SIGSTOP);
  REQUIRE_MESSAGE(wait_until(
                      [&] {
                        auto l = sys::losses_by_job(c);
                        return l.count(1) == 1;
                      },
                      60s),
                  agent.err());
  feeder.signal(SIGCONT);
  auto rc = feeder.wait(30s);
  INFO("feeder stderr: ", feeder.err());
  REQUIRE(rc.has_value());
  CHECK(*rc == 1);
  CHECK(contains(feeder.err(), "job 1 was recorded failed while this feeder was silent: feeder lost"));
  CHECK(contains(feeder.err(), "(recorded by n1)"));
  auto t = c.rd(sys::kSpace, sys::job_template(1), 0ms);
  REQUIRE(t);
  CHECK(sys::JobRecord::from_tuple(*t)->state == sys::JobState::Failed);
}

TEST_CASE("node liveness: a frozen agent shows as suspect by its own heartbeat, before it is stale") {
  ServerProcess server;
  Scratch s;
  auto config = s.write("agent.yaml", "heartbeat_seconds: 1\n");
  Process agent(agent_argv(server, s, "n1", {"--config", config}));
  REQUIRE_MESSAGE(wait_until([&] {
                    auto n = pool_json(server, {"nodes"});
                    return n.size() == 1 && n[0]["state"] == "available";
                  }),
                  agent.err());
  CHECK(pool_json(server, {"nodes"})[0]["heartbeat_seconds"] == 1.0);

  agent.signal(SIGSTOP);
  auto stopped = Clock::now();
  // Suspect once 1.5 beats (1.5 s) pass without one; stale only at 30 s.
  REQUIRE(wait_until([&] { return pool_json(server, {"nodes"})[0]["state"] == "suspect"; }, 20s));
  const double suspect_ms = ms_since(stopped);
  MESSAGE("an agent beating every second, frozen: suspect after ", suspect_ms, " ms");
  // Judged by its own 1 s beat, not the default 10 s one (suspect at 15 s).
  CHECK(suspect_ms < 10000);
  auto n = pool_json(server, {"nodes"});
  CHECK(n[0]["suspect"] == true);
  CHECK(n[0]["stale"] == false);
  CHECK(n[0]["reported_state"] == "available");
  CHECK(contains(nodes_table(server), "suspect"));

  agent.signal(SIGCONT);
  CHECK(wait_until([&] { return pool_json(server, {"nodes"})[0]["state"] == "available"; }));
  CHECK(pool_json(server, {"nodes"})[0]["suspect"] == false);
}

TEST_CASE(
    "cut off: a piranha whose server is frozen past its patience exits 75, the agent does not count it a "
    "failure, and another starts once the server answers") {
  ServerProcess server;
  Scratch s;
  // The piranhas get their patience from their agent's environment: 2 s.
  std::vector<std::string> argv = {"/usr/bin/env", "PIRANHA_PATIENCE_SECONDS=2"};
  for (auto& a : agent_argv(server, s, "n1", {"--cores", "1", "--events", s.dir + "/n1.events"}))
    argv.push_back(a);
  Process agent(argv);
  // The feeder's own patience is long: it waits the freeze out.
  Process feeder({"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_PATIENCE_SECONDS=120",
                  bin("sleepy_job"), "60", "100"});
  REQUIRE_MESSAGE(wait_until([&] { return contains(s.read("n1.piranhas"), "took task"); }, 30s), feeder.err(),
                  agent.err());

  server.process().signal(SIGSTOP);
  // Lost after the 5 s heartbeat timeout, then 2 s of patience.
  bool cut_off = wait_until([&] { return contains(agent.err(), "was cut off from the server"); }, 30s);
  server.process().signal(SIGCONT);
  INFO("agent: ", agent.err(), "\nfeeder: ", feeder.err());
  REQUIRE(cut_off);
  CHECK(contains(s.read("n1.events"), "\"status\":\"exit status 75\""));
  auto rc = feeder.wait(90s);
  REQUIRE(rc == 0);
  CHECK(contains(feeder.out(), "sleepy_job: result OK"));
  CHECK_FALSE(contains(agent.err(), "held"));
  // A second piranha did the rest.
  const std::string piranhas = s.read("n1.piranhas");
  std::set<std::string> pids;
  const std::regex took("piranha ([0-9]+) took task");
  for (auto it = std::sregex_iterator(piranhas.begin(), piranhas.end(), took); it != std::sregex_iterator();
       ++it)
    pids.insert((*it)[1]);
  CHECK(pids.size() >= 2);
}
