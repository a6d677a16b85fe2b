// The server process's life: it starts, serves, shuts down cleanly on SIGTERM
// and SIGINT (even with clients connected and requests parked), and refuses to
// start on a port that is taken.
#include <doctest/doctest.h>

#include <csignal>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

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
  ts::Client c(first.endpoint(), quick_client_options());
  c.space("s").out("still", true);
  CHECK(stats_of(c, "s").tuples == 1);
}

}  // namespace piranha::it

namespace piranha::it {
namespace {

// The page faults process `pid` has taken so far (minflt, /proc/PID/stat).
long minor_faults(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The fields after the command's closing parenthesis: state is the 3rd field, minflt the 10th.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  for (int i = 3; i < 10; ++i) rest >> field;
  long faults = -1;
  rest >> faults;
  return faults;
}

}  // namespace

TEST_CASE("the server reuses the memory of the requests it has handled: a steady stream faults in no new pages") {
  // Each cycle writes three 80-KB tuples and takes them back: the server
  // allocates the requests' buffers, the stored tuples and the replies'
  // buffers, and frees them all. Had it handed the freed memory back to the
  // kernel, as glibc does by default above 128 KB, every cycle would fault
  // pages in again: some 54 a cycle, measured without keep_freed_memory().
  ServerProcess server;
  ts::Client c(server.endpoint());
  ts::Space space = c.space("stream");
  const ts::Blob blob(std::string(80 << 10, 'x'));
  auto cycle = [&](int n) {
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < 3; ++k) space.out("row", k, blob);
      for (int k = 0; k < 3; ++k) (void)space.in("row", ts::formal<std::int64_t>, ts::formal<ts::Blob>);
    }
  };
  cycle(50);  // the heaps grow to what the stream needs
  const long before = minor_faults(server.process().pid());
  cycle(200);
  const long after = minor_faults(server.process().pid());
  REQUIRE(before >= 0);
  MESSAGE("page faults in the server over 200 cycles of 80 KB: ", after - before);
  CHECK(after - before < 200);  // under one a cycle (0 measured; 10,870 without)
}

}  // namespace piranha::it
