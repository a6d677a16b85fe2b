// Retention of the evaluator's records (docs/nps.md, "Retention"): which of
// the ("eval", kind, time, json) records a pool keeps may go, so that they do
// not accumulate without bound while what reports and a restarted NPS need
// stays consistent.
//
// Pure: no I/O, no clock (`now` is passed in). Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "piranha/nps/pool.h"

namespace piranha::nps {

// The evaluator's `retention` parameter.
struct Retention {
  double days = 30;                  // a record older than this goes
  std::size_t max_records = 50'000;  // and beyond this many, the oldest go
};

// The indices (ascending) of the records in `records` (oldest first, as a
// pool keeps them) to remove at `now` (pool units: seconds live). The
// records kept are those from a *cut* on, where the cut is the later of
// now - days and the oldest of the newest max_records records, except that:
//
//   - a `job` record kept has all its spans: a job that arrived before the
//     cut (its earlier spans go) loses its `job` record too;
//   - the latest `switch` record, which says which scheduler is obeyed, the
//     latest `estimate` of each scheduler and the latest `accuracy` of each
//     node are kept whatever their age (at most 1 + schedulers + nodes
//     records beyond max_records).
//
// A record whose json is not an object goes with its time like any other.
std::vector<std::size_t> records_to_prune(std::span<const EvalRecord> records, const Retention& retention,
                                          double now);

// The cut records_to_prune applies: spans that ended before it and ended
// jobs that arrived before it are gone from the pool after pruning;
// -infinity when nothing goes by age or count.
double retention_cut(std::span<const EvalRecord> records, const Retention& retention, double now);

}  // namespace piranha::nps
