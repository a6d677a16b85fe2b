// The space-sharing algorithms on workloads small enough to work out by hand.
#include <doctest/doctest.h>

#include <random>

#include "engines.h"
#include "piranha/rigid/algorithm.h"
#include "test_util.h"

namespace piranha::rigid {
namespace {

using Times = std::vector<double>;

Times completions(const RunResult& r) {
  Times out;
  for (const auto& j : r.jobs) out.push_back(j.completion);
  return out;
}

RunResult run(const std::string& name, const Workload& w, const Machine& m, Estimates e = Estimates::kExact) {
  RunOptions o;
  o.estimates = e;
  return make_algorithm(name)->run(w, m, o);
}

// 4 nodes: job 1 (2 wide, 10 s) and job 2 (4 wide, 10 s) at 0, job 3 (2 wide, 5 s) at 1.
const Workload kThree = test::workload({{0, 10, 2}, {0, 10, 4}, {1, 5, 2}});

}  // namespace

TEST_CASE("FIFO: job 3 waits behind the wide job 2, the metrics of docs/rigid.md") {
  const auto r = run("FIFO", kThree, single_site(4));
  CHECK(completions(r) == Times{10, 20, 25});
  CHECK(r.metrics.makespan == 25);
  CHECK(r.metrics.mean_flow == 18);  // (10 + 20 + 24) / 3
  CHECK(r.metrics.max_wait == 19);
  CHECK(r.metrics.mean_wait == doctest::Approx(29.0 / 3));
  CHECK(r.metrics.mean_bounded_slowdown == doctest::Approx((1 + 2 + 2.4) / 3));  // job 3: 24 / max(5, 10)
  CHECK(r.metrics.utilization == doctest::Approx(70.0 / 100));                   // (20 + 40 + 10) / (4 x 25)
  CHECK(r.metrics.weighted_completion == 20 * 10 + 40 * 20 + 10 * 25);
  CHECK(r.metrics.weighted_flow == 20 * 10 + 40 * 20 + 10 * 24);
}

TEST_CASE("FirstFit, SPT, Backfill, EASY and Conservative start job 3 at once") {
  for (const char* name : {"FirstFit", "SPT", "Backfill", "EASY", "Conservative"}) {
    CAPTURE(name);
    CHECK(completions(run(name, kThree, single_site(4))) == Times{10, 20, 6});
  }
}

TEST_CASE("LPT starts the largest processing time (runtime x width) first") {
  CHECK(completions(run("LPT", kThree, single_site(4))) == Times{20, 10, 15});
}

TEST_CASE("Backfill without runtime information acts as FIFO until it has learned") {
  CHECK(completions(run("Backfill", kThree, single_site(4), Estimates::kLearn)) == Times{10, 20, 25});
  // The SWF's requested times are enough.
  auto w = test::workload({{0, 10, 2, 12}, {0, 10, 4, 10}, {1, 5, 2, 8}});
  CHECK(completions(run("Backfill", w, single_site(4), Estimates::kSwf)) == Times{10, 20, 6});
}

TEST_CASE("EASY gives the head's spare node to a long job, Backfill does not") {
  // Job 2 needs 3 of 4 nodes at 10, leaving one: job 3 (1 wide, 20 s) takes it at 1 under EASY.
  const auto w = test::workload({{0, 10, 2}, {0, 10, 3}, {1, 20, 1}});
  CHECK(completions(run("EASY", w, single_site(4))) == Times{10, 20, 21});
  CHECK(completions(run("Backfill", w, single_site(4))) == Times{10, 20, 30});
}

TEST_CASE("a job of run time 0 ends where it starts and frees its nodes at once") {
  const auto w = test::workload({{0, 0, 4}, {0, 10, 4}});
  const auto r = run("FIFO", w, single_site(4));
  CHECK(completions(r) == Times{0, 10});
  CHECK(r.jobs[1].start == 0);
}

TEST_CASE("Random is reproducible from its seed") {
  const auto w = test::workload({{0, 10, 3}, {0, 10, 3}, {0, 10, 1}, {0, 4, 2}});
  RunOptions o;
  o.seed = 3;
  const auto a = make_algorithm("Random")->run(w, single_site(4), o);
  const auto b = make_algorithm("Random")->run(w, single_site(4), o);
  CHECK(completions(a) == completions(b));
}

TEST_CASE("Greedy: each job to the least loaded site at arrival, EASY there") {
  // Site 1 runs everything twice as long. Loads: job 1 -> 0 (tie), job 2 -> 1, job 3 -> 0 (10 < 20).
  const auto m = parse_sites("2,2*2");
  const auto w = test::workload({{0, 10, 2}, {0, 10, 2}, {0, 10, 2}});
  const auto r = run("Greedy", w, m);
  CHECK(completions(r) == Times{10, 20, 20});
  CHECK(r.jobs[1].site == 1);
  CHECK(r.jobs[2].site == 0);
  CHECK(r.metrics.utilization == doctest::Approx(1.0));
  CHECK(r.metrics.effective_utilization == doctest::Approx(0.75));  // job 2 ran at half its best speed
}

TEST_CASE("MR completion-based: a job starts only where its predicted completion is best") {
  // Job 2 could start on the slow site at 0 and end at 20, or on the fast
  // one at 10 and end at 20: the tie goes to the lower site, so it waits.
  const auto m = parse_sites("2,2*2");
  const auto w = test::workload({{0, 10, 2}, {0, 10, 2}, {0, 10, 2}});
  const auto r = run("MR(2,CONS,COMPLETION)", w, m);
  CHECK(completions(r) == Times{10, 20, 20});
  CHECK(r.jobs[0].site == 0);
  CHECK(r.jobs[1].site == 0);
  CHECK(r.jobs[2].site == 1);
  // Start-based, job 2 takes the slow site at once.
  const auto s = run("MR(2,CONS,START)", w, m);
  CHECK(s.jobs[1].site == 1);
  CHECK(completions(s) == Times{10, 20, 20});
}

TEST_CASE("MR efficacy priority: the job that runs best here goes first") {
  // Two classes (job_class: job 1 -> 1, job 2 -> 0, job 3 -> 1); site 0 runs
  // class 1 twice as long, site 1 class 0. In FCFS order site 0 starts job 1
  // (at half speed); in efficacy order it starts job 2 and site 1 job 1.
  REQUIRE(job_class(1, 2) == 1);
  REQUIRE(job_class(2, 2) == 0);
  REQUIRE(job_class(3, 2) == 1);
  const auto m = parse_sites("1*1/2,1*2/1");
  const auto w = test::workload({{0, 10, 1}, {0, 10, 1}, {0, 10, 1}});
  const auto fcfs = run("MR(2,EASY,START,FCFS)", w, m);
  CHECK(completions(fcfs) == Times{20, 20, 40});
  const auto eff = run("MR(2,EASY,START,EFFICACY)", w, m);
  CHECK(completions(eff) == Times{10, 10, 30});
  CHECK(eff.metrics.effective_utilization > fcfs.metrics.effective_utilization);
}

TEST_CASE("MR site selection: K least loaded, or K earliest predicted completions") {
  // Three sites; a long job loads site 0. K = 1 by load sends job 2 to site 1.
  const auto m = parse_sites("1,1,1*3");
  const auto w = test::workload({{0, 100, 1}, {1, 10, 1}});
  CHECK(run("MR(1)", w, m).jobs[1].site == 1);
  CHECK(run("MR(1,CONS,START,FCFS,COMPLETION)", w, m).jobs[1].site == 1);
  CHECK(run("MR(1,CONS,START,FCFS,COMPLETION)", w, m).jobs[1].completion == 11);
}

TEST_CASE("Greedy: a running job past its prediction loads its site as if it ended in a second") {
  // Sites 2,2. Job 1 (2 wide, 100 s, estimate 5) goes to site 0, job 2 (1 wide, 100 s, estimate 11)
  // to site 1. At 10 job 1 has overrun: its predicted end is 11, load 2 x 1 / 2 = 1 against job 2's
  // 1 x 1 / 2 on site 1, so job 3 goes to site 1 and starts on its free node.
  const auto w = test::workload({{0, 100, 2, 5}, {0, 100, 1, 11}, {10, 1, 1, 1}});
  const auto r = run("Greedy", w, parse_sites("2,2"), Estimates::kSwf);
  CHECK(r.jobs[0].site == 0);
  CHECK(r.jobs[1].site == 1);
  CHECK(r.jobs[2].site == 1);
  CHECK(r.jobs[2].completion == 11);
}

TEST_CASE("EFFICACY: a job's efficacy is among the sites of its arrival, even after it leaves some") {
  // Sites 1*1.5/2/1 and 1: jobs 1, 2, 3 are of classes 2, 1, 0 (splitmix64(id) mod 3), so on
  // site 0 job 1 runs at factor 1, job 2 at 2 and job 3 at 1.5; on site 1 all at 1. With nothing
  // learned yet, jobs 2 and 3 leave site 1 at 1 (never completing there as on site 0, the lower
  // site). Among their arrival's sites their efficacies on site 0 are 1/2 and 1/1.5, so job 3 goes
  // first when job 1 ends at 10; among the sites still holding them both would be 1 and job 2,
  // the earlier, would go first.
  const auto w = test::workload({{0, 10, 1}, {1, 10, 1}, {1, 10, 1}});
  const auto r = run("MR(all,CONS,COMPLETION,EFFICACY)", w, parse_sites("1*1.5/2/1,1"), Estimates::kLearn);
  CHECK(r.jobs[0].site == 0);
  CHECK(r.jobs[1].site == 0);
  CHECK(r.jobs[2].site == 0);
  CHECK(r.jobs[2].start == 10);
  CHECK(r.jobs[2].completion == 25);
  CHECK(r.jobs[1].start == 25);
  CHECK(r.jobs[1].completion == 45);
}

TEST_CASE("MR's COMPLETION select reserves every queued job, also one too wide to start now") {
  // Sites 2,2, K = 1. Job 1 (2 wide, 10 s) runs on site 0 from 0, job 2 (2 wide, 50 s) on site 1
  // from 1, job 3 (2 wide, 5 s) waits on site 0 from 2. Job 4 (1 wide, 100 s) at 3 would complete
  // at 15 + 100 on site 0 (behind job 3's reservation 10..15) and at 51 + 100 on site 1: site 0.
  const auto w = test::workload({{0, 10, 2}, {1, 50, 2}, {2, 5, 2}, {3, 100, 1}});
  const auto r = run("MR(1,EASY,START,FCFS,COMPLETION)", w, parse_sites("2,2"));
  CHECK(r.jobs[1].site == 1);
  CHECK(r.jobs[2].site == 0);
  CHECK(r.jobs[3].site == 0);
  CHECK(r.jobs[3].start == 15);
  CHECK(r.jobs[3].completion == 115);
}

TEST_CASE(
    "FirstFit, Random, Backfill, EASY: the indexed queue gives the schedules of a scan of the whole view") {
  std::mt19937_64 rng(33);
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  using Local = SpacePolicy::Local;
  for (int round = 0; round < 150; ++round) {
    CAPTURE(round);
    const int nodes = draw(1, 32);
    Workload w;
    w.source = "random.swf";
    Time submit = 0;
    for (int i = 0; i < 80; ++i) {
      RigidJob j;
      j.id = i + 1;
      j.submit = submit += draw(0, 4);
      j.runtime = draw(0, 60);
      j.width = draw(0, 2) == 0 ? draw(1, nodes) : draw(1, std::min(nodes, 3));
      j.estimate = draw(0, 3) == 0 ? kUnknown : j.runtime + draw(-10, 40) * (j.runtime > 10);
      j.user = draw(0, 3);
      w.jobs.push_back(j);
    }
    for (auto local : {Local::kFirstFit, Local::kRandom, Local::kBackfill, Local::kEasy})
      for (auto estimates : {Estimates::kSwf, Estimates::kLearn, Estimates::kExact}) {
        CAPTURE(static_cast<int>(local));
        CAPTURE(static_cast<int>(estimates));
        RunOptions o;
        o.estimates = estimates;
        o.seed = static_cast<std::uint64_t>(round);
        SpacePolicy p;
        p.local = local;
        const auto indexed = simulate_space("x", p, w, single_site(nodes), o);
        p.indexed = false;
        const auto scanned = simulate_space("x", p, w, single_site(nodes), o);
        for (std::size_t j = 0; j < w.jobs.size(); ++j) {
          CAPTURE(j);
          REQUIRE(indexed.jobs[j].start == scanned.jobs[j].start);
        }
      }
  }
}

}  // namespace piranha::rigid
