// Leases against a server process: a tuple taken under a lease comes back
// when the lease ends unless it was acked, and renew moves the end.
#include <doctest/doctest.h>

#include "harness.h"

namespace piranha::it {

TEST_CASE("a leased tuple that is not acked returns to the space when the lease ends") {
  ServerProcess server;
  ts::Client worker(server.endpoint()), other(server.endpoint());
  worker.space("jobs").out("task", 1);

  auto start = Clock::now();
  ts::Leased task = worker.space("jobs").take(500ms, "task", ts::formal<std::int64_t>);
  CHECK(task.tuple == ts::Tuple::of("task", 1));
  CHECK(task.lease != 0);
  ts::SpaceStats during = stats_of(other, "jobs");
  CHECK(during.tuples == 0);
  CHECK(during.leases == 1);

  // Another client blocks until the tuple is back.
  auto back = other.space("jobs").in_for(30s, "task", ts::formal<std::int64_t>);
  INFO("returned after ", ms_since(start), " ms");
  REQUIRE(back.has_value());
  CHECK(*back == ts::Tuple::of("task", 1));
  CHECK(Clock::now() - start >= 500ms);
  CHECK(stats_of(other, "jobs").leases == 0);

  // The lease is over: the late worker can neither ack nor renew it.
  CHECK_THROWS_WITH_AS(worker.ack(task.lease), doctest::Contains("unknown_lease"), ts::TupleSpaceError);
  CHECK_THROWS_AS(worker.renew(task.lease, 1s), ts::TupleSpaceError);
}

TEST_CASE("an acked tuple never returns") {
  ServerProcess server;
  ts::Client worker(server.endpoint()), other(server.endpoint());
  ts::Space jobs = worker.space("jobs");
  jobs.out("task", 1);
  jobs.out("task", 2);
  ts::Leased first = jobs.take(200ms, "task", ts::formal<std::int64_t>);
  ts::Leased second = jobs.take(200ms, "task", ts::formal<std::int64_t>);
  jobs.ack(first);
  jobs.ack(second);
  CHECK(stats_of(other, "jobs").leases == 0);

  // Wait well past both leases.
  CHECK_FALSE(other.space("jobs").in_for(1500ms, "task", ts::formal<std::int64_t>).has_value());
  CHECK(stats_of(other, "jobs").tuples == 0);
  // A second ack is an error, not a silent success.
  CHECK_THROWS_WITH_AS(jobs.ack(first), doctest::Contains("unknown_lease"), ts::TupleSpaceError);
}

TEST_CASE("renew extends a lease from the moment of renewal") {
  ServerProcess server;
  ts::Client worker(server.endpoint()), other(server.endpoint());
  worker.space("jobs").out("task", 1);
  ts::Leased task = worker.space("jobs").take(1000ms, "task", ts::formal<std::int64_t>);
  auto renewed_at = Clock::now();
  worker.space("jobs").renew(task, 3000ms);

  // Past the original end (1 s) the tuple is still out.
  CHECK_FALSE(other.space("jobs").in_for(1800ms, "task", ts::formal<std::int64_t>).has_value());
  CHECK(stats_of(other, "jobs").leases == 1);

  // It comes back once the renewed lease ends, not before.
  auto back = other.space("jobs").in_for(30s, "task", ts::formal<std::int64_t>);
  INFO("returned ", ms_since(renewed_at), " ms after the renewal");
  REQUIRE(back.has_value());
  CHECK(Clock::now() - renewed_at >= 3000ms);
}

TEST_CASE("a renewed and then acked lease never returns") {
  ServerProcess server;
  ts::Client worker(server.endpoint()), other(server.endpoint());
  ts::Space jobs = worker.space("jobs");
  jobs.out("task", 1);
  ts::Leased task = jobs.take(300ms, "task", ts::formal<std::int64_t>);
  jobs.renew(task, 400ms);
  jobs.ack(task);
  CHECK_FALSE(other.space("jobs").in_for(1200ms, "task", ts::formal<std::int64_t>).has_value());
  CHECK(stats_of(other, "jobs").tuples == 0);
  CHECK(stats_of(other, "jobs").leases == 0);
}

TEST_CASE("short leases are never cut short while the server is busy") {
  // As with timeouts: many short leases, with the server's loop kept turning,
  // so that a lease ending before its full length shows up on every run.
  ServerProcess server;
  BackgroundTraffic traffic(server.endpoint());
  ts::Client worker(server.endpoint()), other(server.endpoint());
  worker.space("jobs").out("task", 1);
  int early = 0;
  double shortest = 1e9;
  for (int i = 0; i < 25; ++i) {
    auto start = Clock::now();
    worker.space("jobs").take(10ms, "task", ts::formal<std::int64_t>);
    auto back = other.space("jobs").in_for(kPatience, "task", ts::formal<std::int64_t>);
    double took = ms_since(start);
    REQUIRE(back.has_value());
    other.space("jobs").out("task", 1);
    shortest = std::min(shortest, took);
    if (took < 10.0) ++early;
  }
  INFO("shortest 10 ms lease: ", shortest, " ms; ", traffic.requests(), " background requests");
  CHECK(early == 0);
}

}  // namespace piranha::it
