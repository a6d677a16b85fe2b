// Availability: whether a node may run piranhas right now.
//
// The paper's criterion (section 4): a node is available when its
// 1-, 5- and 15-minute load averages are under 0.7, 0.4 and 0.1 and its
// keyboard and mouse have been idle for at least 60 seconds. judge() is that
// criterion as a pure function of one Reading; the sensors that produce
// Readings live in sensors.h, and AvailabilitySource (availability_source.h)
// ties them together for the node agent.
#pragma once

#include <array>
#include <chrono>
#include <optional>
#include <string>

#include "piranha/base/clock.h"

namespace piranha {

// The agent's clock: availability is judged on a monotonic clock so that a
// wall-clock jump never starts or ends an availability period.

// Availability thresholds; the defaults are the paper's.
struct Thresholds {
  double load1 = 0.7;              // 1-minute load average must be strictly below this
  double load5 = 0.4;              // 5-minute load average must be strictly below this
  double load15 = 0.1;             // 15-minute load average must be strictly below this
  double input_idle_seconds = 60;  // owner input must have been idle at least this long
};

// One observation of a node. A missing reading (nullopt) never blocks
// availability: a machine without input devices is judged on load alone.
struct Reading {
  // 1-, 5- and 15-minute load averages, already without the piranhas' own load.
  std::optional<std::array<double, 3>> load;
  // Seconds since the owner last used any input source (keyboard, mouse,
  // terminal, X display): the smallest idle time over all sources;
  // nullopt when no input source was seen.
  std::optional<double> input_idle_seconds;
  // Whether `load` is the load average minus the agent's own piranhas'
  // (own_load.h), as the live sensor reads it: a verdict then says so, so
  // that an owner does not take the piranhas for the load that sent them away.
  bool own_piranhas_excluded = false;
};

// The outcome of judging a Reading.
struct Verdict {
  bool available = false;
  // Why, for logs and the node tuple: "idle" when available, otherwise every
  // criterion that failed, joined by "; ", e.g. "1-min load 0.93 >= 0.70" or
  // "keyboard/mouse idle 3 s < 60 s"; the load's followed by ", own piranhas
  // excluded" when the reading's load is without them.
  std::string reason;
};

// Available iff every present load average is strictly below its threshold
// and the present input idle time is at least the idle threshold. Pure.
Verdict judge(const Reading& reading, const Thresholds& thresholds);

}  // namespace piranha
