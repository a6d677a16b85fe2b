// Blocking operations across processes: a peer parked in `in` or `rd` is
// answered when another process writes a matching tuple, parked peers are
// served in arrival order, and `rd` leaves the tuple where it was.
#include <doctest/doctest.h>

#include <memory>

#include "harness.h"

namespace piranha::it {
namespace {

// Starts a peer running `op` ("in" or "rd") on `space` and waits until the
// server has parked it: the space's waiter count reaches `waiters`.
std::unique_ptr<Process> park(ServerProcess& server, ts::Client& c, const std::string& op,
                              const std::string& space, std::uint64_t waiters) {
  auto p = std::make_unique<Process>(peer_argv(server.endpoint(), {op, space}));
  bool parked = wait_until([&] { return stats_of(c, space).waiters == waiters || !p->running(); });
  REQUIRE_MESSAGE(parked, "peer ", op, " was not parked; server log:\n", server.log());
  REQUIRE_MESSAGE(p->running(), "peer ", op, " ended early:\n", p->err());
  return p;
}

// Waits for a peer to finish and returns its stdout.
std::string finished(Process& p) {
  auto rc = p.wait();
  INFO("peer stderr: ", p.err());
  REQUIRE_MESSAGE(rc.has_value(), "peer did not finish");
  CHECK(*rc == 0);
  return p.out();
}

}  // namespace

TEST_CASE("a process blocked in `in` is woken by another process's matching out and only by that") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  ts::Space jobs = c.space("jobs");
  auto peer = park(server, c, "in", "jobs", 1);

  // Near misses: other tag, other type, other arity, other space.
  jobs.out("result", 7);
  jobs.out("task", "seven");
  jobs.out("task", 7, 7);
  c.space("other").out("task", 7);
  CHECK(stats_of(c, "jobs").waiters == 1);
  CHECK(stats_of(c, "jobs").tuples == 3);
  CHECK(peer->running());

  jobs.out("task", 7);
  CHECK(finished(*peer) == "got 7\n");
  CHECK(stats_of(c, "jobs").waiters == 0);
  CHECK(stats_of(c, "jobs").tuples == 3);  // the match was handed over, not stored
  CHECK(stats_of(c, "other").tuples == 1);
}

TEST_CASE("processes blocked in `in` are served in the order they arrived") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  std::vector<std::unique_ptr<Process>> peers;
  for (std::uint64_t i = 1; i <= 4; ++i) peers.push_back(park(server, c, "in", "jobs", i));

  ts::Space jobs = c.space("jobs");
  for (std::int64_t n = 1; n <= 4; ++n) jobs.out("task", n * 10);
  for (std::size_t i = 0; i < peers.size(); ++i) {
    INFO("peer ", i, " (parked ", i + 1, "th)");
    CHECK(finished(*peers[i]) == "got " + std::to_string((i + 1) * 10) + "\n");
  }
  CHECK(stats_of(c, "jobs").tuples == 0);
  CHECK(stats_of(c, "jobs").waiters == 0);
}

TEST_CASE("a process blocked in `rd` gets a copy and the tuple stays in the space") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  auto reader = park(server, c, "rd", "jobs", 1);

  c.space("jobs").out("task", 5);
  CHECK(finished(*reader) == "read 5\n");
  CHECK(stats_of(c, "jobs").tuples == 1);
  CHECK(c.space("jobs").inp("task", ts::formal<std::int64_t>) == ts::Tuple::of("task", 5));
  CHECK(stats_of(c, "jobs").tuples == 0);
}

TEST_CASE("readers parked before a taker get a copy and the taker consumes the tuple") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  auto reader1 = park(server, c, "rd", "jobs", 1);
  auto reader2 = park(server, c, "rd", "jobs", 2);
  auto taker = park(server, c, "in", "jobs", 3);
  auto late_reader = park(server, c, "rd", "jobs", 4);

  c.space("jobs").out("task", 9);
  CHECK(finished(*reader1) == "read 9\n");
  CHECK(finished(*reader2) == "read 9\n");
  CHECK(finished(*taker) == "got 9\n");
  // The reader parked after the taker never sees the consumed tuple.
  CHECK(wait_until([&] { return stats_of(c, "jobs").waiters == 1; }));
  CHECK(stats_of(c, "jobs").tuples == 0);
  CHECK(late_reader->running());

  c.space("jobs").out("task", 10);
  CHECK(finished(*late_reader) == "read 10\n");
  CHECK(stats_of(c, "jobs").tuples == 1);
}

TEST_CASE("removing a space answers the processes parked in it with space_removed") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  auto taker = park(server, c, "in", "doomed", 1);
  auto reader = park(server, c, "rd", "doomed", 2);
  auto bystander = park(server, c, "in", "kept", 1);

  CHECK(c.remove("doomed"));
  for (Process* p : {taker.get(), reader.get()}) {
    auto rc = p->wait();
    INFO("peer stderr: ", p->err());
    REQUIRE(rc.has_value());
    CHECK(*rc == 2);  // ts_peer's exit code for a tuple-space error
    CHECK(p->err().find("space_removed") != std::string::npos);
  }
  CHECK_FALSE(c.stats("doomed").has_value());
  // Other spaces' waiters are untouched.
  CHECK(stats_of(c, "kept").waiters == 1);
  c.space("kept").out("task", 3);
  CHECK(finished(*bystander) == "got 3\n");
}

}  // namespace piranha::it
