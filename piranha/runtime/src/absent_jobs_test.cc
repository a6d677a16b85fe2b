#include "piranha/runtime/absent_jobs.h"

#include <doctest/doctest.h>

using namespace std::chrono_literals;
using piranha::AbsentJobs;
using piranha::Clock;

namespace {
const Clock::time_point t0{};
}

TEST_CASE("AbsentJobs: a job's grace runs from the first read that missed it") {
  AbsentJobs jobs(AbsentJobs::Seconds(15));
  CHECK(jobs.absent(7, t0).count() == doctest::Approx(15));
  jobs.end_read();
  CHECK(jobs.absent(7, t0 + 10s).count() == doctest::Approx(5));
  jobs.end_read();
  CHECK(jobs.absent(7, t0 + 15s).count() <= 0);  // its grace is over
  jobs.end_read();
  CHECK(jobs.absent(7, t0 + 20s).count() <= 0);  // and stays over while it is missed
}

TEST_CASE("AbsentJobs: a job found again, or not asked about, starts afresh when next missed") {
  AbsentJobs jobs(AbsentJobs::Seconds(15));
  jobs.absent(1, t0);
  jobs.absent(2, t0);
  jobs.end_read();
  // Read at 10 s: job 1 missed again, job 2 found (not reported).
  CHECK(jobs.absent(1, t0 + 10s).count() == doctest::Approx(5));
  jobs.end_read();
  CHECK(jobs.absent(2, t0 + 12s).count() == doctest::Approx(15));
  CHECK(jobs.absent(1, t0 + 12s).count() == doctest::Approx(3));
  jobs.end_read();
}

TEST_CASE("AbsentJobs: reports within one read do not move a job's start") {
  AbsentJobs jobs(AbsentJobs::Seconds(2));
  jobs.absent(3, t0);
  jobs.end_read();
  CHECK(jobs.absent(3, t0 + 1s).count() == doctest::Approx(1));
  CHECK(jobs.absent(3, t0 + 1500ms).count() == doctest::Approx(0.5));
  jobs.end_read();
  CHECK(jobs.absent(3, t0 + 3s).count() <= 0);
}

TEST_CASE("AbsentJobs: a read abandoned part-way changes nothing") {
  AbsentJobs jobs(AbsentJobs::Seconds(15));
  jobs.begin_read();
  jobs.absent(4, t0);
  jobs.end_read();
  // The job is found at 5 s; a read at 6 s misses it, then fails before its end.
  jobs.begin_read();
  jobs.end_read();
  jobs.begin_read();
  jobs.absent(4, t0 + 6s);
  // The read at 20 s finds it; the one at 21 s misses it: its grace starts then,
  // not at the abandoned read's 6 s.
  jobs.begin_read();
  jobs.end_read();
  jobs.begin_read();
  CHECK(jobs.absent(4, t0 + 21s).count() == doctest::Approx(15));
  jobs.end_read();
}

TEST_CASE("AbsentJobs: no grace keeps no job") {
  AbsentJobs jobs(AbsentJobs::Seconds(0));
  CHECK(jobs.absent(9, t0).count() <= 0);
}

TEST_CASE("AbsentJobs: the default grace is the system space's") {
  AbsentJobs jobs;
  CHECK(jobs.absent(1, t0).count() == doctest::Approx(piranha::sys::kAbsentJobGrace));
}
