// A pool that survives faults, tried as people run it: a durable server,
// agents replaying availability traces, and jobs, with real faults injected
// (SIGKILL and restart of the server, SIGSTOP of the server and of a feeder,
// a network namespace cut off),
// and the server's memory after a million completed tasks.
//
// Every case bounds its own run time, stops only the processes it started
// (by PID, through Process) and removes the namespace it made. The figures
// printed with MESSAGE (time from the end of the fault to the job making
// progress again, retreat latency) are the ones in docs/performance-history.md.
#include <doctest/doctest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

#include "harness.h"
#include "piranha/runtime/sysspace.h"

namespace piranha::it {
namespace {

namespace sys = piranha::sys;

std::string always_available(const Scratch& s, const std::string& node) {
  return s.write(node + ".avail.csv",
                 "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\n"
                 "node,start,end\n" +
                     node + ",0,100000\n");
}

// `piranha agent` for `node`, its piranhas at the agent's own priority: at
// SCHED_IDLE (the default) a machine whose every core is busy gives them next
// to nothing, as it should, and the job would not end.
std::vector<std::string> agent_argv(const std::string& endpoint, const Scratch& s, const std::string& node,
                                    const std::string& trace) {
  return {bin("piranha"),
          "agent",
          "--node",
          node,
          "--server",
          endpoint,
          "--trace",
          trace,
          "--time-scale",
          "60",
          "--events",
          s.dir + "/" + node + ".events",
          "--piranha-output",
          s.dir + "/" + node + ".piranhas",
          "--piranha-priority",
          "normal"};
}

std::vector<std::string> job_argv(const std::string& endpoint, std::vector<std::string> job) {
  std::vector<std::string> argv = {"/usr/bin/env", "PIRANHA_SERVER=" + endpoint, bin(job[0])};
  argv.insert(argv.end(), job.begin() + 1, job.end());
  return argv;
}

// Tasks done of job `id` as its feeder last published (-1 when unknown).
std::int64_t tasks_done(const std::string& endpoint, std::int64_t id) {
  try {
    ts::Client c(endpoint, quick_client_options());
    for (const auto& st : sys::list_jobstats(c))
      if (st.id == id) return st.tasks_done;
  } catch (const ts::TupleSpaceError&) {
  }
  return -1;
}

// Milliseconds from now until job `id` has done more than `than` tasks.
double ms_until_progress(const std::string& endpoint, std::int64_t id, std::int64_t than) {
  auto from = Clock::now();
  REQUIRE(wait_until([&] { return tasks_done(endpoint, id) > than; }, 60s));
  return ms_since(from);
}

void check_correct(Process& job, std::chrono::milliseconds patience) {
  auto rc = job.wait(patience);
  INFO("job stdout: ", job.out(), "\njob stderr: ", job.err());
  REQUIRE(rc.has_value());
  CHECK(*rc == 0);
  CHECK(job.out().find("result OK") != std::string::npos);
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// Runs a command given as words; its exit status.
int sh(const std::vector<std::string>& words) {
  Process p(words);
  auto rc = p.wait(20s);
  if (!rc || *rc != 0) MESSAGE("command failed: ", p.command(), "\n", p.err());
  return rc.value_or(-1);
}

// A network namespace joined to this one by a veth pair: the host side
// 10.213.N.1, the namespace side 10.213.N.2. Removed with everything in it.
class Namespace {
 public:
  Namespace() {
    int n = static_cast<int>(::getpid() % 200) + 20;
    name = "pft" + std::to_string(::getpid());
    host_if_ = "pfh" + std::to_string(::getpid());
    std::string ns_if = "pfn" + std::to_string(::getpid());
    host_ip = "10.213." + std::to_string(n) + ".1";
    ok = sh({"/usr/sbin/ip", "netns", "add", name}) == 0 &&
         sh({"/usr/sbin/ip", "link", "add", host_if_, "type", "veth", "peer", "name", ns_if}) == 0 &&
         sh({"/usr/sbin/ip", "link", "set", ns_if, "netns", name}) == 0 &&
         sh({"/usr/sbin/ip", "addr", "add", host_ip + "/24", "dev", host_if_}) == 0 &&
         sh({"/usr/sbin/ip", "link", "set", host_if_, "up"}) == 0 &&
         sh({"/usr/sbin/ip", "-n", name, "addr", "add", "10.213." + std::to_string(n) + ".2/24", "dev",
             ns_if}) == 0 &&
         sh({"/usr/sbin/ip", "-n", name, "link", "set", ns_if, "up"}) == 0 &&
         sh({"/usr/sbin/ip", "-n", name, "link", "set", "lo", "up"}) == 0;
  }
  ~Namespace() {
    Process del({"/usr/sbin/ip", "netns", "del", name});
    del.wait(20s);
    Process link({"/usr/sbin/ip", "link", "del", host_if_});
    link.wait(20s);
  }
  // Cuts the link (true) or restores it.
  bool cut(bool down) { return sh({"/usr/sbin/ip", "link", "set", host_if_, down ? "down" : "up"}) == 0; }
  std::vector<std::string> exec(std::vector<std::string> argv) const {
    argv.insert(argv.begin(), {"/usr/sbin/ip", "netns", "exec", name});
    return argv;
  }

  bool ok = false;
  std::string name, host_ip;

 private:
  std::string host_if_;
};

}  // namespace

TEST_CASE(
    "pool: a durable server killed with SIGKILL and restarted during a submitted cmatrix loses and repeats "
    "nothing") {
  Scratch s;
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  const std::vector<std::string> flags = {"--bind", endpoint, "--data", s.dir + "/data"};
  auto server = std::make_unique<ServerProcess>(flags);
  Process n1(agent_argv(endpoint, s, "n1", always_available(s, "n1")));
  Process n2(agent_argv(endpoint, s, "n2", always_available(s, "n2")));
  // 160,000 one-element tasks: a few seconds of short tasks on two agents,
  // so the kill lands among completions in flight. Through `piranha submit`,
  // as people run jobs: it must ride out the restart too.
  Process job({bin("piranha"), "submit", "--server", endpoint, bin("cmatrix"), "400"});
  REQUIRE_MESSAGE(wait_until([&] { return tasks_done(endpoint, 1) >= 20'000; }, 60s), job.err(), n1.err());

  server->process().signal(SIGKILL);
  REQUIRE(server->process().wait() == 128 + SIGKILL);
  auto killed = Clock::now();
  server = std::make_unique<ServerProcess>(flags);
  double restart_ms = ms_since(killed);
  std::int64_t at_restart = tasks_done(endpoint, 1);
  double progress_ms = ms_until_progress(endpoint, 1, at_restart);
  MESSAGE("SIGKILL + restart with --data during cmatrix 400 on two agents: restarted in ", restart_ms,
          " ms; the job made progress again ", progress_ms, " ms after the restart (", at_restart,
          " tasks recovered as done)");
  CHECK(progress_ms < 5000);
  check_correct(job, 120s);
  CHECK(job.out().find(" 0 duplicate results") != std::string::npos);
  CHECK(n1.err().find("lost the tuple-space server") != std::string::npos);
}

// This test once stalled in 2 runs of 6: a piranha's leased batch, sent to
// the frozen server on a connection the piranha then gave up, was read after
// SIGCONT and held for a session no close would end. The server now ignores
// requests of a connection whose close it has seen (client_fault_test has
// the small case).
TEST_CASE("pool: a server stopped with SIGSTOP for 10 s during cmatrix resumes it, with the right result") {
  Scratch s;
  ServerProcess server;
  Process n1(agent_argv(server.endpoint(), s, "n1", always_available(s, "n1")));
  Process n2(agent_argv(server.endpoint(), s, "n2", always_available(s, "n2")));
  Process job(job_argv(server.endpoint(), {"cmatrix", "400"}));
  REQUIRE(wait_until([&] { return tasks_done(server.endpoint(), 1) >= 20'000; }, 60s));

  server.process().signal(SIGSTOP);
  std::this_thread::sleep_for(10s);
  server.process().signal(SIGCONT);
  std::int64_t at_resume = tasks_done(server.endpoint(), 1);
  double progress_ms = ms_until_progress(server.endpoint(), 1, at_resume);
  MESSAGE("SIGSTOP 10 s during cmatrix 400 on two agents: progress again ", progress_ms, " ms after SIGCONT");
  CHECK(progress_ms < 5000);
  check_correct(job, 120s);
  CHECK(job.out().find(" 0 duplicate results") != std::string::npos);
  CHECK(job.running() == false);
  CHECK(n1.running());  // the agents carry on
  CHECK(n2.running());
}

// "Took task" lines the agents' piranhas wrote so far: one each time a
// take of theirs was answered.
std::size_t tasks_taken(const Scratch& s) {
  std::size_t n = 0;
  for (const char* node : {"n1", "n2"}) {
    std::string text = s.read(std::string(node) + ".piranhas");
    for (auto at = text.find("took task"); at != std::string::npos; at = text.find("took task", at + 1)) ++n;
  }
  return n;
}

// The server's freeze is as long as a client's request deadline (30 s,
// counted from the 5 s heartbeat timeout), the feeder's longer than the
// feeder silence after which agents once dropped a job (30 s): the feeder
// gave up ("could not record its end"), leaving a job `running` that nobody
// ran, agents retreated a frozen feeder's piranhas, and work resumed about
// 10 s after the freeze. Both fit in the job's patience (feeder_silence.h,
// 300 s): the job goes on. The times from SIGCONT to the next task taken and
// to the feeder's next published progress are printed (docs/faults.md has
// them); the bounds checked are generous, for a loaded machine.
TEST_CASE(
    "pool: a server frozen for 30 s, then a feeder for 32 s, mid-job: the job goes on, work resumes, and it "
    "ends done") {
  Scratch s;
  ServerProcess server;
  const std::string& ep = server.endpoint();
  Process n1(agent_argv(ep, s, "n1", always_available(s, "n1")));
  Process n2(agent_argv(ep, s, "n2", always_available(s, "n2")));
  // 800 tasks of 100 ms: 80 s of work for the agents' piranhas (20 to 40 s
  // on two agents), so that work is left after the server's freeze and
  // into the feeder's.
  Process job(job_argv(ep, {"sleepy_job", "800", "100"}));
  REQUIRE_MESSAGE(wait_until([&] { return tasks_done(ep, 1) >= 20; }, 60s), job.err(), n1.err());

  server.process().signal(SIGSTOP);
  std::this_thread::sleep_for(30s);  // the fault's length
  const std::size_t taken_before = tasks_taken(s);
  server.process().signal(SIGCONT);
  auto resumed = Clock::now();
  std::int64_t at_resume = tasks_done(ep, 1);
  REQUIRE_MESSAGE(wait_until([&] { return tasks_taken(s) > taken_before; }, 30s), n1.err(), n2.err());
  double next_task_ms = ms_since(resumed);
  double progress_ms = ms_until_progress(ep, 1, at_resume);
  // The agents' uplinks back off while the server is away (up to 16 s, spread
  // over the pool): they find it later than the piranhas, which need them not.
  CHECK_MESSAGE(
      wait_until([&] { return contains(n1.err(), "answers again") && contains(n2.err(), "answers again"); },
                 60s),
      n1.err(), n2.err());
  double agents_ms = ms_since(resumed);
  MESSAGE("server SIGSTOP 30 s during sleepy_job 800 100 on two agents: the next task taken ", next_task_ms,
          " ms after SIGCONT, progress published again ", progress_ms,
          " ms after that; both agents had the server back ", agents_ms, " ms after SIGCONT");
  REQUIRE(job.running());  // the feeder waited: its patience is 300 s

  // The feeder frozen: its piranhas work on, their results waiting in the
  // job's space for it.
  ts::Client c(ep, quick_client_options());
  auto results = [&] {
    return c
        .rd_many(
            "job.1",
            ts::Template({ts::Field::of(ts::Value(std::string("result"))), ts::Field::formal(ts::Type::Int)}),
            100'000)
        .size();
  };
  job.signal(SIGSTOP);
  auto frozen = Clock::now();
  std::this_thread::sleep_for(5s);
  const std::size_t early = results();
  std::this_thread::sleep_until(frozen + 30s);
  const std::size_t late = results();
  MESSAGE("feeder SIGSTOP 32 s: results waiting for it ", early, " after 5 s, ", late, " after 30 s");
  CHECK(late > early);  // the piranhas were not retreated when the feeder fell silent
  std::this_thread::sleep_until(frozen + 32s);
  at_resume = tasks_done(ep, 1);
  job.signal(SIGCONT);
  progress_ms = ms_until_progress(ep, 1, at_resume);
  MESSAGE("feeder SIGSTOP 32 s: progress published again ", progress_ms, " ms after SIGCONT");
  check_correct(job, 60s);
  auto t = c.rd(sys::kSpace, sys::job_template(1), 0ms);
  REQUIRE(t);
  CHECK(sys::JobRecord::from_tuple(*t)->state == sys::JobState::Done);
  for (Process* agent : {&n1, &n2}) {
    INFO("agent: ", agent->err());
    CHECK(agent->err().find("recorded failed") == std::string::npos);
    CHECK(agent->err().find("retreating job") == std::string::npos);
    CHECK(agent->err().find("retreated (") == std::string::npos);
  }
}

TEST_CASE("pool: an agent cut off from the server for 20 s still retreats at once, then rejoins the job") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: network namespaces need root");
    return;
  }
  Namespace ns;
  REQUIRE_MESSAGE(ns.ok, "could not set up network namespace ", ns.name);
  Scratch s;
  // Reachable from the namespace: not loopback, so the server must be told.
  ServerProcess server({"--bind", "tcp://" + ns.host_ip + ":*", "--insecure"});
  const std::string& ep = server.endpoint();
  // n1, in the namespace: available, then its owner returns at 6 s (trace
  // steps of one second) while the network is cut, and leaves at 16 s.
  auto n1_trace = s.write("n1.avail.csv",
                          "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\n"
                          "node,start,end\nn1,0,6\nn1,16,100000\n");
  Process n1(ns.exec(agent_argv(ep, s, "n1", n1_trace)));
  Process n2(agent_argv(ep, s, "n2", always_available(s, "n2")));
  // 160 tasks of 200 ms: about 16 s on two agents, longer with one.
  Process job(job_argv(ep, {"sleepy_job", "160", "200"}));
  // Cut once n1's piranha is at work (connected, with a task).
  REQUIRE_MESSAGE(
      wait_until([&] { return s.read("n1.piranhas").find("took task") != std::string::npos; }, 30s),
      n1.err());

  ts::Client c(ep, quick_client_options());
  // n1's availability period is still open: no record of it yet.
  REQUIRE_FALSE(c.rd(sys::kSpace, sys::ap_template("n1"), 0ms));
  REQUIRE(ns.cut(true));
  auto cut_at = Clock::now();
  // The owner returns (6 s into the trace) while the server is unreachable.
  REQUIRE_MESSAGE(
      wait_until([&] { return s.read("n1.events").find("\"event\":\"retreat\"") != std::string::npos; }, 30s),
      n1.err(), "\npiranhas: ", s.read("n1.piranhas"));
  std::this_thread::sleep_until(cut_at + 20s);
  REQUIRE(ns.cut(false));
  auto restored = Clock::now();
  REQUIRE_MESSAGE(wait_until(
                      [&] {
                        return n1.err().find("answers again") != std::string::npos ||
                               n1.err().find("reconnected") != std::string::npos;
                      },
                      30s),
                  n1.err());
  double back_ms = ms_since(restored);
  // The period that ended during the cut is written once the server answers.
  CHECK_MESSAGE(wait_until([&] { return c.rd(sys::kSpace, sys::ap_template("n1"), 0ms).has_value(); }, 30s),
                n1.err());
  check_correct(job, 120s);

  std::string events = s.read("n1.events");
  std::smatch m;
  REQUIRE(std::regex_search(
      events, m, std::regex("\"event\":\"retreat\".*\"latency_ms\":([0-9.]+),\"killed\":(true|false)")));
  double latency = std::stod(m[1]);
  MESSAGE("n1 cut off for 20 s: its owner's return retreated the piranha in ", latency,
          " ms; the agent had the server back ", back_ms, " ms after the link came up");
  CHECK(m[2] == "false");  // it left by itself, not killed after the grace period
  CHECK(latency < 1000);
  CHECK(n1.err().find("lost the tuple-space server") != std::string::npos);
  CHECK(n1.running());
  // SIGTERM stops the agent within its grace period (2 s), even with the
  // server cut off again.
  REQUIRE(ns.cut(true));
  std::this_thread::sleep_for(500ms);
  n1.signal(SIGTERM);
  auto stop_from = Clock::now();
  CHECK(n1.wait(10s).has_value());
  double stop_ms = ms_since(stop_from);
  MESSAGE("n1 stopped by SIGTERM with the server cut off in ", stop_ms, " ms");
  CHECK(stop_ms < 3000);
}

TEST_CASE(
    "pool: the server's memory after a million completed tasks is what it holds, not what it has seen") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  auto space = c.space("farm");
  auto farm = [&](int tasks) {
    constexpr int kBatch = 1000;
    std::vector<ts::Tuple> batch;
    for (int i = 0; i < kBatch; ++i) batch.push_back(ts::Tuple::of("task", i));
    for (int done = 0; done < tasks; done += kBatch) {
      space.out_many(batch);
      // Under the default lease of a piranha (600 s): the leases' deadlines
      // are all in the future when the tasks complete.
      auto taken = space.take_many(kBatch, 600s, "task", ts::formal<std::int64_t>);
      REQUIRE(taken.size() == kBatch);
      for (const auto& t : taken) c.complete_posted(t.lease, "farm", {});
      c.flush();
    }
  };
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer the resident size is not checked (below), and a
  // million tasks take two minutes: a tenth of them still runs every path.
  constexpr int kTasks = 100'000;
#else
  constexpr int kTasks = 1'000'000;
#endif
  farm(100'000);  // warms the allocator up
  long before = rss_kib(server.process().pid());
  auto started = Clock::now();
  farm(kTasks);
  long after = rss_kib(server.process().pid());
  MESSAGE("server RSS ", before, " KiB after 100,000 tasks, ", after, " KiB after ", kTasks, " more (",
          ms_since(started), " ms for those)");
  CHECK(stats_of(c, "farm").tuples == 0);
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in quarantine (256 MiB): the
  // resident size says nothing here. The store's own count is checked in
  // store_test ("ended leases and served waiters leave no deadline behind").
  MESSAGE("RSS not checked: the server runs under AddressSanitizer");
#else
  // At 80 bytes per completed task (the deadline index before it was
  // bounded) the million would add about 78 MiB.
  CHECK(after - before < 8 * 1024);
#endif
}

}  // namespace piranha::it
