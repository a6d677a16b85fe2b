// The feeder-loss rule: when a running job's feeder counts as gone for good.
//
// A job's feeder rewrites its ("jobstat", ...) record at least every 5 s
// (job_reporter.h), so the record's updated_at is the feeder's heartbeat. A
// feeder that loses its server keeps trying for its *patience*
// (PIRANHA_PATIENCE_SECONDS, default kFeederPatience; the job's
// ("jobpatience", ...) record says it to the pool), and its piranhas meanwhile
// go on with the tasks the server holds: a silent feeder is not yet a lost
// one. A running job whose feeder has not been heard from for its patience
// plus kFeederSlack has lost its feeder (killed outright, outside `piranha
// submit`, frozen, or cut off past its patience). A node agent that finds
// one records it (sys::lose_job: the job `failed`, with a ("joblost", ...)
// record saying when and why), so that its piranhas stop and `piranha jobs`
// shows it; readers that do not know a job's patience (the NPS's LivePool)
// use kFeederSilence, the default's. A queued job has no feeder yet, and a
// running job without a jobstat has a feeder that has not reported yet:
// neither is silent.
//
// Pure: time is the caller's (wall-clock seconds, as in the jobstat), so
// the rule is tested without a clock. Thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "piranha/runtime/sysspace.h"

namespace piranha {

// How long a job's processes wait for a server that does not answer before
// they give up (seconds): five minutes, far beyond a server restart, short
// enough that a job nobody works on is recorded failed the same hour.
inline constexpr double kFeederPatience = 300;

// Two of the feeder's longest intervals between jobstat rewrites: a feeder
// whose server answers again at the end of its patience is heard before it
// counts as lost.
inline constexpr double kFeederSlack = 10;

// How long a running job's feeder may be silent before it counts as lost,
// when its patience is `patience`.
inline constexpr double feeder_lost_after(double patience) {
  return patience + kFeederSlack;
}

// The same for a feeder of the default patience: what a reader that does not
// read a job's patience (the NPS) takes.
inline constexpr double kFeederSilence = feeder_lost_after(kFeederPatience);

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
// (0: never), counts as lost at `now`: it is running and has been silent
// for longer than `silence` seconds. It turns silent just after
// heard + silence, the moment a reader that does not watch jobstats should
// look again.
inline bool feeder_silent(sys::JobState state, double heard, double now, double silence = kFeederSilence) {
  return state == sys::JobState::Running && heard > 0 && now - heard > silence;
}

}  // namespace piranha
