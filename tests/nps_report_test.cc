// `piranha nps report` and `piranha owner complain` against a real server:
// an empty period, a complaint about an unknown node, bad --since values.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "piranha/runtime/sysspace.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

// Runs `piranha ARGS... --server S` to its end.
std::unique_ptr<Process> run(const ServerProcess& server, std::vector<std::string> args) {
  args.insert(args.begin(), bin("piranha"));
  args.push_back("--server");
  args.push_back(server.endpoint());
  auto p = std::make_unique<Process>(args);
  p->wait();
  return p;
}

}  // namespace

TEST_CASE("nps report: a pool with nothing recorded gives a report that says so, and exit 0") {
  ServerProcess server;
  Scratch s;
  auto text = run(server, {"nps", "report"});
  CHECK(text->wait() == 0);
  CHECK(text->out().find("nothing was recorded in this period") != std::string::npos);
  auto json = run(server, {"nps", "report", "--json", "--since", "-1h", "--html", s.dir + "/r.html"});
  CHECK(json->wait() == 0);
  const auto r = nlohmann::json::parse(json->out());
  CHECK(r["empty"] == true);
  CHECK(s.read("r.html").find("Nothing was recorded in this period") != std::string::npos);
}

TEST_CASE("owner complain: an unknown node is accepted with a warning, and the report lists the complaint") {
  ServerProcess server;
  auto c = run(server, {"owner", "complain", "ws09", "the fan was loud at 3 am"});
  CHECK(c->wait() == 0);
  CHECK(c->err().find("no agent has registered a node named ws09") != std::string::npos);
  ts::Client client(server.endpoint());
  const auto all = sys::list_complaints(client);
  REQUIRE(all.size() == 1);
  CHECK(all[0].node == "ws09");
  auto r = run(server, {"nps", "report", "--json"});
  CHECK(r->wait() == 0);
  const auto report = nlohmann::json::parse(r->out());
  CHECK(report["empty"] == false);
  CHECK(report["nodes"][0]["complaints"][0]["text"] == "the fan was loud at 3 am");
  // Saved as JSON, rendered again later without the server.
  Scratch s;
  const std::string saved = s.write("r.json", r->out());
  Process again({bin("piranha"), "nps", "report", "--from", saved, "--html", s.dir + "/r.html"});
  CHECK(again.wait() == 0);
  CHECK(s.read("r.html").find("the fan was loud at 3 am") != std::string::npos);
  auto empty = run(server, {"owner", "complain", "ws09", " "});
  CHECK(empty->wait() == 2);
  CHECK(empty->err().find("the complaint is empty") != std::string::npos);
}

TEST_CASE("nps report: a malformed or future --since is refused with a message") {
  ServerProcess server;
  auto bad = run(server, {"nps", "report", "--since", "yesterday-ish"});
  CHECK(bad->wait() == 2);
  CHECK(bad->err().find("--since \"yesterday-ish\"") != std::string::npos);
  auto future = run(server, {"nps", "report", "--since", "+1h"});
  CHECK(future->wait() == 2);
  CHECK(future->err().find("in the future") != std::string::npos);
}
