// Availability traces: the `*.avail.csv` format of docs/scheduling.md, "Files".
//
//   # piranha availability trace v1
//   # step_seconds: 60
//   # length: 30240
//   node,start,end
//   ws01,0,125
//
// Each row is one availability period (AP) of a node, in integer steps,
// half-open: the node is available at every step s with start <= s < end.
// The agent's trace sensor replays a trace, the simulator and predictors read
// one, and `piranha trace` writes them; all go through this one reader.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "piranha/base/input_error.h"

namespace piranha {

// One availability period of one node, in steps: available on [start, end).
struct StepPeriod {
  std::int64_t start = 0;
  std::int64_t end = 0;
  friend bool operator==(const StepPeriod&, const StepPeriod&) = default;
};

// A whole trace. Invariants (checked by the reader, assumed by every user):
// step_seconds >= 1, length >= 1, nodes are unique, periods[i] belongs to
// nodes[i], is sorted by start, non-overlapping, and 0 <= start < end <= length.
struct AvailabilityTrace {
  std::int64_t step_seconds = 60;
  std::int64_t length = 0;         // number of steps
  std::vector<std::string> nodes;  // in order of first appearance: the node index
  std::vector<std::vector<StepPeriod>> periods;

  // Index of `node`, or nullopt when the trace has no such node.
  std::optional<std::size_t> index_of(const std::string& node) const;

  // Whether node `n` is available at step `s` (0 <= s < length). O(log APs).
  bool available(std::size_t n, std::int64_t s) const;

  // The first step > s (and <= length) at which node n's availability differs
  // from its availability at step s; `length` when it never changes again.
  std::int64_t next_change(std::size_t n, std::int64_t s) const;

  // Fraction of all node-steps that are available, in [0, 1].
  double available_fraction() const;
};

// Parses a trace. `name` is used in error messages (usually the file path).
// Throws InputError naming the line and problem for: a missing `length`
// metadata line, a missing or wrong `node,start,end` header, an unknown or
// missing column, a non-integer field, start >= end, end > length, start < 0,
// overlapping rows of one node, a bad metadata value.
AvailabilityTrace parse_trace(std::istream& in, const std::string& name);

// Reads a trace file; throws InputError (also when it cannot be opened).
AvailabilityTrace read_trace(const std::string& path);

// Writes `t` in the canonical form (metadata, header, rows node by node in
// node-index order, each node's periods by start). parse_trace of the output
// gives back `t`.
void write_trace(std::ostream& out, const AvailabilityTrace& t);

}  // namespace piranha
