// Ticker: when the live NPS ticks (docs/nps.md, "Ticks").
//
// The live shell probes the enabler on a fixed grid, every `period` from
// the first tick, so that a late tick does not shift the later ones; and,
// between two grid ticks, at once when the system space has brought news (a
// job arrived, ended or was first measured; a node registered or changed
// state: LivePool::news). Such an *event tick* leaves the grid as it was:
// schedulers still decide on their own period, and those with `on_events`
// decide at the event tick as the simulator decides at an arrival's step.
// Event ticks come at most one per `gap`, so a flood of news costs at most
// one refresh of the pool per gap; news that comes sooner waits for the gap's
// end, never for the next grid tick.
//
// A pure core: no clock (the caller passes the time in), no I/O. Not
// thread-safe.
#pragma once

#include <chrono>

#include "piranha/base/clock.h"

namespace piranha::nps {

class Ticker {
 public:
  enum class Tick { None, Grid, Event };

  // The first grid tick is at `first`. `period` should be positive; one
  // under a millisecond (a program's tiny enabler period, which the clock's
  // duration may round to 0) counts as a millisecond.
  Ticker(Clock::time_point first, Clock::duration period, Clock::duration gap);

  // Notes that news has come; the next take() at or after the gap's end
  // ticks for it.
  void news() { news_ = true; }
  // Whether to tick at `now`, and which tick it is. A tick taken clears the
  // news (a grid tick reads the news too); a grid tick moves the grid on by
  // whole periods past `now`.
  Tick take(Clock::time_point now);
  // The time of the next tick as things stand: the next grid tick, or
  // sooner the end of the gap when news is waiting. The caller may wait
  // until then (and for news meanwhile).
  Clock::time_point next() const;

 private:
  Clock::duration period_, gap_;
  Clock::time_point grid_, last_;  // the next grid tick; the last tick taken
  bool news_ = false;
};

}  // namespace piranha::nps
