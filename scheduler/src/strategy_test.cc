#include "piranha/scheduler/strategy.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "piranha/scheduler/decision.h"
#include "piranha/scheduler/requirement.h"

using namespace piranha::sched;
using piranha::InputError;

namespace {

// Runs one invocation and returns the chosen job id per node (0 = none).
std::vector<JobId> run(Strategy& s, const std::vector<JobView>& queue, std::size_t nodes, double now = 0,
                       const NodeOutlook* outlook = nullptr, std::vector<Slot> current = {},
                       Rng* rng = nullptr, bool spill = false) {
  if (current.empty()) current.assign(nodes, kIdle);
  std::vector<Slot> out(nodes, 99);
  Rng local(1);
  Invocation inv{now, queue, current, outlook, rng ? rng : &local, spill};
  s.assign(inv, out);
  std::vector<JobId> ids;
  for (Slot o : out) ids.push_back(o == kIdle ? 0 : queue.at(static_cast<std::size_t>(o)).id);
  return ids;
}

JobId top(const std::string& name, const std::vector<JobView>& queue) {
  auto s = make_strategy(name);
  return run(*s, queue, 1).at(0);
}

//                      id arrival task_time tasks tasks_left attained
const std::vector<JobView> kQueue{{1, 0, 5, 100, 10, 300},    // SRT 50,  SPT 500
                                  {2, 3, 2, 50, 40, 20},      // SRT 80,  SPT 100
                                  {3, 3, 9, 10, 5, 45},       // SRT 45,  SPT 90
                                  {4, 8, 2, 200, 100, 400}};  // SRT 200, SPT 400

}  // namespace

TEST_CASE("global strategies pick the top job of their priority") {
  CHECK(top("FCFS", kQueue) == 1);
  CHECK(top("TSK", kQueue) == 2);  // 2 and 4 tie at task time 2: earlier arrival wins
  CHECK(top("SRT", kQueue) == 3);
  CHECK(top("SPT", kQueue) == 3);
  CHECK(top("SET", kQueue) == 2);
  CHECK(top("LET", kQueue) == 4);
  CHECK(top("tsk", kQueue) == 2);  // names are case-insensitive
}

TEST_CASE("ties are broken by (arrival, id), i.e. queue order") {
  std::vector<JobView> q{{7, 0, 3, 10, 10, 5}, {8, 0, 3, 10, 10, 5}, {2, 1, 3, 10, 10, 5}};
  for (const char* name : {"FCFS", "TSK", "SRT", "SPT", "SET", "LET"}) {
    INFO(name);
    CHECK(top(name, q) == 7);
  }
}

TEST_CASE("every node gets the top job, an empty queue gives none") {
  auto s = make_strategy("SRT");
  CHECK(run(*s, kQueue, 3) == std::vector<JobId>{3, 3, 3});
  CHECK(run(*s, {}, 2) == std::vector<JobId>{0, 0});
}

TEST_CASE("ROR(q): the holder keeps the nodes for q, then the next in queue order, wrapping") {
  auto s = make_strategy("ROR(3)");
  std::vector<JobView> q{{1, 0, 1, 9, 9, 0}, {2, 0, 1, 9, 9, 0}, {3, 1, 1, 9, 9, 0}};
  CHECK(run(*s, q, 1, 0)[0] == 1);
  CHECK(run(*s, q, 1, 2)[0] == 1);
  CHECK(run(*s, q, 1, 3)[0] == 2);  // held for 3
  CHECK(run(*s, q, 1, 5)[0] == 2);
  CHECK(run(*s, q, 1, 7)[0] == 3);   // first invocation with t - since >= 3
  CHECK(run(*s, q, 1, 10)[0] == 1);  // wraps
  // The holder completes: the job after it in queue order takes over at once.
  std::vector<JobView> without1{{2, 0, 1, 9, 9, 0}, {3, 1, 1, 9, 9, 0}};
  CHECK(run(*s, without1, 1, 11)[0] == 2);
  std::vector<JobView> only3{{3, 1, 1, 9, 9, 0}};
  CHECK(run(*s, only3, 1, 12)[0] == 3);  // 2 completed; 3 follows it
  CHECK(run(*s, only3, 1, 15)[0] == 3);  // alone: it follows itself
  CHECK(make_strategy("ROR")->name() == "ROR");
}

TEST_CASE("ROR: a completed last job wraps to the front") {
  auto s = make_strategy("ROR(100)");
  std::vector<JobView> q{{1, 0, 1, 9, 9, 0}, {2, 5, 1, 9, 9, 0}};
  CHECK(run(*s, q, 1, 0)[0] == 1);
  CHECK(run(*s, q, 1, 100)[0] == 2);
  std::vector<JobView> only1{{1, 0, 1, 9, 9, 0}};
  CHECK(run(*s, only1, 1, 101)[0] == 1);
}

TEST_CASE("RND: uniform over the queue, per node") {
  auto s = make_strategy("RND");
  Rng rng(3);
  std::map<JobId, int> count;
  for (int i = 0; i < 400; ++i)
    for (JobId id : run(*s, kQueue, 5, i, nullptr, {}, &rng)) ++count[id];
  CHECK(count.size() == 4);
  for (auto [id, c] : count) CHECK(c > 400);  // each about 500
}

TEST_CASE("FAIR: idle nodes draw a job, busy nodes switch to each new job with probability 1/q") {
  Rng rng(5);
  const std::size_t nodes = 4000;
  auto s = make_strategy("FAIR");
  std::vector<JobView> q{{1, 0, 1, 9, 9, 0}};
  CHECK(run(*s, q, nodes, 0, nullptr, {}, &rng) == std::vector<JobId>(nodes, 1));
  // Nothing new: nodes keep their jobs.
  std::vector<Slot> cur(nodes, 0);
  CHECK(run(*s, q, nodes, 1, nullptr, cur, &rng) == std::vector<JobId>(nodes, 1));
  // Job 2 arrives (queue length 2), then job 3 (3): a node ends on 3 with
  // probability 1/3, on 2 with (1/2)(2/3) = 1/3, stays on 1 with 1/3.
  std::vector<JobView> q3{{1, 0, 1, 9, 9, 0}, {2, 2, 1, 9, 9, 0}, {3, 2, 1, 9, 9, 0}};
  std::map<JobId, int> count;
  for (JobId id : run(*s, q3, nodes, 2, nullptr, cur, &rng)) ++count[id];
  for (JobId id : {1, 2, 3}) CHECK(count[id] == doctest::Approx(nodes / 3.0).epsilon(0.1));
  // A node whose job completed (current kIdle) draws uniformly.
  std::vector<Slot> idle(nodes, kIdle);
  count.clear();
  for (JobId id : run(*s, q3, nodes, 3, nullptr, idle, &rng)) ++count[id];
  for (JobId id : {1, 2, 3}) CHECK(count[id] == doctest::Approx(nodes / 3.0).epsilon(0.1));
}

TEST_CASE("FAIR: q is the queue length right after the arrival, even when jobs completed since") {
  Rng rng(8);
  const std::size_t nodes = 8000;
  auto s = make_strategy("FAIR");
  std::vector<JobView> q1{{1, 0, 1, 9, 9, 0}};
  run(*s, q1, nodes, 0, nullptr, {}, &rng);
  // Job 2 arrived at 3 behind jobs 1 and 5 (q = 3); job 5 completed before
  // this invocation at 10, so job 2 is second in the queue but q stays 3.
  std::vector<JobView> q{{1, 0, 1, 9, 9, 0}, {2, 3, 1, 9, 9, 0}};
  const std::vector<std::int64_t> lengths{1, 3};
  std::vector<Slot> out(nodes, 99), cur(nodes, 0);
  Invocation inv;
  inv.now = 10;
  inv.queue = q;
  inv.current = cur;
  inv.rng = &rng;
  inv.arrival_queue_length = lengths;
  s->assign(inv, out);
  const auto switched = std::count(out.begin(), out.end(), Slot{1});
  CHECK(static_cast<double>(switched) == doctest::Approx(nodes / 3.0).epsilon(0.08));
}

TEST_CASE("xFIT: first job in x's order whose task time fits the predicted AP length, else TSK") {
  FixedOutlook o({100, 6, 3, 1}, {1, 1, 1, 1});
  auto s = make_strategy("SRTFIT");
  // SRT order: 3 (tt 9), 1 (tt 5), 2 (tt 2), 4 (tt 2).
  CHECK(run(*s, kQueue, 4, 0, &o) == std::vector<JobId>{3, 1, 2, 2});
  auto l = make_strategy("LETFIT");
  // LET order: 4 (tt 2), 1, 3, 2.
  CHECK(run(*l, kQueue, 4, 0, &o) == std::vector<JobId>{4, 4, 4, 2});
}

TEST_CASE("xA(T): x's top where the predicted fraction >= T, else TSK's top") {
  FixedOutlook o({0, 0, 0}, {0.9, 0.5, 0.49});
  auto s = make_strategy("SRTA(0.5)");
  CHECK(s->name() == "SRTA(0.5)");
  CHECK(run(*s, kQueue, 3, 0, &o) == std::vector<JobId>{3, 3, 2});
  CHECK(run(*make_strategy("LETA(1)"), kQueue, 3, 0, &o) == std::vector<JobId>{2, 2, 2});
  CHECK(run(*make_strategy("LETA(0)"), kQueue, 3, 0, &o) == std::vector<JobId>{4, 4, 4});
  CHECK(make_strategy("leta(1)")->name() == "LETA(1.0)");
}

TEST_CASE("spill: a global job holds at most tasks_left nodes, nodes keep their job where they can") {
  std::vector<JobView> q{{1, 0, 1, 9, 2, 0}, {2, 1, 1, 9, 1, 0}, {3, 2, 1, 9, 9, 0}};
  auto s = make_strategy("FCFS");
  CHECK(run(*s, q, 5, 0, nullptr, {}, nullptr, true) == std::vector<JobId>{1, 1, 2, 3, 3});
  std::vector<Slot> cur{2, 1, 0, kIdle, 0};
  CHECK(run(*s, q, 5, 1, nullptr, cur, nullptr, true) == std::vector<JobId>{3, 2, 1, 3, 1});
  std::vector<JobView> small{{1, 0, 1, 9, 1, 0}};
  CHECK(run(*s, small, 3, 2, nullptr, {}, nullptr, true) == std::vector<JobId>{1, 0, 0});
}

TEST_CASE("bad strategy names and parameters are errors naming the input") {
  CHECK_THROWS_WITH_AS(make_strategy("SRTA(1.5)"),
                       "strategy \"SRTA(1.5)\": threshold 1.5 is not between 0 and 1", InputError);
  CHECK_THROWS_WITH_AS(make_strategy("ROR(0)"), "strategy \"ROR(0)\": quantum 0 must be at least 1",
                       InputError);
  CHECK_THROWS_WITH_AS(make_strategy("ROR(2.5)"), "strategy \"ROR(2.5)\": quantum \"2.5\" is not an integer",
                       InputError);
  CHECK_THROWS_WITH_AS(make_strategy("FCFS(3)"), "strategy \"FCFS(3)\": takes no parameter", InputError);
  CHECK_THROWS_AS(make_strategy("SRTA(x)"), InputError);
  CHECK_THROWS_AS(make_strategy("SRTA("), InputError);
  CHECK_THROWS_AS(make_strategy("SRTA()"), InputError);
  CHECK_THROWS_AS(make_strategy("BOGUS"), InputError);
  CHECK_THROWS_AS(make_strategy("FAIRFIT"), InputError);
  CHECK_THROWS_AS(make_strategy(""), InputError);
}

TEST_CASE("strategy lists split at top-level commas only") {
  CHECK(split_strategy_list("TSK, RORA(0.5,20),SRT") ==
        std::vector<std::string>{"TSK", "RORA(0.5,20)", "SRT"});
  CHECK(canonical_strategy_name("rora(0.50,20)") == "RORA(0.5,20)");
}

TEST_CASE("real-valued times: microsecond task times order exactly, ties by (arrival, id)") {
  // Live task times are seconds: a 3 µs job before a 40 µs one, nothing rounded to whole steps.
  const std::vector<JobView> q{{1, 0.5, 4e-5, 10, 10, 0}, {2, 0.75, 3e-6, 10, 10, 0}};
  FixedOutlook fits({1e-3}, {1});
  for (const char* name : {"TSK", "SRT", "SRTFIT"}) {
    auto s = make_strategy(name);
    CHECK_MESSAGE(run(*s, q, 1, 1.0, &fits).at(0) == 2, name);
  }
  // Equal times: the earlier arrival first, then the smaller id (the queue is in that order).
  const std::vector<JobView> tie{
      {4, 2e-6, 3e-6, 10, 10, 0}, {5, 2e-6, 3e-6, 10, 10, 0}, {3, 2.5e-6, 3e-6, 10, 10, 0}};
  for (const char* name : {"TSK", "SRT", "SRTFIT"}) {
    auto s = make_strategy(name);
    CHECK_MESSAGE(run(*s, tie, 1, 1.0, &fits).at(0) == 4, name);
  }
  // A fractional ROR quantum in seconds: the holder keeps the nodes until it has held them that long.
  auto ror = make_strategy("ROR(1)");
  CHECK(run(*ror, q, 1, 0.25).at(0) == 1);
  CHECK(run(*ror, q, 1, 1.0).at(0) == 1);
  CHECK(run(*ror, q, 1, 1.25).at(0) == 2);
}

namespace {

// Runs one invocation under `eligible` and returns the chosen job id per node (0 = none).
std::vector<JobId> run_eligible(Strategy& s, const Eligibility& eligible, std::size_t nodes, double now,
                                const NodeOutlook* outlook, Rng& rng, bool spill) {
  std::vector<Slot> current(nodes, kIdle), out(nodes, 99);
  Invocation inv{now, kQueue, current, outlook, &rng, spill};
  inv.eligible = &eligible;
  s.assign(inv, out);
  std::vector<JobId> ids;
  for (Slot o : out) ids.push_back(o == kIdle ? 0 : kQueue.at(static_cast<std::size_t>(o)).id);
  return ids;
}

}  // namespace

TEST_CASE(
    "requirements: every strategy gives a node only jobs it may run, and idles a node that may run none") {
  // Node 0 may run every job; nodes 1 and 3 only jobs 1 and 4 (queue
  // positions 0 and 3); node 2 none.
  const Eligibility e({0, 1, 2, 1}, 3, kQueue.size(), {1, 1, 1, 1, /**/ 1, 0, 0, 1, /**/ 0, 0, 0, 0});
  const std::set<JobId> narrow{1, 4};
  FixedOutlook outlook({100, 6, 3, 1}, {0.9, 0.5, 0.49, 0.2});
  for (const char* name : {"FCFS", "TSK", "SRT", "SPT", "SET", "LET", "ROR(2)", "RND", "FAIR", "TSKFIT",
                           "SRTFIT", "SRTA(0.5)", "LETA(0.3)", "SRTMIX", "FCFSMIX(2)"}) {
    for (bool spill : {false, true}) {
      INFO(name << (spill ? " with spill" : ""));
      auto s = make_strategy(name);
      Rng rng(11);
      for (int t = 0; t < 20; ++t) {
        const auto ids = run_eligible(*s, e, 4, t, &outlook, rng, spill);
        CHECK(ids[0] != 0);
        CHECK(narrow.count(ids[1]));
        CHECK(ids[2] == 0);
        CHECK(narrow.count(ids[3]));
      }
    }
  }
  // The global strategies: the best job by their own order among those the node may run.
  Rng rng(1);
  // TSK order 2, 4, 1, 3; SRT 3, 1, 2, 4; LET 4, 1, 3, 2.
  CHECK(run_eligible(*make_strategy("TSK"), e, 4, 0, nullptr, rng, false) == std::vector<JobId>{2, 4, 0, 4});
  CHECK(run_eligible(*make_strategy("SRT"), e, 4, 0, nullptr, rng, false) == std::vector<JobId>{3, 1, 0, 1});
  CHECK(run_eligible(*make_strategy("LET"), e, 4, 0, nullptr, rng, false) == std::vector<JobId>{4, 4, 0, 4});
  // SRTFIT: node 1 (AP 6) fits job 1 (task time 5), node 3 (AP 1) fits none: TSK's first it may run.
  CHECK(run_eligible(*make_strategy("SRTFIT"), e, 4, 0, &outlook, rng, false) ==
        std::vector<JobId>{3, 1, 0, 4});
  // Spill: job 1 has 10 tasks left, room for both narrow nodes.
  CHECK(run_eligible(*make_strategy("FCFS"), e, 4, 0, nullptr, rng, true) == std::vector<JobId>{1, 1, 0, 1});
}

TEST_CASE("requirements through the Decider: a job no node satisfies waits, the others run where they may") {
  auto tsk = make_strategy("TSK");
  QueuedJob gpu, any, tpu;
  gpu.id = 1, gpu.task_time = 1, gpu.requirement = parse_requirement("label=gpu");
  any.id = 2, any.arrival = 1, any.task_time = 5;
  tpu.id = 3, tpu.arrival = 2, tpu.task_time = 0.5, tpu.requirement = parse_requirement("label=tpu");
  const std::vector<NodeAttributes> nodes{{4, 1 << 30, "x86_64", {"gpu"}}, {4, 1 << 30, "x86_64", {}}};
  const std::vector<std::optional<JobId>> none(2);
  Decider d;
  CHECK(d.decide(*tsk, 0, {gpu, any, tpu}, none, nullptr, nullptr, false, nodes) ==
        std::vector<std::optional<JobId>>{1, 2});
  CHECK(d.decide(*tsk, 1, {tpu}, none, nullptr, nullptr, false, nodes) ==
        std::vector<std::optional<JobId>>(2));
  // Without attributes the requirements are not looked at (the simulators).
  CHECK(d.decide(*tsk, 2, {gpu, any, tpu}, none, nullptr, nullptr, false) ==
        std::vector<std::optional<JobId>>(2, 3));
}
