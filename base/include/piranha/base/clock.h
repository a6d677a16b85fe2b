// The clock of every deadline, lease, timeout and period in Piranha.
//
// Steady, so that a change of the wall clock (NTP, an administrator) can
// neither end a wait early nor stretch it. Wall-clock times (availability
// traces, the system space's records) are plain seconds since the epoch and
// do not use it. Header-only and without dependencies, so every layer may
// include it.
#pragma once

#include <chrono>
#include <cstdint>

namespace piranha {

using Clock = std::chrono::steady_clock;

// Now on Clock, in whole milliseconds since its epoch: the integer time the
// tuple space's store and its deadlines are given.
inline std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace piranha
