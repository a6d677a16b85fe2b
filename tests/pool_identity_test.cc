// Pool identity (docs/operations.md, "Pools"): two pools on one host, each
// server started with its own --pool, and the clients of one refusing the
// server of the other in one line with a non-zero exit; a durable pool keeps
// its name and id across restarts and refuses to be renamed.
#include <doctest/doctest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "harness.h"

using namespace piranha::it;
using Json = nlohmann::json;

namespace {

// The text after "pool NAME (id " in a server's log, up to ")".
std::string logged_id(const std::string& log, const std::string& name) {
  const std::string mark = "pool " + name + " (id ";
  auto at = log.find(mark);
  if (at == std::string::npos) return "";
  at += mark.size();
  return log.substr(at, log.find(')', at) - at);
}

int finish(Process& p) {
  auto rc = p.wait(20s);
  REQUIRE_MESSAGE(rc.has_value(), p.command(), " did not end");
  return *rc;
}

}  // namespace

TEST_CASE(
    "two pools on one host do not mix: an agent, the NPS and a command of pool B refuse pool A's server") {
  Scratch s;
  ServerProcess alpha({"--pool", "alpha", "--data", s.dir + "/alpha"});
  ServerProcess beta({"--pool", "beta"});
  const std::string alpha_id = logged_id(alpha.log(), "alpha");
  CHECK(alpha_id.size() == 16);

  // An agent of pool beta pointed at alpha's server by mistake.
  Process wrong({bin("piranha"), "agent", "--node", "b1", "--server", alpha.endpoint(), "--pool", "beta"});
  CHECK(finish(wrong) == 1);
  INFO("agent stderr:\n", wrong.err());
  CHECK(contains(wrong.err(), "refusing the server: the tuple-space server at " + alpha.endpoint() +
                                  " serves pool \"alpha\", not this client's pool \"beta\""));
  // It wrote nothing there: alpha has no node b1.
  Process alpha_nodes({"/usr/bin/env", "PIRANHA_POOL=alpha", bin("piranha"), "nodes", "--json", "--server",
                       alpha.endpoint()});
  REQUIRE(finish(alpha_nodes) == 0);
  CHECK(Json::parse(alpha_nodes.out()).empty());

  // The same agent at its own pool's server serves, and `nodes` shows the pool.
  Process right({bin("piranha"), "agent", "--node", "b1", "--server", beta.endpoint(), "--pool", "beta"});
  REQUIRE(wait_until([&] {
    Process n({bin("piranha"), "nodes", "--json", "--pool", "beta", "--server", beta.endpoint()});
    return n.wait(20s) == 0 && Json::parse(n.out()).size() == 1;
  }));
  Process beta_nodes(
      {bin("piranha"), "nodes", "--json", "--server", beta.endpoint()});  // no pool: any server
  REQUIRE(finish(beta_nodes) == 0);
  auto ns = Json::parse(beta_nodes.out());
  REQUIRE(ns.size() == 1);
  CHECK(ns[0]["node"] == "b1");
  CHECK(ns[0]["pool"] == "beta");
  CHECK(ns[0]["pool_id"] == logged_id(beta.log(), "beta"));
  Process table({bin("piranha"), "nodes", "--server", beta.endpoint()});
  REQUIRE(finish(table) == 0);
  CHECK(contains(table.out(), "pool: beta (id " + logged_id(beta.log(), "beta") + ")"));

  // A command of pool beta, by $PIRANHA_POOL, at alpha's server.
  Process jobs({"/usr/bin/env", "PIRANHA_POOL=beta", bin("piranha"), "jobs", "--server", alpha.endpoint()});
  CHECK(finish(jobs) == 1);
  CHECK(jobs.err() ==
        "piranha jobs: the tuple-space server at " + alpha.endpoint() +
            " serves pool \"alpha\", not this client's pool \"beta\" (--pool or $PIRANHA_POOL)\n");

  // The NPS of pool beta at alpha's server: one line, status 1, at once.
  Process nps({bin("piranha"), "nps", "run", "--pool", "beta", "--server", alpha.endpoint()});
  CHECK(finish(nps) == 1);
  CHECK(contains(nps.err(), "serves pool \"alpha\", not this client's pool \"beta\""));

  right.signal(SIGTERM);
  CHECK(finish(right) == 0);
}

TEST_CASE("a durable pool keeps its name and id, and a restart with another --pool is refused") {
  Scratch s;
  const std::string dir = s.dir + "/data";
  std::string id;
  {
    ServerProcess first({"--pool", "lab", "--data", dir});
    id = logged_id(first.log(), "lab");
    REQUIRE(!id.empty());
    first.process().signal(SIGTERM);
    CHECK(first.process().wait(20s) == 0);
  }
  Process renamed(
      {bin("piranha"), "ts", "serve", "--bind", "tcp://127.0.0.1:*", "--pool", "office", "--data", dir});
  CHECK(finish(renamed) == 2);
  CHECK(renamed.err() == "piranha ts serve: --pool office: the data directory " + dir +
                             " holds pool \"lab\" (id " + id +
                             "); serve it with --pool lab, or give another --data for a new pool\n");
  // Without --pool the directory's pool is served, with the same id.
  ServerProcess again({"--data", dir});
  CHECK(logged_id(again.log(), "lab") == id);
  ServerProcess same({"--pool", "lab", "--data", dir + "-2"});
  CHECK(logged_id(same.log(), "lab") != id);  // another directory is another pool, of the same name
  Process bad({bin("piranha"), "ts", "serve", "--bind", "tcp://127.0.0.1:*", "--pool", "two words"});
  CHECK(finish(bad) == 2);
  CHECK(contains(bad.err(), "is not a pool name"));
}
