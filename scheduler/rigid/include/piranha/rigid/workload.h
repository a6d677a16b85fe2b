// Rigid jobs and the Standard Workload Format (SWF) of the Parallel Workloads
// Archive, as docs/rigid.md, "Jobs", reads them.
//
// A job needs a fixed number of nodes at once for its whole run (an MPI
// program, the "parallel job" of the papers). Times are whole seconds.
//
// Not thread-safe to share a Workload being built; a finished one is
// read-only and may be shared.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "piranha/base/input_error.h"
#include "piranha/scheduler/job_list.h"

namespace piranha::rigid {

using Time = std::int64_t;

// A value the workload does not give (SWF's -1).
inline constexpr std::int64_t kUnknown = -1;

struct RigidJob {
  std::int64_t id = 0;                 // SWF field 1, unique
  Time submit = 0;                     // field 2, >= 0
  Time runtime = 0;                    // field 4, >= 0: the run time on a site of factor 1
  int width = 1;                       // field 8 (requested processors), else field 5 (allocated), >= 1
  Time estimate = kUnknown;            // field 9 (requested time), >= 0, or kUnknown
  std::int64_t user = kUnknown;        // field 12
  std::int64_t executable = kUnknown;  // field 14
  int line = 0;                        // the line of the file it came from (for messages)
};

struct Workload {
  std::string source;          // the file name used in messages
  std::vector<RigidJob> jobs;  // sorted by (submit, id): the queue order everywhere
  int max_nodes = -1;          // the header's "; MaxNodes:", or -1
  std::size_t skipped = 0;     // lines left out: run time -1 or no width (docs/rigid.md)
};

// Parses SWF text; `name` is used in messages. Comment lines start with ';'
// (a "; MaxNodes: N" header is kept); blank lines are ignored. Throws
// InputError "NAME:LINE: problem" for: a line without exactly 18 fields,
// a field that is not a number (fields 1, 2, 4, 5, 8, 9, 12, 14 must be
// integers), a value below -1, a negative submit time, a repeated job number,
// no jobs at all ("NAME: no jobs").
Workload parse_swf(std::istream& in, const std::string& name);

// Reads an SWF file; throws InputError (also when it cannot be opened).
Workload read_swf(const std::string& path);

// The workload with every run time and estimate multiplied by `factor` > 0
// and rounded up (seed 002's load factor); submit times unchanged.
Workload scale_load(const Workload& w, double factor);

// The workload without jobs wider than `nodes` (seed 001 removes them).
Workload at_most_width(const Workload& w, int nodes);

}  // namespace piranha::rigid
