// The multi-site choice of docs/rigid.md, "Multi-site algorithms": the K sites
// a job arriving at a machine of several sites is queued at (MR's `select`;
// Greedy is MR(1) by LOAD). Pure functions of the sites' views at the job's
// arrival: no clock, no I/O, no memory between calls; the space-sharing
// simulator builds the views and queues the job where these say.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "piranha/rigid/pick.h"

namespace piranha::rigid {

// A site's instantaneous load times its node count: Σ width × remaining
// predicted work over the jobs queued in `v` (their predicted run time) and
// running there (predicted end − now, with the predicted end of "Predictions":
// a job past its prediction counts 1 s); an unknown prediction counts 0. Exact.
__int128 site_load(const SiteView& v);

// The predicted completion of a job of `width` and predicted run time `length`
// appended to `v`'s queue, under conservative reservations: its reservation +
// length, kNever when either is unknown.
Time completion_if_appended(const SiteView& v, WaitingJob job);

// Of `candidates` (the sites the job fits, ascending), the k whose load per
// node (`load[s] / nodes[s]`, compared exactly as fractions) is least, ties to
// the lower site; all of them when there are at most k. Ascending. `load` and
// `nodes` are indexed by site.
std::vector<int> least_loaded(std::vector<int> candidates, std::size_t k, std::span<const __int128> load,
                              std::span<const int> nodes);

// The same by earliest predicted completion (`completion[s]`, kNever last),
// ties to the lower site.
std::vector<int> earliest_completion(std::vector<int> candidates, std::size_t k,
                                     std::span<const Time> completion);

}  // namespace piranha::rigid
