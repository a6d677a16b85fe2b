// NPS programs: the standard trellis an operator starts from, and the checks
// an NPS program must pass beyond a trellis program's (program.h).
//
// The standard program for nodes ws01, ws02 (docs/nps.md draws it):
//
//   enabler                       ticks every min(tick, period)
//   jobs         <- enabler       the live jobs
//   owner_ws01   <- enabler       ws01's owner blocks
//   monitor_ws01 <- enabler, owner_ws01
//   ...
//   scheduler_0  <- jobs, monitor_ws01, monitor_ws02     (the obeyed one)
//   scheduler_1  <- jobs, monitor_ws01, monitor_ws02     (a shadow, per StandardOptions::shadows)
//   evaluator    <- jobs, scheduler_0, scheduler_1, monitor_ws01, monitor_ws02
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "piranha/trellis/program.h"
#include "piranha/trellis/registry.h"

namespace piranha::nps {

struct StandardOptions {
  std::vector<std::string> nodes;  // in registration order
  std::string strategy = "TSK";
  double period = 10;  // pool units between scheduler 0's decisions
  // Pool units between the enabler's ticks (monitors and jobs look again,
  // schedulers beat their heartbeat); the enabler ticks every
  // min(tick, period).
  double tick = 1;
  std::string predictor = "REC_HIST";
  std::int64_t window = 10;  // history steps
  bool spill = false;
  bool on_events = false;
  double cold_start = 0;
  bool probe = true;  // a job not yet measured gets a node of its own
  std::int64_t seed = 0;
  // Shadow schedulers' strategies: scheduler 1, 2, ... with the settings of
  // scheduler 0; they decide and are evaluated but not obeyed.
  std::vector<std::string> shadows;
  // Whether the program has an evaluator. Off inside a simulation of the
  // standard program: there nothing reads its state or keeps its records,
  // and a replay (shadow.h) is not replayed again.
  bool evaluator = true;
};

// The standard program as YAML (what `piranha nps init` prints), with a
// comment header saying how to edit it.
std::string standard_program_yaml(const StandardOptions& options);

// The standard program, parsed against `types` (which must hold the NPS
// types). Throws InputError, e.g. for a bad strategy name.
trellis::Program standard_program(const StandardOptions& options, const trellis::Registry& types);

// The NPS rules a valid trellis program may still break, each reported as
// InputError naming the offending node's line: two schedulers with one
// id; a scheduler without a jobs inferior or without monitors; a monitor
// without an enabler below it; two monitors of one node; a scheduler whose
// strategy reads predictions while its predictor or window differs from a
// monitor's; no enabler at all.
void check_nps_program(const trellis::Program& program);

// A scheduler whose period is longer than this, deciding only when it is
// due (on_events off), leaves a new job waiting that long for a node.
inline constexpr double kLongPeriodSeconds = 5;

// What a valid program probably does not mean, one line each, "FILE:LINE:
// warning: ...": a scheduler with on_events off and a period longer than
// kLongPeriodSeconds. Empty when there is nothing to say.
std::vector<std::string> nps_program_warnings(const trellis::Program& program);

// The enabler's period (its `period` parameter, default 10) of the first
// enabler in the program, and the name of that enabler ("" when none).
double enabler_period(const trellis::Program& program);
std::string enabler_name(const trellis::Program& program);

}  // namespace piranha::nps
