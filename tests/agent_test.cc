// The node agent with real processes and real signals: retreat on an
// availability change, a piranha killed outright, scheduler 0's assignments
// as the uplink reads them, holds, retention and the piranhas' priority, and
// bad configuration. What the agent decides, rule by rule, is tested without
// processes in piranha/agent/src/decide_test.cc.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <tuple>

#include "harness.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/testing/priority_probe.h"

using namespace piranha::it;
using piranha::Clock;
namespace sys = piranha::sys;
using Json = nlohmann::json;

namespace {

std::string trace_text(const std::string& rows, int length = 1000) {
  return "# piranha availability trace v1\n# step_seconds: 60\n# length: " + std::to_string(length) +
         "\nnode,start,end\n" + rows;
}

// `piranha agent` for node `node` replaying `trace` at `scale`, then `extra`;
// what they do not say is the agent's default (piranhas at SCHED_IDLE).
std::vector<std::string> agent_argv_as_configured(const ServerProcess& server, const Scratch& s,
                                                  const std::string& node, const std::string& trace,
                                                  double scale, std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {bin("piranha"),     "agent",
                                   "--node",           node,
                                   "--server",         server.endpoint(),
                                   "--trace",          trace,
                                   "--time-scale",     std::to_string(scale),
                                   "--events",         s.dir + "/" + node + ".events",
                                   "--piranha-output", s.dir + "/" + node + ".piranhas"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

// The same with the piranhas at the agent's own priority, for the cases not
// about priority: on a machine whose every core is busy a piranha at
// SCHED_IDLE gets next to nothing, as it should, and its job would not end.
std::vector<std::string> agent_argv(const ServerProcess& server, const Scratch& s, const std::string& node,
                                    const std::string& trace, double scale,
                                    std::vector<std::string> extra = {}) {
  extra.insert(extra.begin(), {"--piranha-priority", "normal"});
  return agent_argv_as_configured(server, s, node, trace, scale, extra);
}

// A job's feeder, run with PIRANHA_SERVER set.
std::vector<std::string> job_argv(const ServerProcess& server, std::vector<std::string> job) {
  std::vector<std::string> argv = {"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), bin(job[0])};
  argv.insert(argv.end(), job.begin() + 1, job.end());
  return argv;
}

// The children of process `pid`, from every one of its threads.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> kids;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (pid_t k; in >> k;) kids.push_back(k);
  }
  return kids;
}

// The events agent `node` wrote so far, one JSON object per line (a line
// being written is left out).
std::vector<Json> events_of(const Scratch& s, const std::string& node) {
  std::vector<Json> events;
  std::istringstream in(s.read(node + ".events"));
  for (std::string line; std::getline(in, line);)
    if (auto e = Json::parse(line, nullptr, /*allow_exceptions=*/false); e.is_object()) events.push_back(e);
  return events;
}

// Whether `e` is an event of `kind` with every field in `fields`.
bool is_event(const Json& e, const std::string& kind, const Json& fields = Json::object()) {
  if (e.value("event", "") != kind) return false;
  for (const auto& [key, value] : fields.items())
    if (!e.contains(key) || e[key] != value) return false;
  return true;
}

int count(const std::vector<Json>& events, const std::string& kind, const Json& fields = Json::object()) {
  return static_cast<int>(
      std::count_if(events.begin(), events.end(), [&](const Json& e) { return is_event(e, kind, fields); }));
}

// Whether some event of `kind` has a string `field` containing `part`.
bool mentions(const std::vector<Json>& events, const std::string& kind, const std::string& field,
              const std::string& part) {
  return std::any_of(events.begin(), events.end(),
                     [&](const Json& e) { return is_event(e, kind) && contains(e.value(field, ""), part); });
}

// Whether the node's record comes to say `state`. The record is absent for
// a moment whenever the agent rewrites it (its heartbeat): read until it is
// there.
bool node_becomes(ts::Client& c, sys::NodeState state) {
  return wait_until([&] {
    auto nodes = sys::list_nodes(c);
    return nodes.size() == 1 && nodes[0].state == state;
  });
}

}  // namespace

TEST_CASE("agent: a node that turns unavailable makes its piranha retreat, and the job still finishes") {
  ServerProcess server;
  Scratch s;
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\n"));
  // Retreating is the same at either priority.
  Process agent(agent_argv(server, s, "n1", trace, 60));
  // Tasks of a second: a piranha told to retreat is mid-task.
  Process job(job_argv(server, {"sleepy_job", "8", "1000"}));
  // The node turns unavailable (its owner blocks it) once a piranha
  // computes, not at a fixed time: a piranha told to retreat before its
  // runtime is up ends at once with no retreat record, and on a busy
  // machine starting one may take seconds.
  REQUIRE_MESSAGE(wait_until([&] { return contains(s.read("n1.piranhas"), "took task"); }, 60s), agent.err());
  ts::Client c(server.endpoint());
  c.out(sys::kSpace, sys::OwnerBlock{"n1", 0, 253402300799.0}.to_tuple());
  auto retreated = [&] { return count(events_of(s, "n1"), "retreat", {{"cause", "unavailable"}}) == 1; };
  REQUIRE_MESSAGE(wait_until(retreated, 30s), agent.err());
  CHECK(node_becomes(c, sys::NodeState::OwnerBlocked));
  // The block lifted, the node is available again and the job finishes.
  REQUIRE(c.in_many(sys::kSpace, sys::owner_template("n1"), 10).size() == 1);
  CHECK(node_becomes(c, sys::NodeState::Available));
  auto rc = job.wait(60s);
  INFO("job stdout: ", job.out(), "\njob stderr: ", job.err(), "\nagent: ", agent.err());
  REQUIRE(rc == 0);
  CHECK(contains(job.out(), "result OK"));
  auto events = events_of(s, "n1");
  CHECK(count(events, "unavailable", {{"reason", "owner block"}}) == 1);
  // A piranha that retreated ended at once (_Exit: no atexit handler ran),
  // with what it wrote as it retreated flushed.
  std::string output = s.read("n1.piranhas");
  auto retreat = std::find_if(events.begin(), events.end(), [](const Json& e) {
    return is_event(e, "retreat", {{"cause", "unavailable"}});
  });
  REQUIRE(retreat != events.end());
  const std::string pid = std::to_string(retreat->at("pid").get<long>());
  CHECK(contains(output, "piranha " + pid + " retreats from task"));
  CHECK_FALSE(contains(output, "piranha " + pid + " ended its ordinary way"));
  auto work = sys::list_jobwork(c, 1);
  REQUIRE(work.size() == 1);
  CHECK(work[0].tasks == 8);
  CHECK(work[0].retreats >= 1);
  // The job's count is the agent's: a record for each retreat it logged,
  // those for the owner's block counted as the owner's.
  CHECK(work[0].retreats == static_cast<std::int64_t>(count(events, "retreat")));
  CHECK(work[0].owner_retreats ==
        static_cast<std::int64_t>(count(events, "retreat", {{"cause", "unavailable"}})));
  // The availability period that ended was recorded.
  const std::size_t periods = c.rd_many(sys::kSpace, sys::ap_template(), 100).size();
  CHECK(periods >= 1);
  agent.signal(SIGTERM);
  CHECK(agent.wait() == 0);
  // So is the one still open when the agent stopped.
  CHECK(c.rd_many(sys::kSpace, sys::ap_template(), 100).size() == periods + 1);
}

TEST_CASE("agent: a piranha killed with SIGKILL mid-task loses nothing and duplicates nothing") {
  ServerProcess server;
  Scratch s;
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\n"));
  Process agent(agent_argv(server, s, "n1", trace, 60));
  Process job(job_argv(server, {"sleepy_job", "8", "300"}));
  // Wait for a piranha to take a task, then kill it outright.
  std::regex took("piranha ([0-9]+) took task");
  pid_t victim = 0;
  REQUIRE(wait_until([&] {
    std::string out = s.read("n1.piranhas");
    std::smatch m;
    if (!std::regex_search(out, m, took)) return false;
    victim = std::stoi(m[1].str());
    return true;
  }));
  ::kill(victim, SIGKILL);
  auto rc = job.wait(60s);
  INFO("job stdout: ", job.out(), "\njob stderr: ", job.err(), "\nagent: ", agent.err());
  REQUIRE(rc == 0);
  CHECK(job.out().find("sleepy_job: result OK (8 tasks, 0 missing, 0 twice, 0 extra)") != std::string::npos);
  CHECK(mentions(events_of(s, "n1"), "exit", "status", "killed by signal 9"));
}

TEST_CASE("agent: scheduler 0's assignment is obeyed, and ignored once its heartbeat is stale") {
  ServerProcess server;
  Scratch s;
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\n"));
  auto config = s.write("agent.yaml", "policy: FCFS\nscheduler:\n  stale_seconds: 1.5\n");
  Process agent(agent_argv(server, s, "n1", trace, 60, {"--config", config}));
  // Two long jobs: FCFS alone runs the first.
  Process first(job_argv(server, {"sleepy_job", "200", "100"}));
  ts::Client c(server.endpoint());
  REQUIRE(wait_until([&] { return sys::list_jobs(c).size() == 1; }));
  Process second(job_argv(server, {"sleepy_job", "200", "100"}));
  REQUIRE(wait_until([&] { return sys::list_jobs(c).size() == 2; }));
  REQUIRE(wait_until([&] { return count(events_of(s, "n1"), "start", {{"job", 1}}) == 1; }));
  // The agent publishes what it runs and on whose word.
  auto runs = [&](std::int64_t job, const std::string& by) {
    auto t = c.rd(sys::kSpace, sys::running_template("n1"), 0ms);
    auto r = t ? sys::NodeRun::from_tuple(*t) : std::nullopt;
    return r && r->job_id == job && r->by == by;
  };
  CHECK(wait_until([&] { return runs(1, "FCFS"); }));  // published by the uplink, a moment after the start

  // Scheduler 0 assigns job 2 to n1 and keeps its heartbeat fresh.
  c.out(sys::kSpace, sys::Assignment{0, 1, "n1", 2}.to_tuple());
  // As the NPS beats: supersede, never a moment without a heartbeat, which
  // an agent watching the system space takes for the scheduler withdrawn.
  auto beat = [&] {
    sys::supersede(c, sys::scheduler_heartbeat_template(0),
                   sys::SchedulerHeartbeat{0, sys::wall_now()}.to_tuple());
  };
  beat();
  CHECK(wait_until([&] {
    beat();
    return count(events_of(s, "n1"), "start", {{"job", 2}}) == 1;
  }));
  CHECK(wait_until([&] { return runs(2, "scheduler 0"); }));
  // Carried out: one "obeyed" event for the assignment, with its latency from the decision.
  CHECK(count(events_of(s, "n1"), "obeyed", {{"epoch", 1}}) == 1);
  // Another scheduler's assignment is not obeyed while scheduler 0 is fresh.
  c.out(sys::kSpace, sys::Assignment{1, 5, "n1", 1}.to_tuple());
  for (auto until = Clock::now() + 1500ms; Clock::now() < until; std::this_thread::sleep_for(100ms)) beat();
  CHECK(count(events_of(s, "n1"), "start", {{"job", 1}}) == 1);
  // The heartbeat stops: after stale_seconds the agent returns to FCFS.
  CHECK(wait_until([&] { return count(events_of(s, "n1"), "start", {{"job", 1}}) == 2; }));
  CHECK(wait_until([&] { return runs(1, "FCFS"); }));  // published by the uplink, a moment after the start
  // The job chosen: by FCFS, by the scheduler, by FCFS again.
  std::vector<std::string> chosen_by;
  for (const auto& e : events_of(s, "n1"))
    if (is_event(e, "target") && (chosen_by.empty() || chosen_by.back() != e.value("by", "")))
      chosen_by.push_back(e.value("by", ""));
  CHECK(chosen_by == std::vector<std::string>{"FCFS", "scheduler", "FCFS"});
  CHECK(count(events_of(s, "n1"), "obeyed") == 1);  // scheduler 1's assignment never was
  INFO("agent: ", agent.err());
  CHECK(agent.err().find("stale") != std::string::npos);
  for (const auto& j : sys::list_jobs(c)) sys::set_job_state(c, j.id, sys::JobState::Cancelled);
  CHECK(first.wait(30s));
  CHECK(second.wait(30s));
}

TEST_CASE("agent: bad configuration and traces are refused with the file, line and problem") {
  Scratch s;
  auto unknown = s.write("unknown.yaml", "node: a\navailability:\n  laod: [0.7, 0.4, 0.1]\n");
  Process p1({bin("piranha"), "agent", "--config", unknown});
  CHECK(p1.wait() == 2);
  CHECK(p1.err().find("unknown.yaml:3: unknown key 'laod'") != std::string::npos);

  auto bad = s.write("bad.yaml", "availability:\n  load: [0.7, -1, 0.1]\n");
  Process p2({bin("piranha"), "agent", "--config", bad});
  CHECK(p2.wait() == 2);
  CHECK(p2.err().find("bad.yaml:2") != std::string::npos);

  auto corrupt = s.write("corrupt.avail.csv", trace_text("n1,0,10\nn1,5,20\n"));
  Process p3({bin("piranha"), "agent", "--node", "n1", "--trace", corrupt});
  CHECK(p3.wait() == 2);
  CHECK(p3.err().find("corrupt.avail.csv:6: period of n1 overlaps the one on line 5") != std::string::npos);

  auto ok = s.write("ok.avail.csv", trace_text("n1,0,10\n"));
  Process p4({bin("piranha"), "agent", "--node", "n2", "--trace", ok});
  CHECK(p4.wait() == 2);
  CHECK(p4.err().find("no node \"n2\"") != std::string::npos);
}

TEST_CASE("agent: an input event on a watched device makes the piranha retreat at once") {
  ServerProcess server;
  Scratch s;
  // A FIFO stands in for /dev/input/eventN: the agent's live sensor reads
  // struct input_event records from it through the same code path.
  std::string device = s.dir + "/event0";
  REQUIRE(::mkfifo(device.c_str(), 0600) == 0);
  int writer_keepalive = ::open(device.c_str(), O_RDWR | O_NONBLOCK);  // so the agent never sees end of file
  REQUIRE(writer_keepalive >= 0);
  auto config = s.write("live.yaml",
                        "node: n1\n"
                        "availability:\n"
                        "  sensor: live\n"
                        "  load: [1000, 1000, 1000]\n"  // this shared machine's load must not matter here
                        "  input_idle_seconds: 1\n"
                        "  poll_seconds: 0.2\n"
                        "  input_devices: [\"" +
                            device +
                            "\"]\n"
                            "  terminals: false\n"
                            "  x11: false\n");
  Process agent({bin("piranha"), "agent", "--config", config, "--server", server.endpoint(), "--events",
                 s.dir + "/n1.events", "--piranha-output", s.dir + "/n1.piranhas", "--piranha-priority",
                 "normal"});
  Process job(job_argv(server, {"sleepy_job", "2000", "50"}));
  // Idle for a second: available, and a piranha computes.
  REQUIRE(wait_until([&] { return s.read("n1.piranhas").find("took task") != std::string::npos; }));
  // The owner presses a key.
  input_event ev{};
  ev.type = EV_KEY;
  ev.code = KEY_A;
  ev.value = 1;
  REQUIRE(::write(writer_keepalive, &ev, sizeof ev) == static_cast<ssize_t>(sizeof ev));
  REQUIRE(wait_until([&] { return count(events_of(s, "n1"), "retreat", {{"cause", "unavailable"}}) >= 1; }));
  CHECK(mentions(events_of(s, "n1"), "unavailable", "reason", "keyboard/mouse idle"));
  // Idle again after input_idle_seconds: the piranha comes back.
  CHECK(wait_until([&] { return count(events_of(s, "n1"), "start") >= 2; }));
  ts::Client c(server.endpoint());
  sys::set_job_state(c, 1, sys::JobState::Cancelled);
  CHECK(job.wait(30s));
  ::close(writer_keepalive);
}

TEST_CASE("agent: in suspend mode a short absence stops and continues the piranha instead of retreating") {
  ServerProcess server;
  Scratch s;
  // One step lasts 0.5 s: away for one step, well within suspend_max_seconds.
  auto trace = s.write("t.avail.csv", trace_text("n1,0,3\nn1,4,1000\n"));
  auto config = s.write("suspend.yaml", "retreat:\n  mode: suspend\n  suspend_max_seconds: 10\n");
  Process agent(agent_argv(server, s, "n1", trace, 120, {"--config", config}));
  Process job(job_argv(server, {"sleepy_job", "12", "250"}));
  auto rc = job.wait(60s);
  INFO("job: ", job.out(), job.err(), "\nagent: ", agent.err());
  REQUIRE(rc == 0);
  CHECK(job.out().find("result OK") != std::string::npos);
  auto events = events_of(s, "n1");
  CHECK(count(events, "suspend") >= 1);
  CHECK(count(events, "resume") >= 1);
  CHECK(count(events, "retreat", {{"cause", "unavailable"}}) == 0);
}

TEST_CASE(
    "piranha demo: three agents on a replayed trace run cmatrix and report check, grain, speed-up, retreats "
    "and "
    "work") {
  Process demo({bin("piranha"), "demo", "--size", "60"});
  auto rc = demo.wait(110s);
  INFO("demo stdout: ", demo.out(), "\ndemo stderr: ", demo.err());
  REQUIRE(rc == 0);
  const std::string out = demo.out();
  CHECK(out.find("result:     checked OK against a sequential multiply") != std::string::npos);
  CHECK(out.find("turnaround: ") != std::string::npos);
  CHECK(out.find("retreats:   ") != std::string::npos);
  // The job's own line, and what the summary makes of it (its speed is not checked: a busy machine).
  CHECK(out.find("cmatrix 60 --grain 10: result OK") != std::string::npos);
  CHECK(out.find("grain:      10 rows of A a task (10 x 60 by 60 x 60: 36000 multiply-adds)") !=
        std::string::npos);
  CHECK(std::regex_search(out,
                          std::regex("speed-up:   [0-9.]+x: [0-9.]+ s on the pool against [0-9.]+ s for the "
                                     "same multiply on one core")));
  // Every cmatrix 60 --grain 10 task (6 blocks of 10 rows) was done by some node, once.
  std::int64_t tasks = 0;
  std::regex line("  (ws0[123]) +([0-9]+) tasks");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator(); ++it)
    tasks += std::stoll((*it)[2].str());
  CHECK(tasks == 6);
}

namespace {

// Job `id`'s record now, if any.
std::optional<sys::JobRecord> job_record(ts::Client& c, std::int64_t id) {
  auto t = c.rd(sys::kSpace, sys::job_template(id), 500ms);
  return t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
}

bool reaches(ts::Client& c, std::int64_t id, sys::JobState state, std::chrono::milliseconds timeout = 30s) {
  return wait_until(
      [&] {
        auto j = job_record(c, id);
        return j && j->state == state;
      },
      timeout);
}

// A server, and an agent of node n1 replaying the trace `rows` (of node n1)
// at 60 trace seconds a second, its piranhas at its own priority.
struct OneNode {
  explicit OneNode(const std::string& rows)
      : agent(agent_argv(server, s, "n1", s.write("t.avail.csv", trace_text(rows)), 60)) {}
  ServerProcess server;
  Scratch s;
  Process agent;
  ts::Client c{server.endpoint()};
};

// Runs `piranha ARGS... --server S` to its end; returns its exit status.
int run_cli(const ServerProcess& server, std::vector<std::string> args, Process** keep = nullptr) {
  args.insert(args.begin(), bin("piranha"));
  args.push_back("--server");
  args.push_back(server.endpoint());
  static thread_local std::unique_ptr<Process> last;
  last = std::make_unique<Process>(args);
  auto rc = last->wait(30s);
  if (keep) *keep = last.get();
  INFO(last->command(), "\n", last->out(), last->err());
  REQUIRE(rc.has_value());
  return *rc;
}

}  // namespace

TEST_CASE(
    "agent: a job whose piranha fails on every task is held after max_failures, then released or cancelled") {
  ServerProcess server;
  Scratch s;
  auto flag = s.write("fail", "x");
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\n"));
  Process agent(agent_argv(server, s, "n1", trace, 60));
  Process job(job_argv(server, {"flaky_job", "6", flag}));
  ts::Client c(server.endpoint());
  REQUIRE_MESSAGE(reaches(c, 1, sys::JobState::Held), agent.err());
  CHECK(wait_until([&] { return count(events_of(s, "n1"), "held") == 1; }));
  CHECK(count(events_of(s, "n1"), "start") == 3);

  auto holds = sys::holds_by_job(c);
  REQUIRE(holds.count(1) == 1);
  INFO(holds[1].reason);
  CHECK(holds[1].node == "n1");
  CHECK(holds[1].reason.find("exit status 1 (3 failures in a row on n1)") != std::string::npos);
  CHECK(holds[1].reason.find("is there") != std::string::npos);  // the piranha's stderr
  // --piranha-output still gets the piranhas' stderr.
  CHECK(s.read("n1.piranhas").find("is there") != std::string::npos);

  Process* out = nullptr;
  CHECK(run_cli(server, {"jobs"}, &out) == 0);
  CHECK(out->out().find("held") != std::string::npos);
  CHECK(out->out().find("held by n1") != std::string::npos);
  CHECK(out->out().find("failed on purpose") != std::string::npos);
  CHECK(run_cli(server, {"jobs", "--json"}, &out) == 0);
  CHECK(out->out().find("\"state\": \"held\"") != std::string::npos);
  CHECK(out->out().find("\"reason\": \"exit status 1") != std::string::npos);

  // The feeder waits meanwhile; released, the job runs again and finishes.
  CHECK(job.running());
  std::filesystem::remove(flag);
  CHECK(run_cli(server, {"release", "1"}) == 0);
  CHECK(sys::holds_by_job(c).empty());
  auto rc = job.wait(30s);
  INFO("job: ", job.out(), job.err(), "\nagent: ", agent.err());
  REQUIRE(rc == 0);
  CHECK(job.out().find("flaky_job: result OK") != std::string::npos);
  CHECK(run_cli(server, {"release", "1"}) == 1);  // not held any more

  // A second job held, then cancelled: its feeder ends.
  s.write("fail", "x");
  Process job2(job_argv(server, {"flaky_job", "3", flag}));
  REQUIRE(reaches(c, 2, sys::JobState::Held));
  CHECK(run_cli(server, {"cancel", "2"}) == 0);
  CHECK(job2.wait(30s).has_value());
  CHECK(job_record(c, 2)->state == sys::JobState::Cancelled);
  agent.signal(SIGTERM);
  CHECK(agent.wait() == 0);
}

TEST_CASE(
    "submit: a hold is printed as it happens, and the job held past --hold-timeout, released or cancelled") {
  OneNode pool("n1,0,1000\n");
  auto& [server, s, agent, c] = pool;
  auto flag = s.write("fail", "x");
  auto submit = [&](std::vector<std::string> extra) {
    std::vector<std::string> argv = {bin("piranha"), "submit", "--server", server.endpoint()};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), {bin("flaky_job"), "3", flag});
    return std::make_unique<Process>(argv);
  };

  // Held past the timeout: given up, cancelled, status 3.
  auto first = submit({"--hold-timeout", "3"});
  INFO("submit: ", first->err(), "\nagent: ", agent.err());
  REQUIRE(first->wait_for_err("job 1 held by n1: exit status 1 (3 failures in a row on n1)"));
  CHECK(first->wait_for_err("its feeder waits; once the cause is fixed: piranha release 1"));
  CHECK(first->wait_for_err("given up after 3 s held (--hold-timeout)"));
  CHECK(first->wait(30s) == 3);
  CHECK(contains(first->err(), "job 1 held for more than 3 s (--hold-timeout): giving up; it is cancelled"));
  CHECK(job_record(c, 1)->state == sys::JobState::Cancelled);

  // No timeout: it waits, and says so when released; the job then finishes.
  auto second = submit({});
  REQUIRE(second->wait_for_err("job 2 held by n1"));
  std::filesystem::remove(flag);
  CHECK(run_cli(server, {"release", "2"}) == 0);
  INFO("second submit: ", second->err());
  CHECK(second->wait_for_err("job 2 released: "));
  CHECK(second->wait(30s) == 0);

  // Cancelled while held: said, and not status 0.
  s.write("fail", "x");
  auto third = submit({});
  REQUIRE(third->wait_for_err("job 3 held by n1"));
  CHECK(run_cli(server, {"cancel", "3"}) == 0);
  CHECK(third->wait(30s) == 130);
  CHECK(contains(third->err(), "job 3 cancelled"));
  agent.signal(SIGTERM);
  CHECK(agent.wait() == 0);
}

TEST_CASE("agent: the node's reason is published with its state, and `piranha nodes` shows it") {
  // n1 is available for 2 trace steps (2 s at 60 trace seconds a second), then not.
  OneNode pool("n1,0,2\n");
  auto& [server, s, agent, c] = pool;
  auto node = [&]() -> Json {
    Process* out = nullptr;
    if (run_cli(server, {"nodes", "--json"}, &out) != 0) return Json::object();
    auto ns = Json::parse(out->out());
    return ns.size() == 1 ? ns[0] : Json::object();  // none before the agent registers
  };
  REQUIRE(wait_until([&] { return node().value("state", "") == "unavailable"; }, 20s));
  CHECK(node()["reason"] == "trace n1: unavailable (step 2)");
  Process* table = nullptr;
  REQUIRE(run_cli(server, {"nodes"}, &table) == 0);
  CHECK(contains(table->out(), "REASON"));
  CHECK(contains(table->out(), "trace n1: unavailable (step 2)"));
  // An owner block says until when.
  REQUIRE(run_cli(server, {"owner", "block", "n1", "--for", "1h"}) == 0);
  REQUIRE(wait_until([&] { return node().value("state", "") == "owner-blocked"; }, 20s));
  CHECK(node()["reason"].get<std::string>().rfind("owner block until ", 0) == 0);
  agent.signal(SIGTERM);
  CHECK(agent.wait() == 0);
  REQUIRE(wait_until([&] { return node().value("reported_state", "") == "down"; }));
  CHECK(node()["reason"] == "agent stopped");
  // A reason written for another state than the node's (an older agent's
  // node record after a newer one's reason) is not shown.
  sys::replace(c, sys::nodewhy_template("n1"), sys::NodeReason{"n1", "available", "idle", 1}.to_tuple());
  CHECK(node()["reason"].is_null());
}

TEST_CASE("agent: a job whose program cannot be started on the node is held with that reason") {
  ServerProcess server;
  Scratch s;
  ts::Client c(server.endpoint());
  c.out(sys::kSpace, sys::JobLaunch{1, s.dir + "/no-such-program", {}, s.dir}.to_tuple());
  c.out(sys::kSpace,
        sys::JobRecord{1, "no-such-program", "job.1", sys::wall_now(), sys::JobState::Queued}.to_tuple());
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\n"));
  Process agent(agent_argv(server, s, "n1", trace, 60));
  REQUIRE_MESSAGE(reaches(c, 1, sys::JobState::Held, 15s), agent.err());
  auto holds = sys::holds_by_job(c);
  REQUIRE(holds.count(1) == 1);
  INFO(holds[1].reason);
  CHECK(holds[1].reason.find("cannot start its program on n1") != std::string::npos);
  CHECK(holds[1].reason.find("no-such-program") != std::string::npos);
  agent.signal(SIGTERM);
  CHECK(agent.wait() == 0);
}

TEST_CASE("agent: finished jobs and this node's ap records older than the retention are removed") {
  ServerProcess server;
  Scratch s;
  ts::Client c(server.endpoint());
  double now = sys::wall_now();
  // Job 1 ended long ago, job 2 just now, job 3 is held.
  for (auto [id, state, ended] :
       {std::tuple{1, sys::JobState::Done, now - 3600}, std::tuple{2, sys::JobState::Failed, now},
        std::tuple{3, sys::JobState::Held, 0.0}}) {
    c.out(sys::kSpace, sys::JobLaunch{id, "/bin/true", {}, "/"}.to_tuple());
    c.out(sys::kSpace, sys::JobRecord{id, "x", "job." + std::to_string(id), now - 7200, state}.to_tuple());
    c.out(sys::kSpace, sys::JobStat{id, 1, 0, 0.1, now - 3600}.to_tuple());
    c.out(sys::kSpace, sys::JobWork{id, "n1", 1, 0.1, 0}.to_tuple());
    c.out(sys::kSpace, sys::JobTimes{id, now - 7000, ended}.to_tuple());
    c.out(sys::kSpace, sys::JobHold{id, "n1", "why", now - 7000}.to_tuple());
    c.out(sys::kSpace, sys::JobExit{id, 0}.to_tuple());
    c.out(sys::kSpace, sys::JobRequirement{id, "label=gpu"}.to_tuple());
  }
  c.out(sys::kSpace, sys::AvailabilityPeriod{"n1", now - 7200, now - 3600}.to_tuple());
  c.out(sys::kSpace, sys::AvailabilityPeriod{"n1", now - 60, now - 1}.to_tuple());
  c.out(sys::kSpace, sys::AvailabilityPeriod{"n2", now - 7200, now - 3600}.to_tuple());  // another node's
  auto config = s.write("agent.yaml", "retention: {jobs_seconds: 600, ap_seconds: 600}\n");
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\n"));
  Process agent(agent_argv(server, s, "n1", trace, 60, {"--config", config}));
  REQUIRE_MESSAGE(wait_until([&] { return !job_record(c, 1); }, 15s), agent.err());
  for (const auto& tmpl :
       {sys::launch_template(1), sys::jobstat_template(1), sys::jobwork_template(1), sys::jobtime_template(1),
        sys::jobexit_template(1), sys::jobheld_template(1), sys::jobreq_template(1)})
    CHECK(c.rd_many(sys::kSpace, tmpl, 10).empty());
  CHECK(c.rd_many(sys::kSpace, sys::jobreq_template(2), 10).size() == 1);
  CHECK(job_record(c, 2));
  CHECK(job_record(c, 3));
  CHECK(c.rd_many(sys::kSpace, sys::jobtime_template(2), 10).size() == 1);
  CHECK(c.rd_many(sys::kSpace, sys::jobheld_template(3), 10).size() == 1);
  auto aps = c.rd_many(sys::kSpace, sys::ap_template(), 100);
  CHECK(aps.size() == 2);
  for (const auto& t : aps) {
    auto ap = sys::AvailabilityPeriod::from_tuple(t);
    REQUIRE(ap);
    CHECK((ap->node == "n2" || ap->end > now - 600));
  }
  agent.signal(SIGTERM);
  CHECK(agent.wait() == 0);
}

TEST_CASE(
    "agent: piranhas run at SCHED_IDLE, or with piranha_priority normal at the agent's own priority, and not "
    "its slice") {
  Scratch s;
  auto trace = s.write("t.avail.csv", trace_text("n1,0,1000\nn2,0,1000\n"));
  // The YAML says normal; the second agent's --piranha-priority idle overrides it.
  auto yaml = s.write("agent.yaml", "piranha_priority: normal\n");
  struct Case {
    std::string node;
    std::vector<std::string> extra;
    bool idle;
  };
  for (const Case& c : {Case{"n1", {"--config", yaml}, false},
                        Case{"n2", {"--config", yaml, "--piranha-priority", "idle"}, true}}) {
    CAPTURE(c.idle);
    ServerProcess server;
    Process agent(agent_argv_as_configured(server, s, c.node, trace, 60, c.extra));
    // Four tasks of 5 s: the piranha is there long enough to be looked at.
    Process job(job_argv(server, {"sleepy_job", "4", "5000"}));
    // The start event is written once the piranha runs at its priority.
    REQUIRE(wait_until([&] { return count(events_of(s, c.node), "start") == 1; }, 30s));
    auto kids = children_of(agent.pid());
    REQUIRE(kids.size() == 1);
    auto [nice, policy] = piranha::testing::nice_and_policy(kids[0]);
    if (c.idle) {
      CHECK(nice == 19);
      CHECK(policy == SCHED_IDLE);
      CHECK(agent.err().find("agent's own priority") == std::string::npos);
    } else {
      CHECK(std::pair(nice, policy) == piranha::testing::nice_and_policy(agent.pid()));
      CHECK(policy != SCHED_IDLE);
      CHECK(agent.err().find("piranhas at the agent's own priority") != std::string::npos);
    }
    // The agent's loop takes short slices, so that it acts on an owner's
    // return at once; its piranhas start with the kernel's default.
    if (piranha::testing::kernel_keeps_slices()) {
      CHECK(piranha::testing::slice_of(agent.pid()) == 100'000);
      if (!c.idle) CHECK(piranha::testing::slice_of(kids[0]) == piranha::testing::slice_of(0));
    }
  }
}

TEST_CASE("agent: a job requiring a label runs only on the labelled node, and one no node satisfies waits") {
  ServerProcess server;
  Scratch s;
  ts::Client c(server.endpoint());
  auto trace = s.write("t.avail.csv", trace_text("gpu1,0,1000\nplain1,0,1000\n"));
  Process gpu(agent_argv(server, s, "gpu1", trace, 60, {"--label", "gpu", "--label", "fast-disk"}));
  Process plain(agent_argv(server, s, "plain1", trace, 60, {"--label", "fast-disk"}));
  // Each agent publishes its node's attributes when it registers.
  REQUIRE(wait_until([&] { return sys::list_node_attrs(c).size() == 2; }));
  for (const auto& a : sys::list_node_attrs(c)) {
    INFO(a.node);
    CHECK(a.cores >= 1);
    CHECK(a.memory > 0);
    CHECK_FALSE(a.arch.empty());
    CHECK(a.labels == (a.node == "gpu1" ? std::vector<std::string>{"fast-disk", "gpu"}
                                        : std::vector<std::string>{"fast-disk"}));
  }
  // `piranha nodes` shows what each node offers.
  Process* listing = nullptr;
  REQUIRE(run_cli(server, {"nodes"}, &listing) == 0);
  CHECK(contains(listing->out(), "OFFERS"));
  CHECK(contains(listing->out(), " fast-disk,gpu "));
  REQUIRE(run_cli(server, {"nodes", "--json"}, &listing) == 0);
  for (const auto& n : Json::parse(listing->out())) {
    INFO(n["node"]);
    CHECK(n["attributes"]["labels"] ==
          (n["node"] == "gpu1" ? Json::array({"fast-disk", "gpu"}) : Json::array({"fast-disk"})));
    CHECK(n["attributes"]["memory"].get<std::int64_t>() > 0);
  }

  auto submit = [&](const std::string& require, std::vector<std::string> job) {
    std::vector<std::string> argv = {bin("piranha"), "submit", "--server", server.endpoint(),
                                     "--require",    require,  bin(job[0])};
    argv.insert(argv.end(), job.begin() + 1, job.end());
    return std::make_unique<Process>(argv);
  };
  // Bad requirement text: the project's bad input, with the clause and column; nothing registered.
  auto bad = submit("label=gpu,memory>=8X", {"sleepy_job", "1", "1"});
  CHECK(bad->wait(30s) == 2);
  CHECK(
      contains(bad->err(),
               "piranha submit: --require: column 20, in clause 2 \"memory>=8X\": size \"8X\" has an unknown "
               "suffix 'X' (expected K, M or G)"));
  CHECK(sys::list_jobs(c).empty());

  // Job 1 needs the gpu: both nodes are idle, only gpu1 runs it (the native policy: no NPS).
  auto job1 = submit(" label = gpu ", {"sleepy_job", "30", "20"});
  REQUIRE(job1->wait(60s) == 0);
  CHECK(contains(job1->out(), "result OK"));
  CHECK(contains(job1->err(), "job 1 submitted: sleepy_job (requires label=gpu)"));
  std::int64_t on_gpu = 0;
  for (const auto& w : sys::list_jobwork(c, 1)) {
    CHECK(w.node == "gpu1");
    on_gpu += w.tasks;
  }
  CHECK(on_gpu == 30);
  CHECK(count(events_of(s, "gpu1"), "start", {{"job", 1}}) >= 1);
  CHECK(count(events_of(s, "plain1"), "start", {{"job", 1}}) == 0);

  // Job 2 needs a tpu no node has: it waits, and `piranha jobs` says why.
  auto job2 = submit("label=tpu", {"sleepy_job", "3", "10"});
  Process* out = nullptr;
  // Marked running by its feeder: its record is not rewritten again, so no
  // listing falls in the moment it is absent (taken to be rewritten).
  REQUIRE(wait_until([&] {
    const auto j = job_record(c, 2);
    return j && j->state == sys::JobState::Running;
  }));
  CHECK(run_cli(server, {"jobs"}, &out) == 0);
  CHECK(contains(out->out(), "requires label=tpu; waiting: no node has label=tpu"));
  CHECK(run_cli(server, {"jobs", "--json"}, &out) == 0);
  auto listed = Json::parse(out->out());
  REQUIRE(listed.size() == 1);
  CHECK(listed[0]["requirement"] == "label=tpu");
  CHECK(listed[0]["waiting"] == "no node has label=tpu");
  // Neither agent starts it: job 3, submitted after it and open to any node,
  // runs on both (so both have seen job 2) and ends, and job 2 still waits.
  // Five seconds of work: long enough that both nodes start it before it ends.
  auto job3 = submit("", {"sleepy_job", "200", "25"});
  REQUIRE(job3->wait(60s) == 0);
  CHECK(count(events_of(s, "gpu1"), "start", {{"job", 3}}) >= 1);
  CHECK(count(events_of(s, "plain1"), "start", {{"job", 3}}) >= 1);
  CHECK(sys::is_live(job_record(c, 2)->state));  // running: its feeder is, waiting for results
  CHECK(sys::list_jobwork(c, 2).empty());
  CHECK(count(events_of(s, "gpu1"), "start", {{"job", 2}}) == 0);
  CHECK(count(events_of(s, "plain1"), "start", {{"job", 2}}) == 0);
  CHECK(run_cli(server, {"cancel", "2"}) == 0);
  CHECK(job2->wait(30s).has_value());
  for (Process* a : {&gpu, &plain}) {
    a->signal(SIGTERM);
    CHECK(a->wait() == 0);
  }
}
