// SwarmNode: one simulated workstation of the swarm benchmark (swarm.cc,
// docs/scale.md), built from the agent's own parts so that N of them cost
// the pool what N agents would:
//  - the agent's Uplink (uplink.h), with its own two connections to the
//    server: registration, the node and heartbeat tuples, ap records, the
//    watches on jobs, assignments and scheduler 0's serving record, the
//    looks at scheduler 0's heartbeat, the reads;
//  - the agent's decision (decide.h): obeying scheduler 0, falling back to
//    the native policy, retreats;
//  - a TraceAvailability replaying one node of an availability trace for its
//    owner's keyboard;
// and, instead of piranha processes, a consumer: while the decision runs a
// job here, each of its `cores` takes one of the job's ("task", i, ms)
// tuples every `task_seconds` and completes it as a piranha of
// examples/spin would, with ("result", i) and the runtime's done record in
// the same step (under a lease, so a task is done exactly once), through
// the driver's shared consumer connection.
//
// turn() is called by one driver thread at a time, consume() by one
// consumer thread at a time, the two concurrently (the simulated piranhas
// they share are under the node's own lock, not held across a round trip);
// the counters read by the reporter (available(), job_running(),
// obeying()) are atomics, safe from any thread.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "piranha/agent/decide.h"
#include "piranha/agent/uplink.h"
#include "piranha/tuplespace/client.h"

namespace piranha::swarm {

// What the nodes record for the report, shared by every node (any thread).
class Tally {
 public:
  // A decision of scheduler 0 (assignment epoch, wall ms) that the node's
  // uplink learnt of at `seen` and the node obeyed at `wall` (seconds).
  void obeyed(std::int64_t epoch_ms, double seen, double wall);
  void completed(std::int64_t tasks);
  // The obey latencies so far, in ms, sorted.
  std::vector<double> obey_latencies_ms() const;
  // From each obeyed decision until its node's uplink learnt of it, in ms, sorted.
  std::vector<double> seen_latencies_ms() const;
  std::int64_t tasks_completed() const { return tasks_.load(); }

 private:
  // A copy of `ms` (one of the two below), taken under the lock, sorted.
  std::vector<double> sorted(const std::vector<double>& ms) const;

  mutable std::mutex mu_;
  std::vector<double> obey_ms_, seen_ms_;
  std::atomic<std::int64_t> tasks_{0};
};

struct ConsumerSettings {
  double task_seconds = 10;  // each core completes a task this often while it runs a job
};

class SwarmNode {
 public:
  // Starts the node's uplink (its threads connect at once). `wake_fd` is
  // written after each of the uplink's reads (the driver's eventfd).
  SwarmNode(const AgentSettings& settings, std::unique_ptr<AvailabilitySource> source,
            ConsumerSettings consumer, Tally& tally, int wake_fd);
  ~SwarmNode();

  // Decides and carries out when due or a new view has come; returns when
  // the next turn is due at the latest.
  Clock::time_point turn(Clock::time_point now);
  // Takes and completes a task of the job it runs when one is due, on
  // `consumer` (the driver's connection for the job spaces); returns when
  // the next is due (max: none). Apart from turn(), on a thread of its own,
  // as an agent decides while its piranhas compute: a driver that did its
  // nodes' task I/O between its decisions made a decision wait behind up
  // to thousands of round trips.
  Clock::time_point consume(Clock::time_point now, ts::Client& consumer);
  // Whether the uplink has read a view the node has not decided on yet.
  bool view_changed() const { return uplink_->generation() != view_seen_; }
  // How many reads of the system space its uplink made (Uplink::reads()).
  std::uint64_t uplink_reads() const { return uplink_->reads(); }

  // Stops: the piranhas retreat, the open period is recorded, the node
  // marked down (waits for the uplink to write them, until `deadline`).
  void stop(Clock::time_point deadline);

  const std::string& name() const { return s_.node; }
  bool available() const { return available_.load(); }
  // The job whose tasks this node consumes now (0: none).
  std::int64_t job_running() const { return job_running_.load(); }
  bool obeying() const { return obeying_.load(); }
  bool server_away() const { return uplink_->server_away(); }

 private:
  void carry_out(const Actions& actions, Instant now);

  AgentSettings s_;
  std::unique_ptr<AvailabilitySource> source_;
  ConsumerSettings consumer_;
  Tally& tally_;
  AgentState state_;
  std::unique_ptr<Uplink> uplink_;
  std::uint64_t view_seen_ = 0;
  Clock::time_point next_eval_{};
  std::optional<std::int64_t> obeyed_epoch_;
  // The simulated piranhas: `cores` of `job` while running, and when the
  // next task is due (under task_mu_: turn() and consume() share them).
  mutable std::mutex task_mu_;
  Piranhas piranhas_;
  Clock::time_point next_task_{};
  std::vector<PiranhaExit> exits_;  // to report at the next decision
  std::atomic<bool> available_{false};
  std::atomic<std::int64_t> job_running_{0};
  std::atomic<bool> obeying_{false};
};

}  // namespace piranha::swarm
