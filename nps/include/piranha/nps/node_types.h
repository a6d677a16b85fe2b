// The Network Piranha Scheduler's node types (the paper, §9.1, Figure 8), as
// process-trellis nodes (trellis/node.h). Every type decides from its
// inferiors' states, its commands and the Pool (pool.h); none blocks, none
// touches a socket. `piranha trellis types` lists them; docs/nps.md is the
// operator's reference.
//
//   enabler    params: period (10 s; the live shell probes it that often,
//              right after refreshing the pool, and at once in between
//              when the pool brings news: live.h; every step when
//              simulated). State {"tick": n}: each probe is a new tick,
//              which activates every monitor, owner and jobs node above it;
//              the count goes on across rebuilds of the trellis.
//   owner      params: node. Inferior: the enabler. State {"node", "blocks":
//              [[start, end], ...], "blocked": bool, "complaints": [{"time",
//              "text"}]}: the owner's blocks of its node that have not ended
//              (`piranha owner block`) and its complaints (`owner complain`).
//   monitor    params: node; obey (the scheduler id it obeys, 0);
//              predictor (REC_HIST), window (10 history steps). Inferiors:
//              the enabler and optionally its node's owner. On each tick it
//              extends the node's availability history from the pool
//              (incrementally: only steps it has not seen) and reports
//              {"node", "tick", "state", "available", "ap_length" (predicted
//              average AP length over the window, pool units), "fraction"
//              (predicted available fraction of the window), "running",
//              "decisions": {scheduler id: job or null}, "obeys", "predictor",
//              "window"}, and "attributes": {"arch", "cores", "labels",
//              "memory"} where its agent published them. A command {"scheduler": id, "epoch": e, "job": j or
//              null} records that scheduler's decision; when id is the one it
//              obeys it writes ("assign", obey, e, node, j) through the pool.
//              A command {"obey": id} (an evaluator's switch) makes it obey
//              scheduler id from then on (still writing under `obey`, the id
//              agents listen to) and write that scheduler's last decision.
//   jobs       Inferior: the enabler. State {"tick", "jobs": [{"id", "name",
//              "arrival", "task_time", "measured", "tasks", "tasks_left",
//              "attained", "q"}, ...]}: the live jobs, in queue order; a job
//              with a requirement also has "requires" (its text).
//   scheduler  params: id (required, unique); strategy (TSK; any name
//              make_strategy takes: SRTA(0.5), LETFIT, ROR(10), ...);
//              period (1, pool units); predictor, window (as its monitors);
//              spill (false); on_events (false); cold_start (0: the task time
//              assumed for a job none of whose tasks has completed; see
//              docs/nps.md "The prior"); probe (true: while some job is
//              measured, each unmeasured job gets one node of its own to be
//              measured on, and the strategy places the rest); seed (0).
//              A job with a requirement is given (and probed on) only nodes
//              whose monitor's attributes satisfy it. Inferiors: one jobs node
//              and its monitors. Once every tick its inferiors have all
//              reached (monitors whose link is down are left out), when its
//              period is due (or, with on_events, a job arrived, ended or
//              was measured since its last decision, or a monitor within
//              reach reports a node it never decided for), it runs the strategy through the strategy
//              library's Decider, commands each monitor whose recorded
//              decision differs, and beats its heartbeat. State {"id",
//              "strategy", "period", "on_events", "tick", "decisions" (count),
//              "assignments": {node: job or null}}.
//   evaluator  params: tolerance (0.1), step (0.1 s live), seed (0), estimate
//              (true), switch ({among: [ids], after_hours, after_jobs,
//              margin_percent}; none), retention ({days: 30, records:
//              50000}: the records it keeps, retention.h; it removes the
//              rest hourly and whenever a tenth of `records` has been
//              written since). Inferiors: the jobs node, schedulers
//              and monitors. Records, through Pool::record, each node's spans
//              (state and job, retreats by cause), each scheduler's changed
//              assignments, each ended job, and after each ended job every
//              scheduler's replayed mean turnaround (shadow.h) and each
//              node's prediction accuracy (on a thread of its own when the
//              pool allows background work); reads the pool's records back
//              once, so all of it survives a restart. Applies the switching
//              rule (commands {"obey": id} to its monitors). State {"tick",
//              "obeyed", "schedulers": {id: {"strategy", "decisions",
//              "changes", "obeyed", "estimate"}}, "nodes": {node:
//              {"observed_seconds", "available_seconds", "fraction",
//              "owner_retreats", "scheduler_retreats", "accuracy",
//              "accuracy_points"}} (on a pool of 1,000 nodes or more, a
//              node whose state has not changed has its open span counted
//              up to now at every tenth calculation, in turn, not at
//              each), "ended_jobs", "observed_mean_turnaround",
//              "retreats", "switches", "last_switch"}. In a pool that keeps
//              no records (Pool::keeps_records: a simulated one) it builds
//              none, replays only for a switch rule, and without a rule does
//              nothing at all (its state stays null). docs/nps.md, "The
//              evaluator", is the operator's account.
//
// Node state that must survive a rebuild of the trellis (a node joined the
// pool) lives in a Memory shared by the node types: monitors' histories and
// predictors, schedulers' strategies, random generators and last decisions,
// the evaluator's observations.
#pragma once

#include <memory>

#include "piranha/nps/pool.h"
#include "piranha/trellis/registry.h"

namespace piranha::nps {

// The state kept across trellis rebuilds. Opaque; one per NPS process (or
// per simulated run). Not thread-safe: used from the trellis thread.
class Memory;
std::shared_ptr<Memory> make_memory();

// What the node types act on. `pool` must outlive every node made from the
// registry.
struct Environment {
  Pool* pool = nullptr;
  std::shared_ptr<Memory> memory;
};

// Registers enabler, owner, monitor, jobs, scheduler and evaluator in
// `types`, bound to `env`. Throws std::invalid_argument when a name is taken.
void add_nps_types(trellis::Registry& types, Environment env);

// Registers the same types bound to a DetachedPool (for checking and
// listing programs, and for `piranha trellis run`, where they are inert).
void add_detached_nps_types(trellis::Registry& types);

}  // namespace piranha::nps
