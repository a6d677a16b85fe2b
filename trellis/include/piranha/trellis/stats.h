// Timing: what every node's recalculations and every link cost, and the soft
// deadline misses of probes.
//
// A probe starts a trace. The trace travels with the state changes (and the
// queries and commands) it causes; when a top node -- one with no superiors
// -- recalculates because of it, the time since the probe is the probe's
// latency to the top. A latency above the program's deadline_ms is a miss.
// A probe that leaves a state unchanged stops there and reaches no top.
// When several traced activations meet in one recalculation, the oldest
// trace goes on, so the latency reported is the worst of them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "piranha/trellis/node.h"

namespace piranha::trellis {

// Running figures of one duration.
struct Timing {
  std::uint64_t count = 0;
  Duration total{0};
  Duration max{0};
  Duration last{0};
  void add(Duration d) {
    ++count;
    total += d;
    last = d;
    if (d > max) max = d;
  }
  Duration mean() const { return count ? total / static_cast<std::int64_t>(count) : Duration{0}; }
};

struct NodeStats {
  std::string name;
  Timing calculation;         // time inside calculate()
  std::uint64_t changes = 0;  // recalculations that changed the state
  std::uint64_t errors = 0;   // recalculations that threw
  Timing probe_to_top;        // top nodes only: probe latencies that reached this node
};

struct LinkStats {
  std::string host;  // the neighbouring host
  LinkState state = LinkState::Down;
  Timing round_trip;       // heartbeat round trips; latency is about half
  std::uint64_t sent = 0;  // activation messages
  std::uint64_t received = 0;
  std::uint64_t downs = 0;  // times the link went Down after being Up
};

struct DeadlineMiss {
  std::string top;     // the top node the probe reached
  std::string origin;  // the node that was probed
  Duration latency{0};
  Duration deadline{0};
};

struct Report {
  std::vector<NodeStats> nodes;  // local nodes, program order
  std::vector<LinkStats> links;  // neighbouring hosts
  std::uint64_t misses = 0;
  std::vector<DeadlineMiss> recent_misses;  // the last few (at most 100)
};

// A plain-text table of `r`, for logs and the command line.
std::string format_report(const Report& r);

}  // namespace piranha::trellis
