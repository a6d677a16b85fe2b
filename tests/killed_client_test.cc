// Clients that die or freeze: the server must notice and undo what they held.
//
// A killed process's connection closes, so its leases return at once through
// the disconnect path, long before they would expire. A stopped process keeps
// its connection open but stops answering ZeroMQ heartbeats, so the server
// drops it after the heartbeat timeout. A process killed while parked in `in`
// must not take a tuple with it.
#include <doctest/doctest.h>

#include <csignal>
#include <future>
#include <optional>
#include <utility>

#include "harness.h"

namespace piranha::it {
namespace {

// An in_for(wait, "task", ?int) on a client of its own, on a thread, and the
// milliseconds from `since` to its return: the caller bounds the wait with a
// bound of its own, shorter than `wait`.
std::future<std::pair<std::optional<ts::Tuple>, double>> take_on_other_client(const std::string& endpoint,
                                                                              std::chrono::milliseconds wait,
                                                                              Clock::time_point since) {
  return std::async(std::launch::async, [endpoint, wait, since] {
    ts::Client taker(endpoint);
    auto tuple = taker.space("jobs").in_for(wait, "task", ts::formal<std::int64_t>);
    return std::pair{std::move(tuple), ms_since(since)};
  });
}

// A peer that takes ("task", ?int) under a 60 s lease (kLongLeaseMs) and
// then hangs.
void start_worker_with_task(ServerProcess& server, ts::Client& c, Process& worker) {
  REQUIRE_MESSAGE(worker.wait_for_out("took 1 lease"), "worker stdout: ", worker.out(),
                  "\nworker stderr: ", worker.err(), "\nserver log:\n", server.log());
  ts::SpaceStats held = stats_of(c, "jobs");
  REQUIRE(held.tuples == 0);
  REQUIRE(held.leases == 1);
}

}  // namespace

TEST_CASE("a SIGKILLed worker's leased task returns at once and another client gets it") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  c.space("jobs").out("task", 1);
  Process worker(peer_argv(server.endpoint(), {"take", "jobs", kLongLeaseMs}));
  start_worker_with_task(server, c, worker);

  worker.signal(SIGKILL);
  auto killed_at = Clock::now();
  REQUIRE(worker.wait() == 128 + SIGKILL);

  // The take waits past the 60 s lease, so only the disconnect can bring the
  // task back within the bound.
  auto task = take_on_other_client(server.endpoint(), 2min, killed_at);
  REQUIRE_MESSAGE(task.wait_for(30s) == std::future_status::ready,
                  "the task was not back 30 s after the kill; server log:\n", server.log());
  auto [tuple, after] = task.get();
  INFO("task back after ", after, " ms; server log:\n", server.log());
  REQUIRE(tuple.has_value());
  CHECK(*tuple == ts::Tuple::of("task", 1));
  CHECK(server.log().find("1 leased tuples returned") != std::string::npos);
  CHECK(stats_of(c, "jobs").leases == 0);
}

TEST_CASE("a SIGSTOPped worker loses its lease after the heartbeat timeout") {
  ServerProcess server({"--heartbeat-ms", "100", "--heartbeat-timeout-ms", "600"});
  ts::Client c(server.endpoint());
  c.space("jobs").out("task", 1);
  Process worker(peer_argv(server.endpoint(), {"take", "jobs", kLongLeaseMs}));
  start_worker_with_task(server, c, worker);

  worker.signal(SIGSTOP);
  auto stopped_at = Clock::now();
  // As above, only the server dropping the frozen worker brings the task back
  // within the bound.
  auto task = take_on_other_client(server.endpoint(), 2min, stopped_at);
  bool back = task.wait_for(40s) == std::future_status::ready;
  // The worker never closed its connection: it is alive, only frozen.
  CHECK(worker.running());
  worker.signal(SIGCONT);
  worker.signal(SIGKILL);  // its disconnect ends a take still waiting

  REQUIRE_MESSAGE(back, "the task was not back 40 s after the SIGSTOP; server log:\n", server.log());
  auto [tuple, after] = task.get();
  INFO("task back after ", after, " ms; server log:\n", server.log());
  REQUIRE(tuple.has_value());
  CHECK(*tuple == ts::Tuple::of("task", 1));
  // Not before the server could have missed a heartbeat answer.
  CHECK(after >= 300);
  CHECK(server.log().find("1 leased tuples returned") != std::string::npos);
}

TEST_CASE("a process killed while blocked in `in` does not swallow a later tuple") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  // Several rounds with the tuple written as soon as the peer is reaped, to
  // race the server's processing of the disconnect; then one more round in
  // which the server has surely seen it.
  constexpr int kRounds = 6;
  for (int round = 0; round <= kRounds; ++round) {
    INFO("round ", round);
    Process parked(peer_argv(server.endpoint(), {"in", "jobs"}));
    REQUIRE(wait_until([&] { return stats_of(c, "jobs").waiters == 1; }));
    parked.signal(SIGKILL);
    REQUIRE(parked.wait() == 128 + SIGKILL);
    if (round == kRounds) REQUIRE(wait_until([&] { return stats_of(c, "jobs").waiters == 0; }));

    c.space("jobs").out("task", round);
    auto got = c.space("jobs").in_for(10s, "task", ts::formal<std::int64_t>);
    INFO("server log:\n", server.log());
    REQUIRE_MESSAGE(got.has_value(), "the tuple went to the dead process");
    CHECK(*got == ts::Tuple::of("task", round));
    CHECK(parked.out().empty());
  }
}

}  // namespace piranha::it
