// Uplink: a node agent's link to the system space, on a thread of its own, so
// that sensing availability and making piranhas retreat never wait on the
// server. Its users: the agent (agent.cc), and the swarm benchmark
// (bench/src/swarm.cc), which runs thousands of them in one process so that
// what it measures is what that many agents cost the pool.
//
// The thread connects (patiently: the server may start later) with ONE
// connection, which carries both its requests and its watches (a pool of
// N agents costs the server N connections), places its watches, then
//  - reads what the agent decides with into a View: owner blocks, live jobs
//    with their launch records, scheduler 0's assignment for this node and
//    its heartbeat, the tasks each live job completed here. It learns of
//    changes from tuple-space watches while it waits for work, so a new job,
//    an assignment or an owner block reaches the agent within milliseconds.
//    What an event carries whole is put into the View without a read: a new
//    live job (with its launch record, one request), a job that ended or was
//    held (dropped), this node's newer assignment, the tasks a job completed
//    here; a read
//    (six or so requests) per agent at each of a job's record writes was,
//    at 10,000 nodes, most of the server's work (docs/scale.md). A job first
//    seen running has its feeder's patience looked at alone (one `rd`, within
//    kFeederSlack, spread over the pool: patience_look_delay; again every
//    second while absent, kPatienceLooks times at most, then the default).
//    It reads when an owner block is written or
//    taken, when an owner block begins or ends, when scheduler 0's serving record is written or taken (the
//    scheduler came or went), when a look at scheduler 0's heartbeat says it came back or may be gone
//    (heartbeat_look: it looks at that record alone every heartbeat_look_delay, when it goes stale, and
//    when an assignment comes while it is absent or stale), when a running job's feeder would count as lost
//    (its jobstat is not watched) and when an absent job's grace ends; and every `tick` (5 minutes) as a
//    safety net. The first read waits until the watches are in place, so that whatever is written after a
//    View was read prompts another read. A running job whose feeder is lost (silent past its patience,
//    feeder_silence.h, counted from when this uplink last found the server back) is recorded failed
//    (sys::lose_job) and left out. A read costs a few requests and grows with the live jobs, not with the
//    finished ones kept for retention;
//  - writes what the agent hands it, oldest first, each kept until written:
//    availability periods and holds in a queue, the node's state and its
//    ("running", ...) record latest-wins, so a period that ended while the
//    server was away is still recorded once it is back;
//  - writes the node's attributes (("nodeattr", ...), AgentSettings::attributes)
//    once per session, and only when the record there differs;
//  - writes the node's record (("node", ...), with its heartbeat) when its
//    state changes, and only its heartbeat (("heartbeat", "agent", ...))
//    every `heartbeat_seconds`: one small replace per node per beat, which
//    watches of the node records (the NPS's) do not hear; prunes old records.
// When a call fails (the server gone, restarting, a network cut) it logs
// "lost the tuple-space server" once, keeps what is queued, tries again after
// a second, then backing off to 16 s with a per-node jitter (a restarted
// server is not met by the whole pool in one second), and logs when the
// server answers again. Its client's request
// deadline is short (2 s): every request it makes is answered at once by a
// live server. Destroying the Uplink interrupts a call in progress or a wait
// for events.
//
// Thread-safety: every public method may be called from any thread. The log
// callback runs on the uplink's thread.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "piranha/agent/agent.h"
#include "piranha/base/clock.h"
#include "piranha/runtime/absent_jobs.h"
#include "piranha/runtime/sysspace.h"

namespace piranha {

// Scheduler 0's heartbeat is not watched: the NPS rewrites it every beat,
// and each rewrite was an event to every agent (at 10,000 nodes, 10,000
// events a second in bursts that held up every other request: docs/scale.md).
// An uplink looks at it alone (one `rd`) at moments of its own, and watches
// scheduler 0's serving record instead, which changes only when the
// scheduler comes or goes (sys::SchedulerServing).

// How long after a look at scheduler 0's heartbeat (or a read, which finds
// it too) an uplink of node `node` looks again: in [0.4, 0.6) of
// `stale_seconds`, the same for a node every time and spread evenly over a
// pool's nodes, so that 10,000 agents make 2,000 small reads a second at
// the default 10 s, evenly, and none looks in step with another. A
// heartbeat found fresh then stays fresh until the next look as long as the
// scheduler beats more often than every 0.4 `stale_seconds` (the NPS's
// `--beat`, 1 or 2 s); a slower one is looked at again as it goes stale
// (Uplink::stale_at_locked). Pure.
double heartbeat_look_delay(const std::string& node, double stale_seconds);

// What a look at scheduler 0's heartbeat alone means for an uplink that
// knows `known` (the newest it has seen, if any) at wall time `now`, the
// look having found `found`:
//  - none, where one was known: the scheduler may be gone; `read` the
//    system space (the view's heartbeat is what the read finds);
//  - an older copy or the same one: nothing (`changed` false);
//  - a newer one: `changed`, the agent decides on it; and `read` too if the
//    known one was absent or stale and the new one is fresh: the scheduler
//    is back, and the agent looks at its assignment again.
// `heartbeat` is the newest known afterwards. Pure.
struct HeartbeatLook {
  std::optional<sys::SchedulerHeartbeat> heartbeat;
  bool read = false;
  bool changed = false;
};
HeartbeatLook heartbeat_look(const std::optional<sys::SchedulerHeartbeat>& known,
                             const std::optional<sys::SchedulerHeartbeat>& found, double now,
                             double stale_seconds);

// Scheduler 0's heartbeat as a read leaves it: `read` is what the read
// found, `known` what the uplink knew before. During the NPS's supersede
// both copies are there and `rd` may find the older: the newer counts. None
// found is none, whatever was known (a scheduler that withdrew it). Pure.
std::optional<sys::SchedulerHeartbeat> heartbeat_after_read(
    const std::optional<sys::SchedulerHeartbeat>& read, const std::optional<sys::SchedulerHeartbeat>& known);

// How long after a watch event shows job `job` marked running an uplink of
// node `node` that does not know the job's patience yet looks at its
// ("jobpatience", ...) record (to learn it, and so when the feeder's silence
// could first matter): in [0, kFeederSlack), before any patience can run out,
// and spread evenly over a pool's nodes so that 10,000 agents do not look in
// the same second. Pure.
double patience_look_delay(const std::string& node, std::int64_t job);

// How many looks in a row, a second apart, may find a running job's patience
// record absent before an uplink keeps the default (kFeederPatience) for
// good. A feeder writes it before it marks its job running, so only a job
// registered by hand lacks it; without a bound, each agent of the pool
// would look every second for as long as that job ran.
inline constexpr int kPatienceLooks = 30;

// The patience an uplink keeps after a look at a running job's patience
// record that found `found` (its seconds; none: absent), `misses` earlier
// looks having found none: what was found; the default (kFeederPatience) when
// this was the kPatienceLooks-th look to find none; else none yet (look again
// in a second). Pure.
std::optional<double> patience_after_look(std::optional<double> found, int misses);

class Uplink {
 public:
  // What the agent last learnt from the system space.
  struct View {
    std::uint64_t generation =
        0;  // 0: nothing read yet; then +1 per read, and per new job or assignment put in from an event
    bool owner_blocked = false;        // an ("owner", node, ...) block covers now
    std::vector<sys::JobLaunch> live;  // live jobs with a launch record, as sys::list_jobs orders them
    // The requirement texts of those of them that have one (("jobreq", ...),
    // read with the launch record, once per job).
    std::map<std::int64_t, std::string> requirements;
    std::optional<sys::Assignment> assignment;  // this node's, highest epoch
    double assignment_seen = 0;  // wall time this uplink learnt of `assignment` (its event or a read)
    std::optional<sys::SchedulerHeartbeat> scheduler;  // scheduler 0's heartbeat
    std::map<std::int64_t, std::int64_t> tasks_here;   // completed on this node, per live job
    std::uint64_t holds_written = 0;                   // hold() requests written before this view was read
  };

  // Starts the thread. `wake_fd` (an eventfd, or -1) is written to after
  // every read, so the agent's poll wakes. `log` gets one line per event
  // worth a person's attention.
  Uplink(const AgentSettings& settings, std::function<void(const std::string&)> log, int wake_fd);
  // Stops the thread at once, interrupting a call waiting on the server.
  ~Uplink();
  Uplink(const Uplink&) = delete;
  Uplink& operator=(const Uplink&) = delete;

  View view() const;
  // The View's generation (View::generation), without copying the View or
  // taking the uplink's lock.
  std::uint64_t generation() const;
  // How many reads of the system space the uplink has made (not events).
  std::uint64_t reads() const { return reads_.load(); }
  // How many times scheduler 0's heartbeat was looked at alone (heartbeat_look), and how many of
  // those were as the heartbeat the uplink knew went stale; counted when a look is done (its outcome,
  // a new generation or a read to come, is set).
  std::uint64_t looks() const { return looks_.load(); }
  std::uint64_t stale_looks() const { return stale_looks_.load(); }
  // How many times running jobs' patience records were looked at alone (one
  // request for all those due; look_at_patience), counted when done.
  std::uint64_t patience_looks() const { return patience_looks_done_.load(); }
  // True once the server answered at least once.
  bool ever_connected() const;
  // True while the last attempt to reach the server failed.
  bool server_away() const;
  // Why the server is refused for good: it serves another pool than this
  // node's (ts::Code::WrongPool), at the first connection or a reconnection.
  // The thread then stops trying and wakes the agent (wake_fd). Empty until
  // then.
  std::string refused() const;

  // The node's state: written at once and with every heartbeat.
  // With it, why (sys::NodeReason): written with the node record.
  void set_state(sys::NodeState state, std::string reason);
  // The node's ("running", ...) record: written at once; latest wins.
  void set_run(sys::NodeRun run);
  // Queued until written. Holds are written in the order asked; the View
  // says how many were written before it was read.
  void record_period(sys::AvailabilityPeriod ap);
  void hold(sys::JobHold hold);
  // A job's piranhas' key on this node (("jobkey", ...)), written before
  // the holds and periods (a piranha's handshake waits for it), and taken
  // again once they have ended; queued until done. A withdrawal of job 0
  // takes every key of this node (those of an earlier run of the agent).
  // A key the server refuses (its job ended) is logged and dropped.
  void announce_key(sys::JobKey key);
  void withdraw_key(sys::JobKey key);
  // Asks for a read of the system space now rather than at the next tick.
  void read_soon();
  // Waits until everything handed over has been written, or until
  // `deadline`; true if it all was.
  bool drain(Clock::time_point deadline);

 private:
  void run();
  bool connect();
  void step(ts::Client& c);
  // Reads the View; returns when the next read is due at the latest.
  Clock::time_point read(ts::Client& c, std::uint64_t holds_written);
  // Scheduler 0's heartbeat alone (heartbeat_look), when a look is due;
  // `at_staleness`: the one the view holds went stale, and the agent
  // decides on the view again even when the look finds nothing new.
  void look_at_heartbeat(ts::Client& c, bool at_staleness);
  // The patience records of the running jobs whose look is due
  // (patience_looks_), asked together: one found, or absent kPatienceLooks
  // times, is kept in patience_ and a read scheduled for when the job's
  // feeder could count as lost; one absent is looked at again in a second.
  void look_at_patience(ts::Client& c);
  // Waits for watch events on `c` until something is due (a write handed
  // over, a read asked for, the heartbeat, the next read, pruning) or the
  // Uplink stops, handling each event as it comes.
  void listen(ts::Client& c);
  // Wakes listen() (and drain()): something was handed over.
  void kick();
  // One watch event: a job's record, a job's tasks here and a newer
  // assignment for this node are put in the view at once (job_written), a
  // taken assignment is no news, an assignment while the known heartbeat is
  // absent or stale asks for a look at it, scheduler 0's serving record
  // written or taken asks for a read unless a newer one was seen, anything
  // else asks for a read; true when it does.
  bool on_event(const ts::WatchEvent& e);
  // A job record a watch event showed written: an ended or held job leaves
  // the view at once; a live one is noted for note_new_jobs(); one marked
  // running has its feeder heard now and, its patience unknown, a look at
  // its patience scheduled (patience_look_delay()); its patience known, a
  // read for when its silence could first matter.
  void job_written(const sys::JobRecord& j);
  // The rest of read(), from the live jobs on: `written` are the ids read()
  // took from written_ (put back should this throw).
  Clock::time_point read_with(ts::Client& c, View& v, Clock::time_point steady, double now,
                              double next_change, const std::set<std::int64_t>& written);
  // Puts the live jobs an event just showed written, and the view has not,
  // into the view at once, with their launch records and requirements asked together on `c` (one wait):
  // the agent can start a new job's piranhas one round trip after its registration.
  void note_new_jobs(ts::Client& c);
  // Records running job `j` failed, its feeder lost: last heard at `heard`,
  // silent past its `patience` at `now` (wall seconds). False when it did
  // not (sys::lose_job).
  bool lose(ts::Client& c, const sys::JobRecord& j, double heard, double patience, double now);
  // Records `why` as refused() and wakes the agent; returns false (connect()'s "not connected").
  bool refuse(const std::string& why);
  // Logs a lost server (once until it answers again) and counts the failure.
  void note_lost(const std::exception& e);
  // Tells the agent's loop (wake_fd) that the View changed.
  void wake_agent() const;
  bool pending_locked() const;
  // When scheduler 0's heartbeat as the View knows it (kept fresh by
  // looks) goes stale, the moment to look whether the scheduler is gone;
  // none when no heartbeat is known or this one's staleness was looked at
  // already.
  std::optional<Clock::time_point> stale_at_locked() const;
  // When the look at scheduler 0's heartbeat after one (or a read) at `now` is due.
  Clock::time_point look_after(Clock::time_point now) const;
  // The pause after `failures` failed attempts in a row (>= 1).
  std::chrono::milliseconds retry_pause(int failures) const;

  AgentSettings s_;
  std::function<void(const std::string&)> log_;
  int wake_fd_;
  int stop_fd_ = -1;  // readable once stopping: interrupts the client
  int kick_fd_ = -1;  // written when something is handed over: ends listen()'s wait

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool read_now_ = true;
  // Set once the watches are first in place; no read before. A read made earlier was the View's first, and a
  // job registered just after it, whose record was absent (mid-rewrite) at the read the watches then asked
  // for, was known neither from an event nor from a read.
  bool watching_ = false;
  View view_;
  // view_.generation, readable without mu_: a swarm's driver asks thousands
  // of uplinks at each wake (bench/src/swarm.cc).
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<std::uint64_t> reads_{0};                // reads()
  std::atomic<std::uint64_t> looks_{0};                // looks()
  std::atomic<std::uint64_t> stale_looks_{0};          // stale_looks()
  std::atomic<std::uint64_t> patience_looks_done_{0};  // patience_looks()
  bool connected_once_ = false;
  bool away_ = false;
  std::string refused_;                  // refused()
  int failures_ = 0;                     // attempts in a row that failed
  std::optional<sys::NodeState> state_;  // the current state
  std::string reason_;                   // why (set_state)
  bool state_dirty_ = false;
  std::optional<sys::NodeRun> run_;
  std::deque<sys::AvailabilityPeriod> periods_;
  std::deque<sys::JobHold> holds_;
  std::deque<std::pair<sys::JobKey, bool>> keys_;  // true: announce, false: withdraw
  std::uint64_t holds_written_ = 0;
  bool busy_ = false;  // the thread is writing what it took from the queues

  // The thread's own.
  std::unique_ptr<ts::Client> client_;
  const ts::Template assign_template_ = sys::assign_template(0, s_.node);  // its watch's
  sys::Superseder heartbeat_{sys::agent_heartbeat_template(s_.node)};      // the agent's beat, posted
  std::uint64_t reconnects_seen_ = 0;
  std::map<std::int64_t, sys::JobLaunch> launches_;
  // Live jobs note_new_jobs() found without a launch record (registered
  // without a program): not looked for again at every event.
  std::set<std::int64_t> launchless_;
  std::map<std::int64_t, std::string> requirements_;  // of the jobs of launches_ that have one
  // The client's reconnects() when the node's attributes were last
  // published (nullopt: not on this client): a server restarted without
  // its data has lost them.
  std::optional<std::uint64_t> attributes_session_;
  // The running jobs' feeder patience (their ("jobpatience", ...) records).
  std::map<std::int64_t, double> patience_;
  // Running jobs whose patience is not known yet: when to look at its record
  // next, and how many looks found none (look_at_patience).
  struct PatienceLook {
    Clock::time_point due;
    int misses = 0;
  };
  std::map<std::int64_t, PatienceLook> patience_looks_;
  // When each running job's feeder was last heard from (its jobstat's
  // updated_at), as the reads found it.
  std::map<std::int64_t, double> heard_;
  // When this uplink last found the server back (wall seconds; under mu_
  // where written): a feeder's silence is counted from here at the most.
  double server_back_ = 0;
  // Live jobs whose record was absent at a read, since when: a record being
  // rewritten is back within a moment; one gone for good (a server restarted
  // without its data, a cancel killed between its take and its write) is let
  // go after sys::kAbsentJobGrace (absent_jobs.h).
  AbsentJobs absent_jobs_;
  // Live jobs whose record a watch event showed written since the last read
  // (under mu_): a read that finds one absent, as when the feeder rewrites a
  // new job's record to mark it running, treats it as above instead of
  // missing the job until the next event.
  std::set<std::int64_t> written_;
  // The heartbeat (its time) whose staleness was looked at (under mu_): not again.
  double stale_read_for_ = -std::numeric_limits<double>::infinity();
  // Scheduler 0's heartbeat went stale (under mu_): step() looks at that
  // one record (look_at_heartbeat), not the whole view: at an NPS's death
  // every agent of the pool does so in the same second.
  bool stale_check_ = false;
  // An assignment came while the known heartbeat was absent or stale (under
  // mu_): step() looks at it at once, as the scheduler that wrote it is
  // likely back.
  bool look_now_ = false;
  // The newest of scheduler 0's serving records a watch event showed
  // written (its `since`; under mu_): the older one's `taken` that a
  // restarted NPS's supersede sends next is no news.
  double serving_since_ = -std::numeric_limits<double>::infinity();
  // When the next look at scheduler 0's heartbeat is due (the thread's own).
  Clock::time_point next_look_{};
  Clock::time_point next_read_{}, next_heartbeat_{}, next_prune_{};
  std::thread thread_;
};

}  // namespace piranha
