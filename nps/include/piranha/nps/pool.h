// Pool: what the Network Piranha Scheduler's nodes see of the pool and how
// they act on it (the paper, §9.1) -- the one seam between the NPS's deciding
// code and the world.
//
// Two implementations stand behind it: LivePool (live_pool.h), a snapshot of
// the system space `piranha.sys` refreshed by an I/O shell, and SimPool
// (sim_pool.h), the Piranha simulator's model (docs/scheduling.md). The
// node types (node_types.h) call only this interface, so `piranha nps run`
// and `piranha nps simulate` run the same node code.
//
// Time. All times are in the pool's time unit: wall-clock seconds since the
// Unix epoch in a live pool, simulation steps in a simulated one. A node's
// availability history is kept in whole steps of history_step() units each
// (60 s by default live, 1 step simulated), counted from history_origin().
//
// Calls never block: a live pool answers from its latest snapshot and queues
// what nodes write for its shell to send. Implementations say whether they
// are thread-safe; node types call them from the trellis thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/requirement.h"

namespace piranha::nps {

using sched::JobId;

// A transparent hash of node names, for unordered maps keyed by name that a
// string_view finds without a copy: a pool of thousands of nodes looks
// names up on every tick.
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// A node as its agent last reported it.
struct NodeStatus {
  std::string name;
  // "available", "unavailable", "owner-blocked" or "down"; "down" also when
  // the agent has been silent too long.
  std::string state = "down";
  // Whether a piranha may run there now: available, fresh and not blocked.
  bool available = false;
  // The job its agent runs now and on whose word ("scheduler 0", "FAIR"),
  // when the pool knows it.
  std::optional<JobId> running;
  std::string by;
  // Not down, but its agent missed a beat (node_liveness.h, as `piranha
  // nodes` says "suspect"): a cut link or a frozen agent, perhaps. Shown;
  // schedulers do not look at it: its state stands until it is stale.
  bool suspect = false;
  // Why its agent put it in `state` (its ("nodewhy", ...) record: "1-min
  // load 2.31 >= 0.70, own piranhas excluded", "owner block"), while that
  // record is of the state its node record reports and the node is fresh;
  // empty otherwise (not known, an older agent, or down by silence).
  std::string reason;
  // What the node offers to jobs with requirements (its ("nodeattr", ...)
  // record); nullopt when its agent published none (a simulated pool's
  // nodes): it then runs only jobs without one.
  std::optional<sched::NodeAttributes> attributes{};
};

// A live job as schedulers see it.
struct JobInfo {
  JobId id = 0;
  std::string name;
  double arrival = 0;  // submit time (pool unit)
  // The job's mean task time so far (pool unit); meaningful only if measured.
  double mean_task_time = 0;
  bool measured = false;  // at least one task completed
  std::int64_t tasks = 1;
  std::int64_t tasks_left = 1;
  double attained = 0;  // node-time of service so far (pool unit)
  // Its piranhas' retreats so far, and of those the ones because a node
  // stopped being available: the job's own count (its "jobwork" records).
  std::int64_t retreats = 0, owner_retreats = 0;
  // FAIR's q: the number of live jobs right after this one arrived (0: unknown).
  std::int64_t queue_length_at_arrival = 0;
  // What a node must offer to run it (its ("jobreq", ...) text, as
  // requirement.h reads it); empty: any node.
  std::string requirement{};
};

// An owner's block of a node: no piranha during [start, end).
struct Block {
  double start = 0;
  double end = 0;
  friend bool operator==(const Block&, const Block&) = default;
};

// An owner's complaint about Piranha on a node (`piranha owner complain`).
struct Complaint {
  double time = 0;
  std::string text;
  friend bool operator==(const Complaint&, const Complaint&) = default;
};

// One of the evaluator's records: a JSON object of the kind named
// (docs/system-space.md, ("eval", kind, time, json), lists the kinds).
struct EvalRecord {
  std::string kind;
  double time = 0;
  std::string json;
};

class Pool {
 public:
  virtual ~Pool() = default;

  // The pool's clock.
  virtual double now() const = 0;
  // A monotonically increasing number for a decision made now: the
  // assignment's epoch (milliseconds live, the step simulated).
  virtual std::int64_t epoch() const = 0;

  // Length of one history step and the instant step 0 began (pool units).
  virtual double history_step() const = 0;
  virtual double history_origin() const = 0;
  // How early a due time may be met: the live clock's jitter (0 simulated,
  // where every decision falls exactly on its step).
  virtual double slack() const { return 0; }
  // Seconds of real time in one history step, by which predictors find the
  // same time of the previous day and week (the trace's step_seconds).
  virtual std::int64_t step_seconds() const = 0;

  // The nodes the pool knows, in the order they first registered.
  virtual std::vector<std::string> node_names() const = 0;
  // One node's status; nullopt when the pool has never heard of it.
  virtual std::optional<NodeStatus> node(std::string_view name) const = 0;
  // The same, assigned to `into` (whose strings keep their storage: a
  // monitor reads its node at every tick); false, leaving `into` as it was,
  // when the pool has never heard of it.
  virtual bool node_into(std::string_view name, NodeStatus& into) const {
    auto n = node(name);
    if (n) into = std::move(*n);
    return n.has_value();
  }
  // The availability of `node` at every whole history step in [from, n)
  // that has ended by now() (n is as far as the pool knows): one bool per
  // step, in order. A step counts as available when the node was available
  // for at least half of it. Empty when nothing new is known.
  virtual std::vector<bool> steps(std::string_view node, std::int64_t from) const = 0;
  // The owner blocks of `node` that end after now(), earliest first.
  virtual std::vector<Block> blocks(std::string_view node) const = 0;

  // The complaints about `node`, oldest first (none unless the pool keeps them).
  virtual std::vector<Complaint> complaints(std::string_view) const { return {}; }
  // A number that changes whenever blocks() or complaints() may answer
  // differently for some node than before, other than by a block beginning
  // (blocks() still lists it) or ending (the number changes once blocks()
  // no longer lists it); nullopt when the pool does not say, and owner
  // nodes then read them at every tick. Owner nodes look at the blocks
  // and complaints only when it changed or a block begins or ends: on a
  // pool of 10,000, almost none of them at most ticks.
  virtual std::optional<std::uint64_t> owners_version() const { return std::nullopt; }

  // Whether the pool keeps the evaluator's records. One that does not (a
  // simulated pool) drops them, and the evaluator then builds none.
  virtual bool keeps_records() const { return false; }
  // The evaluator's records kept by the pool, oldest first: those of
  // earlier NPS runs too, so the evaluator's data outlives its process.
  // record() appends one; forget() removes those at `indices` (ascending)
  // of records() as it stands (the evaluator's retention, retention.h).
  virtual std::vector<EvalRecord> records() const { return {}; }
  virtual void record(EvalRecord) {}
  virtual void forget(std::span<const std::size_t> /*indices*/) {}

  // Whether node types may run long computations (the evaluator's
  // replays) on threads of their own and take the outcome at a later call:
  // a live pool, where time goes on; not a simulated or scripted one, where
  // everything must happen within the step.
  virtual bool background_work() const { return false; }

  // The live jobs (queued or running), in (arrival, id) order.
  virtual std::vector<JobInfo> jobs() const = 0;

  // Scheduler `scheduler` wants `node` to run `job` (nullopt: none). Only a
  // monitor calls this, and only for the scheduler it obeys.
  virtual void assign(std::int64_t scheduler, std::int64_t epoch, std::string_view node,
                      std::optional<JobId> job) = 0;
  // Scheduler `scheduler` is alive and deciding.
  virtual void heartbeat(std::int64_t scheduler) = 0;
};

// A pool with no nodes and no jobs that drops what it is told: the node
// types' environment when a program is only checked or listed.
class DetachedPool : public Pool {
 public:
  double now() const override { return 0; }
  std::int64_t epoch() const override { return 0; }
  double history_step() const override { return 1; }
  double history_origin() const override { return 0; }
  std::int64_t step_seconds() const override { return 60; }
  std::vector<std::string> node_names() const override { return {}; }
  std::optional<NodeStatus> node(std::string_view) const override { return std::nullopt; }
  std::vector<bool> steps(std::string_view, std::int64_t) const override { return {}; }
  std::vector<Block> blocks(std::string_view) const override { return {}; }
  std::vector<JobInfo> jobs() const override { return {}; }
  void assign(std::int64_t, std::int64_t, std::string_view, std::optional<JobId>) override {}
  void heartbeat(std::int64_t) override {}
};

}  // namespace piranha::nps
