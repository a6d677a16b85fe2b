// make_replay and estimate_mean_turnaround (shadow.h): the observation turned
// into the simulator's input, and replayed.
#include "piranha/nps/shadow.h"

#include <doctest/doctest.h>

namespace piranha::nps {
namespace {

TEST_CASE("replay: steps whose middle an available span covers are available, from the earliest event") {
  Observation o;
  o.nodes = {"a", "b"};
  o.spans = {{"a", 100, 103, true, std::nullopt},
             {"a", 103, 105, false, std::nullopt},
             {"a", 105, 110.2, true, std::nullopt},
             {"b", 100, 110, false, std::nullopt}};
  o.end = 110;
  const Replay r = make_replay(o, 1);
  CHECK(r.origin == 100);
  CHECK(r.trace.length == 10);
  REQUIRE(r.trace.periods[0].size() == 2);
  CHECK(r.trace.periods[0][0] == StepPeriod{0, 3});
  CHECK(r.trace.periods[0][1] == StepPeriod{5, 10});
  CHECK(r.trace.periods[1].empty());
}

TEST_CASE(
    "replay: tasks shorter than a step are merged so the work is kept, and a job not measured nor run is "
    "left "
    "out") {
  Observation o;
  o.nodes = {"a"};
  o.spans = {{"a", 0, 50, true, std::nullopt}};
  o.end = 50;
  o.jobs = {{1, 0, 10, 0.25, 20.0}, {2, 3.5, 4, 2.0, std::nullopt}, {3, 4, 5, 0, std::nullopt}};
  const Replay r = make_replay(o, 1);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[0].tasks == 3);  // 10 tasks of 0.25 s, 4 to a step
  CHECK(r.jobs[0].task_time == 1);
  CHECK(r.jobs[1].arrival == 3);
  CHECK(r.jobs[1].task_time == 2);
  CHECK(r.ended == std::vector<JobId>{1});
}

TEST_CASE("replay: a job never seen measured counts with the node-time it held, so a short job is not lost") {
  Observation o;
  o.nodes = {"a", "b"};
  // Job 2's 20 tasks ended on b within 2 s, before its task time was seen.
  o.spans = {{"a", 0, 10, true, 1}, {"b", 0, 1, true, 1}, {"b", 1, 3, true, 2}, {"b", 3, 10, true, 1}};
  o.end = 10;
  o.jobs = {{1, 0, 16, 1.0, 10.0}, {2, 1, 20, 0, 3.0}};
  const Replay r = make_replay(o, 1);
  REQUIRE(r.jobs.size() == 2);
  CHECK(r.jobs[1].id == 2);
  CHECK(r.jobs[1].tasks == 2);  // 20 tasks of 0.1 s, 10 to a step
  CHECK(r.jobs[1].task_time == 1);
  CHECK(r.ended == std::vector<JobId>{1, 2});
}

TEST_CASE("replay: a node its owner took back did no work for the job it was still assigned") {
  Observation o;
  o.nodes = {"a"};
  // Job 1 (one task, never seen measured) held a for 2 s, then a was
  // unavailable for 8 s with job 1 still its assignment.
  o.spans = {{"a", 0, 2, true, 1}, {"a", 2, 10, false, 1}};
  o.end = 10;
  o.jobs = {{1, 0, 1, 0, 10.0}};
  const Replay r = make_replay(o, 1);
  REQUIRE(r.jobs.size() == 1);
  CHECK(r.jobs[0].task_time == 2);
  CHECK(r.work.at(1) == 2.0);
}

TEST_CASE("replay: a job's work is the node-time it held nodes when that exceeds its tasks' time") {
  Observation o;
  o.nodes = {"a", "b"};
  // Job 1's 5 tasks of 0.1 s took 10 node-seconds here: the runtime's costs.
  o.spans = {{"a", 0, 6, true, 1}, {"b", 0, 4, true, 1}, {"a", 6, 8, true, std::nullopt}};
  o.end = 8;
  o.jobs = {{1, 0, 5, 0.1, 6.0}};
  const Replay r = make_replay(o, 1);
  REQUIRE(r.jobs.size() == 1);
  CHECK(r.jobs[0].tasks == 5);
  CHECK(r.jobs[0].task_time == 2);
}

TEST_CASE("replay: a long observation gets a coarser step, so a replay's cost stays bounded") {
  Observation o;
  o.nodes = {"a"};
  o.spans = {{"a", 0, 86400, true, std::nullopt}};
  o.end = 86400;
  const Replay r = make_replay(o, 0.1, 1000);
  CHECK(r.step == doctest::Approx(86.4));
  CHECK(r.trace.length == 1000);
}

TEST_CASE("estimate: the replay under each strategy, mean turnaround of the ended jobs in seconds") {
  Observation o;
  o.nodes = {"a"};
  o.spans = {{"a", 0, 20, true, std::nullopt}};
  o.end = 20;
  // A long job first, then a short one: FCFS makes the short one wait.
  o.jobs = {{1, 0, 10, 2.0, std::nullopt}, {2, 1, 1, 1.0, 3.0}};
  const Replay r = make_replay(o, 1);
  const auto fcfs = estimate_mean_turnaround(r, {"FCFS", 1, false});
  const auto tsk = estimate_mean_turnaround(r, {"TSK", 1, false});
  REQUIRE(fcfs);
  REQUIRE(tsk);
  CHECK(*fcfs == doctest::Approx(20));  // job 2 waits for job 1's 20 s of work
  CHECK(*tsk < 3);
  Replay none = r;
  none.ended.clear();
  CHECK_FALSE(estimate_mean_turnaround(none, {"TSK", 1, false}));
}

}  // namespace
}  // namespace piranha::nps

namespace piranha::nps {
namespace {

TEST_CASE("run_round: every plan replayed on one observation, and a bad plan and a short history give none") {
  ReplayRound round;
  round.observation.nodes = {"a"};
  round.observation.spans = {{"a", 0, 20, true, std::nullopt}};
  round.observation.end = 20;
  round.observation.jobs = {{1, 0, 10, 2.0, std::nullopt}, {2, 1, 1, 1.0, 3.0}};
  round.step = 1;
  round.plans = {{0, {"FCFS", 1, false}}, {1, {"TSK", 1, false}}, {2, {"NO_SUCH_STRATEGY", 1, false}}};
  round.predictors["a"] = {"REC_HIST", 10};
  const ReplayOutcome out = run_round(round);
  CHECK(out.step == 1);
  CHECK(*out.estimates.at(0) == doctest::Approx(20));
  CHECK(*out.estimates.at(1) < 3);
  CHECK_FALSE(out.estimates.at(2));
  CHECK_FALSE(out.accuracy.at("a"));  // 20 s of 60-s history steps: nothing to score
}

TEST_CASE("run_round: a node's predictor is scored on its history, as piranha predict scores a trace") {
  ReplayRound round;
  round.observation.nodes = {"a"};
  // Available 30 steps, away 10, again and again, for 2000 steps of 1 s.
  for (double t = 0; t < 2000; t += 40)
    round.observation.spans.push_back({"a", t, t + 30, true, std::nullopt});
  round.observation.end = 2000;
  round.history_step = 1;
  round.predictors["a"] = {"REC_HIST", 10};
  const ReplayOutcome out = run_round(round);
  REQUIRE(out.accuracy.at("a"));
  CHECK(out.accuracy.at("a")->points > 100);
  CHECK(out.accuracy.at("a")->fraction > 0);
  CHECK(out.accuracy.at("a")->fraction <= 1);
}

}  // namespace
TEST_CASE("replay: a job with a requirement runs only on the nodes that satisfy it, as live") {
  // "plain" is available all along; "gpu", the only node with label gpu, only from 50 on. The job
  // (10 tasks of 1 s, requiring gpu) arrives at 0.
  Observation o;
  o.nodes = {"gpu", "plain"};
  o.spans = {{"plain", 0, 100, true, std::nullopt},
             {"gpu", 0, 50, false, std::nullopt},
             {"gpu", 50, 100, true, std::nullopt}};
  o.end = 100;
  o.jobs = {{1, 0, 10, 1.0, 60.0, "label=gpu"}};
  o.attributes["gpu"] = sched::NodeAttributes{4, 1 << 30, "x86_64", {"gpu"}};
  o.attributes["plain"] = sched::NodeAttributes{4, 1 << 30, "x86_64", {}};
  const ShadowPlan plan{"TSK", 1, true};
  const auto on_gpu = estimate_mean_turnaround(make_replay(o, 1), plan);
  REQUIRE(on_gpu);
  CHECK(*on_gpu >= 60);  // it waited for the gpu node: the plain node did none of it
  CHECK(*on_gpu <= 62);
  // Without the requirement it runs at once on the plain node.
  o.jobs[0].requirement.clear();
  const auto anywhere = estimate_mean_turnaround(make_replay(o, 1), plan);
  REQUIRE(anywhere);
  CHECK(*anywhere <= 11);
  // A job no node satisfies never runs: it counts as ending when the replay stops (twice the
  // observation).
  o.jobs[0].requirement = "label=fpga";
  CHECK(*estimate_mean_turnaround(make_replay(o, 1), plan) == 200);
}

}  // namespace piranha::nps
