// PFCFS (seed 001) worked by hand: 4 nodes, job 1 (2 wide, 100 s) at 0 and
// the wide job 2 (4 wide, 30 s) at 1; a wide job preempts after 10 s.
#include <doctest/doctest.h>

#include "piranha/rigid/algorithm.h"
#include "test_util.h"

namespace piranha::rigid {
namespace {

const Workload kWide = test::workload({{0, 100, 2}, {1, 30, 4}});

std::vector<double> completions(const std::string& name) {
  const auto r = make_algorithm(name)->run(kWide, single_site(4), {});
  return {r.jobs[0].completion, r.jobs[1].completion};
}

}  // namespace

TEST_CASE("PFCFS against FIFO: the wide job preempts instead of waiting") {
  CHECK(completions("FIFO") == std::vector<double>{100, 130});
  // PFCFS3: job 2 runs 11..41, then job 1 resumes with 89 s left.
  CHECK(completions("PFCFS3(10,0)") == std::vector<double>{130, 41});
  const auto r = make_algorithm("PFCFS3(10,0)")->run(kWide, single_site(4), {});
  CHECK(r.preemptions == 1);
  CHECK(r.jobs[1].start == 11);
  CHECK(r.jobs[0].start == 0);
}

TEST_CASE("PFCFS3: a small job behind the wide one waits until it completes and gang B has resumed") {
  // Job 2 (3 wide) preempts job 1 at 11 and runs to 41 with one node idle beside it; job 3 (1 wide,
  // 10 s, at 2) may not take it: the queue stays blocked until 41, when job 1 resumes (89 s left).
  const auto w = test::workload({{0, 100, 2}, {1, 30, 3}, {2, 10, 1}});
  const auto r = make_algorithm("PFCFS3(10,0)")->run(w, single_site(4), {});
  CHECK(r.jobs[0].completion == 130);
  CHECK(r.jobs[1].completion == 41);
  CHECK(r.jobs[2].start == 41);
  CHECK(r.jobs[2].completion == 51);
}

TEST_CASE("PFCFS1 alternates the gangs every slice until one is empty") {
  // 11..31 job 2 (10 s left); 31..51 job 1 (69 left); 51..61 job 2 ends; 61..130 job 1.
  CHECK(completions("PFCFS1(10,20,0)") == std::vector<double>{130, 61});
}

TEST_CASE("PFCFS2 gives the wide job one slice, then it waits for free nodes") {
  // 11..31 job 2 (10 s left); job 1 resumes 31..120; job 2 120..130.
  CHECK(completions("PFCFS2(10,20,0)") == std::vector<double>{120, 130});
}

TEST_CASE("PFCFS: the preemption penalty is added at every switch-in") {
  // Job 2 switched in at 11: 30 + 5 s, ends 46; job 1 switched back: 89 + 5, ends 140.
  CHECK(completions("PFCFS3(10,5)") == std::vector<double>{140, 46});
}

TEST_CASE("PFCFS: a small job never preempts, and a wide one that fits starts as in FIFO") {
  const auto w = test::workload({{0, 100, 2}, {1, 30, 2}, {2, 10, 3}});
  const auto r = make_algorithm("PFCFS1(0,20,0)")->run(w, single_site(4), {});
  CHECK(r.jobs[1].start == 1);
  CHECK(r.preemptions == 1);  // job 3 is wide (3 > 4/2) and does not fit at 2
  CHECK(r.jobs[2].start == 2);
}

}  // namespace piranha::rigid
