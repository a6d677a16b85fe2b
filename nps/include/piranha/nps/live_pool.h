// LivePool: the Pool of a real pool, read from and written to the system
// space `piranha.sys` (docs/system-space.md).
//
// The NPS's I/O shell owns the tuple-space connection and calls refresh()
// once per tick (before probing the enabler) and flush() whenever
// pending() says there is something to send; the trellis thread's nodes
// call the Pool methods, which answer from the snapshot refresh() took and
// queue their writes. Between ticks the shell calls news(), which says
// whether the system space has changed in a way the NPS should act on at
// once (a job arrived, ended or was first measured; a node registered or
// changed state), so that it ticks then instead of at its next tick. Node availability histories are built
// incrementally: refresh() reads each new ("ap", node, start, end) record once, through a watch on the ap
// shape (the ones already there are read once, at start()), and steps() turns records plus the node's open
// availability period into whole history steps. The evaluator's ("eval", ...) records are read once, at
// start(); those it appends are written, and those it forgets removed, by flush() (at most 1,000 removals per
// call, so that a large pruning does not hold up the assignments).
//
// Thread-safety: start(), refresh(), news() and flush() are the shell's, to
// be called from one thread at a time; the Pool methods may be called from
// any thread meanwhile: a mutex guards the snapshot and the outbox.
// refresh(), flush() and start() do tuple-space I/O and throw
// ts::TupleSpaceError when the server fails them.
//
// A record is absent for a moment while its writer rewrites it (taken, then
// written back). A job live at the last refresh() whose record is absent is
// kept as last seen (LivePoolOptions::absent_grace); a live job's jobstat or
// jobwork absent is taken as last seen (their counts only grow); a node whose
// records are absent keeps its last state.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "piranha/runtime/absent_jobs.h"
#include "piranha/nps/pool.h"
#include "piranha/runtime/sysspace.h"

namespace piranha::nps {

struct LivePoolOptions {
  double history_step = 60;                // seconds per history step (a trace's step_seconds)
  std::int64_t history_steps = 10080 + 2;  // how far back start() reads availability (steps)
  double stale_seconds = 30;               // an agent silent this long counts as down
  double feeder_silence = 30;  // a running job whose jobstat is this old is dead (as agents judge)
  double slack = 0.25;         // how early a scheduler's due time may be met (seconds)
  // A job live at the last refresh() whose record is absent now (someone is
  // rewriting it: its feeder marking it running, a hold, a cancel) stays in
  // jobs() for this long at most, while its launch record is there, as
  // agents keep it (sysspace.h); otherwise every node running it would be
  // told to retreat for a tick, and take it up again at the next.
  double absent_grace = sys::kAbsentJobGrace;
};

class LivePool : public Pool {
 public:
  explicit LivePool(LivePoolOptions options = {});

  // Shell side. start() sets the history origin, reads the ap records of the
  // look-back and watches for new ones, and watches the job, jobstat and
  // node shapes for news(); call it once before refresh().
  void start(ts::Client& c);
  void refresh(ts::Client& c);
  // Reads the watch events that have arrived, waiting up to `wait` while
  // none of them is news, and returns whether one is news against the last refresh()'s
  // snapshot: a ("job", ...) record whose liveness differs from the
  // snapshot's (a job registered, or ended, was held or cancelled); a
  // ("jobstat", ...) that shows a job of the snapshot measured for the first
  // time; a ("node", ...) of a node not seen yet, or whose state differs from
  // the snapshot's. A job's other rewrites (queued to running, statistics,
  // an agent's heartbeat) are not news. The ap records among the events are
  // kept for the next refresh().
  bool news(ts::Client& c, std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  bool pending() const;
  void flush(ts::Client& c);
  // Removes the heartbeats of the schedulers that beat through this pool,
  // so agents fall back to their native policy at once (a clean stop).
  void withdraw(ts::Client& c);

  // Pool.
  double now() const override;
  std::int64_t epoch() const override;
  double history_step() const override { return options_.history_step; }
  double history_origin() const override;
  std::int64_t step_seconds() const override;
  double slack() const override { return options_.slack; }
  std::vector<std::string> node_names() const override;
  std::optional<NodeStatus> node(std::string_view name) const override;
  std::vector<bool> steps(std::string_view node, std::int64_t from) const override;
  std::vector<Block> blocks(std::string_view node) const override;
  std::vector<JobInfo> jobs() const override;
  std::vector<Complaint> complaints(std::string_view node) const override;
  bool keeps_records() const override { return true; }
  std::vector<EvalRecord> records() const override;
  void record(EvalRecord r) override;
  void forget(std::span<const std::size_t> indices) override;
  bool background_work() const override { return true; }
  void assign(std::int64_t scheduler, std::int64_t epoch, std::string_view node,
              std::optional<JobId> job) override;
  void heartbeat(std::int64_t scheduler) override;

 private:
  struct NodeData {
    NodeStatus status;
    std::vector<std::pair<double, double>> periods;  // ap records, sorted by end
    std::optional<double> open_since;                // available since (as first seen), while it is
    std::vector<Block> blocks;
    std::vector<Complaint> complaints;
  };
  void add_period(const sys::AvailabilityPeriod& ap);
  // Adds to `listed` the jobs of the last refresh() missing from it: as
  // written back since, or as last seen while absent within absent_grace.
  void keep_absent_jobs(ts::Client& c, std::vector<sys::JobRecord>& listed);
  // Whether a written job, jobstat or node tuple is news (news()); mu_ held.
  bool is_news(ts::WatchId watch, const ts::Tuple& t) const;

  LivePoolOptions options_;
  mutable std::mutex mu_;
  double origin_ = 0, snapshot_at_ = 0;
  std::vector<std::string> order_;
  std::map<std::string, NodeData, std::less<>> nodes_;
  std::vector<JobInfo> jobs_;
  // Shell side: the live jobs' records at the last refresh(), and since
  // when a job's record has been absent.
  std::map<JobId, sys::JobRecord> live_records_;
  AbsentJobs absent_jobs_;
  std::map<JobId, std::int64_t> first_queue_length_;
  std::set<JobId> launchable_;
  ts::WatchId ap_watch_ = 0, job_watch_ = 0, jobstat_watch_ = 0, node_watch_ = 0;
  std::vector<sys::AvailabilityPeriod> aps_;  // read from the watch, not yet added (shell side)
  struct Pending {
    std::int64_t epoch;
    std::optional<JobId> job;
  };
  std::map<std::pair<std::int64_t, std::string>, Pending> assigns_;
  std::set<std::int64_t> beats_, beaten_;
  std::vector<EvalRecord> records_;    // read at start(), then appended to and forgotten from
  std::vector<EvalRecord> unsent_;     // appended since the last flush()
  std::vector<EvalRecord> forgotten_;  // to be removed from the space by flush()
};

}  // namespace piranha::nps
