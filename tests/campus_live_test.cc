// The live campus (docs/nps.md, "Hierarchy") on loopback, with real processes: two pools, each
// with its own `piranha ts serve`, agents (replaying always-available traces) and `nps run`, and
// `piranha nps campus` above them. A job of pool a with more work than a's one node also runs on
// b's idle nodes (b's agents run piranhas of a's job, connected to a's server), and finishes with
// every task done once; then a job submitted to b takes b's nodes back. A job of a that requires a
// label only one of b's nodes has runs on that node only.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <map>
#include <memory>

#include "harness.h"
#include "piranha/runtime/sysspace.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

// One pool: its server, its agents (always available, their scheduler 0 stale after 2 s, piranhas
// at the agents' own priority, as in nps_live_test), its NPS.
struct Pool {
  explicit Pool(Scratch& s) : s(s) {}
  Scratch& s;
  ServerProcess server;
  std::map<std::string, std::unique_ptr<Process>> agents;
  std::unique_ptr<Process> nps;

  void add_agent(const std::string& node, const std::vector<std::string>& extra = {}) {
    const auto argv = lending_agent_argv(s, server.endpoint(), node, extra);
    agents[node] = std::make_unique<Process>(argv);
  }
  void start_nps(std::vector<std::string> extra) {
    std::vector<std::string> argv = {bin("piranha"),    "nps",      "run", "--server",
                                     server.endpoint(), "--period", "1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    nps = std::make_unique<Process>(argv);
  }
  std::unique_ptr<Process> spin(int tasks, int task_ms, const std::string& require = "") {
    std::vector<std::string> argv{"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), bin("piranha"),
                                  "submit"};
    if (!require.empty()) argv.insert(argv.end(), {"--require", require});
    argv.insert(argv.end(),
                {bin("spin"), "--tasks", std::to_string(tasks), "--task-ms", std::to_string(task_ms)});
    return std::make_unique<Process>(argv);
  }
  ts::Client client() { return ts::Client(server.endpoint()); }
};

// `piranha nps campus` named uni over pools a and b, b lending to a, deciding every second (loans
// leased for 3 s).
std::unique_ptr<Process> start_campus(Scratch& s, Pool& a, Pool& b) {
  auto campus = std::make_unique<Process>(std::vector<std::string>{
      bin("piranha"), "nps", "campus",
      s.write("campus.yaml",
              "name: uni\nsubnets:\n"
              "  - {name: a, server: \"" +
                  a.server.endpoint() +
                  "\"}\n"
                  "  - {name: b, server: \"" +
                  b.server.endpoint() +
                  "\", lends_to: [a]}\n"
                  "campus: {period: 1, congested: 3, relieved: 1, hold: 2, cooldown: 2}\n")});
  campus->stop_with(SIGTERM);
  return campus;
}

// Tasks each node completed for job `id`, as the job's feeder tallied them.
std::map<std::string, std::int64_t> tasks_by_node(ts::Client& c, std::int64_t id) {
  std::map<std::string, std::int64_t> out;
  for (const auto& w : sys::list_jobwork(c, id)) out[w.node] = w.tasks;
  return out;
}

}  // namespace

TEST_CASE(
    "campus live: a congested pool's job also runs on another pool's idle nodes, which its own jobs take "
    "back") {
  Scratch s;
  Pool a(s), b(s);
  a.add_agent("a1");
  b.add_agent("b1");
  b.add_agent("b2");
  auto ca = a.client();
  auto cb = b.client();
  REQUIRE(
      wait_until([&] { return sys::list_nodes(ca).size() == 1 && sys::list_nodes(cb).size() == 2; }, 60s));
  a.start_nps({});
  b.start_nps({"--lend-to", "a", "--campus", "uni"});
  REQUIRE(a.nps->wait_for_err("scheduling a1"));
  REQUIRE(b.nps->wait_for_err("scheduling b1 b2"));
  auto campus_process = start_campus(s, a, b);
  Process& campus = *campus_process;
  // 20 s of work in 50 ms tasks for a's one node.
  auto job = a.spin(400, 50);
  INFO("campus: " << campus.err());
  INFO("a's nps: " << a.nps->err());
  INFO("b's nps: " << b.nps->err());
  INFO("b1: " << b.agents["b1"]->err());
  INFO("b2: " << b.agents["b2"]->err());
  // b's agents run piranhas of a's job 1, and they complete tasks of it in a's space.
  REQUIRE(campus.wait_for_err("to a's job 1", 60s));
  for (const char* n : {"b1", "b2"}) {
    CAPTURE(n);
    CHECK(b.agents[n]->wait_for_err("started 1 piranha of a's job 1", 60s));
  }
  CHECK(wait_until(
      [&] {
        auto t = tasks_by_node(ca, 1);
        return t["b1"] > 0 && t["b2"] > 0;
      },
      30s));
  // b's own job takes b's nodes back: the lent piranhas retreat and b's job runs there.
  auto own = b.spin(60, 50);
  for (const char* n : {"b1", "b2"}) {
    CAPTURE(n);
    CHECK(b.agents[n]->wait_for_err("lent piranhas of a's job 1 retreat", 30s));
    CHECK(b.agents[n]->wait_for_err("started 1 piranha of job 1", 30s));
  }
  REQUIRE(own->wait(60s) == 0);
  CHECK(contains(own->out(), "every task done once"));
  // a's job finishes, every task done once, whatever its piranhas on b did.
  REQUIRE(job->wait(120s) == 0);
  CHECK(contains(job->out(), "every task done once"));
  auto done = tasks_by_node(ca, 1);
  CHECK(done["a1"] + done["b1"] + done["b2"] == 400);
  campus.signal(SIGTERM);
  CHECK(campus.wait() == 0);
  // The campus's clean stop takes its loans: nothing stays lent.
  CHECK(cb.rd_many(sys::kSpace, sys::loan_template(), 10).empty());
}

TEST_CASE(
    "campus live: the campus killed, its loans expire, the lent piranhas retreat and the job ends once") {
  Scratch s;
  Pool a(s), b(s);
  a.add_agent("a1");
  b.add_agent("b1");
  auto ca = a.client();
  auto cb = b.client();
  REQUIRE(
      wait_until([&] { return sys::list_nodes(ca).size() == 1 && sys::list_nodes(cb).size() == 1; }, 60s));
  a.start_nps({});
  b.start_nps({"--lend-to", "a"});
  REQUIRE(a.nps->wait_for_err("scheduling a1"));
  REQUIRE(b.nps->wait_for_err("scheduling b1"));
  auto campus = start_campus(s, a, b);
  auto job = a.spin(400, 50);  // 20 s of work for a's one node
  INFO("campus: " << campus->err());
  INFO("b's nps: " << b.nps->err());
  INFO("b1: " << b.agents["b1"]->err());
  REQUIRE(b.agents["b1"]->wait_for_err("started 1 piranha of a's job 1", 60s));
  // Killed, the campus neither rewrites nor takes its loan: it expires (3 s), b's NPS stops
  // lending and b1's lent piranha retreats; a's job goes on on a alone.
  campus->signal(SIGKILL);
  REQUIRE(campus->wait() == 128 + SIGKILL);
  CHECK(b.nps->wait_for_err("no longer lending b1", 30s));
  CHECK(b.agents["b1"]->wait_for_err("lent piranhas of a's job 1 retreat", 30s));
  REQUIRE(job->wait(120s) == 0);
  CHECK(contains(job->out(), "every task done once"));
  auto done = tasks_by_node(ca, 1);
  CHECK(done["a1"] + done["b1"] == 400);
}

TEST_CASE("campus live: a job requiring a label only another pool's node has runs on that node only") {
  Scratch s;
  Pool a(s), b(s);
  a.add_agent("a1");
  a.add_agent("a2");
  // b's plain node first in b's node order: lending without requirements would pick it.
  b.add_agent("b1");
  b.add_agent("b2", {"--label", "gpu"});
  auto ca = a.client();
  auto cb = b.client();
  REQUIRE(
      wait_until([&] { return sys::list_nodes(ca).size() == 2 && sys::list_nodes(cb).size() == 2; }, 60s));
  a.start_nps({});
  b.start_nps({"--lend-to", "a", "--campus", "uni"});
  REQUIRE(a.nps->wait_for_err("scheduling a1 a2"));
  REQUIRE(b.nps->wait_for_err("scheduling b1 b2"));
  auto campus = start_campus(s, a, b);
  // 4 s of work for one node; a's nodes lack gpu, so the job is stranded in a, not congesting it.
  auto job = a.spin(80, 50, "label=gpu");
  INFO("campus: " << campus->err());
  INFO("a's nps: " << a.nps->err());
  INFO("b's nps: " << b.nps->err());
  INFO("b2 (gpu): " << b.agents["b2"]->err());
  INFO("b1: " << b.agents["b1"]->err());
  REQUIRE(b.agents["b2"]->wait_for_err("started 1 piranha of a's job 1", 60s));
  REQUIRE(job->wait(120s) == 0);
  CHECK(contains(job->out(), "every task done once"));
  auto done = tasks_by_node(ca, 1);
  CHECK(done["b2"] == 80);
  CHECK(done.size() == 1);  // neither a's nodes nor b's plain node did any of it
  for (const char* n : {"a1", "a2"}) {
    CAPTURE(n);
    CHECK_FALSE(contains(a.agents[n]->err(), "started 1 piranha of job 1"));
  }
  CHECK_FALSE(contains(b.agents["b1"]->err(), "a's job 1"));
  CHECK_FALSE(contains(b.nps->err(), "lending b1"));
  campus->signal(SIGTERM);
  CHECK(campus->wait() == 0);
}
