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

}  // namespace piranha::rigid
