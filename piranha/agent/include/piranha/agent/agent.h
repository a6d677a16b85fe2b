// Agent: the node agent (`piranha agent`), one per workstation.
//
// It registers the node (("node", ...) and ("heartbeat", "agent", ...)),
// watches the node's availability through an AvailabilitySource (live
// sensors or a replayed trace), honours owner blocks (("owner", ...)),
// records every availability period as ("ap", node, start, end), and runs
// piranhas of one job while the node is available, making them retreat the
// moment it is not. Which job: scheduler 0's ("assign", 0, epoch, node, job)
// with the highest epoch while ("heartbeat", "scheduler", 0, time) is
// fresh; otherwise the native policy (FAIR or FCFS) over the live jobs.
//
// A piranha that exits abnormally (not told to retreat) is a failure of its
// job on this node; after max_failures in a row without useful work the
// agent holds the job (sys::hold_job) with the last exit status and the end
// of the piranha's stderr.
//
// The deciding (which job, retreat, suspend, resume, failures and holds) is
// a pure core, decide.h, where the rules are written in full; the Agent is
// the shell that senses, reads and writes the system space, runs the
// piranhas and carries out what decide() returns. It publishes the node's
// attributes (("nodeattr", ...)) and runs only jobs whose requirement
// (("jobreq", ...)) they satisfy, whoever chose the job.
//
// The server may come and go. Sensing availability and making piranhas
// retreat run on the agent's own thread and never wait on the server; what
// it reads from and writes to the system space goes through a second thread
// (the uplink), which keeps unwritten records (availability periods, holds,
// the node's state) until the server answers again, and logs when the
// server goes away and when it is back. No piranha is started while the
// server is away; a piranha cut off from it exits with kExitCutOff (job.h),
// which is not counted as a failure of its job.
//
// The agent also keeps the system space bounded: it removes its own node's
// ("ap", ...) records older than ap_retention_seconds, and every record of
// jobs that finished more than job_retention_seconds ago
// (sys::prune_finished_jobs; any agent may, all of them do).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "piranha/agent/availability_source.h"
#include "piranha/agent/launch_policy.h"
#include "piranha/agent/native_policy.h"
#include "piranha/scheduler/requirement.h"

namespace piranha {

// What happens to running piranhas when the node becomes unavailable.
// Retreat: they retreat at once (killed after the grace period). Suspend:
// they are stopped (SIGSTOP) and continued if the node is available again
// within suspend_max, otherwise they retreat. YAML: retreat.mode.
enum class RetreatMode { Retreat, Suspend };

// How piranhas run while the node is available. Idle (the default): nice 19
// under SCHED_IDLE, so that every other thread on the node runs first, the
// owner's and any other program's. Normal: the agent's own nice and policy
// (nice 0 under the normal policy as usually started), for a node with no
// owner to protect (a dedicated machine); other programs then share the
// processors with the piranhas. Retreats are the same.
enum class PiranhaPriority { Idle, Normal };

struct AgentSettings {
  std::string node;    // this node's name in the system space
  std::string server;  // the tuple-space server
  int cores = 1;       // piranhas run at once
  double speed = 1.0;  // published in the node tuple
  NativePolicyKind policy = NativePolicyKind::Fair;
  std::uint64_t seed = 1;  // for FAIR
  RetreatMode mode = RetreatMode::Retreat;
  PiranhaPriority priority = PiranhaPriority::Idle;
  std::chrono::milliseconds grace{2000};         // from SIGUSR1 to SIGKILL
  std::chrono::milliseconds suspend_max{30000};  // suspend mode: then retreat
  double scheduler_stale_seconds = 10;           // scheduler 0 is obeyed while its heartbeat is younger
  double heartbeat_seconds = 10;                 // the heartbeat tuple refreshes (the node record on changes)
  // How often the system space is read in full as a safety net (against
  // watch events lost on the way); changes to jobs, assignments and owner
  // blocks are watched and read at once, and what changes unwatched (a block
  // beginning or ending, a heartbeat or a feeder going stale, an absent
  // job's grace ending) is read when it is due. Events are lost only with
  // a session, which prompts a read, so this is rare: every 5 minutes (as
  // HTCondor's startds report), a small part of what a large pool costs its
  // server; every minute was a fifth of an idle 10,000-node pool's requests
  // (docs/scale.md).
  std::chrono::milliseconds tick{300000};
  std::string piranha_output;                // piranhas' stdout/stderr; empty: the agent's
  std::string events_file;                   // JSON lines of events; empty: none
  bool quiet = false;                        // no human-readable log on stderr
  int max_failures = 3;                      // failures in a row before a job is held (>= 1)
  double job_retention_seconds = 7 * 86400;  // finished jobs' records kept this long
  double ap_retention_seconds = 8 * 86400;   // this node's ap records kept this long
  LaunchPolicy launch;                       // what job programs may do here (launch_policy.h)
  // Each job's piranhas get a key of their own (the agent has CURVE keys,
  // so the server has --auth); false: piranhas get no key.
  bool job_keys = false;
  // Serve a campus's loans (docs/nps.md, "The live campus"): read this
  // node's ("lent", ...) record and the pool's loans on a connection of
  // their own, every 10 s while lent nothing and every second while lent.
  // Off by default: a pool outside a campus pays nothing for it.
  bool campus_loans = false;
  // What the node offers to jobs with requirements (docs/jobs.md,
  // "Requirements"), published as ("nodeattr", ...) when the agent
  // registers; nullopt: none published (the node then runs only jobs without
  // requirements, as the native policy judges too).
  std::optional<sched::NodeAttributes> attributes;
};

class Agent {
 public:
  Agent(AgentSettings settings, std::unique_ptr<AvailabilitySource> source);
  ~Agent();
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Runs until `stop` becomes true (set it from a signal handler), then
  // retreats its piranhas (within the grace period), records the open
  // availability period and marks the node down, waiting for the server no
  // longer than what is left of the grace period (at least half a second)
  // from the stop. Returns the exit status: 0, or 1 when the server could
  // not be reached at all. Throws InputError (source "server") for a malformed
  // server endpoint.
  int run(const std::atomic<bool>& stop);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace piranha
