#include "piranha/scheduler/decision.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/pool_model.h"
#include "piranha/scheduler/predictor.h"

using namespace piranha::sched;

namespace {

QueuedJob queued(JobId id, double arrival, double task_time) {
  QueuedJob j;
  j.id = id;
  j.arrival = arrival;
  j.task_time = task_time;
  return j;
}

}  // namespace

TEST_CASE("Decider: sorts the queue, maps current ids, returns ids") {
  Decider d;
  auto fcfs = make_strategy("FCFS");
  // Given in any order; FCFS's top is the earliest (arrival, id).
  std::vector<QueuedJob> q{queued(9, 2.0, 1), queued(4, 1.5, 1), queued(3, 1.5, 1)};
  const std::optional<JobId> none[3] = {};
  CHECK(d.decide(*fcfs, 2.0, q, none, nullptr, nullptr, false) == std::vector<std::optional<JobId>>(3, 3));
  // Microseconds order exactly; ties by (arrival, id).
  auto tsk = make_strategy("TSK");
  std::vector<QueuedJob> times{queued(7, 0, 4e-5), queued(8, 0, 3e-6), queued(6, 0, 3e-6)};
  CHECK(d.decide(*tsk, 0, times, none, nullptr, nullptr, false).front() == 6);
  // An empty queue leaves every node idle.
  CHECK(d.decide(*tsk, 1, {}, none, nullptr, nullptr, false) == std::vector<std::optional<JobId>>(3));
}

TEST_CASE("Decider: spill keeps a node's current job by id, and an unqueued current job counts as none") {
  Decider d;
  auto fcfs = make_strategy("FCFS");
  QueuedJob a = queued(1, 0, 1), b = queued(2, 1, 1);
  a.tasks_left = 1;
  b.tasks_left = 1;
  const std::optional<JobId> cur[3] = {2, 77, std::nullopt};
  CHECK(d.decide(*fcfs, 0, {b, a}, cur, nullptr, nullptr, true) ==
        std::vector<std::optional<JobId>>{2, 1, std::nullopt});
}

TEST_CASE("Decider: FIT reads a FixedOutlook and FAIR reads q") {
  Decider d;
  auto fit = make_strategy("SRTFIT");
  FixedOutlook outlook({2e-6, 1e-3}, {1, 1});
  std::vector<QueuedJob> q{queued(1, 0, 4e-5), queued(2, 0, 3e-6)};
  q[0].tasks_left = 1;  // SRT 4e-5 first, then job 2 (6e-5)
  q[1].tasks_left = 20;
  const std::optional<JobId> none[2] = {};
  // Node 0 fits nothing: TSK's top (job 2); node 1 fits SRT's top (job 1).
  CHECK(d.decide(*fit, 0, q, none, &outlook, nullptr, false) == std::vector<std::optional<JobId>>{2, 1});

  // FAIR: a node on job 1 when job 2 arrives with q = 1 (a queue that was
  // empty then) always switches.
  auto fair = make_strategy("FAIR");
  Rng rng(3);
  const std::optional<JobId> on1[1] = {1};
  QueuedJob j1 = queued(1, 0, 1), j2 = queued(2, 1, 1);
  CHECK(d.decide(*fair, 0, {j1}, on1, nullptr, &rng, false).front() == 1);
  j2.queue_length_at_arrival = 1;
  CHECK(d.decide(*fair, 1, {j1, j2}, on1, nullptr, &rng, false).front() == 2);
}

namespace {

// A random trace: each node flips availability with probability 1/6 per step.
piranha::AvailabilityTrace random_trace(std::size_t nodes, std::int64_t length, std::uint64_t seed) {
  piranha::AvailabilityTrace t;
  t.length = length;
  Rng rng(seed);
  for (std::size_t n = 0; n < nodes; ++n) {
    t.nodes.push_back("n" + std::to_string(n));
    t.periods.emplace_back();
    bool up = rng.bernoulli(0.5);
    for (std::int64_t s = 0; s < length; ++s) {
      if (rng.below(6) == 0) up = !up;
      if (!up) continue;
      if (!t.periods[n].empty() && t.periods[n].back().end == s)
        t.periods[n].back().end = s + 1;
      else
        t.periods[n].push_back({s, s + 1});
    }
  }
  return t;
}

// spec §2 driven through PoolModel's id-based API and a Decider, as the NPS does.
SimResult drive(const piranha::AvailabilityTrace& trace, const std::vector<Job>& jobs,
                const std::string& name, const SimOptions& o, std::uint64_t seed) {
  auto strategy = make_strategy(name);
  PoolModel model(trace, jobs, o, strategy->name(), seed);
  const std::string predictor_name = strategy->predictor().empty() ? o.predictor : strategy->predictor();
  auto predictor =
      make_predictor(predictor_name, o.window, Calendar::for_step_seconds(trace.step_seconds), model.nodes());
  std::vector<NodeHistory> history(model.nodes(), NodeHistory(std::max(predictor->lookback(), o.window) + 1));
  Rng rng(seed, 2);
  Decider decider;
  while (model.running()) {
    const bool event = model.arrive();
    if (model.now() % o.period == 0 || (o.on_events && event)) {
      std::vector<double> ap, fraction;
      std::vector<std::optional<JobId>> current;
      for (std::size_t n = 0; n < model.nodes(); ++n) {
        ap.push_back(predictor->predict(n, history[n]));
        fraction.push_back(history[n].available_fraction(o.window));
        current.push_back(model.job(n));
      }
      FixedOutlook outlook(ap, fraction);
      auto chosen = decider.decide(*strategy, static_cast<double>(model.now()), model.queue(), current,
                                   &outlook, &rng, o.spill);
      for (std::size_t n = 0; n < model.nodes(); ++n) model.set_job(n, chosen[n]);
    }
    model.step();
    for (std::size_t n = 0; n < model.nodes(); ++n) {
      history[n].observe(model.was_available(n));
      predictor->observe(n, history[n]);
    }
  }
  return model.result();
}

}  // namespace

TEST_CASE("PoolModel driven by id through a Decider reproduces simulate()") {
  const auto trace = random_trace(6, 400, 11);
  std::vector<Job> jobs;
  Rng rng(5);
  for (JobId id = 1; id <= 12; ++id)
    jobs.push_back({13 - id, rng.uniform_int(0, 60), rng.uniform_int(1, 6), rng.uniform_int(1, 40)});
  for (const char* name : {"FCFS", "SRT", "LET", "ROR(3)", "RND", "FAIR", "SRTFIT", "LETA(0.6)", "SRTMIX"}) {
    for (int variant = 0; variant < 3; ++variant) {
      SimOptions o;
      o.period = variant == 0 ? 1 : 4;
      o.on_events = variant == 2;
      o.spill = variant == 1;
      auto strategy = make_strategy(name);
      const SimResult want = simulate(trace, jobs, *strategy, o, 7), got = drive(trace, jobs, name, o, 7);
      CAPTURE(name);
      CAPTURE(variant);
      CHECK(got.mean_turnaround == want.mean_turnaround);
      CHECK(got.steps == want.steps);
      CHECK(got.busy_steps == want.busy_steps);
      CHECK(got.lost_steps == want.lost_steps);
      CHECK(got.owner_retreats == want.owner_retreats);
      CHECK(got.scheduler_retreats == want.scheduler_retreats);
      for (std::size_t j = 0; j < want.jobs.size(); ++j)
        CHECK(got.jobs[j].completion == want.jobs[j].completion);
    }
  }
}
