#include "piranha/scheduler/campus.h"

#include <doctest/doctest.h>

#include <numeric>

#include "piranha/base/input_error.h"

using namespace piranha::sched;

namespace {

// A subnet with `available` nodes of its own, `idle` of them idle, and jobs of (id, work left,
// tasks left).
SubnetState subnet(double available, std::int64_t idle, std::vector<CampusJob> jobs = {}) {
  SubnetState s;
  s.available = available;
  s.idle = idle;
  s.jobs = std::move(jobs);
  return s;
}

CampusParams params() {
  CampusParams p;
  p.period = 10;
  p.congested = 50;
  p.relieved = 20;
  p.hold = 30;
  p.cooldown = 30;
  return p;
}

std::int64_t lent(const CampusDecision& d) {
  std::int64_t k = 0;
  for (const Loan& l : d.loans) k += l.nodes;
  return k;
}

constexpr auto kJob = static_cast<std::size_t>(LoanEnd::kJobEnded);
constexpr auto kRelieved = static_cast<std::size_t>(LoanEnd::kRelieved);
constexpr auto kLender = static_cast<std::size_t>(LoanEnd::kLenderNeeds);

}  // namespace

TEST_CASE("campus: idle nodes go to the congested subnet's job with the most work left") {
  CampusStrategy c(params());
  // Subnet 0: 10 nodes, 2,000 node-steps of work (pressure 200): congested. Subnet 1: 10 idle
  // nodes, nothing to do. Subnet 2: pressure 30, under `congested`: not a borrower.
  std::vector<SubnetState> s{subnet(10, 0, {{7, 500, 100}, {8, 1500, 100}}), subnet(10, 10),
                             subnet(10, 0, {{9, 300, 100}})};
  const CampusDecision d = c.decide(0, s);
  REQUIRE(d.loans.size() == 1);
  CHECK(d.loans[0] == Loan{1, 0, 8, 10, 0});
  CHECK(d.congested == std::vector<bool>{true, false, false});
  CHECK(d.loans_started == 1);
  CHECK(d.nodes_lent == 10);
}

TEST_CASE("campus: no loan to a subnet under the congested threshold, nor more nodes than tasks") {
  CampusStrategy c(params());
  std::vector<SubnetState> calm{subnet(10, 0, {{1, 490, 100}}), subnet(10, 10)};
  CHECK(c.decide(0, calm).loans.empty());  // pressure 49 < 50
  // Pressure 60, but the job has 3 tasks left: 3 nodes, the rest stays with the lender.
  std::vector<SubnetState> few{subnet(10, 0, {{1, 600, 3}}), subnet(10, 10)};
  CHECK(lent(c.decide(10, few)) == 3);
}

TEST_CASE("campus: the most pressed borrower first, until its pressure with the loans is relieved") {
  CampusStrategy c(params());
  // Subnet 0: 4,000 work on 10 nodes (pressure 400); subnet 1: 1,000 on 10 (100); 30 spare nodes
  // in subnet 2. Subnet 0's pressure counting its loans, 4000 / (10 + b), stays above 100 until
  // b = 30: all 30 go to subnet 0.
  std::vector<SubnetState> s{subnet(10, 0, {{1, 4000, 1000}}), subnet(10, 0, {{2, 1000, 1000}}),
                             subnet(10, 30)};
  const CampusDecision d = c.decide(0, s);
  REQUIRE(d.loans.size() == 1);
  CHECK(d.loans[0] == Loan{2, 0, 1, 30, 0});
  // With 40 spare nodes the pressures are kept level past that: 4000 / (10 + b0) = 1000 / (10 +
  // b1) at b0 = 30 + 4 b1, so 38 and 2.
  CampusStrategy c40(params());
  s[2].idle = 40;
  const CampusDecision d40 = c40.decide(0, s);
  REQUIRE(d40.loans.size() == 2);
  CHECK(d40.loans[0].nodes == 38);
  CHECK(d40.loans[1].nodes == 2);
  // A borrower whose pressure with its loans is under `relieved` gets no more: 600 / (10 + b)
  // is still 20 at b = 20, and under it from b = 21.
  CampusStrategy r(params());
  std::vector<SubnetState> small{subnet(10, 0, {{1, 600, 1000}}), subnet(10, 100)};
  CHECK(lent(r.decide(0, small)) == 21);
}

TEST_CASE("campus: a loan ends when the borrower's job ends") {
  CampusStrategy c(params());
  std::vector<SubnetState> s{subnet(10, 0, {{1, 2000, 100}, {2, 1000, 100}}), subnet(10, 5)};
  REQUIRE(c.decide(0, s).loans.at(0).job == 1);
  s[0].jobs.erase(s[0].jobs.begin());  // job 1 ended; job 2 keeps the subnet congested
  const CampusDecision d = c.decide(10, s);
  CHECK(d.loans_ended[kJob] == 1);
  CHECK(d.nodes_returned[kJob] == 5);
  // Its nodes go to the subnet's other job at once: the lender is not in cooldown.
  REQUIRE(d.loans.size() == 1);
  CHECK(d.loans[0].job == 2);
}

TEST_CASE("campus: a loan ends when the borrower is relieved, but not before the hold") {
  CampusStrategy c(params());  // hold 30
  std::vector<SubnetState> s{subnet(10, 0, {{1, 2000, 100}}), subnet(10, 5)};
  REQUIRE(lent(c.decide(0, s)) == 5);
  s[0].jobs[0].work_left = 100;  // pressure 10 < relieved 20
  const CampusDecision early = c.decide(10, s);
  CHECK_FALSE(early.congested[0]);
  CHECK(lent(early) == 5);  // 10 < hold
  const CampusDecision late = c.decide(30, s);
  CHECK(late.loans.empty());
  CHECK(late.loans_ended[kRelieved] == 1);
  CHECK(late.nodes_returned[kRelieved] == 5);
}

TEST_CASE("campus: the lender's own jobs first: loans shrink newest first, then a cooldown") {
  CampusStrategy c(params());  // cooldown 30
  std::vector<SubnetState> s{subnet(10, 0, {{1, 5000, 1000}}), subnet(10, 0), subnet(20, 4)};
  REQUIRE(lent(c.decide(0, s)) == 4);
  // At 10 subnet 1 is congested too and 6 more nodes are spare: 5000 / (10 + b) ties at 4
  // borrowed each, so subnet 1 gets 5 and subnet 0 one more.
  s[1].jobs = {{2, 5000, 1000}};
  s[2].idle = 10;
  const CampusDecision ten = c.decide(10, s);
  REQUIRE(ten.loans.size() == 2);
  CHECK(ten.loans[0] == Loan{2, 0, 1, 5, 0});
  CHECK(ten.loans[1] == Loan{2, 1, 2, 5, 10});
  s[2].idle = 7;  // its own scheduler took 3 back: the newest loan shrinks
  const CampusDecision d = c.decide(20, s);
  REQUIRE(d.loans.size() == 2);
  CHECK(d.loans[0].nodes == 5);
  CHECK(d.loans[1].nodes == 2);
  CHECK(d.nodes_returned[kLender] == 3);
  CHECK(d.loans_ended[kLender] == 0);
  // Idle again at 30 and 40: no new loan within the cooldown (30 from 20), then lent at 50.
  s[2].idle = 10;
  CHECK(lent(c.decide(30, s)) == 7);
  CHECK(lent(c.decide(40, s)) == 7);
  CHECK(lent(c.decide(50, s)) == 10);
}

TEST_CASE("campus: a congested subnet lends nothing, and its loans end") {
  CampusStrategy c(params());
  std::vector<SubnetState> s{subnet(10, 0, {{1, 5000, 1000}}), subnet(10, 6)};
  REQUIRE(lent(c.decide(0, s)) == 6);
  // Subnet 1 becomes congested itself while still reporting idle nodes (jobs with few tasks).
  s[1].jobs = {{2, 800, 4}};
  const CampusDecision d = c.decide(10, s);
  CHECK(d.congested[1]);
  CHECK(d.nodes_returned[kLender] == 6);
  // Subnet 0 has no idle node, so nothing goes back the other way either.
  CHECK(d.loans.empty());
}

TEST_CASE("campus: the reserve stays unlent") {
  CampusParams p = params();
  p.reserve = 3;
  CampusStrategy c(p);
  std::vector<SubnetState> s{subnet(10, 0, {{1, 5000, 1000}}), subnet(10, 10)};
  CHECK(lent(c.decide(0, s)) == 7);
}

TEST_CASE("campus: no flapping while the borrower's pressure oscillates inside the band") {
  CampusStrategy c(params());  // congested 50, relieved 20
  std::vector<SubnetState> s{subnet(10, 0, {{1, 600, 1000}}), subnet(10, 8)};
  const CampusDecision first = c.decide(0, s);
  REQUIRE(lent(first) == 8);
  std::int64_t changes = 0;
  for (int k = 1; k <= 100; ++k) {
    // Own pressure 45 and 25 in turn: between relieved and congested.
    s[0].jobs[0].work_left = k % 2 ? 450 : 250;
    const CampusDecision d = c.decide(10.0 * k, s);
    changes += d.loans_started + d.nodes_lent + d.nodes_returned[kJob] + d.nodes_returned[kRelieved] +
               d.nodes_returned[kLender];
    CHECK(d.congested[0]);
  }
  CHECK(changes == 0);
  // And a subnet that was never congested does not start while it oscillates in the band.
  CampusStrategy fresh(params());
  for (int k = 0; k < 100; ++k) {
    s[0].jobs[0].work_left = k % 2 ? 450 : 250;
    CHECK(fresh.decide(10.0 * k, s).loans.empty());
  }
}

TEST_CASE("campus: pressure swinging across both thresholds changes loans at most once per hold") {
  CampusParams p = params();
  p.hold = 60;
  CampusStrategy c(p);
  std::vector<SubnetState> s{subnet(10, 0, {{1, 1000, 1000}}), subnet(10, 8)};
  std::int64_t started = 0, ended = 0;
  for (int k = 0; k < 120; ++k) {
    s[0].jobs[0].work_left = k % 2 ? 100 : 1000;  // pressure 10 and 100, every period
    const CampusDecision d = c.decide(10.0 * k, s);
    started += d.loans_started;
    ended += d.loans_ended[kRelieved];
  }
  // Without the hold a loan would start and end every two periods (60 of each over 120 periods):
  // with it, each loan lasts at least 60 (six periods).
  CHECK(started <= 120 / 6 + 1);
  CHECK(ended <= 120 / 6);
  CHECK(started >= 2);
}

TEST_CASE("campus: a lender whose idle count oscillates does not lend and reclaim every period") {
  CampusStrategy c(params());  // cooldown 30 = three periods
  std::vector<SubnetState> s{subnet(10, 0, {{1, 9000, 1000}}), subnet(10, 0)};
  std::int64_t lent_nodes = 0, returned = 0;
  for (int k = 0; k < 60; ++k) {
    s[1].idle = k % 2 ? 2 : 8;
    const CampusDecision d = c.decide(10.0 * k, s);
    lent_nodes += d.nodes_lent;
    returned += d.nodes_returned[kLender];
    CHECK(lent(d) <= s[1].idle);  // never more than the lender can spare, at any decision
  }
  // Without the cooldown, 6 nodes would go out and come back 30 times each; with it, the lender
  // lends again only every fourth period at most.
  CHECK(returned <= 6 * (60 / 4 + 1));
  CHECK(lent_nodes <= 8 + 6 * (60 / 4 + 1));
  CHECK(returned < 6 * 30);
}

TEST_CASE("campus: a lender lends only to the borrowers it trusts, and untrusted loans end") {
  CampusStrategy c(params());
  // Subnet 0 congested; subnet 1 idle but does not trust it; subnet 2 idle and trusts it.
  std::vector<SubnetState> s{subnet(10, 0, {{5, 4000, 100}}), subnet(10, 10), subnet(10, 4)};
  c.set_trust({{false, true, true}, {false, false, true}, {true, true, false}});
  CampusDecision d = c.decide(0, s);
  REQUIRE(d.loans.size() == 1);
  CHECK(d.loans[0] == Loan{2, 0, 5, 4, 0});
  // Trust withdrawn: the loan ends at the next decision, the lender's nodes back.
  c.set_trust({{false, true, true}, {false, false, true}, {false, true, false}});
  d = c.decide(10, s);
  CHECK(d.loans.empty());
  CHECK(d.nodes_returned[kLender] == 4);
  c.set_trust({{false}});
  CHECK_THROWS_AS(c.decide(20, s), std::invalid_argument);
}

TEST_CASE("campus: subnets must keep their number between decisions") {
  CampusStrategy c(params());
  std::vector<SubnetState> two{subnet(10, 0), subnet(10, 0)};
  c.decide(0, two);
  two.pop_back();
  CHECK_THROWS_AS(c.decide(10, two), std::invalid_argument);
}

TEST_CASE("campus: bad parameters are an InputError that names the parameter") {
  auto error = [](CampusParams p) -> std::string {
    try {
      validate(p);
    } catch (const piranha::InputError& e) {
      return e.what();
    }
    return "";
  };
  CampusParams p = params();
  CHECK(error(p).empty());
  p.period = 0;
  CHECK(error(p) == "campus strategy: period 0 must be > 0");
  p = params();
  p.relieved = 60;
  CHECK(error(p).find("relieved 60 must be <= congested 50") != std::string::npos);
  p = params();
  p.hold = -1;
  CHECK(error(p) == "campus strategy: hold -1 must be >= 0");
  p = params();
  p.cooldown = -1;
  CHECK(error(p) == "campus strategy: cooldown -1 must be >= 0");
  p = params();
  p.reserve = -2;
  CHECK(error(p) == "campus strategy: reserve -2 must be >= 0");
  CHECK_THROWS_AS(CampusStrategy{p}, piranha::InputError);
}

TEST_CASE("lend_idle: own jobs first, then loans on idle available nodes, keeping last tick's") {
  const std::vector<Loan> loans{{1, 0, 7, 2, 0}, {1, 2, 9, 1, 0}};
  const LoanKey a{0, 7}, b{2, 9};
  // Node 0 runs an own job; node 1 is unavailable; nodes 2..5 are idle; node 4 served loan a.
  const bool own[] = {true, false, false, false, false, false};
  const bool available[] = {true, false, true, true, true, true};
  std::optional<LoanKey> serving[6] = {a, a, std::nullopt, std::nullopt, a, std::nullopt};
  const auto out = lend_idle(loans, own, available, serving);
  const std::vector<std::optional<LoanKey>> want{std::nullopt, std::nullopt, a, b, a, std::nullopt};
  CHECK(out == want);
}

TEST_CASE("lend_idle: a loan shrunk to fewer nodes keeps its lowest-index servers") {
  const std::vector<Loan> loans{{1, 0, 7, 1, 0}};
  const LoanKey a{0, 7};
  const bool own[] = {false, false, false};
  const bool available[] = {true, true, true};
  std::optional<LoanKey> serving[3] = {std::nullopt, a, a};
  const auto out = lend_idle(loans, own, available, serving);
  CHECK(out == std::vector<std::optional<LoanKey>>{std::nullopt, a, std::nullopt});
  // A loan no longer in force is served by no node.
  CHECK(lend_idle({}, own, available, serving) == std::vector<std::optional<LoanKey>>(3));
}

namespace {

NodeAttributes offers(std::vector<std::string> labels) {
  return NodeAttributes{4, std::int64_t{8} << 30, "x86_64", std::move(labels)};
}

// A job needing label=gpu, stranded (no node of its subnet has one) unless said otherwise.
CampusJob gpu_job(JobId id, double work, std::int64_t tasks, bool stranded = true) {
  CampusJob j{id, work, tasks};
  j.requirement = parse_requirement("label=gpu");
  j.stranded = stranded;
  return j;
}

}  // namespace

TEST_CASE("campus: a stranded job borrows only from the subnet with nodes that satisfy it, only those") {
  CampusStrategy c(params());
  // Subnet 0: a gpu job it has no gpu node for, little work (pressure 5: not congested). Subnet 1:
  // 10 idle nodes, none with gpu (6 publish attributes, 4 none). Subnet 2: 4 idle, 2 with gpu.
  std::vector<SubnetState> s{subnet(10, 0, {gpu_job(7, 50, 5)}), subnet(10, 10), subnet(10, 4)};
  s[1].idle_nodes = {{offers({"fast"}), 6}};
  s[2].idle_nodes = {{offers({}), 2}, {offers({"gpu"}), 2}};
  const CampusDecision d = c.decide(0, s);
  REQUIRE(d.loans.size() == 1);
  CHECK(d.loans[0] == Loan{2, 0, 7, 2, 0});
  CHECK(d.congested == std::vector<bool>{false, false, false});
  // A stranded job's loans outlast the hold while its subnet is not congested, and end with it.
  const CampusDecision held = c.decide(40, s);
  CHECK(lent(held) == 2);
  CHECK(held.nodes_returned[kRelieved] == 0);
  CHECK(held.loans_started == 0);
  s[0].jobs.clear();
  const CampusDecision ended = c.decide(50, s);
  CHECK(ended.loans.empty());
  CHECK(ended.nodes_returned[kJob] == 2);
}

TEST_CASE("campus: a stranded job's work is not its subnet's pressure, and it borrows first") {
  CampusStrategy c(params());
  // Subnet 1: a stranded gpu job with 5,000 work (it would be pressure 500) and nothing else: not
  // congested. Subnet 0 congested with a plain job. Subnet 2: one gpu node and two plain, idle.
  std::vector<SubnetState> s{subnet(10, 0, {{3, 2000, 100}}), subnet(10, 0, {gpu_job(7, 5000, 100)}),
                             subnet(10, 3)};
  s[2].idle_nodes = {{offers({"gpu"}), 1}, {offers({}), 2}};
  const CampusDecision d = c.decide(0, s);
  CHECK(d.congested == std::vector<bool>{true, false, false});
  REQUIRE(d.loans.size() == 2);
  CHECK(d.loans[0] == Loan{2, 0, 3, 2, 0});
  CHECK(d.loans[1] == Loan{2, 1, 7, 1, 0});
  // At the next decision the oldest loans keep the nodes they can; the plain job's loan counts
  // the plain nodes first (the fewest requirements want them), so the gpu node stays the gpu
  // job's: nothing changes.
  const CampusDecision again = c.decide(10, s);
  CHECK(again.loans == d.loans);
  CHECK(again.nodes_returned[kLender] == 0);
}

TEST_CASE("campus: a loan for a requirement shrinks when the lender's satisfying nodes are busy") {
  CampusStrategy c(params());
  std::vector<SubnetState> s{subnet(10, 0, {gpu_job(7, 50, 5)}), subnet(10, 3)};
  s[1].idle_nodes = {{offers({"gpu"}), 1}};
  REQUIRE(lent(c.decide(0, s)) == 1);
  // Its own job took the gpu node: three plain nodes idle, none of which the gpu job may use.
  s[1].idle_nodes.clear();
  const CampusDecision d = c.decide(10, s);
  CHECK(d.loans.empty());
  CHECK(d.nodes_returned[kLender] == 1);
}

TEST_CASE("campus: a congested subnet's job with a requirement borrows only nodes that satisfy it") {
  CampusStrategy c(params());
  // Subnet 0 congested; its biggest job needs gpu (some of its own nodes have one: not stranded).
  // The lender has plain nodes only: they go to the plain job.
  std::vector<SubnetState> s{subnet(10, 0, {gpu_job(7, 3000, 100, false), {8, 1000, 100}}), subnet(10, 5)};
  const CampusDecision d = c.decide(0, s);
  REQUIRE(d.loans.size() == 1);
  CHECK(d.loans[0] == Loan{1, 0, 8, 5, 0});
  // With a gpu node among the lender's, the gpu job (the most work left) gets that one.
  CampusStrategy g(params());
  s[1].idle_nodes = {{offers({"gpu"}), 1}};
  const CampusDecision dg = g.decide(0, s);
  REQUIRE(dg.loans.size() == 2);
  CHECK(dg.loans[0] == Loan{1, 0, 7, 1, 0});
  CHECK(dg.loans[1] == Loan{1, 0, 8, 4, 0});
}

TEST_CASE("lend_idle: a loan with a requirement gets only nodes that satisfy it, the others the rest") {
  const std::vector<Loan> loans{{1, 0, 1, 2, 0}, {1, 0, 7, 1, 0}};
  const std::vector<Requirement> reqs{Requirement{}, parse_requirement("label=gpu")};
  const LoanKey plain{0, 1}, gpu{0, 7};
  // Nodes 1 and 3 have gpu; node 2 offers nothing (no attributes published).
  const std::vector<NodeAttributes> attrs{offers({}), offers({"gpu"}), NodeAttributes{}, offers({"gpu"})};
  const bool own[] = {false, false, false, false};
  const bool available[] = {true, true, true, true};
  std::optional<LoanKey> serving[4];
  CHECK(lend_idle(loans, own, available, serving, reqs, attrs) ==
        std::vector<std::optional<LoanKey>>{plain, gpu, plain, std::nullopt});
  // The plain loan served the gpu nodes at the last tick: the gpu loan takes one of them back, the
  // plain loan moving to a free plain node (one retreat).
  serving[1] = plain;
  serving[3] = plain;
  CHECK(lend_idle(loans, own, available, serving, reqs, attrs) ==
        std::vector<std::optional<LoanKey>>{plain, gpu, std::nullopt, plain});
  // No node satisfies it: the gpu loan is served by none.
  const std::vector<NodeAttributes> plain_only(4, offers({}));
  std::optional<LoanKey> none[4];
  CHECK(lend_idle(loans, own, available, none, reqs, plain_only) ==
        std::vector<std::optional<LoanKey>>{plain, plain, std::nullopt, std::nullopt});
  CHECK_THROWS_AS(lend_idle(loans, own, available, none, std::span<const Requirement>(reqs).first(1), attrs),
                  std::invalid_argument);
}
