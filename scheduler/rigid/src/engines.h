// The three simulators behind the algorithms of algorithm.h (internal).
#pragma once

#include <string>

#include "piranha/rigid/algorithm.h"

namespace piranha::rigid {

// Space sharing on one or more sites with queues (docs/rigid.md, "The
// space-sharing simulator"): seeds 000 and 002, EASY and conservative.
struct SpacePolicy {
  enum class Local { kFifo, kFirstFit, kRandom, kLpt, kSpt, kBackfill, kEasy, kConservative };
  Local local = Local::kFifo;
  int k = 1;                       // sites each job is queued at; 0: all
  bool completion_decide = false;  // start only where the predicted completion is best (needs kConservative)
  bool efficacy_priority = false;  // queue order by efficacy, then (submit, id)
  bool completion_select = false;  // choose the K sites by predicted completion, not load
  // One site under FirstFit, Random, Backfill or EASY: find the waiting jobs
  // that fit through a FitIndex, so that a pass costs the jobs it looks at;
  // false: scan the pass's whole view with pick.h's rules (the reference the
  // tests hold the index to). The same schedules either way.
  bool indexed = true;
};
RunResult simulate_space(const std::string& name, const SpacePolicy& p, const Workload& w, const Machine& m,
                         const RunOptions& o);

// Preemptive FCFS with gang scheduling of wide jobs (seed 001): one site.
struct PfcfsPolicy {
  int variant = 1;   // 1, 2 or 3 (docs/rigid.md, "PFCFS")
  Time wait = 600;   // a wide job preempts once it has waited this long
  Time slice = 600;  // variants 1 and 2: the length of a gang's turn
  Time penalty = 0;  // seconds added to a job's remaining time each time it is switched in
};
RunResult simulate_pfcfs(const std::string& name, const PfcfsPolicy& p, const Workload& w, const Machine& m,
                         const RunOptions& o);

// Immediate placement with time sharing (seed 004): MTI, MCT, MNI.
enum class Interference { kMti, kMct, kMni };
RunResult simulate_interference(const std::string& name, Interference policy, const Workload& w,
                                const Machine& m, const RunOptions& o);

// Efficacy of a job at `site` among `sites` (all that fit when empty):
// min over them of factor / factor at site.
double efficacy(const Machine& m, const RigidJob& j, int site, const std::vector<int>& sites);

}  // namespace piranha::rigid
