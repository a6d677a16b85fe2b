#include "piranha/nps/campus_sim.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "piranha/base/input_error.h"
#include "piranha/nps/simulate.h"

using namespace piranha;
using namespace piranha::nps;

namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_campus(yaml, "c.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// `subnets` subnets of `nodes` always-available nodes, and `jobs` as (arrival, task time, tasks,
// subnet).
struct Job {
  std::int64_t arrival, task_time, tasks;
  std::size_t subnet;
};
std::pair<CampusConfig, CampusWorld> campus(std::size_t subnets, std::int64_t nodes, std::vector<Job> jobs,
                                            std::int64_t length = 2000) {
  CampusConfig c;
  CampusWorld w;
  w.trace.length = length;
  for (std::size_t s = 0; s < subnets; ++s) {
    c.subnets.push_back({"net" + std::to_string(s), nodes, 1});
    w.first_node.push_back(w.trace.nodes.size());
    for (std::int64_t k = 0; k < nodes; ++k) {
      w.trace.nodes.push_back("net" + std::to_string(s) + "-ws" + std::to_string(k));
      w.trace.periods.push_back({{0, length}});
    }
  }
  w.jobs_per_subnet.assign(subnets, 0);
  sched::JobId id = 1;
  for (const Job& j : jobs) {
    w.jobs.push_back({id++, j.arrival, j.task_time, j.tasks});
    w.subnet_of.push_back(j.subnet);
    ++w.jobs_per_subnet[j.subnet];
  }
  c.campus.period = 5;
  c.campus.congested = 20;
  c.campus.relieved = 5;
  c.campus.hold = 10;
  c.campus.cooldown = 10;
  return {c, w};
}

// The campus's subnet `s` alone: its nodes, its jobs.
std::pair<AvailabilityTrace, std::vector<sched::Job>> alone(const CampusConfig& c, const CampusWorld& w,
                                                            std::size_t s) {
  AvailabilityTrace t;
  t.step_seconds = w.trace.step_seconds;
  t.length = w.trace.length;
  for (std::int64_t k = 0; k < c.subnets[s].nodes; ++k) {
    t.nodes.push_back(w.trace.nodes[w.first_node[s] + static_cast<std::size_t>(k)]);
    t.periods.push_back(w.trace.periods[w.first_node[s] + static_cast<std::size_t>(k)]);
  }
  std::vector<sched::Job> jobs;
  for (std::size_t j = 0; j < w.jobs.size(); ++j)
    if (w.subnet_of[j] == s) jobs.push_back(w.jobs[j]);
  return {t, jobs};
}

// A campus file's config and world.
std::pair<CampusConfig, CampusWorld> from_yaml(const std::string& yaml) {
  CampusConfig c = parse_campus(yaml, "c.yaml");
  CampusWorld w = build_world(c);
  return {c, w};
}

sched::SimOptions options(const CampusConfig& c) {
  sched::SimOptions o;
  o.period = c.subnet_period;
  o.on_events = c.on_events;
  o.spill = c.spill;
  o.start = c.start;
  return o;
}

}  // namespace

TEST_CASE("campus file: the documented example, and defaults") {
  const CampusConfig c = parse_campus(R"(
subnets: {count: 12, nodes: 5, skew: 1.5}
trace: {synth: {days: 2, seed: 4}, start: 540}
jobs: {count: 30, interarrival: 2, tasks: [10, 200], task_time: [1, 5], seed: 7}
subnet_nps: {strategy: srt, period: 1, on_events: false, spill: false}
campus: {period: 15, congested: 40, relieved: 10, hold: 45, cooldown: 30, reserve: 1}
max_steps: 5000
)",
                                      "c.yaml");
  REQUIRE(c.subnets.size() == 12);
  CHECK(c.subnets[0].name == "net001");
  CHECK(c.subnets[11].name == "net012");
  CHECK(c.subnets[1].weight == doctest::Approx(1 / std::pow(2.0, 1.5)));
  CHECK(c.synth.nodes == 60);
  CHECK(c.synth.days == 2);
  CHECK(c.start == 540);
  CHECK(c.workload.jobs == 30);
  CHECK(c.workload.max_tasks == 200);
  CHECK(c.workload.min_task_time == 1);
  CHECK(c.jobs_seed == 7);
  CHECK(c.strategy == "SRT");
  CHECK_FALSE(c.on_events);
  CHECK_FALSE(c.spill);
  CHECK(c.campus.period == 15);
  CHECK(c.campus.reserve == 1);
  CHECK(c.max_steps == 5000);
  const CampusConfig d = parse_campus(
      "subnets:\n  - {name: physics, nodes: 4, weight: 3}\n  - {name: cs, nodes: 2}\n", "d.yaml");
  REQUIRE(d.subnets.size() == 2);
  CHECK(d.subnets[0].weight == 3);
  CHECK(d.subnets[1].weight == 1);
  CHECK(d.campus.period == 10);
  CHECK(d.strategy == "TSK");
  CHECK(d.spill);
}

TEST_CASE("campus file: every problem is one FILE:LINE line") {
  CHECK(error_of("subnets: {count: 2, nodes: 3}\ncampus: {perod: 5}\n") ==
        "c.yaml:2: unknown key 'perod' in campus (expected one of: period, congested, relieved, hold, "
        "cooldown, "
        "reserve)");
  CHECK(error_of("subnets: {count: 2, nodes: 3}\nsubnet_nps: {period: 10}\ncampus: {period: 10}\n") ==
        "c.yaml:3: campus: period 10 must be longer than subnet_nps' period 10 (the campus runs at a slower "
        "rate "
        "than its subnets)");
  CHECK(error_of("subnets: {count: 2, nodes: 3}\ncampus: {congested: 5, relieved: 9}\n")
            .starts_with("c.yaml:2: campus: relieved (9) must be <= congested (5)"));
  CHECK(error_of("subnets:\n  - {name: a, nodes: 3}\n  - {name: a, nodes: 1}\n") ==
        "c.yaml:3: subnet \"a\" is listed twice");
  CHECK(error_of("subnets: {count: 2, nodes: 0}\n") ==
        "c.yaml:1: subnets' nodes must be in [1, 1000000], got 0");
  CHECK(error_of("subnets: {count: 2, nodes: 3}\nsubnet_nps: {strategy: NOPE}\n").starts_with("c.yaml:2: "));
  CHECK(error_of("subnets: {count: 2, nodes: 3}\njobs: {tasks: [5, 2]}\n") ==
        "c.yaml:2: jobs' tasks must have low <= high, got [5, 2]");
  CHECK(error_of("trace: {start: 3}\n") == "c.yaml:1: the campus file needs a 'subnets' section");
  CHECK(error_of("") == "c.yaml: the campus file is empty");
}

TEST_CASE("campus world: nodes named by subnet, jobs spread by the subnets' weights") {
  const auto [c, w] =
      from_yaml("subnets: {count: 4, nodes: 3, skew: 2}\ntrace: {synth: {days: 1}}\njobs: {count: 400}\n");
  REQUIRE(w.trace.nodes.size() == 12);
  CHECK(w.trace.nodes[0] == "net001-ws001");
  CHECK(w.trace.nodes[11] == "net004-ws003");
  CHECK(w.first_node == std::vector<std::size_t>{0, 3, 6, 9});
  REQUIRE(w.jobs.size() == 400);
  // Weights 1, 1/4, 1/9, 1/16: shares 70 %, 18 %, 8 %, 4 %.
  CHECK(w.jobs_per_subnet[0] > 240);
  CHECK(w.jobs_per_subnet[0] > w.jobs_per_subnet[1]);
  CHECK(w.jobs_per_subnet[1] > w.jobs_per_subnet[3]);
  CHECK(w.jobs_per_subnet[3] > 0);
  // Deterministic.
  CHECK(build_world(c).subnet_of == w.subnet_of);
}

TEST_CASE("campus simulation: isolated subnets are exactly their own nps simulate runs") {
  const auto [c, w] = from_yaml(
      "subnets: {count: 3, nodes: 4, skew: 1}\ntrace: {synth: {days: 1}, start: 480}\n"
      "jobs: {count: 12, interarrival: 20, tasks: [5, 60], task_time: [1, 6]}\n");
  const CampusOutcome o = simulate_campus(c, w, CampusMode::kIsolated);
  CHECK(o.result.finished);
  for (std::size_t s = 0; s < 3; ++s) {
    CAPTURE(s);
    const auto [trace, jobs] = alone(c, w, s);
    if (jobs.empty()) continue;
    const sched::SimResult r = simulate_program(std::nullopt, trace, jobs, c.strategy, options(c), 0);
    CHECK(o.subnet_mean_turnaround[s] == doctest::Approx(r.mean_turnaround));
  }
  CHECK(o.lent_node_steps == 0);
  // And the flat pool is exactly nps simulate of every node and every job.
  const CampusOutcome flat = simulate_campus(c, w, CampusMode::kFlat);
  CHECK(flat.result.mean_turnaround ==
        doctest::Approx(
            simulate_program(std::nullopt, w.trace, w.jobs, c.strategy, options(c), 0).mean_turnaround));
}

TEST_CASE("campus simulation: a congested subnet's job also runs on an idle subnet's nodes") {
  // Subnet 0 (3 nodes) gets three long jobs; subnet 1 (3 nodes) has nothing until step 41, between
  // two campus decisions (every 5 steps), so its own scheduler takes its nodes back on its own.
  auto [c, w] = campus(2, 3, {{0, 2, 150, 0}, {0, 2, 150, 0}, {1, 2, 150, 0}, {41, 1, 30, 1}});
  const CampusOutcome iso = simulate_campus(c, w, CampusMode::kIsolated);
  const CampusOutcome cam = simulate_campus(c, w, CampusMode::kCampus);
  CHECK(cam.lent_node_steps > 0);
  CHECK(cam.decisions > 0);
  CHECK(cam.loans_started > 0);
  CHECK(cam.subnet_mean_turnaround[0] < iso.subnet_mean_turnaround[0]);
  CHECK(cam.result.mean_turnaround < iso.result.mean_turnaround);
  // The lender's own jobs come first: its job at 41 turns around exactly as with no campus.
  CHECK(cam.subnet_mean_turnaround[1] == iso.subnet_mean_turnaround[1]);
  CHECK(cam.nodes_returned[static_cast<int>(sched::LoanEnd::kLenderNeeds)] > 0);
}

TEST_CASE("campus simulation: a lender's own jobs turn around as without the campus, on a real trace") {
  // Three subnets of five workstations from Monday 09:00: subnet 0 gets five long jobs, subnets 1
  // and 2 small ones (10 steps of work: never congested at `congested` 20), which they run
  // between lending their idle nodes to subnet 0.
  CampusConfig c = parse_campus(
      "subnets: {count: 3, nodes: 5}\ntrace: {synth: {days: 1}, start: 540}\n"
      "campus: {period: 5, congested: 20, relieved: 5, hold: 10, cooldown: 10}\n",
      "c.yaml");
  CampusWorld w = build_world(c);
  w.jobs.clear();
  w.subnet_of.clear();
  w.jobs_per_subnet.assign(3, 0);
  auto add = [&](std::int64_t arrival, std::int64_t task_time, std::int64_t tasks, std::size_t subnet) {
    w.jobs.push_back({static_cast<sched::JobId>(w.jobs.size() + 1), arrival, task_time, tasks});
    w.subnet_of.push_back(subnet);
    ++w.jobs_per_subnet[subnet];
  };
  for (std::int64_t k = 0; k < 5; ++k) add(k * 7, 3, 200, 0);
  // Arrivals between campus decisions: the lenders' own schedulers must take their nodes back.
  for (std::int64_t a : {31, 92, 153, 404}) add(a, 1, 10, 1);
  for (std::int64_t a : {61, 252}) add(a, 2, 5, 2);
  const CampusOutcome iso = simulate_campus(c, w, CampusMode::kIsolated);
  const CampusOutcome cam = simulate_campus(c, w, CampusMode::kCampus);
  REQUIRE(iso.result.finished);
  REQUIRE(cam.result.finished);
  CHECK(cam.borrowed_node_steps[0] > 0);
  CHECK(cam.subnet_mean_turnaround[0] < iso.subnet_mean_turnaround[0]);
  for (std::size_t s = 1; s < 3; ++s) {
    CAPTURE(s);
    CHECK(cam.borrowed_node_steps[s] == 0);
    CHECK(cam.subnet_mean_turnaround[s] == iso.subnet_mean_turnaround[s]);
  }
}
