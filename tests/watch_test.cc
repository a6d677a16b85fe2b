// Watches against a server process: a watcher hears about matching tuples
// being written and taken, by any process, and about nothing else.
#include <doctest/doctest.h>

#include <csignal>

#include "harness.h"

namespace piranha::it {
namespace {

// The next event, or a failed check when none arrives in good time.
ts::WatchEvent next(ts::Client& watcher) {
  auto e = watcher.next_event(kPatience);
  REQUIRE_MESSAGE(e.has_value(), "no watch event arrived");
  return *e;
}

void check_event(const ts::WatchEvent& e, ts::WatchId watch, ts::WatchEventKind kind, const ts::Tuple& t) {
  CHECK(e.watch == watch);
  CHECK(e.kind == kind);
  CHECK(e.space == "jobs");
  CHECK(e.tuple == t);
}

}  // namespace

TEST_CASE("a watcher receives written and taken events for matching tuples only") {
  ServerProcess server;
  ts::Client watcher(server.endpoint()), writer(server.endpoint());
  ts::WatchId id = watcher.space("jobs").watch("task", ts::formal<std::int64_t>);
  CHECK(stats_of(writer, "jobs").watches == 1);

  ts::Space jobs = writer.space("jobs");
  jobs.out("result", 1);                     // other tag
  jobs.out("task", 1.5);                     // other type
  jobs.out("task", 1, 2);                    // other arity
  writer.space("elsewhere").out("task", 1);  // other space
  jobs.out("task", 1);
  jobs.out("task", 2);
  CHECK(jobs.inp("task", 2) == ts::Tuple::of("task", 2));
  CHECK(jobs.inp("result", 1) == ts::Tuple::of("result", 1));  // not watched

  // A peer process takes the other one while blocked.
  CHECK(jobs.inp("task", 1) == ts::Tuple::of("task", 1));
  Process taker(peer_argv(server.endpoint(), {"in", "jobs"}));
  REQUIRE(wait_until([&] { return stats_of(writer, "jobs").waiters == 1; }));
  jobs.out("task", 3);
  REQUIRE(taker.wait() == 0);
  CHECK(taker.out() == "got 3\n");

  using K = ts::WatchEventKind;
  check_event(next(watcher), id, K::Written, ts::Tuple::of("task", 1));
  check_event(next(watcher), id, K::Written, ts::Tuple::of("task", 2));
  check_event(next(watcher), id, K::Taken, ts::Tuple::of("task", 2));
  check_event(next(watcher), id, K::Taken, ts::Tuple::of("task", 1));
  check_event(next(watcher), id, K::Written, ts::Tuple::of("task", 3));
  check_event(next(watcher), id, K::Taken, ts::Tuple::of("task", 3));
  // Nothing else: the non-matching tuples raised no events.
  CHECK_FALSE(watcher.next_event(300ms).has_value());
}

TEST_CASE("a tuple returned by a killed worker's lease is reported as written again") {
  ServerProcess server;
  ts::Client watcher(server.endpoint()), writer(server.endpoint());
  ts::WatchId id = watcher.space("jobs").watch("task", ts::formal<std::int64_t>);
  writer.space("jobs").out("task", 1);
  Process worker(peer_argv(server.endpoint(), {"take", "jobs", "60000"}));
  REQUIRE(worker.wait_for_out("took 1"));
  worker.signal(SIGKILL);

  using K = ts::WatchEventKind;
  check_event(next(watcher), id, K::Written, ts::Tuple::of("task", 1));
  check_event(next(watcher), id, K::Taken, ts::Tuple::of("task", 1));
  check_event(next(watcher), id, K::Written, ts::Tuple::of("task", 1));
  CHECK(stats_of(writer, "jobs").tuples == 1);
}

TEST_CASE("unwatch stops events and a departed watcher's watches are dropped") {
  ServerProcess server;
  ts::Client writer(server.endpoint());
  ts::Client watcher(server.endpoint());
  ts::WatchId id = watcher.space("jobs").watch("task", ts::formal<std::int64_t>);
  watcher.unwatch(id);
  CHECK_THROWS_WITH_AS(watcher.unwatch(id), doctest::Contains("unknown_watch"), ts::TupleSpaceError);
  writer.space("jobs").out("task", 1);
  CHECK_FALSE(watcher.next_event(300ms).has_value());
  CHECK(stats_of(writer, "jobs").watches == 0);

  {
    ts::Client leaving(server.endpoint());
    leaving.space("jobs").watch("task", ts::formal<std::int64_t>);
    CHECK(stats_of(writer, "jobs").watches == 1);
  }
  CHECK(wait_until([&] { return stats_of(writer, "jobs").watches == 0; }));
  // The server goes on writing without trying to notify the departed.
  writer.space("jobs").out("task", 2);
  CHECK(stats_of(writer, "jobs").tuples == 2);
}

}  // namespace piranha::it
