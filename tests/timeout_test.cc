// Bounded waits against a server process: in_for and rd_for give up no
// earlier than their timeout, a tuple that arrives in time is returned, and a
// request that timed out leaves nothing parked behind.
//
// Only lower bounds are tight. Upper bounds are many times the timeout: they
// catch a server that forgets a deadline, not a slow machine.
#include <doctest/doctest.h>

#include <future>

#include "harness.h"

namespace piranha::it {
namespace {

// A generous ceiling for a wait of `timeout`.
std::chrono::milliseconds ceiling(std::chrono::milliseconds timeout) {
  return timeout * 10 + 5s;
}

}  // namespace

TEST_CASE("in_for and rd_for return nullopt no earlier than the timeout") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  ts::Space jobs = c.space("jobs");
  jobs.out("task", "a string, so ?int never matches");

  for (auto timeout : {50ms, 300ms}) {
    auto start = Clock::now();
    auto got = jobs.in_for(timeout, "task", ts::formal<std::int64_t>);
    auto took = Clock::now() - start;
    INFO("in_for(", timeout.count(), " ms) returned after ", ms_since(start), " ms");
    CHECK_FALSE(got.has_value());
    CHECK(took >= timeout);
    CHECK(took < ceiling(timeout));

    start = Clock::now();
    got = jobs.rd_for(timeout, "task", ts::formal<std::int64_t>);
    took = Clock::now() - start;
    INFO("rd_for(", timeout.count(), " ms) returned after ", ms_since(start), " ms");
    CHECK_FALSE(got.has_value());
    CHECK(took >= timeout);
    CHECK(took < ceiling(timeout));
  }
  CHECK(stats_of(c, "jobs").waiters == 0);
}

TEST_CASE("short timeouts are never cut short while the server is busy") {
  // Many short waits while another client keeps the server's loop turning, so
  // that a deadline rounded the wrong way (the server keeps time in whole
  // milliseconds) shows up on every run rather than once in a while.
  ServerProcess server;
  BackgroundTraffic traffic(server.endpoint());
  ts::Client c(server.endpoint());
  ts::Space jobs = c.space("jobs");
  int early = 0;
  double shortest = 1e9;
  for (int i = 0; i < 40; ++i) {
    auto start = Clock::now();
    auto got = (i % 2 ? jobs.rd_for(10ms, "none", ts::formal<std::int64_t>)
                      : jobs.in_for(10ms, "none", ts::formal<std::int64_t>));
    double took = ms_since(start);
    REQUIRE_FALSE(got.has_value());
    shortest = std::min(shortest, took);
    if (took < 10.0) ++early;
  }
  INFO("shortest wait for a 10 ms timeout: ", shortest, " ms; ", traffic.requests(), " background requests");
  CHECK(early == 0);
}

TEST_CASE("a timeout of zero answers at once") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  ts::Space jobs = c.space("jobs");
  CHECK_FALSE(jobs.inp("task", ts::formal<std::int64_t>).has_value());
  CHECK_FALSE(jobs.rdp("task", ts::formal<std::int64_t>).has_value());
  CHECK(stats_of(c, "jobs").waiters == 0);
}

TEST_CASE("a tuple written by another process before the timeout is returned") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  Process writer(peer_argv(server.endpoint(), {"out", "jobs", "42", "200"}));
  // Returned when it is written, not at the timeout: the bound is a fraction of it.
  auto got = std::async(std::launch::async,
                        [&] { return c.space("jobs").in_for(60s, "task", ts::formal<std::int64_t>); });
  REQUIRE_MESSAGE(
      got.wait_for(20s) == std::future_status::ready,
      "in_for(60 s) still waiting after 20 s, the tuple due after 0.2 s; writer stderr: ", writer.err());
  auto tuple = got.get();
  INFO("writer stderr: ", writer.err());
  REQUIRE(tuple.has_value());
  CHECK(*tuple == ts::Tuple::of("task", 42));
  CHECK(writer.wait() == 0);
}

TEST_CASE("a request that timed out does not take a later tuple") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  ts::Space jobs = c.space("jobs");
  REQUIRE_FALSE(jobs.in_for(100ms, "task", ts::formal<std::int64_t>).has_value());
  CHECK(stats_of(c, "jobs").waiters == 0);

  ts::Client other(server.endpoint());
  other.space("jobs").out("task", 1);
  CHECK(stats_of(c, "jobs").tuples == 1);
  CHECK(jobs.inp("task", ts::formal<std::int64_t>) == ts::Tuple::of("task", 1));
}

}  // namespace piranha::it
