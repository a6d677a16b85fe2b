// The feeder-silence rule: when a running job's feeder counts as dead.
//
// A job's feeder rewrites its ("jobstat", ...) record at least every 5 s
// (job_reporter.h), so the record's updated_at is the feeder's heartbeat. A
// running job whose feeder has not been heard from for kFeederSilence has
// lost its feeder (killed outright, outside `piranha submit`, which would
// have recorded its end). Readers of the system space (the node agent's
// uplink, the NPS's LivePool) then treat the job as not live, or its
// piranhas would wait for tasks for ever. A queued job has no feeder yet,
// and a running job without a jobstat has a feeder that has not reported
// yet: neither is silent.
//
// Pure: time is the caller's (wall-clock seconds, as in the jobstat), so
// the rule is tested without a clock. Thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "piranha/runtime/sysspace.h"

namespace piranha {

// Six times the feeder's longest interval between rewrites: a late rewrite
// on a loaded host is not taken for a death.
inline constexpr double kFeederSilence = 30;

// When job `id`'s feeder was last heard from, by the records in `stats`:
// the newest updated_at of that job's (there are two for a moment when
// writers raced on an absent record); 0 when there is none.
inline double feeder_heard(std::span<const sys::JobStat> stats, std::int64_t id) {
  double heard = 0;
  for (const auto& s : stats)
    if (s.id == id) heard = std::max(heard, s.updated_at);
  return heard;
}

// Whether a job in `state`, whose feeder was last heard from at `heard`
// (0: never), counts as dead at `now`: it is running and has been silent
// for longer than `silence` seconds. It turns silent just after
// heard + silence, the moment a reader that does not watch jobstats should
// look again.
inline bool feeder_silent(sys::JobState state, double heard, double now, double silence = kFeederSilence) {
  return state == sys::JobState::Running && heard > 0 && now - heard > silence;
}

}  // namespace piranha
