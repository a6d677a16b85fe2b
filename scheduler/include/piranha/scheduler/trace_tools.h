// Making and reading availability traces: the synthetic workstation model
// (docs/trace-model.md), import from recorded agent tuples or a 0/1 matrix,
// and the statistics `piranha trace stats` prints.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "piranha/scheduler/avail_trace.h"

namespace piranha::sched {

// Parameters of the synthetic workstation model; every default is explained
// in docs/trace-model.md. Times of day are in hours, durations in minutes.
// Step 0 is Monday 00:00; steps are one minute.
struct SynthOptions {
  int nodes = 15;
  int days = 21;
  std::uint64_t seed = 1;
  // Working day: per node, arrival and departure hours drawn uniformly.
  double arrive_min = 7.5, arrive_max = 9.5, leave_min = 17.0, leave_max = 20.0;
  double presence = 0.9;  // chance the owner comes in on a weekday
  // Lunch: start hour uniform, length uniform (minutes); the owner is away.
  double lunch_min = 11.75, lunch_max = 12.75, lunch_length_min = 30, lunch_length_max = 60;
  // Per node, the fraction of present time the workstation is in use, uniform.
  double busy_min = 0.7, busy_max = 0.95;
  // Idle gaps while present: a mixture of short pauses and longer breaks.
  double short_gap_mean = 2.5, long_gap_mean = 20, short_gap_share = 0.6;
  // Weekend visits: chance per node and day, length uniform (minutes).
  double weekend_visit = 0.15, weekend_length_min = 60, weekend_length_max = 240;
  // Evening sessions on weekdays (remote logins, 20:00–23:00).
  double evening_session = 0.2, evening_length_min = 20, evening_length_max = 90;
  // Share of nodes running a nightly batch job (02:00–04:00 start), length uniform.
  double nightly_share = 0.2, nightly_length_min = 30, nightly_length_max = 90;
};

// Generates a trace: deterministic in options (see random.h).
AvailabilityTrace synthesize_trace(const SynthOptions& options);

// Converts recorded ("ap", node, start, end) tuples, one per line as the tuple
// space prints them (`("ap", "ws01", 120.0, 7500.0)`; start and end in
// seconds), into a trace. A step is available when it lies wholly inside an
// AP; `origin` (default: the earliest start) is step 0; length is the last
// end's step unless `length` > 0. Overlapping periods of a node merge.
// Throws InputError naming the line for a malformed tuple or end < start.
AvailabilityTrace import_ap_tuples(std::istream& in, const std::string& name, std::int64_t step_seconds,
                                   double origin = -1, std::int64_t length = 0);

// Converts a per-step 0/1 matrix (header: node names, comma-separated; then
// one row per step, one 0/1 per node) into a trace. Throws InputError naming
// the line for a wrong field count or a value other than 0 and 1.
AvailabilityTrace import_matrix(std::istream& in, const std::string& name, std::int64_t step_seconds);

struct TraceStats {
  double available_fraction = 0;
  std::int64_t aps = 0;
  double mean_ap = 0, median_ap = 0, p10_ap = 0, p90_ap = 0, max_ap = 0;  // steps
  // AP length histogram: counts of APs in [bucket_edges[i], bucket_edges[i+1]).
  std::vector<std::int64_t> bucket_edges, bucket_counts;
  std::vector<double> per_node;      // available fraction per node
  std::vector<double> weekday_hour;  // available fraction by hour of day, Monday–Friday
  std::vector<double> weekend_hour;  // the same, Saturday–Sunday
};

// Statistics of a trace; the daily profile assumes step 0 is Monday 00:00.
TraceStats trace_stats(const AvailabilityTrace& trace);

}  // namespace piranha::sched
