// TickTimer: how long the live NPS takes per tick, from the moment it starts
// reading the pool to the moment scheduler 0's decision for that tick is
// made (the scheduler's heartbeat() call that ends its calculation), which
// is what an operator sizing a pool needs: a tick that takes longer than the
// period falls behind.
//
// The shell calls began() when a tick's refresh starts, with the count of
// heartbeat() calls so far, and decided() whenever it looks (every few ms)
// with the count now; a count that grew ends the tick. A tick that is still
// undecided when the next begins is counted up to that moment (a lower
// bound: it ran at least that long). read() marks the end of the tick's
// reading, so that a slow tick says whether the pool's round trips or the
// deciding took the time. Pure: times are passed in. Not
// thread-safe: the shell's own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace piranha::nps {

struct TickSummary {
  std::size_t ticks = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0, mean_ms = 0;
  // The part of each tick spent reading the pool (its requests' round trips).
  double read_p50_ms = 0, read_p99_ms = 0;
  // {"ticks": ..., "p50_ms": ..., "p99_ms": ..., "max_ms": ..., "mean_ms": ...,
  //  "read_p50_ms": ..., "read_p99_ms": ...}
  std::string to_json() const;
};

class TickTimer {
 public:
  // `now` in seconds on any steady clock.
  void began(double now, std::uint64_t decisions);
  void decided(double now, std::uint64_t decisions);
  // The tick's reading of the pool ended at `now` (after began()).
  void read(double now);
  // The ticks timed so far (the nearest-rank percentiles of their durations).
  TickSummary summary() const;

 private:
  std::optional<double> start_;
  std::uint64_t decisions_ = 0;
  std::vector<double> ms_, read_ms_;
};

}  // namespace piranha::nps
