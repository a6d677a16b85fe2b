#include "piranha/runtime/feeder_silence.h"

#include <doctest/doctest.h>

#include <vector>

namespace sys = piranha::sys;
using piranha::feeder_heard;
using piranha::feeder_silent;

TEST_CASE("feeder silence: a running job whose feeder has not written for longer than the silence is dead") {
  CHECK_FALSE(feeder_silent(sys::JobState::Running, 100, 100 + 29.9, 30));
  CHECK_FALSE(feeder_silent(sys::JobState::Running, 100, 100 + 30, 30));  // silent only after it
  CHECK(feeder_silent(sys::JobState::Running, 100, 100 + 30.1, 30));
  CHECK(feeder_silent(sys::JobState::Running, 100, 100 + 5.5, 5));
  // The default is the agents' and the NPS's.
  CHECK_FALSE(feeder_silent(sys::JobState::Running, 100, 100 + piranha::kFeederSilence));
  CHECK(feeder_silent(sys::JobState::Running, 100, 100 + piranha::kFeederSilence + 0.1));
  // A feeder is lost once silent past its patience and the slack.
  CHECK(piranha::feeder_lost_after(5) == 5 + piranha::kFeederSlack);
  CHECK(piranha::kFeederSilence == piranha::feeder_lost_after(piranha::kFeederPatience));
}

TEST_CASE("feeder silence: a queued job, one that ended and a feeder never heard from are not silent") {
  for (auto state : {sys::JobState::Queued, sys::JobState::Held, sys::JobState::Done, sys::JobState::Failed,
                     sys::JobState::Cancelled})
    CHECK_FALSE(feeder_silent(state, 100, 1000, 30));
  CHECK_FALSE(feeder_silent(sys::JobState::Running, 0, 1000, 30));
}

TEST_CASE("feeder silence: a feeder is heard at its job's newest jobstat") {
  const std::vector<sys::JobStat> stats = {
      {1, 4, 96, 0.01, 120}, {2, 0, 10, 0, 300}, {1, 3, 97, 0.01, 110}, {3, 0, 0, 0, 0}};
  CHECK(feeder_heard(stats, 1) == 120);  // duplicates: the newer
  CHECK(feeder_heard(stats, 2) == 300);
  CHECK(feeder_heard(stats, 3) == 0);
  CHECK(feeder_heard(stats, 4) == 0);  // no jobstat
  CHECK(feeder_heard({}, 1) == 0);
}
