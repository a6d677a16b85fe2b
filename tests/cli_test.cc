// The piranha program as a user runs it: the demo (embedded and against a
// server process), help, and what a mistyped option produces.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>

#include "harness.h"

namespace piranha::it {
namespace {

// Runs the piranha program to completion; returns its exit code.
int run_piranha(Process& p) {
  auto rc = p.wait(60s);
  INFO(p.command(), "\nstdout:\n", p.out(), "\nstderr:\n", p.err());
  REQUIRE_MESSAGE(rc.has_value(), "did not finish");
  return *rc;
}

}  // namespace

TEST_CASE("piranha ts demo computes with an embedded space and reports a match") {
  Process demo({bin("piranha"), "ts", "demo"});
  CHECK(run_piranha(demo) == 0);
  INFO("stdout:\n", demo.out());
  CHECK(demo.out().find("(match)") != std::string::npos);
  CHECK(demo.out().find("MISMATCH") == std::string::npos);
}

TEST_CASE("piranha ts demo --connect runs its workers against a server process") {
  ServerProcess server;
  Process demo({bin("piranha"), "ts", "demo", "--connect", server.endpoint(), "--limit", "300000", "--tasks",
                "60", "--workers", "3"});
  CHECK(run_piranha(demo) == 0);
  INFO("stdout:\n", demo.out(), "\nserver log:\n", server.log());
  CHECK(demo.out().find("(match)") != std::string::npos);
  CHECK(demo.out().find(server.endpoint()) != std::string::npos);

  // The demo left no task, result, lease or parked request behind.
  ts::Client c(server.endpoint());
  auto s = stats_of(c, "demo.primes");
  CHECK(s.tuples == 0);
  CHECK(s.leases == 0);
  CHECK(s.waiters == 0);
}

TEST_CASE("piranha --version prints the project's version, and --help names it") {
  Process version({bin("piranha"), "--version"});
  CHECK(run_piranha(version) == 0);
  CHECK(version.out() == "piranha " PIRANHA_VERSION "\n");
  Process help({bin("piranha"), "--help"});
  CHECK(run_piranha(help) == 0);
  CHECK(help.out().rfind("Piranha " PIRANHA_VERSION ": ", 0) == 0);
  CHECK(help.out().find("--version") != std::string::npos);
}

TEST_CASE("piranha --help and piranha ts serve --help exit 0 and describe the options") {
  Process top({bin("piranha"), "--help"});
  CHECK(run_piranha(top) == 0);
  CHECK(top.out().find("demo") != std::string::npos);
  CHECK(top.out().find("ts") != std::string::npos);

  Process serve({bin("piranha"), "ts", "serve", "--help"});
  CHECK(run_piranha(serve) == 0);
  for (const char* option : {"--bind", "--max-message", "--heartbeat-ms", "--heartbeat-timeout-ms",
                             "--io-threads", "--quiet", "--key", "--auth", "--insecure"}) {
    INFO(option);
    CHECK(serve.out().find(option) != std::string::npos);
  }
}

TEST_CASE("the scheduler commands' --help gives numeric options as INT or FLOAT with their range") {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> commands = {
      {{"sim", "piranha"},
       {"--seeds INT=20", "--interarrival FLOAT=60", "--period INT=1", "--window INT=10", "--start INT=0",
        "--max-steps INT=0", "--cold-start FLOAT=0", "--threads INT=0"}},
      {{"nps", "simulate"}, {"--seeds INT=20", "--period INT=1", "--cold-start FLOAT=0"}},
      {{"predict"}, {"--window INT=10", "--tolerance FLOAT=0.1", "--stride INT=0"}},
      {{"trace", "synth"}, {"--nodes INT=15", "--days INT=21", "--seed INT=1"}},
  };
  for (const auto& [words, shown] : commands) {
    std::vector<std::string> argv = {bin("piranha")};
    argv.insert(argv.end(), words.begin(), words.end());
    argv.push_back("--help");
    Process help(argv);
    REQUIRE(run_piranha(help) == 0);
    for (const auto& option : shown) {
      INFO(words.front(), ": ", option);
      CHECK(help.out().find(option) != std::string::npos);
    }
  }
  Process sim({bin("piranha"), "sim", "piranha", "--help"});
  REQUIRE(run_piranha(sim) == 0);
  CHECK(sim.out().find("random workloads, seeds 0..N-1 (>= 1)") != std::string::npos);
  CHECK(sim.out().find("mean minutes between arrivals (> 0)") != std::string::npos);
}

TEST_CASE("the simulators' tables give their units and say what their abbreviations mean") {
  const std::string data = std::string(PIRANHA_SOURCE_DIR) + "/data/";
  Process rigid({bin("piranha"), "sim", "rigid", "--swf", data + "lublin_256.swf", "--algorithms", "FIFO"});
  REQUIRE(run_piranha(rigid) == 0);
  // FIFO's makespan on this workload is 12,482,549 s.
  CHECK(rigid.out().find("144.5 d") != std::string::npos);
  for (const char* legend :
       {"\nbsld: mean bounded slowdown", "\nutil: utilization", "\neff: effective utilization"}) {
    INFO(legend);
    CHECK(rigid.out().find(legend) != std::string::npos);
  }
  Process sim({bin("piranha"), "sim", "piranha", "--trace", data + "ws15-3w.avail.csv", "--seeds", "1",
               "--jobs", "3", "--strategies", "TSK"});
  REQUIRE(run_piranha(sim) == 0);
  CHECK(sim.out().find("mean turnaround (steps)") != std::string::npos);
  CHECK(sim.out().find("steps: the trace's steps (60 s each)") != std::string::npos);
}

TEST_CASE("an unknown option exits nonzero with a message naming it") {
  Process serve({bin("piranha"), "ts", "serve", "--bind", "tcp://127.0.0.1:*", "--no-such-option"});
  CHECK(run_piranha(serve) != 0);
  CHECK(serve.err().find("--no-such-option") != std::string::npos);
  CHECK(serve.err().find("serving on") == std::string::npos);  // it never started

  Process demo({bin("piranha"), "ts", "demo", "--no-such-option"});
  CHECK(run_piranha(demo) != 0);
  CHECK(demo.err().find("--no-such-option") != std::string::npos);

  Process top({bin("piranha"), "--no-such-option"});
  CHECK(run_piranha(top) != 0);
  CHECK_FALSE(top.err().empty());

  Process bad_value({bin("piranha"), "ts", "serve", "--max-message", "10"});
  CHECK(run_piranha(bad_value) != 0);
  CHECK(bad_value.err().find("--max-message") != std::string::npos);

  // Numeric options are named in their errors.
  for (auto argv : std::vector<std::vector<std::string>>{{"ts", "serve", "--heartbeat-timeout-ms", "-5"},
                                                         {"ts", "serve", "--heartbeat-ms", "-1"},
                                                         {"ts", "serve", "--io-threads", "0"},
                                                         {"agent", "--cores", "0"},
                                                         {"agent", "--time-scale", "-1"}}) {
    std::string option = argv[argv.size() - 2];
    argv.insert(argv.begin(), bin("piranha"));
    Process p(argv);
    CHECK(run_piranha(p) == 2);
    INFO(p.err());
    CHECK(p.err().rfind(option + ": ", 0) == 0);
  }
}

TEST_CASE(
    "a malformed endpoint is refused at once, naming the option and the problem, wherever it is taken") {
  const std::string wraps = "tcp://127.0.0.1:99999";
  std::vector<std::vector<std::string>> commands = {
      {"jobs", "--server", wraps},      {"ts", "stats", "--connect", wraps},
      {"ts", "serve", "--bind", wraps}, {"ts", "demo", "--connect", wraps},
      {"agent", "--server", wraps},     {"cancel", "--server", wraps, "1"},
      {"nps", "run", "--server", wraps}};
  for (auto argv : commands) {
    argv.insert(argv.begin(), bin("piranha"));
    Process p(argv);
    auto started = Clock::now();
    CHECK(run_piranha(p) == 2);
    INFO(p.command(), "\n", p.err());
    CHECK(p.err().find("port 99999 is out of range (1-65535)") != std::string::npos);
    CHECK(p.err().find(argv[2] == "stats" || argv[2] == "serve" || argv[2] == "demo" ? "--" : "--server") !=
          std::string::npos);
    CHECK(ms_since(started) < 5000);
  }
  // The agent with a malformed endpoint fails at once, and so does any
  // command whose $PIRANHA_SERVER is malformed.
  Process agent({bin("piranha"), "agent", "--server", "garbage"});
  CHECK(run_piranha(agent) == 2);
  CHECK(agent.err().find("'garbage' is not an endpoint") != std::string::npos);
  Process env_agent({"/usr/bin/env", "PIRANHA_SERVER=garbage", bin("piranha"), "agent"});
  CHECK(run_piranha(env_agent) == 2);
  CHECK(env_agent.err().find("'garbage' is not an endpoint") != std::string::npos);
  Process env_nps({"/usr/bin/env", "PIRANHA_SERVER=garbage", bin("piranha"), "nps", "run"});
  CHECK(run_piranha(env_nps) == 2);
  CHECK(env_nps.err().find("'garbage' is not an endpoint") != std::string::npos);
  Process env_jobs({"/usr/bin/env", "PIRANHA_SERVER=tcp://h", bin("piranha"), "jobs"});
  CHECK(run_piranha(env_jobs) == 2);
  CHECK(env_jobs.err().find("$PIRANHA_SERVER") != std::string::npos);
}

TEST_CASE("a bad key file is refused at once, naming the file, the line and the problem") {
  Scratch s;
  const std::string key = s.write("bad.key", "# not a key\nsecret-key: \"nope\"\n");
  REQUIRE(::chmod(key.c_str(), 0600) == 0);
  Process jobs({bin("piranha"), "jobs", "--key", key});
  CHECK(run_piranha(jobs) == 2);
  INFO(jobs.err());
  CHECK(jobs.err().find("--key") != std::string::npos);
  CHECK(jobs.err().find(key + ":2: secret-key is not a key in Z85 text (40 characters)") !=
        std::string::npos);

  Process env_jobs(
      {"/usr/bin/env", "PIRANHA_KEY=" + key, "PIRANHA_SERVER_KEY=" + key, bin("piranha"), "jobs"});
  CHECK(run_piranha(env_jobs) == 2);
  INFO(env_jobs.err());
  CHECK(env_jobs.err().find(key + ":2: secret-key is not a key in Z85 text (40 characters)") !=
        std::string::npos);
}

TEST_CASE("piranha ts stats honours PIRANHA_SERVER") {
  ServerProcess server;
  Process stats({"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), bin("piranha"), "ts", "stats"});
  CHECK(run_piranha(stats) == 0);
  Process none({"/usr/bin/env", "PIRANHA_SERVER=tcp://127.0.0.1:" + std::to_string(free_port()),
                bin("piranha"), "ts", "stats"});
  CHECK(run_piranha(none) == 1);
  CHECK(none.err().find("cannot reach the tuple-space server at") != std::string::npos);
}

TEST_CASE("an agent whose well-formed server does not answer waits with a pause, not a tight loop") {
  Process agent({bin("piranha"), "agent", "--node", "n1", "--server",
                 "tcp://127.0.0.1:" + std::to_string(free_port())});
  CHECK(agent.wait_for_err("waiting for the tuple-space server"));
  std::this_thread::sleep_for(3s);
  CHECK(agent.running());
  // One connection attempt a second: a handful of descriptors, not thousands.
  std::size_t fds = 0;
  for ([[maybe_unused]] const auto& e :
       std::filesystem::directory_iterator("/proc/" + std::to_string(agent.pid()) + "/fd"))
    ++fds;
  CHECK(fds < 64);
  agent.signal(SIGTERM);
  CHECK(agent.wait(10s).has_value());
}

}  // namespace piranha::it
