// The swarm at 200 nodes, as a functional test of what the scale benchmark
// relies on (docs/scale.md): bench/swarm.sh against a real server and NPS,
// with two real agents running real spin piranhas beside the simulated
// nodes. Every node registers, nodes obey scheduler 0's decisions, one job
// finishes with each task done exactly once (spin's feeder checks it and
// exits non-zero otherwise), no live node is ever seen stale, and every node
// falls back to its native policy once the NPS is killed (SIGKILL). No speed
// is asserted: the figures are the benchmark's.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

TEST_CASE("swarm: 200 simulated nodes register, obey, finish a job exactly once and fall back") {
  // `timeout` bounds the run; the script stops only the processes it started.
  const std::string cmd = std::string("timeout 400 ") + PIRANHA_SOURCE_DIR +
                          "/bench/swarm.sh --nodes 200 --idle 3 --settle 2 --port 7393 --json --bin " +
                          PIRANHA_BIN_DIR;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = ::pclose(p);
  INFO("command: " << cmd);
  INFO("stdout: " << out);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  // Not const: a figure missing from a failed run reads as null rather than
  // being undefined behaviour (nlohmann's const operator[]).
  auto report = nlohmann::json::parse(out);
  REQUIRE(report["runs"].size() == 1);
  auto& r = report["runs"][0];
  CHECK(r["nodes"] == 200);
  CHECK(r["registered"] == 200);
  CHECK(r["obeyed"].get<int>() >= 100);
  CHECK(r["job_ok"] == true);
  CHECK(r["false_stale"] == 0);
  CHECK(r["stale_checks"].get<int>() >= 1);
  REQUIRE(r["fallback_s"].is_number());
  CHECK(r["fallback_s"].get<double>() <= 30);
  CHECK(r["ok"] == true);
  for (const char* k : {"nps_tick_ms_p50", "nps_tick_ms_p99", "obey_latency_ms_p99", "server_cpu_share",
                        "background_cpu_share", "server_rss_bytes", "job_spread_s"})
    CHECK_MESSAGE(r[k].is_number(), k);
  // A decision is learnt of before it is obeyed (and after it is made).
  REQUIRE(r["assignment_seen_ms_p99"].is_number());
  CHECK(r["assignment_seen_ms_p50"].get<double>() <= r["obey_latency_ms_p50"].get<double>());
  CHECK(r["assignment_seen_ms_p99"].get<double>() <= r["obey_latency_ms_p99"].get<double>());
  CHECK(r["assignment_seen_ms_p99"].get<double>() > 0);
}
