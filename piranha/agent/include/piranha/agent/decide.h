// The node agent's decision: which job the node runs, and when its piranhas
// start, retreat, are suspended and resumed. A pure core: no sockets, no
// clock, no processes, no logging. The agent's loop (agent.cc) is the shell
// around it: it reads the availability source, the uplink's view of the
// pool and the piranhas' exits, calls decide(), and carries out the actions
// it returns (spawning and signalling piranhas, writing to the uplink,
// logging, writing events).
//
// The rules, in the paper's words (section 6):
//
//  Availability. The node is available while its availability source says
//    so and no owner block (("owner", node, ...)) covers now. Each change is
//    reported, with the source's reason or "owner block"; the availability
//    period that ends is recorded as ("ap", node, start, end); the node's
//    state (available, unavailable, owner-blocked) is published.
//
//  Which job (the feed). While scheduler 0's heartbeat is fresh (at most
//    scheduler_stale_seconds old, wall clock) and it has assigned this node
//    (("assign", 0, epoch, node, job), the highest epoch), the node runs the
//    assigned job if it is live, else none. Otherwise, or when the NPS falls
//    silent, the node falls back to its native policy (FAIR or FCFS,
//    native_policy.h) over the live jobs it does not hold. Either way only a
//    job whose requirement (("jobreq", ...)) the node's attributes satisfy
//    (AgentSettings::attributes; a node without any satisfies only jobs
//    without one): an assignment of another is obeyed as "no job". What the
//    node runs and on whose word ("scheduler 0" or the policy's name) is
//    published whenever either changes.
//
//  Retreat. When the node turns unavailable its piranhas retreat, timed from
//    the change; in suspend mode they are suspended instead and retreat only
//    if the node stays unavailable for suspend_max, and are resumed if it
//    comes back before. Piranhas of a job other than the chosen one retreat
//    (giving way). Only once none run does a piranha start, `cores` of them,
//    of the chosen job, and only while the server answers.
//
//  Failures. A piranha that ends without being told to retreat: a clean exit
//    (no tasks now, or the job ended) waits a second before another starts;
//    one cut off from the server (kExitCutOff) two seconds, and is not the
//    job's fault; any other exit is a failure of the job on this node. The
//    first two failures in a row restart at once, later ones after 2, 4, ...
//    60 s; at max_failures in a row the job is held with the exit status and
//    the end of the piranha's stderr. The count starts again when the job's
//    tasks completed on this node grew since the previous failure (useful
//    work), and after a clean exit. A job whose program cannot be started is
//    held at once. A held job is not run again until a view read after the
//    hold was written says whether it is live (released) or not.
//
//  Stopping. Every piranha retreats and none starts; once none runs, the
//    open availability period is recorded and the node marked down.
//
// Time is passed in (Instant): the steady clock for deadlines and retreat
// latencies, the wall clock for what is written to the system space and for
// scheduler 0's heartbeat. Not thread-safe: one agent loop owns an
// AgentState.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "piranha/agent/agent.h"
#include "piranha/agent/availability.h"
#include "piranha/agent/native_policy.h"
#include "piranha/agent/piranha_host.h"
#include "piranha/runtime/sysspace.h"

namespace piranha {

// Now, on both clocks.
struct Instant {
  Clock::time_point steady{};
  double wall = 0;  // seconds since the epoch, as sys::wall_now()
};

// What the agent knows of the pool: the system space as its uplink last
// read it (uplink.h, Uplink::View).
struct PoolView {
  bool owner_blocked = false;                          // an ("owner", node, ...) block covers now
  std::vector<sys::JobLaunch> live;                    // live jobs with a launch record
  std::map<std::int64_t, std::string> requirements{};  // their ("jobreq", ...) texts, where they have one
  std::optional<sys::Assignment> assignment;           // scheduler 0's for this node, highest epoch
  std::optional<sys::SchedulerHeartbeat> scheduler;    // scheduler 0's heartbeat
  std::uint64_t holds_written = 0;                     // Hold actions written before this view was read
};

// The node's piranhas as PiranhaHost has them (all of one job).
struct Piranhas {
  std::size_t running = 0;
  std::optional<std::int64_t> job;  // nullopt when none run
  bool retreating = false;          // told to retreat
  std::optional<Clock::time_point> suspended_since;
};

// What the shell saw since the previous call.
struct Observations {
  // The availability source's judgement, when it judged again; its change
  // counts from `verdict_at`.
  std::optional<Verdict> verdict;
  Clock::time_point verdict_at{};
  std::optional<PoolView> view;    // a view of the pool newer than the last one given
  std::vector<PiranhaExit> exits;  // piranhas that ended
  Piranhas piranhas;               // now, after those exits
  // A campus loan's foreign piranhas still running here (lending.h): the node's own start only
  // once they are gone, as one job's start after another's piranhas retreated.
  std::size_t lent_running = 0;
  // Tasks each live job completed on this node, as last learnt (the feeder
  // publishes them within about a second).
  std::map<std::int64_t, std::int64_t> tasks_here;
  bool server_away = false;  // the last attempt to reach the server failed
  bool stopping = false;     // the agent is stopping
};

// What the deciding remembers from one call to the next. The shell creates
// it and otherwise only passes it to decide() and cannot_start(); tests may
// look at it.
struct AgentState {
  explicit AgentState(AgentSettings settings);

  AgentSettings settings;  // the rules' parameters (cores, mode, grace, ...)
  NativePolicy policy;

  bool begun = false;  // the node's state and run were published
  Verdict verdict{false, "not yet evaluated"};
  bool owner_blocked = false;
  bool available = false;
  std::optional<double> ap_start;  // wall time the open availability period began
  Clock::time_point change_at{};   // when the last availability change happened

  std::map<std::int64_t, sys::JobLaunch> launches;  // live and not held, from the last view
  // Their requirements, parsed once each (sched::read_requirement).
  std::map<std::int64_t, sched::Requirement> requirements;
  std::optional<std::int64_t> target;  // the job this node should run
  bool obeying_scheduler = false;
  std::string run_by;  // `by` of the last run published

  std::map<std::int64_t, Clock::time_point> hold_off;  // no start before
  std::map<std::int64_t, int> failures;                // in a row, on this node
  std::map<std::int64_t, std::int64_t> work_seen;      // tasks done here at the last start or failure
  std::map<std::int64_t, std::uint64_t> held;          // held here, by the number of the hold
  std::uint64_t holds_requested = 0;
  std::string retreat_cause;  // why the piranhas were last told to retreat
  bool stopping = false;
  bool down = false;  // stopped: the node was marked down
};

// The actions. Each says what to do and carries what the shell needs to
// log it and write its event; the shell adds the node's name and the wall
// time where a record needs them.
namespace act {

// Reports (a log line, an event).
struct NoteAvailability {  // event "available" / "unavailable"
  bool available = false;
  std::string reason;
  bool operator==(const NoteAvailability&) const = default;
};
struct ObeyScheduler {  // scheduler 0 directs the node from now on
  std::int64_t epoch = 0;
  bool operator==(const ObeyScheduler&) const = default;
};
struct LeaveScheduler {  // back to the native policy
  bool gone = false;     // no heartbeat at all (else a stale one, or no assignment)
  bool operator==(const LeaveScheduler&) const = default;
};
struct NoteTarget {  // event "target": the job chosen changed
  std::optional<std::int64_t> job;
  std::string by;  // "scheduler" or the policy's name
  bool operator==(const NoteTarget&) const = default;
};
struct NoteRetreated {  // event "retreat": a piranha told to retreat ended
  std::int64_t job = 0;
  pid_t pid = 0;
  std::string cause;      // "unavailable", "assignment", "policy", "agent stopping"
  double latency_ms = 0;  // from the change that caused it to its exit
  bool killed = false;    // it outlived its grace
  bool operator==(const NoteRetreated&) const = default;
};
struct NoteExit {  // event "exit": a piranha ended untold
  std::int64_t job = 0;
  std::string status;  // ExitStatus::describe()
  bool operator==(const NoteExit&) const = default;
};
struct NoteCutOff {  // that piranha had lost the server
  std::int64_t job = 0;
  bool operator==(const NoteCutOff&) const = default;
};
struct NoteFailure {  // that piranha failed; the job is not held (yet)
  std::int64_t job = 0;
  std::string status;
  int in_a_row = 0;
  int max_failures = 0;
  std::chrono::seconds wait{0};  // before the next start
  bool operator==(const NoteFailure&) const = default;
};

// Writes to the system space.
struct RecordPeriod {  // ("ap", node, start, end)
  double start = 0, end = 0;
  bool operator==(const RecordPeriod&) const = default;
};
struct SetNodeState {
  sys::NodeState state = sys::NodeState::Unavailable;
  bool operator==(const SetNodeState&) const = default;
};
struct PublishRun {  // ("running", node, job or 0, by, now)
  std::optional<std::int64_t> job;
  std::string by;  // "scheduler 0" or the policy's name
  bool operator==(const PublishRun&) const = default;
};
struct Hold {  // hold the job everywhere (sys::hold_job); also reported
  std::int64_t job = 0;
  std::string reason;
  bool operator==(const Hold&) const = default;
};

// To the piranhas.
struct Start {  // `count` piranhas of `launch`; if that fails, call cannot_start()
  sys::JobLaunch launch;
  int count = 0;
  bool operator==(const Start& o) const {
    return launch.id == o.launch.id && launch.program == o.launch.program && launch.args == o.launch.args &&
           launch.cwd == o.launch.cwd && count == o.count;
  }
};
struct Retreat {  // every piranha retreats, timed from `change`, killed after the grace
  std::int64_t job = 0;
  Clock::time_point change{};
  std::string cause;                         // as NoteRetreated's
  std::optional<std::int64_t> gives_way_to;  // for "assignment" and "policy": the job chosen instead
  bool operator==(const Retreat&) const = default;
};
struct Suspend {
  std::int64_t job = 0;
  bool operator==(const Suspend&) const = default;
};
struct Resume {
  std::int64_t job = 0;
  bool operator==(const Resume&) const = default;
};

}  // namespace act

using Action = std::variant<act::NoteAvailability, act::ObeyScheduler, act::LeaveScheduler, act::NoteTarget,
                            act::NoteRetreated, act::NoteExit, act::NoteCutOff, act::NoteFailure,
                            act::RecordPeriod, act::SetNodeState, act::PublishRun, act::Hold, act::Start,
                            act::Retreat, act::Suspend, act::Resume>;
using Actions = std::vector<Action>;

// One decision: applies `seen` to `state` in the order the rules above are
// written (availability from a new verdict, then a new view: owner blocks,
// holds released, the job chosen, availability again; then the exits; then
// the piranhas) and returns the actions to carry out, in order. The first
// call also publishes the node's state and run.
Actions decide(const Observations& seen, AgentState& state, Instant now);

// Why the node is in `node_state`, in words, as `state`'s decision saw it
// (the "nodewhy" record): the verdict at the change, not refreshed while the
// state lasts (a load changing every second would be a write every second).
std::string state_reason(sys::NodeState node_state, const AgentState& state);

// Start{job} failed with `error` (the program cannot be started here): the
// job is held at once.
Actions cannot_start(std::int64_t job, const std::string& error, AgentState& state);

// When decide() must be called again at the latest although nothing else
// happens: a suspension running out, a job's restart delay ending. nullopt:
// no such time.
std::optional<Clock::time_point> next_due(const AgentState& state, const Piranhas& piranhas,
                                          Clock::time_point now);

}  // namespace piranha
