// A whole pool with authentication on: a server with --key and --auth, two
// agents (one taking its keys from its YAML, one from --key), the NPS with a
// scheduler's key, and jobs submitted with their owners' keys, one of them
// held by an agent and released by its owner. No request of theirs is
// refused. docs/security.md.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>

#include "harness.h"
#include "piranha/runtime/sysspace.h"
#include "secured_pool.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

std::optional<sys::JobRecord> job_record(ts::Client& c, std::int64_t id) {
  auto t = c.rd(sys::kSpace, sys::job_template(id), 0ms);
  return t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
}

}  // namespace

TEST_CASE("auth pool: two agents, the NPS and submitted jobs work with authentication on") {
  SecuredPool pool;
  Scratch& s = pool.scratch();
  auto trace =
      s.write("pool.avail.csv",
              "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\n"
              "ws01,0,100000\nws02,0,100000\n");
  // ws01's keys come from its YAML (beside it), and it prunes ended jobs
  // soon; ws02's from --key and --server-key.
  auto config = s.write("ws01.yaml", "key: ws01.key\nserver_key: server.pub\nretention: {jobs_seconds: 4}\n");
  // The piranhas at the agents' own priority: at SCHED_IDLE (the default) a
  // machine whose every core is busy gives them next to nothing.
  auto agent = [&](const std::string& node, std::vector<std::string> keys) {
    std::vector<std::string> argv = {bin("piranha"),
                                     "agent",
                                     "--node",
                                     node,
                                     "--server",
                                     pool.endpoint(),
                                     "--trace",
                                     trace,
                                     "--time-scale",
                                     "60",
                                     "--piranha-output",
                                     s.dir + "/" + node + ".piranhas",
                                     "--piranha-priority",
                                     "normal"};
    argv.insert(argv.end(), keys.begin(), keys.end());
    return argv;
  };
  Process ws01(agent("ws01", {"--config", config}));
  Process ws02(agent("ws02", {"--key", pool.key("ws02"), "--server-key", pool.pub("server")}));
  // Stopped as an operator stops them, so that they remove their job keys.
  ws01.stop_with(SIGTERM);
  ws02.stop_with(SIGTERM);
  Process nps(pool.cli("nps", {"nps", "run"}, {"--strategy", "FCFS", "--period", "1"}));
  ts::Client admin(pool.endpoint(), pool.as("admin"));
  REQUIRE_MESSAGE(wait_until([&] { return sys::list_nodes(admin).size() == 2; }), ws01.err(), ws02.err());
  REQUIRE_MESSAGE(wait_until([&] {
                    return admin.rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms).has_value();
                  }),
                  nps.err());

  // alice's job runs on the pool and finishes with its result.
  Process job(pool.cli("alice", {"submit"}, {bin("sleepy_job"), "24", "100"}));
  auto rc = job.wait(90s);
  INFO("job: ", job.out(), job.err(), "\nws01: ", ws01.err(), "\nws02: ", ws02.err(), "\nnps: ", nps.err(),
       "\nserver: ", pool.log());
  REQUIRE(rc == 0);
  CHECK(contains(job.out(), "sleepy_job: result OK"));
  auto work = sys::list_jobwork(admin, 1);
  std::int64_t tasks = 0;
  for (const auto& w : work) tasks += w.tasks;
  CHECK(tasks == 24);
  CHECK(sys::JobOwner::from_tuple(*admin.rd(sys::kSpace, sys::jobowner_template(1), 0ms))->name == "alice");

  // bob's job fails on every node until its flag goes: an agent holds it,
  // and bob (its owner) releases it.
  auto flag = s.write("fail", "x");
  Process flaky(pool.cli("bob", {"submit"}, {bin("flaky_job"), "4", flag}));
  REQUIRE(wait_until(
      [&] {
        auto j = job_record(admin, 2);
        return j && j->state == sys::JobState::Held;
      },
      60s));
  auto holds = sys::holds_by_job(admin);
  REQUIRE(holds.count(2) == 1);
  CHECK((holds[2].node == "ws01" || holds[2].node == "ws02"));
  Process not_alice(pool.cli("alice", {"release", "2"}));
  CHECK(not_alice.wait() == 1);
  CHECK(contains(not_alice.err(),
                 "refused: key \"alice\" (role job) may not take job 2's record: job 2 belongs "
                 "to key \"bob\"; that needs its key or admin"));
  std::filesystem::remove(flag);
  Process release(pool.cli("bob", {"release", "2"}));
  CHECK(release.wait() == 0);
  auto flaky_rc = flaky.wait(60s);
  INFO("flaky: ", flaky.out(), flaky.err());
  CHECK(flaky_rc == 0);
  CHECK(contains(flaky.out(), "flaky_job: result OK"));

  // ws01 prunes ended jobs' records, the server's ownership records too.
  CHECK(wait_until([&] { return !job_record(admin, 1) && !job_record(admin, 2); }, 30s));
  CHECK(admin.rd_many(sys::kSpace, sys::jobowner_template(1), 10).empty());
  CHECK(admin.rd(sys::kSpace, sys::assign_template(0, "ws01"), 0ms).has_value());

  // Nothing any of them did was refused.
  std::string log = pool.log();
  INFO(log);
  CHECK_FALSE(contains(log, "(role agent) may not"));
  CHECK_FALSE(contains(log, "(role scheduler) may not"));
  CHECK_FALSE(contains(log, "not_permitted: key \"bob\""));
  // The one refusal we asked for.
  CHECK(contains(log, "not_permitted: key \"alice\" (role job) may not take job 2's record"));
  for (Process* p : {&nps, &ws01, &ws02}) {
    p->signal(SIGTERM);
    CHECK(p->wait(20s) == 0);
  }
}
