// TickTimer: how long the live NPS takes per tick, from the moment it starts
// reading the pool to the moment scheduler 0's decision for that tick is
// made (the scheduler's heartbeat() call that ends its calculation), which
// is what an operator sizing a pool needs: a tick that takes longer than the
// period falls behind.
//
// The shell calls began() when a tick's refresh starts, with the count of
// heartbeat() calls so far, and decided() whenever it looks (every few ms)
// with the count now and the time of the latest call; a count that grew
// ends the tick at that time. A tick that is still
// undecided when the next begins is counted up to that moment (a lower
// bound: it ran at least that long). read() marks the end of the tick's
// reading, so that a slow tick says whether the pool's round trips or the
// deciding took the time; rebuilt() marks a tick in which the trellis was
// rebuilt for nodes that joined, a cost paid while a pool registers and not
// at every tick. The timer keeps the last kKept ticks, each with its start,
// so that a benchmark can take the ticks of a window of its own (a pool at
// its full size, not while it registers). Pure: times are passed in. Not
// thread-safe: the shell's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

namespace piranha::nps {

// One timed tick: when it began (the caller's clock, seconds), how long it
// took to its decision and to the end of its reading (negative: its reading
// failed), and whether the trellis was rebuilt in it.
struct TimedTick {
  double began = 0, ms = 0, read_ms = -1;
  bool rebuilt = false;
};

struct TickSummary {
  std::size_t ticks = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  // The part of each tick spent reading the pool (its requests' round trips).
  double read_p50_ms = 0, read_p99_ms = 0;
  // The ticks that rebuilt the trellis, and the longest of them.
  std::size_t rebuilds = 0;
  double rebuild_max_ms = 0;
  // The ticks summarised, oldest first (in the JSON only when asked for).
  std::vector<TimedTick> log;
  // {"ticks": ..., "p50_ms": ..., "p99_ms": ..., "max_ms": ..., "mean_ms": ...,
  //  "read_p50_ms": ..., "read_p99_ms": ..., "rebuilds": ..., "rebuild_max_ms": ...
  //  [, "log": [[began, ms, read_ms or null, rebuilt 0/1], ...]]}
  std::string to_json(bool with_log = false) const;
};

class TickTimer {
 public:
  // `now` in seconds on any steady clock.
  void began(double now, std::uint64_t decisions);
  void decided(double now, std::uint64_t decisions);
  // The tick's reading of the pool ended at `now` (after began()).
  void read(double now);
  // The current tick rebuilt the trellis.
  void rebuilt();
  // Whether a tick began and is not decided yet.
  bool deciding() const { return current_.has_value(); }
  // The ticks timed so far that began at or after `since` (the
  // nearest-rank percentiles of their durations), of the last kKept.
  TickSummary summary(double since = -1e300) const;

  static constexpr std::size_t kKept = 1 << 16;

 private:
  void end(double now);

  std::optional<TimedTick> current_;
  std::uint64_t decisions_ = 0;
  std::deque<TimedTick> ticks_;
};

}  // namespace piranha::nps
