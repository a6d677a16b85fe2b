#include "piranha/nps/campus_live.h"

#include <doctest/doctest.h>

#include "piranha/base/input_error.h"
#include "piranha/nps/campus_sim.h"

using namespace piranha;
using namespace piranha::nps;

namespace {

constexpr const char* kCampus = R"(name: uni
subnets:
  - {name: a, server: "tcp://127.0.0.1:7001", lends_to: [b]}
  - {name: b, server: "tcp://127.0.0.1:7002", lends_to: [a]}
  - {name: c, server: "tcp://127.0.0.1:7003"}
campus: {period: 2, congested: 10, relieved: 5, hold: 4, cooldown: 4}
)";

// A reading of a subnet whose NPS reported at `time`: jobs (id, work left, tasks left), its
// nodes predicted available, its idle nodes; each job launchable.
SubnetReading reading(double time, std::vector<sched::CampusJob> jobs, double available, std::int64_t idle) {
  sched::SubnetState s;
  s.jobs = jobs;
  s.available = available;
  s.idle = idle;
  SubnetReading r;
  r.reached = true;
  r.report = sys::SubnetReport{time, subnet_state_json(s)};
  for (const auto& j : jobs) r.launches[j.id] = sys::JobLaunch{j.id, "/bin/spin", {"9"}, "/tmp"};
  return r;
}

}  // namespace

TEST_CASE("live campus file: subnets, trust and the strategy's parameters, and errors name the line") {
  const LiveCampusConfig c = parse_live_campus(kCampus, "c.yaml");
  CHECK(c.name == "uni");
  REQUIRE(c.subnets.size() == 3);
  CHECK(c.subnets[0].lends_to == std::vector<std::string>{"b"});
  CHECK(c.subnets[2].lends_to.empty());
  CHECK(c.params.period == 2);
  CHECK(c.lease_seconds() == 6);
  CHECK(parse_live_campus("subnets: [{name: a, server: x}, {name: b, server: y}]", "d").params.congested ==
        60);
  CHECK_THROWS_WITH_AS(
      parse_live_campus("subnets: [{name: a, server: x, lends_to: [z]}, {name: b, server: y}]", "e.yaml"),
      doctest::Contains("e.yaml:1"), InputError);
  CHECK_THROWS_AS(
      parse_live_campus("subnets: [{name: a, server: x, lends_to: [a]}, {name: b, server: y}]", "f"),
      InputError);
  CHECK_THROWS_AS(parse_live_campus("subnets: [{name: a, server: x}]", "g"), InputError);
  CHECK_THROWS_AS(parse_live_campus("subnets: [{name: a, server: x}, {name: a, server: y}]", "h"),
                  InputError);
  CHECK_THROWS_AS(
      parse_live_campus("subnets: [{name: a, server: x}, {name: b, server: y}]\ncampus: {bogus: 1}", "i"),
      InputError);
}

TEST_CASE("subnet state: to JSON and back, and a malformed record is none") {
  sched::SubnetState s;
  s.jobs = {{4, 120.5, 30}};
  s.available = 2.5;
  s.idle = 1;
  const auto back = subnet_state_from_json(subnet_state_json(s));
  REQUIRE(back);
  CHECK(back->jobs[0].id == 4);
  CHECK(back->jobs[0].work_left == 120.5);
  CHECK(back->jobs[0].tasks_left == 30);
  CHECK(back->available == 2.5);
  CHECK(back->idle == 1);
  CHECK_FALSE(subnet_state_from_json("[]"));
  CHECK_FALSE(subnet_state_from_json("{\"jobs\": [{}], \"available\": 1, \"idle\": 0}"));
  CHECK_FALSE(subnet_state_from_json("not json"));
}

TEST_CASE("live campus round: a congested subnet borrows the idle nodes of a subnet that trusts it") {
  LiveCampus campus(parse_live_campus(kCampus, "c.yaml"));
  // a: 2 nodes, job 7 with 100 s of work left (pressure 50): congested. b: 3 idle. c: 4 idle, but
  // lends to nobody.
  std::vector<SubnetReading> r{reading(100, {{7, 100, 40}}, 2, 0), reading(100, {}, 3, 3),
                               reading(100, {}, 4, 4)};
  CampusRound round = campus.round(100.5, r);
  CHECK(round.fresh == std::vector<bool>{true, true, true});
  CHECK(round.loans[0].empty());
  CHECK(round.loans[2].empty());
  REQUIRE(round.loans[1].size() == 1);
  const sys::CampusLoan& l = round.loans[1][0];
  CHECK(l.campus == "uni");
  CHECK(l.borrower == "a");
  CHECK(l.server == "tcp://127.0.0.1:7001");
  CHECK(l.job == 7);
  CHECK(l.nodes == 3);
  CHECK(l.program == "/bin/spin");
  CHECK(l.args == std::vector<std::string>{"9"});
  CHECK(l.expires == doctest::Approx(106.5));
  // The borrower's record goes stale (its NPS or its link gone): its loans end.
  round = campus.round(108, r);
  CHECK(round.fresh == std::vector<bool>{false, false, false});
  CHECK(round.loans[1].empty());
  // Its server not reached: the same.
  r = {reading(110, {{7, 100, 40}}, 2, 0), reading(110, {}, 3, 3), reading(110, {}, 4, 4)};
  r[0].reached = false;
  CHECK(campus.round(110.5, r).loans[1].empty());
}

TEST_CASE("live campus round: its log line says the loans and why") {
  LiveCampus campus(parse_live_campus(kCampus, "c.yaml"));
  std::vector<SubnetReading> r{reading(100, {{7, 100, 40}}, 2, 0), reading(100, {}, 3, 3),
                               reading(100, {}, 4, 4)};
  CHECK(describe_round(campus.config(), campus.round(100.5, r)) ==
        "loans: b lends 3 to a's job 7 | congested: a");
  // a's job ended: the loan ends, its nodes returned as their job ended.
  r = {reading(103, {}, 2, 2), reading(103, {}, 3, 3), reading(103, {}, 4, 4)};
  CHECK(describe_round(campus.config(), campus.round(103, r)) ==
        "no loans | nodes returned: 3 as their job ended");
  // c's record gone stale: not heard from.
  r = {reading(106, {}, 2, 2), reading(106, {}, 3, 3), reading(90, {}, 4, 4)};
  CHECK(describe_round(campus.config(), campus.round(106, r)) == "no loans | not heard from: c");
}

TEST_CASE("live campus round: a loan whose job cannot be launched is not written") {
  LiveCampus campus(parse_live_campus(kCampus, "c.yaml"));
  std::vector<SubnetReading> r{reading(100, {{7, 100, 40}}, 2, 0), reading(100, {}, 3, 3),
                               reading(100, {}, 4, 4)};
  r[0].launches.clear();
  const CampusRound round = campus.round(100.5, r);
  CHECK(round.decision.loans.size() == 1);
  CHECK(round.loans[1].empty());
}

TEST_CASE("plan_lending: own jobs first, only trusted loans in force, each at most its count") {
  const std::vector<sys::CampusLoan> loans{
      {"uni", "a", "tcp://a", 7, 2, "/bin/spin", {}, "/", "", 50},
      {"uni", "evil", "tcp://e", 9, 4, "/bin/sh", {}, "/", "", 50},   // a borrower not trusted
      {"other", "a", "tcp://a", 8, 4, "/bin/spin", {}, "/", "", 50},  // a campus not trusted
      {"uni", "a", "tcp://a", 6, 4, "/bin/spin", {}, "/", "", 10},    // expired
  };
  const LendTrust trust{{"a"}, {"uni"}};
  const bool own[] = {true, false, false, false};
  const bool available[] = {true, true, false, true};
  const std::vector<std::optional<LentJob>> serving(4);
  const auto plan = plan_lending(20, loans, trust, own, available, serving);
  REQUIRE(plan.size() == 4);
  CHECK_FALSE(plan[0]);  // its own job
  CHECK(plan[1] == LentJob{"a", 7});
  CHECK_FALSE(plan[2]);  // unavailable
  CHECK(plan[3] == LentJob{"a", 7});
  // Without trust nothing is served.
  const auto none = plan_lending(20, loans, LendTrust{}, own, available, serving);
  CHECK(std::none_of(none.begin(), none.end(), [](const auto& p) { return p.has_value(); }));
  // After the expiry, nothing either.
  const auto late = plan_lending(60, loans, trust, own, available, serving);
  CHECK(std::none_of(late.begin(), late.end(), [](const auto& p) { return p.has_value(); }));
}

TEST_CASE("subnet state with requirements: jobs' requirements and idle nodes' attributes, to JSON and back") {
  // Per node: 0 idle with gpu, 1 idle plain, 2 busy with gpu, 3 idle with gpu, 4 idle offering nothing.
  const sched::NodeAttributes gpu{8, std::int64_t{16} << 30, "x86_64", {"gpu"}},
      plain{4, 1 << 30, "x86_64", {}};
  const std::vector<std::optional<sched::NodeAttributes>> offers{gpu, plain, gpu, gpu, std::nullopt};
  std::vector<JobInfo> jobs(3);
  jobs[0].id = 1;
  jobs[1].id = 2;
  jobs[1].requirement = "label=gpu";
  jobs[2].id = 3;
  jobs[2].requirement = "label=fpga";
  for (auto& j : jobs) j.mean_task_time = 2, j.tasks_left = 10;
  const sched::SubnetState s = subnet_state(jobs, {true, true, true, true, true},
                                            {false, false, true, false, false}, {1, 1, 1, 1, 1}, offers);
  CHECK(s.idle == 4);
  CHECK(s.idle_nodes == std::vector<sched::IdleNodes>{{gpu, 2}, {plain, 1}});
  CHECK_FALSE(s.jobs[0].stranded);
  CHECK_FALSE(s.jobs[1].stranded);  // nodes 0, 2 and 3 have gpu
  CHECK(s.jobs[2].stranded);        // none has fpga
  const auto back = subnet_state_from_json(subnet_state_json(s));
  REQUIRE(back);
  CHECK(back->idle_nodes == s.idle_nodes);
  CHECK(back->jobs[1].requirement == sched::parse_requirement("label=gpu"));
  CHECK(back->jobs[2].stranded);
  CHECK(back->jobs[0].requirement.empty());
  // A state without requirements or attributes reports what it did before: no new keys.
  sched::SubnetState plain_state;
  plain_state.jobs = {{4, 12, 3}};
  CHECK(subnet_state_json(plain_state) ==
        R"({"available":0.0,"idle":0,"jobs":[{"id":4,"tasks_left":3,"work_left":12.0}]})");
  CHECK_FALSE(subnet_state_from_json(R"({"jobs":[],"available":1,"idle":1,"idle_nodes":[{"count":1}]})"));
}

TEST_CASE(
    "live campus round: a stranded job's loan names its requirement and comes from the lender that has it") {
  LiveCampus campus(parse_live_campus(R"(subnets:
  - {name: a, server: "tcp://127.0.0.1:7001"}
  - {name: b, server: "tcp://127.0.0.1:7002", lends_to: [a]}
  - {name: c, server: "tcp://127.0.0.1:7003", lends_to: [a]}
)",
                                      "c.yaml"));
  sched::CampusJob job{7, 10, 4};  // little work: a is not congested
  job.requirement = sched::parse_requirement("label=gpu");
  job.stranded = true;
  std::vector<SubnetReading> r{reading(100, {job}, 2, 2), reading(100, {}, 3, 3), reading(100, {}, 2, 2)};
  sched::SubnetState c;
  c.available = 2;
  c.idle = 2;
  c.idle_nodes = {{sched::NodeAttributes{8, 1 << 30, "x86_64", {"gpu"}}, 1}};
  r[2].report->json = subnet_state_json(c);
  const CampusRound round = campus.round(100.5, r);
  CHECK(round.loans[1].empty());
  REQUIRE(round.loans[2].size() == 1);
  CHECK(round.loans[2][0].nodes == 1);
  CHECK(round.loans[2][0].requirement == "label=gpu");
}

TEST_CASE("plan_lending: a loan with a requirement is served only by nodes that satisfy it") {
  const std::vector<sys::CampusLoan> loans{
      {"uni", "a", "tcp://a", 7, 2, "/bin/spin", {}, "/", "", 50, "label=gpu"},
  };
  const LendTrust trust{{"a"}, {}};
  const bool own[] = {false, false, false};
  const bool available[] = {true, true, true};
  const std::vector<std::optional<LentJob>> serving(3);
  const std::vector<sched::NodeAttributes> offers{
      {4, 1 << 30, "x86_64", {}}, {4, 1 << 30, "x86_64", {"gpu"}}, {}};
  const auto plan = plan_lending(20, loans, trust, own, available, serving, offers);
  CHECK(plan == std::vector<std::optional<LentJob>>{std::nullopt, LentJob{"a", 7}, std::nullopt});
  // Without attributes no node offers anything: the loan is not served.
  const auto none = plan_lending(20, loans, trust, own, available, serving);
  CHECK(std::none_of(none.begin(), none.end(), [](const auto& p) { return p.has_value(); }));
}
