// The deciding core of the space-sharing algorithms (docs/rigid.md,
// "Single-site algorithms"): pure functions of one site's state at one
// instant. No clock, no I/O, no memory between calls; the simulator builds a
// SiteView at each scheduling pass and starts what these return. Each
// algorithm is in its own file of scheduler/rigid/src/algorithms/ (fifo.cc,
// first_fit.cc, random.cc, easy.cc for backfilling FIFO and EASY,
// conservative.cc); PFCFS and the interference algorithms MTI, MCT, MNI are
// whole simulators there (pfcfs.cc, interference.cc), and so is the
// multi-site algorithms' choice of sites (site_choice.h).
//
// Predictions are those of docs/rigid.md, "Predictions": a value >= 0 or
// kUnknown. A running job's predicted end at or before `now` counts as
// now + 1 (it has overrun its prediction and is still running).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "piranha/rigid/workload.h"
#include "piranha/scheduler/random.h"

namespace piranha::rigid {

// A start that cannot be predicted (a reservation behind a job of unknown length).
inline constexpr Time kNever = INT64_MAX;

struct WaitingJob {
  int width = 1;
  Time predicted = kUnknown;  // predicted run time at this site
};

struct RunningJob {
  int width = 1;
  Time predicted_end = kUnknown;
};

struct SiteView {
  Time now = 0;
  int nodes = 1;  // the site's nodes
  int free = 1;   // idle nodes now
  std::span<const RunningJob> running;
  std::span<const WaitingJob> queue;  // in the site's priority order
};

// Each returns the queue positions to start now, in the order they start.

// FIFO: the head while it fits; never past a head that does not.
std::vector<std::size_t> pick_fifo(const SiteView& v);

// FirstFit: every job in queue order that fits the nodes still free.
std::vector<std::size_t> pick_first_fit(const SiteView& v);

// Random: repeatedly a uniformly drawn job (rng.below(count)) among those
// that fit, counted in queue order, until none fits.
std::vector<std::size_t> pick_random(const SiteView& v, sched::Rng& rng);

// The head's shadow: when it is predicted to fit, and the nodes spare then.
struct Shadow {
  Time time = kNever;  // kNever: a job it waits for has no prediction
  int extra = 0;
};
Shadow shadow_of(const SiteView& v, int head_width);

// Backfilling FIFO of seed 000 (extra = false): FIFO, then every later job in
// queue order with a known prediction, that fits the free nodes and ends by
// the head's shadow time. EASY (extra = true): also a job that fits within
// the shadow's extra nodes, whatever its length (which then uses them up).
// No backfilling when the shadow is kNever.
std::vector<std::size_t> pick_backfill(const SiteView& v, bool extra);

// Conservative backfilling: every queued job in order gets the earliest
// reservation where its width fits for its predicted length (unknown: for
// ever; 0: one second) in the profile of running jobs and earlier
// reservations. Returns
// the reservation start per queue position (kNever when none exists).
std::vector<Time> reservations(const SiteView& v);

// The positions whose reservation is `now`, in queue order.
std::vector<std::size_t> pick_conservative(const SiteView& v);

}  // namespace piranha::rigid
