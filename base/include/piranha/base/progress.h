// ProgressMeter: how fast a long run goes and how long it has left, for the
// progress lines of `piranha submit` and the simulations (stderr only).
//
// It is fed observations (time, done): `done` counts units of work (tasks,
// runs, or a fraction of the whole) and does not decrease. The rate is
// measured over the observations of the last `window` seconds, so that a slow
// start (piranhas starting, B travelling) or a change of pace (a node lost)
// is forgotten within the window; the time left is what remains at that rate.
// Nothing is estimated before some progress has been seen over some time:
// an estimate from nothing would be a guess printed as a fact.
//
// Pure and deterministic: times are passed in, seconds on any steady clock.
// Not thread-safe. time_left_words() is a pure function.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <optional>
#include <string>
#include <utility>

namespace piranha {

class ProgressMeter {
 public:
  explicit ProgressMeter(double window_seconds = 30) : window_(window_seconds) {}

  // At `now`, `done` units are done. A `done` smaller than the last one (the
  // count started again) starts the measure again; a `now` earlier than the
  // last is ignored.
  void observe(double now, double done) {
    if (!seen_.empty() && now < seen_.back().first) return;
    if (!seen_.empty() && done < seen_.back().second) seen_.clear();
    seen_.emplace_back(now, done);
    // Keep one observation at or before the window's start, so that the
    // rate always spans the whole window once it has run that long.
    while (seen_.size() > 2 && seen_[1].first <= now - window_) seen_.pop_front();
  }

  // Units a second over the window; nullopt until progress has been seen
  // over at least a second.
  std::optional<double> rate() const {
    if (seen_.size() < 2) return std::nullopt;
    const double dt = seen_.back().first - seen_.front().first;
    const double dd = seen_.back().second - seen_.front().second;
    if (!(dt >= 1) || !(dd > 0)) return std::nullopt;
    return dd / dt;
  }

  // Seconds until `remaining` more units are done at rate(); 0 when nothing
  // remains; nullopt without a rate.
  std::optional<double> seconds_left(double remaining) const {
    if (!(remaining > 0)) return 0.0;
    auto r = rate();
    if (!r) return std::nullopt;
    return remaining / *r;
  }

 private:
  double window_;
  std::deque<std::pair<double, double>> seen_;  // (time, done), oldest first
};

// A time left as people say it, rounded up to what is worth saying:
// "8 s", "4 min 10 s", "2 h 05 min".
inline std::string time_left_words(double seconds) {
  const long s = std::lround(std::ceil(std::max(0.0, seconds)));
  char out[48];
  if (s < 60) {
    std::snprintf(out, sizeof out, "%ld s", s);
  } else if (s < 3600) {
    std::snprintf(out, sizeof out, "%ld min %02ld s", s / 60, s % 60);
  } else {
    const long minutes = (s + 59) / 60;
    std::snprintf(out, sizeof out, "%ld h %02ld min", minutes / 60, minutes % 60);
  }
  return out;
}

}  // namespace piranha
