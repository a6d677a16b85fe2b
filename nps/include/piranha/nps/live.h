// `piranha nps run`: the Network Piranha Scheduler on a live pool -- the I/O
// shell around the node types (node_types.h) and the LivePool.
//
// Once per tick (the enabler's period) the shell refreshes the LivePool from
// the system space and probes the enabler; the trellis then runs on its own
// thread (a FiberTrellis per host run here), and whatever the monitors and
// schedulers write (assignments, heartbeats) the shell sends as soon as it
// appears. Between ticks it waits on the pool's watches, and when they bring
// news (a job arrived, ended or was first measured; a node registered or
// changed state: LivePool::news) it ticks at once, an *event tick* that
// leaves the regular ones where they were (ticker.h): a scheduler with
// `on_events` decides for a new job within milliseconds of its arrival, not
// at the next tick. Without a program file it runs the standard program for
// the nodes registered so far and rebuilds it, keeping every node's memory,
// when a node registers (at the event tick its registration brings).
//
// Stops when `stop` becomes true (or after `duration`): the trellis stops,
// the last writes are sent and the schedulers' heartbeats are withdrawn, so
// agents go back to their native policy at once. A killed NPS simply stops
// beating; agents fall back once its heartbeat is stale.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "piranha/nps/campus_live.h"
#include "piranha/nps/live_pool.h"
#include "piranha/nps/program.h"
#include "piranha/nps/simulate.h"

namespace piranha::nps {

struct LiveOptions {
  std::string server;
  std::optional<std::string> program_file;  // nullopt: the standard program
  StandardOptions standard;                 // the standard program's settings (its nodes are the pool's)
  Overrides overrides;                      // command-line settings applied to a program file
  std::optional<double> tick_override;      // --tick with a program file: the enablers' period
  std::vector<std::string> hosts;           // the program's hosts to run here; empty: all
  LivePoolOptions pool;
  // The campus (docs/nps.md, "Hierarchy"): every tick, at most every second, the shell writes the
  // pool's ("subnet", ...) record, and serves the loans `lending` allows (none when it lends to
  // nobody) with the nodes its scheduler 0 leaves idle: ("lent", node, ...) records.
  LendTrust lending;
  bool quiet = false;  // no log of decisions
  std::optional<std::chrono::milliseconds> duration;
  // An fd that becomes readable when `stop` is set (apps/stop_signals.h), or
  // -1. Given, it interrupts a wait on the server (a reconnection to one
  // that is gone would otherwise hold the stop up for the client's 30-s
  // request timeout), and the last writes at a stop (pending decisions, the
  // heartbeat's withdrawal) go on a connection of their own that waits a few
  // seconds at most.
  int stop_fd = -1;
  // Non-empty: the ticks' durations (tick_timer.h) as one JSON object,
  // rewritten every 5 s and at the end (written whole, then renamed).
  std::string tick_stats_file;
  // Called about every 100 ms, from the shell's thread, with the wall time
  // and the states of every node of the program run here (the live page's
  // feed); must not block for long.
  std::function<void(double now, const std::vector<trellis::Value>& states)> on_states;
  // Called once, from the shell's thread, with the evaluator's records the
  // pool keeps (Pool::records()) when it has read them at start, before the
  // first on_states (the live page's history of earlier runs).
  std::function<void(std::span<const EvalRecord> records)> on_records;
  // Called once connected, from the shell's thread, with the pool the
  // server serves (docs/protocol.md, "hello"; empty name: none), before the
  // first on_states.
  std::function<void(const std::string& name, const std::string& id)> on_pool;
};

// Runs until stopped. Returns 0 after a clean stop, 1 when the server could
// not be reached before `stop` or serves another pool than the client's
// (ts::ClientOptions::pool, $PIRANHA_POOL; logged in one line). Throws InputError for a bad
// program, std::runtime_error when a host's endpoint cannot be bound.
int run_live(const LiveOptions& options, const std::atomic<bool>& stop, std::ostream& log);

}  // namespace piranha::nps
