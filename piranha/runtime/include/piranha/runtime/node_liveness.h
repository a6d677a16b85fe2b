// The node-liveness rule: how a reader judges a node by when its agent was
// last heard from.
//
// An agent rewrites its heartbeat every `heartbeat_seconds` (its
// ("agentbeat", ...) record says how often; 10 s by default) and with every
// change of its node record. A node whose agent has not been heard from for
// more than kSuspectBeats of its own heartbeat intervals has missed a beat
// (half an interval is allowed for a late write): it is *suspect* (a cut
// link, a frozen or overloaded agent), shown so by `piranha nodes` at once,
// whatever its record says. Silent for longer than kStaleSeconds it is
// *stale* and counts as down, as the NPS's `--stale` (30 s) judges it.
//
// Pure: time is the caller's (wall-clock seconds). Thread-safe.
#pragma once

#include <algorithm>

namespace piranha {

// Heartbeat intervals of silence after which a node is suspect.
inline constexpr double kSuspectBeats = 1.5;
// Never sooner than this (seconds): a reader's clock and the write's round
// trip differ by milliseconds, not by a beat of a very fast agent.
inline constexpr double kSuspectFloor = 1;
// Silence after which a node counts as down (seconds): three default beats.
inline constexpr double kStaleSeconds = 30;
// The heartbeat interval assumed for an agent that does not say (no
// ("agentbeat", ...) record: an agent of an older build).
inline constexpr double kDefaultBeatSeconds = 10;

enum class Liveness { Heard, Suspect, Stale };

// How a node whose agent was last heard from at `heard` and beats every
// `beat_seconds` stands at `now`.
inline Liveness node_liveness(double heard, double now, double beat_seconds = kDefaultBeatSeconds) {
  const double silent = now - heard;
  if (silent > kStaleSeconds) return Liveness::Stale;
  if (silent > std::max(kSuspectBeats * beat_seconds, kSuspectFloor)) return Liveness::Suspect;
  return Liveness::Heard;
}

}  // namespace piranha
