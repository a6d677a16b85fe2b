// AbsentJobs: how long a reader of the system space keeps a job live while
// its ("job", ...) record is absent.
//
// A job record is absent for a moment while someone rewrites it (sysspace.h,
// kAbsentJobGrace): the feeder marking it running, a hold, a cancel. A reader
// that lists live jobs (the node agent's uplink, the NPS's LivePool) keeps a
// job it knew as live and whose record is nowhere now for `grace` at most
// from the first read that missed it, and only while its ("jobexec", ...)
// launch record is there; the caller reads that record, and only when this
// says the grace has time left.
//
// Use, once per read of the system space: begin_read(), absent(id, now) for
// each known job the read did not find, then end_read(). A read abandoned
// part-way (the server went away) changes nothing: the next begin_read()
// drops what it had reported. Time is the caller's (a steady clock), so the
// rule is tested without one.
//
// Not thread-safe: one reader owns it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>

#include "piranha/base/clock.h"
#include "piranha/runtime/sysspace.h"

namespace piranha {

class AbsentJobs {
 public:
  using Seconds = std::chrono::duration<double>;

  explicit AbsentJobs(Seconds grace = Seconds(sys::kAbsentJobGrace)) : grace_(grace) {}

  // Starts a read, dropping what an abandoned one reported.
  void begin_read() { missed_.clear(); }

  // Job `id` has no record at the read made at `now`. Returns what is left of
  // its grace from `now`: above zero it is still live (if its launch record
  // is there); zero or less, it is not. Its grace runs from the first read of
  // an unbroken run of reads that each missed it.
  Seconds absent(std::int64_t id, Clock::time_point now) {
    auto since = since_.find(id);
    const Clock::time_point first = since != since_.end() ? since->second : now;
    missed_[id] = first;
    return grace_ - (now - first);
  }

  // Ends a read: a job not reported absent during it (found, or no longer
  // asked about) starts afresh the next time it is missed.
  void end_read() {
    since_ = std::move(missed_);
    missed_.clear();
  }

 private:
  Seconds grace_;
  std::map<std::int64_t, Clock::time_point> since_;   // as of the last ended read
  std::map<std::int64_t, Clock::time_point> missed_;  // during this read
};

}  // namespace piranha
