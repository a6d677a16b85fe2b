#include "piranha/nps/campus_live.h"

#include <doctest/doctest.h>

#include "piranha/base/input_error.h"

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
