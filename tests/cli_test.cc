// The piranha program as a user runs it: the demo (embedded and against a
// server process), help, and what a mistyped option produces.
#include <doctest/doctest.h>

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
  Process demo({bin("piranha"), "ts", "demo", "--connect", server.endpoint(), "--limit", "300000", "--tasks", "60",
                "--workers", "3"});
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

TEST_CASE("piranha --help and piranha ts serve --help exit 0 and describe the options") {
  Process top({bin("piranha"), "--help"});
  CHECK(run_piranha(top) == 0);
  CHECK(top.out().find("demo") != std::string::npos);
  CHECK(top.out().find("ts") != std::string::npos);

  Process serve({bin("piranha"), "ts", "serve", "--help"});
  CHECK(run_piranha(serve) == 0);
  for (const char* option :
       {"--bind", "--max-message", "--heartbeat-ms", "--heartbeat-timeout-ms", "--quiet"}) {
    INFO(option);
    CHECK(serve.out().find(option) != std::string::npos);
  }
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
}

}  // namespace piranha::it
