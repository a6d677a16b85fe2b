// The Lublin–Feitelson model of rigid parallel jobs (U. Lublin, D. G.
// Feitelson, "The workload on parallel supercomputers: modeling the
// characteristics of rigid jobs", JPDC 63(11), 2003), as docs/rigid.md,
// "Synthetic workloads", states it: batch and interactive jobs, each with its
// own daily arrival cycle, a two-stage-uniform log2 width and a hyper-gamma
// log run time correlated with the width.
//
//   rigid::LublinOptions o;
//   o.jobs = 1'000'000;
//   rigid::write_lublin_swf(std::cout, o);
//
// Deterministic: the same options give the same jobs (draws from
// sched::Rng(seed, 7)). No clock, no I/O but the stream given.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <vector>

#include "piranha/rigid/workload.h"

namespace piranha::rigid {

struct LublinOptions {
  std::size_t jobs = 10000;  // how many jobs, >= 1
  int nodes = 256;           // the machine's size P, >= 2: the widest batch job has P nodes
  std::uint64_t seed = 0;
};

// One generated job; `interactive` is the model's job type.
struct LublinJob {
  Time submit = 0, runtime = 0;
  int width = 1;
  bool interactive = false;
};

// The jobs in arrival order (numbered 1.. in this order). Throws
// std::invalid_argument for jobs < 1 or nodes < 2.
std::vector<LublinJob> lublin_jobs(const LublinOptions& o);

// The same jobs as a Workload (ids 1.., max_nodes = nodes), as read_swf
// would give them from write_lublin_swf's file.
Workload lublin_workload(const LublinOptions& o);

// Writes them as an SWF file: a header with "; MaxNodes: P", then one line
// per job with fields 1 (number), 2 (submit), 4 (run time), 5 (width),
// 11 (status 1) and 15 (queue: 0 interactive, 1 batch), -1 elsewhere.
void write_lublin_swf(std::ostream& out, const LublinOptions& o);

}  // namespace piranha::rigid
