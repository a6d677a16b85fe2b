// The server process's life: it starts, serves, shuts down cleanly on SIGTERM
// and SIGINT (even with clients connected and requests parked), and refuses to
// start on a port that is taken.
#include <doctest/doctest.h>

#include <csignal>

#include "harness.h"

namespace piranha::it {
namespace {

// Puts some state in the server: stored tuples, a lease, and a peer process
// parked in `in`, so shutdown happens with work in flight.
void load(ServerProcess& server, ts::Client& c, Process& parked) {
  ts::Space jobs = c.space("jobs");
  jobs.out("task", 1);
  jobs.out("task", 2);
  auto leased = jobs.take(60s, "task", ts::formal<std::int64_t>);
  CHECK(leased.tuple == ts::Tuple::of("task", 1));
  REQUIRE_MESSAGE(wait_until([&] { return stats_of(c, "parked").waiters == 1; }), server.log());
  CHECK(parked.running());
}

}  // namespace

TEST_CASE("the server exits 0 on SIGTERM and logs its shutdown") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  Process parked(peer_argv(server.endpoint(), {"in", "parked"}));
  load(server, c, parked);

  server.process().signal(SIGTERM);
  auto rc = server.process().wait();
  INFO("server log:\n", server.log());
  REQUIRE_MESSAGE(rc.has_value(), "the server did not exit within ", kPatience.count(), " ms of SIGTERM");
  CHECK(*rc == 0);
  CHECK(server.log().find("serving on " + server.endpoint()) != std::string::npos);
  CHECK(server.log().find("shut down after") != std::string::npos);
  // The peer stays blocked: the server never answered it with a tuple.
  CHECK(parked.out().find("got") == std::string::npos);
}

TEST_CASE("the server exits 0 on SIGINT and a new server can bind the same port at once") {
  std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  ServerProcess server({"--bind", endpoint});
  REQUIRE(server.endpoint() == endpoint);
  ts::Client c(server.endpoint());
  Process parked(peer_argv(server.endpoint(), {"in", "parked"}));
  load(server, c, parked);

  server.process().signal(SIGINT);
  auto rc = server.process().wait();
  INFO("server log:\n", server.log());
  REQUIRE_MESSAGE(rc.has_value(), "the server did not exit within ", kPatience.count(), " ms of SIGINT");
  CHECK(*rc == 0);
  CHECK(server.log().find("shut down after") != std::string::npos);

  // The old connections linger in TIME_WAIT; the port must still be usable.
  ServerProcess restarted({"--bind", endpoint});
  ts::Client fresh(restarted.endpoint());
  CHECK(fresh.stats().empty());  // nothing survives a restart (no durability yet)
}

TEST_CASE("a second server on a taken port fails with a cannot-bind error") {
  ServerProcess first;
  Process second({bin("piranha"), "ts", "serve", "--bind", first.endpoint()});
  auto rc = second.wait();
  INFO("second server's stderr:\n", second.err());
  REQUIRE_MESSAGE(rc.has_value(), "the second server did not exit");
  CHECK(*rc != 0);
  CHECK(second.err().find("cannot bind " + first.endpoint()) != std::string::npos);
  CHECK(second.err().find("serving on") == std::string::npos);

  // The first server is unharmed.
  CHECK(first.process().running());
  ts::Client c(first.endpoint());  // the default, patient connect: the machine may be busy
  c.space("s").out("still", true);
  CHECK(stats_of(c, "s").tuples == 1);
}

}  // namespace piranha::it
