#include "piranha/scheduler/simulator.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace piranha::sched;
using piranha::AvailabilityTrace;
using piranha::StepPeriod;

namespace {

// A trace from one 0/1 string per node.
AvailabilityTrace trace_of(const std::vector<std::string>& rows) {
  AvailabilityTrace t;
  t.length = static_cast<std::int64_t>(rows.at(0).size());
  for (std::size_t n = 0; n < rows.size(); ++n) {
    t.nodes.push_back("n" + std::to_string(n));
    t.periods.emplace_back();
    for (std::int64_t s = 0; s < t.length; ++s) {
      if (rows[n][static_cast<std::size_t>(s)] != '1') continue;
      if (!t.periods[n].empty() && t.periods[n].back().end == s)
        t.periods[n].back().end = s + 1;
      else
        t.periods[n].push_back({s, s + 1});
    }
  }
  return t;
}

SimResult sim(const AvailabilityTrace& t, const std::vector<Job>& jobs, const std::string& strategy,
              SimOptions o = {}, std::uint64_t seed = 0) {
  auto s = make_strategy(strategy);
  return simulate(t, jobs, *s, o, seed);
}

std::optional<std::int64_t> completion_of(const SimResult& r, JobId id) {
  for (const auto& j : r.jobs)
    if (j.id == id) return j.completion;
  FAIL("no job " << id);
  return std::nullopt;
}

// The paper's §6.1 example: available at 0, 2, ..., 198 and at every step from 200.
AvailabilityTrace worked_example_trace() {
  std::string row;
  for (int s = 0; s < 200; ++s) row += s % 2 == 0 ? '1' : '0';
  row += std::string(400, '1');
  return trace_of({row});
}

}  // namespace

TEST_CASE("the paper's worked example (§6.1) under the spec's model") {
  const auto t = worked_example_trace();
  const std::vector<Job> jobs{{1, 0, 1, 100}, {2, 0, 2, 20}};
  SimOptions o;
  o.period = 10;
  auto srt = sim(t, jobs, "SRT", o);
  CHECK(srt.finished);
  CHECK(completion_of(srt, 2) == 240);
  CHECK(completion_of(srt, 1) == 340);
  CHECK(srt.mean_turnaround == 290);
  auto tsk = sim(t, jobs, "TSK", o);
  CHECK(completion_of(tsk, 1) == 199);
  CHECK(completion_of(tsk, 2) == 240);
  CHECK(tsk.mean_turnaround == 219.5);
  // SRT's JOB2 lost a task's first step at every odd step before 200.
  CHECK(srt.owner_retreats == 100);
  CHECK(tsk.owner_retreats == 0);
}

TEST_CASE("a job that arrives between invocations waits for the next one") {
  const auto t = trace_of({std::string(50, '1')});
  SimOptions o;
  o.period = 10;
  auto r = sim(t, {{1, 3, 1, 5}}, "FCFS", o);
  CHECK(completion_of(r, 1) == 15);  // scheduled at 10, tasks at 10..14
  o.on_events = true;
  r = sim(t, {{1, 3, 1, 5}}, "FCFS", o);
  CHECK(completion_of(r, 1) == 8);  // scheduled on arrival
}

TEST_CASE("several nodes share a global job, a job done mid-step stops the later nodes at once") {
  const auto t = trace_of({"1111", "1111", "1111"});
  SimOptions o;
  o.window = 2;
  auto r = sim(t, {{1, 0, 2, 3}, {2, 0, 1, 1}}, "FCFS", o);
  // Step 0: every node starts a task of job 1; step 1: nodes 0, 1, 2 finish them.
  CHECK(completion_of(r, 1) == 2);
  CHECK(completion_of(r, 2) == 3);
  r = sim(t, {{1, 0, 1, 2}, {2, 0, 1, 1}}, "FCFS", o);
  // Nodes 0 and 1 finish job 1 at step 0; node 2 does nothing for it.
  CHECK(completion_of(r, 1) == 1);
  // Step 1: node 0 completes job 2 alone; nodes 1 and 2 find it done.
  CHECK(r.busy_steps == 2 + 1);
}

TEST_CASE("availability wraps around the trace from --start") {
  const auto t = trace_of({"1111100000"});
  SimOptions o;
  o.start = 3;
  // Available at run steps 0-1 (trace 3-4), 7-11 (trace 0-4), 17-... .
  auto r = sim(t, {{1, 0, 1, 8}}, "FCFS", o);
  CHECK(completion_of(r, 1) == 18);
}

TEST_CASE("max-steps: a starved job has no completion and counts max-steps - arrival") {
  const auto t = trace_of({"1110"});  // APs of 3, a task of 5 never fits
  SimOptions o;
  o.window = 4;
  o.max_steps = 100;
  auto r = sim(t, {{1, 0, 5, 1}, {2, 10, 1, 2}}, "FCFS", o);
  CHECK_FALSE(r.finished);
  CHECK(r.steps == 100);
  CHECK_FALSE(completion_of(r, 1));
  CHECK_FALSE(completion_of(r, 2));  // FCFS never gets past job 1
  CHECK(r.mean_turnaround == ((100 - 0) + (100 - 10)) / 2.0);
  // The default max-steps is 20 × length.
  o.max_steps = 0;
  CHECK(sim(t, {{1, 0, 5, 1}}, "FCFS", o).steps == 80);
}

TEST_CASE("ROR with a quantum shorter than the tasks starves both jobs by scheduler retreats") {
  const auto t = trace_of({std::string(10, '1')});
  SimOptions o;
  o.max_steps = 60;
  auto r = sim(t, {{1, 0, 3, 1}, {2, 0, 3, 1}}, "ROR(2)", o);
  CHECK_FALSE(r.finished);
  CHECK(r.scheduler_retreats > 20);
  CHECK(sim(t, {{1, 0, 3, 1}, {2, 0, 3, 1}}, "ROR(3)", o).finished);
}

TEST_CASE("randomized strategies: one seed, one schedule") {
  const auto t = trace_of({"1101111011", "0111111111", "1111100111"});
  std::vector<Job> jobs{{1, 0, 2, 30}, {2, 1, 1, 40}, {3, 4, 3, 10}};
  for (const char* s : {"RND", "FAIR"}) {
    auto a = sim(t, jobs, s, {}, 4), b = sim(t, jobs, s, {}, 4);
    CHECK(a.mean_turnaround == b.mean_turnaround);
    CHECK(a.busy_steps == b.busy_steps);
  }
}

namespace {

// Records what FAIR would be told: the queue length right after each queued job arrived.
class RecordingStrategy : public Strategy {
 public:
  RecordingStrategy() : Strategy("RECORD") {}
  void assign(const Invocation& inv, std::span<Slot> out) override {
    seen.emplace_back(
        inv.now, std::vector<std::int64_t>(inv.arrival_queue_length.begin(), inv.arrival_queue_length.end()));
    std::fill(out.begin(), out.end(), inv.queue.empty() ? kIdle : Slot{0});
  }
  std::vector<std::pair<std::int64_t, std::vector<std::int64_t>>> seen;
};

}  // namespace

TEST_CASE("FAIR's q: the simulator passes the queue length right after each arrival") {
  const auto t = trace_of({std::string(40, '1')});
  SimOptions o;
  o.period = 10;
  // Job 1 holds the node from 0; jobs 2 and 3 arrive at 3 and 4 (lengths 2, 3);
  // job 1 completes at 5, so at 10 the queue is 2, 3 with lengths 2, 3.
  RecordingStrategy s;
  simulate(t, {{1, 0, 5, 1}, {2, 3, 1, 30}, {3, 4, 1, 1}}, s, o);
  REQUIRE(s.seen.size() >= 2);
  CHECK(s.seen[0] == std::pair<std::int64_t, std::vector<std::int64_t>>{0, {1}});
  CHECK(s.seen[1] == std::pair<std::int64_t, std::vector<std::int64_t>>{10, {2, 3}});
}

TEST_CASE("adaptive strategies see only the past: at t = 0 the fraction is 1") {
  // One node, down from step 1 to 9. SRT's top is job 2 (4 < 10), TSK's is
  // job 1. SRTA(1.0) gives job 2 the node while the observed fraction is 1
  // (t = 0, 1), then TSK's job until the last 10 steps were all available.
  const auto t = trace_of({"1000000000" + std::string(30, '1')});
  std::vector<Job> jobs{{1, 0, 1, 10}, {2, 0, 4, 1}};
  auto r = sim(t, jobs, "SRTA(1.0)");
  CHECK(completion_of(r, 1) == 20);
  CHECK(completion_of(r, 2) == 24);
  auto srt = sim(t, jobs, "SRT");
  CHECK(completion_of(srt, 2) == 14);
  CHECK(completion_of(srt, 1) == 24);
}

TEST_CASE("observed task times: before a job's first task completes strategies see the cold start") {
  const auto t = trace_of({std::string(100, '1')});
  std::vector<Job> jobs{{1, 0, 5, 2}, {2, 0, 2, 2}};
  SimOptions o;
  o.task_times = TaskTimes::kObserved;
  o.cold_start = 0;
  // TSK sees both at 0: job 1 first (queue order) until its first task ends
  // (t = 5), then job 2 (observed... still unmeasured, 0) takes over.
  auto r = sim(t, jobs, "TSK", o);
  CHECK(completion_of(r, 2) == 9);
  CHECK(completion_of(r, 1) == 14);
  CHECK(completion_of(sim(t, jobs, "TSK"), 2) == 4);
}

TEST_CASE("options are checked against the trace") {
  const auto t = trace_of({"1111"});
  SimOptions o;
  o.window = 5;
  CHECK_THROWS_WITH_AS(sim(t, {{1, 0, 1, 1}}, "FCFS", o), "--window: 5 is longer than the trace (4 steps)",
                       piranha::InputError);
  o = {};
  o.period = 0;
  CHECK_THROWS(sim(t, {{1, 0, 1, 1}}, "FCFS", o));
  o = {};
  o.start = 4;
  CHECK_THROWS(sim(t, {{1, 0, 1, 1}}, "FCFS", o));
  o = {};
  o.predictor = "NOPE";
  CHECK_THROWS(sim(t, {{1, 0, 1, 1}}, "FCFS", o));
}
