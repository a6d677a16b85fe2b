// LiveSnapshot and derive(): the live pool's reading of the system space
// `piranha.sys` (docs/system-space.md, "NPS"), as what was read apart from
// the rules that make the pool's state of it.
//
// At every tick LivePool::refresh() (live_pool.h) reads a LiveSnapshot --
// plain data: the tuples as read, and the wall-clock time of the read --
// and derive() turns it, with the LiveState the last tick left, into the
// LiveState the Pool methods answer from until the next tick. derive() holds
// the freshness and liveness rules:
//  - a node is "down" when neither its ("node", ...) record nor its agent's
//    heartbeat is younger than `stale_seconds`; suspect when it is not down
//    but was silent at `heartbeats_read_at` past 1.5 of its agent's beats
//    (node_liveness.h: as `piranha nodes` judges); it is available when fresh,
//    reported available and under no owner block at the time of the read;
//    it has been open since the first read that found it available;
//  - a job is live when its record says queued or running, it has a launch
//    record, and its feeder is not silent (feeder_silence.h, with
//    `feeder_silence`); of a job's duplicate jobstats the newest counts;
//  - a record absent for a moment while its writer rewrites it is taken as
//    last seen: a job's record (the jobs the snapshot's `kept_absent`
//    names), its jobstat, its jobwork (counts only grow), a node's
//    ("running", ...) record; a node not listed keeps its last state;
//  - nodes join the order by name, jobs are in (arrival, id) order, and a
//    job's FAIR queue length is the number of live jobs when first seen;
//  - a node's attributes are its ("nodeattr", ...) record's (none: it runs
//    only jobs without requirements), a job's requirement its ("jobreq", ...)
//    text.
// Two things stay with the shell, as they govern what it reads: the
// absent-job rule (absent_jobs.h: a job's launch record is read only while
// its grace lasts), whose outcome is `kept_absent`, and which jobs have a
// launch record (read once per job). Node availability histories (the ap
// records, a week of them) are kept by LivePool apart.
//
// derive() is pure: no I/O, no clock; the snapshot's time is "now". It is
// tested without a server (live_snapshot_test.cc). Thread-safe as any
// function of values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "piranha/nps/pool.h"
#include "piranha/runtime/feeder_silence.h"
#include "piranha/runtime/sysspace.h"

namespace piranha::nps {

struct LivePoolOptions {
  double history_step = 60;                // seconds per history step (a trace's step_seconds)
  std::int64_t history_steps = 10080 + 2;  // how far back start() reads availability (steps)
  double stale_seconds = 30;               // an agent silent this long counts as down
  // A scheduler's heartbeat is rewritten at most this often, however often it
  // decides (up to 50 times a second on event ticks). Every agent watches
  // scheduler 0's, so each rewrite is two events per agent: a large pool
  // whose agents keep the default stale_seconds (10 s) runs with 2 or more
  // (`nps run --beat`, docs/scale.md). Keep it well under the agents'
  // stale_seconds.
  double beat_seconds = 1;
  double feeder_silence =
      kFeederSilence;   // a running job whose jobstat is this old is dead (as agents judge)
  double slack = 0.25;  // how early a scheduler's due time may be met (seconds)
  // A job live at the last refresh() whose record is absent now (someone is
  // rewriting it: its feeder marking it running, a hold, a cancel) stays in
  // jobs() for this long at most, while its launch record is there, as
  // agents keep it (sysspace.h); otherwise every node running it would be
  // told to retreat for a tick, and take it up again at the next.
  double absent_grace = sys::kAbsentJobGrace;
};

// What one refresh() read from the system space.
struct LiveSnapshot {
  double time = 0;                              // wall-clock seconds when the reading began
  std::vector<sys::NodeRecord> nodes;           // as listed
  std::vector<sys::AgentHeartbeat> heartbeats;  // every agent's, as read
  // When `heartbeats` were read (they are read whole less often than the
  // rest): silence is judged at that time, so that a beat not read yet does
  // not make a node look suspect.
  double heartbeats_read_at = 0;
  std::vector<sys::AgentBeat> beats;          // how often each agent beats, as read with them
  std::vector<sys::OwnerBlock> owner_blocks;  // every node's, as read (ended ones too)
  std::vector<sys::Complaint> complaints;     // oldest first
  std::vector<sys::NodeRun> running;          // every node's ("running", ...), as read
  std::vector<sys::NodeReason> reasons;       // every node's ("nodewhy", ...), as last read whole
  std::vector<sys::JobStat> stats;            // as listed
  // As listed, then those of the jobs of the last state's `live_records`
  // missing from the listing and found when read again on their own.
  std::vector<sys::JobRecord> jobs;
  // Jobs of the last state's `live_records` whose record was found nowhere,
  // kept by the absent-job rule: taken as last seen.
  std::vector<JobId> kept_absent;
  // Those of the live jobs above known to have a ("jobexec", ...) record.
  std::set<JobId> launchable;
  // The jobwork records of the launchable live jobs above, each job's once.
  std::vector<sys::JobWork> work;
  // Every node's ("nodeattr", ...) record as last read (they change only
  // when an agent registers with other attributes).
  std::vector<sys::NodeAttrs> attributes;
  // The requirement texts (("jobreq", ...)) of those of the launchable live
  // jobs above that have one.
  std::map<JobId, std::string> requirements;
};

// A node as the pool knows it.
struct LiveNode {
  NodeStatus status;
  std::optional<double> open_since;  // available since (as first read), while it is
  std::vector<Block> blocks;         // its owner blocks not ended at the read
  std::vector<Complaint> complaints;
};

// The pool's state between two refreshes.
struct LiveState {
  double time = 0;                 // the snapshot's
  std::vector<std::string> order;  // node names, in the order first seen
  // Every node of `order`, hashed (NameHash, pool.h: found by a view of a
  // name without a copy): each monitor finds its node at every tick, where
  // a tree of 10,000 names sharing their first letters compared names 14
  // times (docs/scale.md, limit 21).
  std::unordered_map<std::string, LiveNode, NameHash, std::equal_to<>> nodes;
  std::vector<JobInfo> jobs;                         // the live jobs, in (arrival, id) order
  std::map<JobId, sys::JobRecord> live_records;      // their records, as last seen
  std::map<JobId, std::int64_t> first_queue_length;  // FAIR's q of each live job
};

// The state after reading `snapshot`, when the last refresh left `last`
// (taken by value: a caller that moves it in saves a copy of every node).
LiveState derive(LiveState last, const LiveSnapshot& snapshot, const LivePoolOptions& options);

}  // namespace piranha::nps
