// MTI, MCT and MNI (seed 004) worked by hand: two one-node clusters, the
// second twice as slow; two 10 s jobs arrive together.
#include <doctest/doctest.h>

#include "piranha/rigid/algorithm.h"
#include "test_util.h"

namespace piranha::rigid {
namespace {

const Workload kTwo = test::workload({{0, 10, 1}, {0, 10, 1}});
const Machine kClusters = parse_sites("1,1*2");

RunResult run(const std::string& name) {
  return make_algorithm(name)->run(kTwo, kClusters, {});
}

}  // namespace

TEST_CASE("MCT shares the fast node: both finish at 20, the tie goes to the lower cluster") {
  // Job 2 on node 0: both have 10 s of work at half speed, done at 20; on node 1: 20 alone.
  const auto r = run("MCT");
  CHECK(r.jobs[0].site == 0);
  CHECK(r.jobs[1].site == 0);
  CHECK(r.jobs[0].completion == doctest::Approx(20));
  CHECK(r.jobs[1].completion == doctest::Approx(20));
  CHECK(r.jobs[1].dedicated == 10);
  // Delay against the best projected completion at arrival: 10 for job 1, 0 for job 2.
  CHECK(*r.metrics.mean_delay == doctest::Approx(5));
  CHECK(r.metrics.mean_wait == 0);
}

TEST_CASE("MTI and MNI avoid the interference: job 2 runs alone on the slow node") {
  // MTI: 10 (job 1 delayed) + 20 on node 0 against 0 + 20 on node 1. MNI: one job hit against none.
  for (const char* name : {"MTI", "MNI"}) {
    CAPTURE(name);
    const auto r = run(name);
    CHECK(r.jobs[1].site == 1);
    CHECK(r.jobs[0].completion == doctest::Approx(10));
    CHECK(r.jobs[1].completion == doctest::Approx(20));
    CHECK(*r.metrics.mean_delay == doctest::Approx(0));
    CHECK(r.metrics.mean_bounded_slowdown == doctest::Approx(1.0));  // job 2: 20 / max(20, 10)
  }
}

TEST_CASE("time sharing: a job arriving mid-run stretches the running one (seed 004's example)") {
  // Task of 80 at 0, task of 20 at 50 on the same node: 30 left shared 2 ways -> the first ends at 100.
  const auto w = test::workload({{0, 80, 1}, {50, 20, 1}});
  const auto r = make_algorithm("MCT")->run(w, single_site(1), {});
  CHECK(r.jobs[0].completion == doctest::Approx(100));
  CHECK(r.jobs[1].completion == doctest::Approx(90));
}

TEST_CASE("time sharing in whole microseconds: a placement loses the remainder of (t - l) / n") {
  // One node, three 10 s tasks from 0; at 1 s each has had floor(10^6 / 3) = 333333 us, so
  // 9666667 us remain. A 1 s job then shares four ways and ends at 5 s; the three resume three
  // ways with 8666667 us each and end at 5 + 3 x 8.666667 = 31.000001 s (not 31: 1 us was lost).
  const auto w = test::workload({{0, 10, 1}, {0, 10, 1}, {0, 10, 1}, {1, 1, 1}});
  const auto r = make_algorithm("MCT")->run(w, single_site(1), {});
  CHECK(r.jobs[3].completion == 5.0);
  for (int j = 0; j < 3; ++j) CHECK(r.jobs[static_cast<std::size_t>(j)].completion == 31000001 / 1e6);
  // Its ideal is its own projected completion then: no delay.
  CHECK(r.jobs[3].ideal == 5.0);
}

TEST_CASE("a tie at equal remaining work: the earlier candidate, exactly") {
  // Sites 1,1. Jobs 1 (2 s) and 3 (2 s) share site 0's node, job 2 (4 s) has site 1's: 4 s of
  // work on each. Job 4 (5 s) then completes at 0 + 4 + 5 = 9 on either, and interferes 2 + 2
  // there against 4 here: both MCT and MTI tie, and take site 0, the earlier candidate. Counted
  // in whole microseconds the tie is exact whatever the order of the sums.
  const auto w = test::workload({{0, 2, 1}, {0, 4, 1}, {0, 2, 1}, {0, 5, 1}});
  for (const char* name : {"MCT", "MTI"}) {
    CAPTURE(name);
    const auto r = make_algorithm(name)->run(w, parse_sites("1,1"), {});
    CHECK(r.jobs[1].site == 1);
    CHECK(r.jobs[2].site == 0);
    CHECK(r.jobs[3].site == 0);
    CHECK(r.jobs[3].completion == 9);
    CHECK(r.jobs[0].completion == 6);
  }
}

}  // namespace piranha::rigid
