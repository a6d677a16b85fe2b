// LivePool: the Pool of a real pool, read from and written to the system
// space `piranha.sys` (docs/system-space.md).
//
// The NPS's I/O shell owns the tuple-space connection and calls refresh()
// once per tick (before probing the enabler) and flush() whenever
// pending() says there is something to send; the trellis thread's nodes
// call the Pool methods, which answer from the state refresh() derived from
// the snapshot it read (live_snapshot.h: the reading apart from the rules)
// and queue their writes. Between ticks the shell calls news(), which says
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
// records are absent keeps its last state (derive(), live_snapshot.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "piranha/nps/assignment_book.h"
#include "piranha/nps/live_snapshot.h"
#include "piranha/nps/pool.h"
#include "piranha/nps/whole_reads.h"
#include "piranha/runtime/absent_jobs.h"
#include "piranha/runtime/sysspace.h"

namespace piranha::nps {

class LivePool : public Pool {
 public:
  explicit LivePool(LivePoolOptions options = {});

  // Shell side. start() sets the history origin, reads the ap records of the
  // look-back and watches for new ones, and watches the job, jobstat,
  // node, running, owner-block and complaint shapes (news(), and what
  // refresh() need not read again); call it once before refresh().
  void start(ts::Client& c);
  // Reads a LiveSnapshot and puts derive()'s state of it (live_snapshot.h)
  // in place of the last, with the ap records news() has kept.
  void refresh(ts::Client& c);
  // Reads the watch events that have arrived, waiting up to `wait` while
  // none of them is news, and returns whether one is news against the last refresh()'s
  // snapshot: a ("job", ...) record whose liveness differs from the
  // snapshot's (a job registered, or ended, was held or cancelled); a
  // ("jobstat", ...) that shows a job of the snapshot measured for the first
  // time; a ("node", ...) of a node not seen yet, or whose state differs from
  // the snapshot's; a node's ("nodeattr", ...) written (a job that waited
  // for what it offers may run now). A job's other rewrites (queued to
  // running, statistics, an agent's heartbeat) are not news. The ap records among the events are
  // kept for the next refresh().
  bool news(ts::Client& c, std::chrono::milliseconds wait = std::chrono::milliseconds(0));
  // The large shapes (the node, heartbeat and running records, whole_reads.h)
  // read whole on `c`, a connection of their own, by a thread of the
  // shell's, so that a tick never waits for 10,000 tuples in the server's
  // fair queue: reads the shape that is due (none if none is), and puts it
  // in place of what the last whole read and the watch events since left,
  // except for the nodes whose watch events arrived after this read began
  // (they are as new as the read or newer: a node's events arrive in the
  // order of its writes). Once it has been called, refresh() no longer
  // reads them itself.
  // Safe to call from one thread while the shell calls the rest.
  void read_whole(ts::Client& c);
  bool pending() const;
  void flush(ts::Client& c);
  // Removes the heartbeats of the schedulers that beat through this pool,
  // then their serving records, so agents fall back to their native policy
  // at once (a clean stop).
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
  bool node_into(std::string_view name, NodeStatus& into) const override;
  std::vector<bool> steps(std::string_view node, std::int64_t from) const override;
  std::vector<Block> blocks(std::string_view node) const override;
  std::vector<JobInfo> jobs() const override;
  std::vector<Complaint> complaints(std::string_view node) const override;
  // Changes at a refresh() that read blocks or complaints that differ from
  // the last read, that saw a block end (it is no longer listed) or that
  // learnt of a node.
  std::optional<std::uint64_t> owners_version() const override;
  bool keeps_records() const override { return true; }
  std::vector<EvalRecord> records() const override;
  void record(EvalRecord r) override;
  void forget(std::span<const std::size_t> indices) override;
  bool background_work() const override { return true; }
  void assign(std::int64_t scheduler, std::int64_t epoch, std::string_view node,
              std::optional<JobId> job) override;
  void heartbeat(std::int64_t scheduler) override;
  // How many times heartbeat() was called (once per scheduler per tick it
  // decided on) and the steady-clock time of the latest call: the moment of
  // the latest decision, which the shell may notice later (its thread writes
  // to the server meanwhile), so that it can time its ticks (tick_timer.h).
  // Any thread.
  std::pair<std::uint64_t, std::chrono::steady_clock::time_point> latest_heartbeat() const;

 private:
  void add_period(const sys::AvailabilityPeriod& ap);
  // The shell's reading for refresh(); see LiveSnapshot for what it holds.
  LiveSnapshot read_snapshot(ts::Client& c);
  // Puts into `s` the jobs of the last state's `live_records` that the
  // listing in `s.jobs` missed: as written back since (in `s.jobs`), or
  // kept while absent within absent_grace (`s.kept_absent`).
  void read_absent_jobs(ts::Client& c, LiveSnapshot& s);
  // Reads the shapes `due` whole on `c` and puts them in place (read_whole());
  // `began`: event_seq_ when they became due.
  void read_shapes(ts::Client& c, const std::vector<WholeReads::Shape>& due, std::uint64_t began);
  // Whether a written job, jobstat or node tuple is news (news()); mu_ held.
  bool is_news(ts::WatchId watch, const ts::Tuple& t) const;

  LivePoolOptions options_;
  mutable std::mutex mu_;
  double origin_ = 0;
  // What the Pool methods answer from. Written by the shell under mu_; the
  // shell, its only writer, also reads it without.
  LiveState state_;
  // Each node's ap records, sorted by end (under mu_): a week of history,
  // kept apart from state_ so that a refresh does not copy it.
  std::map<std::string, std::vector<std::pair<double, double>>, std::less<>> periods_;
  // Shell side: since when a job's record has been absent, and the jobs
  // known to have a launch record (it is read once per job).
  AbsentJobs absent_jobs_;
  std::set<JobId> launchable_;
  ts::WatchId ap_watch_ = 0, job_watch_ = 0, jobstat_watch_ = 0, node_watch_ = 0, running_watch_ = 0,
              owner_watch_ = 0, complaint_watch_ = 0, attrs_watch_ = 0, jobwork_watch_ = 0;
  // Shell side: the requirement texts of the launchable jobs that have one
  // (read once per job, with its launch record); every node's attributes,
  // read whole once per session of the client and then from their watch
  // (an agent writes them when it registers, and only when they changed).
  std::map<JobId, std::string> requirements_;
  std::map<std::string, sys::NodeAttrs> attrs_seen_;
  std::optional<std::uint64_t> attrs_session_;
  // Shell side: the owner blocks and complaints as last read, and whether
  // their watches have told of a change since.
  std::vector<sys::OwnerBlock> blocks_seen_;
  std::vector<sys::Complaint> complaints_seen_;
  bool owners_changed_ = true;
  // Shell side: whether the last read of the blocks or complaints found a
  // change, and the earliest end of a block listed now (+inf: none); under
  // mu_, what owners_version() answers.
  bool owners_differ_ = true;
  double next_block_end_ = 0;
  std::uint64_t owners_version_ = 0;
  std::vector<sys::AvailabilityPeriod> aps_;  // read from the watch, not yet added (shell side)
  // The node and running records as last read whole and then written
  // (their watches), the heartbeats as last read whole, and when
  // (read_snapshot()); under seen_mu_: read_whole() writes them from its
  // own thread. `event_seq_` counts the node and running watch events, and
  // each node's entry says at which its last one arrived (read_whole()).
  mutable std::mutex seen_mu_;
  std::map<std::string, sys::NodeRecord> nodes_seen_;
  std::map<std::string, sys::NodeRun> running_seen_;
  // Every job's ("jobwork", id, node, ...) by "id/node", as the running
  // records are kept: one per node running a job, so 10,000 tuples read at
  // every tick while a job ran on a pool of 10,000 (docs/scale.md, limit 14).
  std::map<std::string, sys::JobWork> jobwork_seen_;
  std::map<std::string, std::uint64_t> node_event_at_, running_event_at_, jobwork_event_at_;
  std::uint64_t event_seq_ = 0;
  std::vector<sys::NodeReason> reasons_seen_;  // as read with the last whole read
  std::vector<sys::AgentHeartbeat> heartbeats_;
  std::vector<sys::AgentBeat> beats_seen_;  // read with the heartbeats
  WholeReads whole_reads_;
  bool whole_elsewhere_ = false;  // read_whole() has been called: refresh() leaves them to it
  struct Pending {
    std::int64_t epoch;
    std::optional<JobId> job;
  };
  std::map<std::pair<std::int64_t, std::string>, Pending> assigns_;
  // flush()'s own: the schedulers' assignments as written (a decision is
  // one out_many and a few takes: assignment_book.h) and each scheduler's
  // heartbeat as written (two posted requests: sys::Superseder). A
  // scheduler's assignments are read at its first flush, and again after a
  // lost session or an error.
  AssignmentBook book_;
  std::uint64_t book_session_ = 0;  // the client's reconnects() when the book was read
  std::map<std::int64_t, sys::Superseder> beat_writers_;
  std::set<std::int64_t> beats_, beaten_;
  std::uint64_t heartbeat_calls_ = 0;                     // under mu_
  std::chrono::steady_clock::time_point heartbeat_at_{};  // under mu_: the latest call's
  std::map<std::int64_t, double> last_beat_;  // flush()'s own: when each scheduler's heartbeat was written
  // flush()'s own: the client's reconnects() when each scheduler's serving
  // record (sys::SchedulerServing) was last written or found, and the time
  // it says the schedulers serve since (this pool's making).
  std::map<std::int64_t, std::uint64_t> serving_session_;
  double serving_since_ = sys::wall_now();
  std::vector<EvalRecord> records_;    // read at start(), then appended to and forgotten from
  std::vector<EvalRecord> unsent_;     // appended since the last flush()
  std::vector<EvalRecord> forgotten_;  // to be removed from the space by flush()
};

}  // namespace piranha::nps
