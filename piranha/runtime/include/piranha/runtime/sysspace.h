// The system space `piranha.sys`: the tuples through which jobs, node agents
// and the external scheduler (NPS) talk (docs/system-space.md).
//
// Each record type here is one tuple shape. to_tuple() writes it and
// from_tuple() reads it back, returning nullopt for a tuple of another shape,
// so a reader never crashes on a stray tuple somebody else wrote. The field
// lists are a contract with the scheduler: extend them, don't rename.
//
// Times are wall-clock seconds since the Unix epoch (doubles), so that
// processes on different hosts agree on them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/tuplespace/client.h"

namespace piranha::sys {

namespace ts = piranha::ts;

// The name of the system space.
inline constexpr std::string_view kSpace = "piranha.sys";

// Where clients connect when nothing says otherwise (`piranha ts serve`'s
// default); the PIRANHA_SERVER environment variable overrides it.
inline constexpr std::string_view kDefaultServer = "tcp://127.0.0.1:7070";
std::string server_from_env();

// Connects to `server`, trying again every second while no server answers,
// until `stopped()` says to give up (then nullptr). `note` hears "waiting for
// the tuple-space server at ... (why)" at most every 10 s. For daemons (the
// agent, the NPS) that may start before the server does. A malformed
// endpoint (endpoint.h) is never retried: throws InputError (source
// "server") naming the problem; nor is a server of another pool than the
// client's (ts::ClientOptions::pool): its TupleSpaceError(WrongPool) is thrown.
// `interrupt_fd` (-1: none) becomes the client's ClientOptions::interrupt_fd,
// `served_first` its ClientOptions::served_first (a key whose role may not
// have it: TupleSpaceError(NotPermitted) is thrown, not retried).
std::unique_ptr<ts::Client> connect_patiently(const std::string& server, const std::function<bool()>& stopped,
                                              const std::function<void(const std::string&)>& note,
                                              int interrupt_fd = -1, bool served_first = false);

// Seconds since the Unix epoch, now.
double wall_now();

// Held: an agent stopped running the job's piranhas after they failed
// max_failures times in a row on its node (or its program could not be
// started there); ("jobheld", ...) says why. `piranha release` makes it
// queued or running again, `piranha cancel` ends it. Its feeder keeps waiting.
enum class JobState { Queued, Running, Done, Failed, Cancelled, Held };
std::string_view name(JobState s);
std::optional<JobState> job_state_from(std::string_view s);
// Queued or Running: a job agents may run piranhas for.
inline bool is_live(JobState s) {
  return s == JobState::Queued || s == JobState::Running;
}
// A job record is absent for a moment while someone rewrites it (taken, then
// written back: under a 10 s lease by the feeder marking it running and by a
// hold; without a lease by a cancel). Readers (agents, the NPS) keep a job that was live at their last
// read and whose record is absent now live for this long at most, and only
// while its ("jobexec", ...) launch record is there (docs/system-space.md).
inline constexpr double kAbsentJobGrace = 15;
// Done, Failed or Cancelled: the job has ended and will not run again.
inline bool is_finished(JobState s) {
  return s == JobState::Done || s == JobState::Failed || s == JobState::Cancelled;
}

// ("job", id, name, space, submit_time, state)
struct JobRecord {
  std::int64_t id = 0;
  std::string name;   // the program's base name, for people
  std::string space;  // the job's own tuple space
  double submit_time = 0;
  JobState state = JobState::Queued;
  ts::Tuple to_tuple() const;
  static std::optional<JobRecord> from_tuple(const ts::Tuple& t);
};

// ("jobexec", id, program, args, cwd): how an agent starts the job's piranha.
// An extension of the schema; args are NUL-separated in a blob.
struct JobLaunch {
  std::int64_t id = 0;
  std::string program;  // absolute path
  std::vector<std::string> args;
  std::string cwd;
  ts::Tuple to_tuple() const;
  static std::optional<JobLaunch> from_tuple(const ts::Tuple& t);
};

// ("jobstat", id, tasks_done, tasks_left, mean_task_seconds, updated_at)
struct JobStat {
  std::int64_t id = 0;
  std::int64_t tasks_done = 0;
  std::int64_t tasks_left = 0;
  double mean_task_seconds = 0;
  double updated_at = 0;
  ts::Tuple to_tuple() const;
  static std::optional<JobStat> from_tuple(const ts::Tuple& t);
};

// ("jobwork", id, node, tasks, seconds, retreats, owner_retreats): what one
// node did for a job so far (tasks completed there, their summed time,
// retreats there, of which those because the node stopped being available).
// An extension of the schema, written by the job's runtime beside its jobstat.
// The one count of a job's retreats (task_tally.h).
struct JobWork {
  std::int64_t id = 0;
  std::string node;
  std::int64_t tasks = 0;
  double seconds = 0;
  std::int64_t retreats = 0;
  std::int64_t owner_retreats = 0;
  ts::Tuple to_tuple() const;
  static std::optional<JobWork> from_tuple(const ts::Tuple& t);
};

// ("jobtime", id, start_time, end_time): when a job began and ended, 0 for
// "not yet". start_time is the earliest moment any piranha took its first
// task of the job (the runtime, in the piranha, writes it when it takes that
// task); end_time is the moment the job's ("job", ...) record first became
// done, failed or cancelled (written by whichever process wrote that state:
// the feeder's runtime, `piranha submit` for a feeder that could not, or
// `piranha cancel`). An extension of the schema. Rewritten through
// record_job_times(), which keeps the earliest time each writer reported.
struct JobTimes {
  std::int64_t id = 0;
  double start_time = 0;
  double end_time = 0;
  // Both records' knowledge: each time the earliest that is not 0.
  JobTimes merged(const JobTimes& other) const;
  ts::Tuple to_tuple() const;
  static std::optional<JobTimes> from_tuple(const ts::Tuple& t);
};

// ("jobheld", id, node, reason, time): why the job is held: the node whose
// agent held it, the reason (the last exit status and the last lines of
// the piranha's stderr, or why its program could not be started) and the
// wall time. One per held job; removed by `piranha release`. An extension
// of the schema.
struct JobHold {
  std::int64_t id = 0;
  std::string node;
  std::string reason;
  double time = 0;
  ts::Tuple to_tuple() const;
  static std::optional<JobHold> from_tuple(const ts::Tuple& t);
};

// ("jobpatience", id, seconds): how long the job's feeder waits for a server
// that does not answer before it gives up (feeder_silence.h). Written once
// by the feeder's runtime as it starts, before its first jobstat; read by
// node agents, which count the feeder lost only after that long (plus
// kFeederSlack) without a jobstat. Removed with the job's records. An
// extension of the schema.
struct JobPatience {
  std::int64_t id = 0;
  double seconds = 0;
  ts::Tuple to_tuple() const;
  static std::optional<JobPatience> from_tuple(const ts::Tuple& t);
};

// ("joblost", id, node, reason, time): a running job recorded failed because
// its feeder was lost: the node whose agent found it, why ("feeder lost:
// ..."), and when (wall time). Written by lose_job() while the job record is
// taken; one per job. Removed with the job's records. An extension of the
// schema.
struct JobLost {
  std::int64_t id = 0;
  std::string node;
  std::string reason;
  double time = 0;
  ts::Tuple to_tuple() const;
  static std::optional<JobLost> from_tuple(const ts::Tuple& t);
};

// ("jobkey", id, node, public_key): the CURVE public key (Z85 text) of the
// credential node's agent made for job id's piranhas there (docs/security.md,
// "Piranhas"). A server with --auth admits a client holding its secret key
// as a piranha of that job: it may use job.<id> and its job's records, and
// nothing else. Written by the agent before it starts the piranhas, taken
// by it when they have all ended on the node; removed with the job's
// records. An extension of the schema.
struct JobKey {
  std::int64_t id = 0;
  std::string node;
  std::string public_key;
  ts::Tuple to_tuple() const;
  static std::optional<JobKey> from_tuple(const ts::Tuple& t);
};

// ("jobreq", id, requirement): what a node must offer to run the job's
// piranhas, in the grammar of `piranha submit --require`
// (scheduler/requirement.h), in its canonical form. Written once by `piranha
// submit --require`, before the job's jobexec and job records, so whoever
// finds the job finds it; never rewritten; removed with the job's records. A
// job without one runs on any node. An extension of the schema.
struct JobRequirement {
  std::int64_t id = 0;
  std::string text;
  ts::Tuple to_tuple() const;
  static std::optional<JobRequirement> from_tuple(const ts::Tuple& t);
};

// ("jobexit", id, status): the feeder's exit status, as a shell reports it
// (128 + N for signal N). Written once when the job ends, by the feeder's
// runtime (its return value; 130 when cancelled) or by `piranha submit`
// for a feeder that could not. An extension of the schema.
struct JobExit {
  std::int64_t id = 0;
  std::int64_t status = 0;
  ts::Tuple to_tuple() const;
  static std::optional<JobExit> from_tuple(const ts::Tuple& t);
};

// ("jobowner", id, name): who took job id `id` from the job-id counter, by
// the name its key has in an authenticated server's auth file. Written only
// by such a server, in the same step as the counter's advance
// (docs/security.md); a job's records may then be changed only by its
// owner, agents (within their rights) and admins. Removed with the job's
// records. A server without authentication writes none.
struct JobOwner {
  std::int64_t id = 0;
  std::string name;
  ts::Tuple to_tuple() const;
  static std::optional<JobOwner> from_tuple(const ts::Tuple& t);
};

enum class NodeState { Available, Unavailable, OwnerBlocked, Down };
std::string_view name(NodeState s);
std::optional<NodeState> node_state_from(std::string_view s);

// ("node", name, cores, speed, state, updated_at)
struct NodeRecord {
  std::string name;
  std::int64_t cores = 1;
  double speed = 1.0;
  NodeState state = NodeState::Unavailable;
  double updated_at = 0;
  ts::Tuple to_tuple() const;
  static std::optional<NodeRecord> from_tuple(const ts::Tuple& t);
};

// ("nodeattr", node, cores, memory, arch, labels): what the node offers to
// jobs with requirements (scheduler/requirement.h): its processor cores, its
// memory in bytes, its CPU architecture (`uname -m`) and the labels its
// agent's configuration gives it, sorted, joined by ',' in the tuple (labels
// are names, without commas). Written by the node's agent when it registers,
// only when it differs from the one there (so a pool of any size costs no
// writes after its agents start); never removed. A node without one
// satisfies only the empty requirement. An extension of the schema: the node
// record's shape stays as it was.
struct NodeAttrs {
  std::string node;
  std::int64_t cores = 0;
  std::int64_t memory = 0;
  std::string arch;
  std::vector<std::string> labels;
  friend bool operator==(const NodeAttrs&, const NodeAttrs&) = default;
  ts::Tuple to_tuple() const;
  static std::optional<NodeAttrs> from_tuple(const ts::Tuple& t);
};

// ("ap", node, start, end): one finished availability period.
struct AvailabilityPeriod {
  std::string node;
  double start = 0;
  double end = 0;
  ts::Tuple to_tuple() const;
  static std::optional<AvailabilityPeriod> from_tuple(const ts::Tuple& t);
};

// ("assign", scheduler_id, epoch, node, job_id): scheduler `scheduler_id`
// wants `node` to run `job_id` (0: no job). Agents obey scheduler 0's
// assignment with the highest epoch while its heartbeat is fresh.
struct Assignment {
  std::int64_t scheduler_id = 0;
  std::int64_t epoch = 0;
  std::string node;
  std::int64_t job_id = 0;
  ts::Tuple to_tuple() const;
  static std::optional<Assignment> from_tuple(const ts::Tuple& t);
};

// ("running", node, job_id, by, since): what the node's agent runs now
// (job_id 0: none), on whose word (`by`: "scheduler 0" when obeying
// scheduler 0, else its native policy's name, "FAIR" or "FCFS") and since
// when (wall time it took that target). One per node, replaced by its agent
// whenever its target changes. An extension of the schema.
struct NodeRun {
  std::string node;
  std::int64_t job_id = 0;
  std::string by;
  double since = 0;
  ts::Tuple to_tuple() const;
  static std::optional<NodeRun> from_tuple(const ts::Tuple& t);
};

// ("heartbeat", component, id, time). Schedulers use integer ids (0 is the
// one agents obey); agents use their node name as id.
struct SchedulerHeartbeat {
  std::int64_t id = 0;
  double time = 0;
  ts::Tuple to_tuple() const;
  static std::optional<SchedulerHeartbeat> from_tuple(const ts::Tuple& t);
};
// ("serving", id, since): scheduler `id` serves the pool, since `since`
// (wall seconds). Written by the NPS beside its first heartbeat and taken,
// after the heartbeat, when it stops cleanly. It changes only then, so
// agents watch it (a scheduler that came or went is news at once) and look
// at the heartbeat itself, which changes every beat, at moments of their
// own (docs/system-space.md).
struct SchedulerServing {
  std::int64_t id = 0;
  double since = 0;
  ts::Tuple to_tuple() const;
  static std::optional<SchedulerServing> from_tuple(const ts::Tuple& t);
};
struct AgentHeartbeat {
  std::string node;
  double time = 0;
  ts::Tuple to_tuple() const;
  static std::optional<AgentHeartbeat> from_tuple(const ts::Tuple& t);
};

// ("nodewhy", node, state, reason, since): why the node's agent put the node
// in `state` (its state's name, as in the node record) at `since`: the
// sensor, its value and threshold ("1-min load 2.31 >= 0.70"), "owner
// block", the trace's word, "agent stopped". Written by the node's agent, by
// atomic replace, with each node record; never removed. A reader shows it
// only while `state` is the node record's (an older agent writes none). An
// extension of the schema: the node record's shape stays as it was.
struct NodeReason {
  std::string node;
  std::string state;
  std::string reason;
  double since = 0;
  ts::Tuple to_tuple() const;
  static std::optional<NodeReason> from_tuple(const ts::Tuple& t);
};

// ("agentbeat", node, seconds): how often the node's agent rewrites its
// heartbeat (its heartbeat_seconds), so that readers judge its silence by
// its own beat (node_liveness.h). Written by the node's agent, by atomic
// replace, with its node record; never removed. An extension of the schema.
struct AgentBeat {
  std::string node;
  double seconds = 0;
  ts::Tuple to_tuple() const;
  static std::optional<AgentBeat> from_tuple(const ts::Tuple& t);
};

// ("owner", node, action, start, end): the node's owner blocks ("block") the
// node for piranhas during [start, end), whatever the sensors say. "allow"
// rules are not stored: `piranha owner allow` removes block rules. An
// extension of the schema (the paper's owner process).
struct OwnerBlock {
  std::string node;
  double start = 0;
  double end = 0;
  bool covers(double t) const { return start <= t && t < end; }
  ts::Tuple to_tuple() const;
  static std::optional<OwnerBlock> from_tuple(const ts::Tuple& t);
  friend bool operator==(const OwnerBlock&, const OwnerBlock&) = default;
};

// ("complaint", node, time, text): a complaint about Piranha from the
// node's owner (`piranha owner complain`), kept for later perusal; the NPS's
// owner node shows it and `piranha nps report` lists it beside what Piranha
// did on that node then. An extension of the schema.
struct Complaint {
  std::string node;
  double time = 0;
  std::string text;
  ts::Tuple to_tuple() const;
  static std::optional<Complaint> from_tuple(const ts::Tuple& t);
  friend bool operator==(const Complaint&, const Complaint&) = default;
};

// ("eval", kind, time, json): one record of the NPS evaluator, appended and
// never rewritten, so the records outlive the NPS process that wrote them;
// the evaluator's retention removes old ones (the NPS's LivePool takes each by its exact value).
// `kind` names the record ("span", "decision", "job", "estimate",
// "switch"), `json` is one JSON object whose fields depend on it
// (docs/system-space.md lists them). An extension of the schema.
struct EvalRecord {
  std::string kind;
  double time = 0;
  std::string json;
  ts::Tuple to_tuple() const;
  static std::optional<EvalRecord> from_tuple(const ts::Tuple& t);
};

// ("subnet", time, json): the pool's state as its NPS last reported it to a
// campus (docs/nps.md, "Hierarchy"): `json` holds its live jobs with their
// predicted work and tasks left (and requirements), its nodes predicted
// available and its idle nodes (and their attributes). One, rewritten by the NPS by atomic replace. An
// extension of the schema.
struct SubnetReport {
  double time = 0;
  std::string json;
  ts::Tuple to_tuple() const;
  static std::optional<SubnetReport> from_tuple(const ts::Tuple& t);
};

// ("loan", campus, borrower, server, job, nodes, program, args, cwd, key,
// expires, requirement): campus `campus` lends `nodes` idle nodes of this
// pool to job `job` of pool `borrower`, whose server is `server`, until
// `expires` (wall time) unless rewritten. The job's program, arguments and
// working directory are its jobexec's on the borrower; `key` is a LoanKey's
// text (the secret key that reaches only that job on the borrower, sealed to
// each lent node's agent), empty for a borrower without --auth;
// `requirement` is the job's ("jobreq", ...) text (canonical; empty: none),
// which every node serving the loan satisfies.
// One per (campus, borrower, job), rewritten by the campus each period. An
// extension of the schema.
struct CampusLoan {
  std::string campus, borrower, server;
  std::int64_t job = 0;
  std::int64_t nodes = 0;
  std::string program;
  std::vector<std::string> args;
  std::string cwd;
  std::string key;
  double expires = 0;
  std::string requirement{};
  ts::Tuple to_tuple() const;
  static std::optional<CampusLoan> from_tuple(const ts::Tuple& t);
};

// ("lent", node, borrower, job, epoch): this pool's NPS has `node` serve job
// `job` of pool `borrower` (a loan's), or nothing when `job` is 0; `epoch`
// (its decision's wall time in ms) grows. One per node, superseded by the
// NPS. An extension of the schema.
struct Lent {
  std::string node, borrower;
  std::int64_t job = 0;
  std::int64_t epoch = 0;
  ts::Tuple to_tuple() const;
  static std::optional<Lent> from_tuple(const ts::Tuple& t);
};

// ("agentkey", node, public_key): the CURVE public key (Z85 text) of `node`'s
// agent, written by that agent as it starts, so that a campus can seal a
// loan's secret key to it (LoanKey). One per node, superseded by its agent.
// An extension of the schema.
struct AgentKey {
  std::string node, public_key;
  ts::Tuple to_tuple() const;
  static std::optional<AgentKey> from_tuple(const ts::Tuple& t);
};

// A campus loan's `key` on a borrower with --auth (docs/security.md, "Across
// pools"): the borrower server's public key, and per node of the lender the
// secret key of the loan's piranhas sealed to that node's agent
// (piranha/access/sealed_key.h). Its text is space-separated tokens: the
// server key, then a node's name and its sealed key per node. An empty text
// is a loan to a borrower without --auth (no key).
struct LoanKey {
  std::string server_key;
  std::map<std::string, std::string> sealed;  // node -> its agent's sealed key
  std::string to_text() const;
  // nullopt for a text not of that shape (an odd token count, an empty one).
  static std::optional<LoanKey> from_text(std::string_view text);
  friend bool operator==(const LoanKey&, const LoanKey&) = default;
};

// Templates that select every tuple of a shape (optionally for one node or
// job), for rd / rd_many / in.
ts::Template job_template();
ts::Template job_template(std::int64_t id);
ts::Template job_template(JobState state);
ts::Template launch_template();
ts::Template launch_template(std::int64_t id);
ts::Template jobstat_template();
ts::Template jobstat_template(std::int64_t id);
ts::Template jobwork_template();
ts::Template jobwork_template(std::int64_t id);
ts::Template jobtime_template();
ts::Template jobtime_template(std::int64_t id);
ts::Template jobwork_template(std::int64_t id, const std::string& node);
ts::Template jobexit_template();
ts::Template jobexit_template(std::int64_t id);
ts::Template jobreq_template();
ts::Template jobreq_template(std::int64_t id);
ts::Template jobheld_template();
ts::Template jobheld_template(std::int64_t id);
ts::Template jobheld_template(std::int64_t id, const std::string& node);
ts::Template jobowner_template(std::int64_t id);
ts::Template jobpatience_template(std::int64_t id);
ts::Template joblost_template();
ts::Template joblost_template(std::int64_t id);
ts::Template jobkey_template(std::int64_t id);
ts::Template jobkeys_template(const std::string& node);  // every job's, on node
ts::Template jobkey_template(std::int64_t id, const std::string& node);
// The ("jobkey", ...) record of this public key, whichever job and node.
ts::Template jobkey_template(const std::string& public_key);
ts::Template node_template();
ts::Template node_template(const std::string& node);
ts::Template nodeattr_template();
ts::Template nodeattr_template(const std::string& node);
ts::Template ap_template();
ts::Template ap_template(const std::string& node);
ts::Template assign_template(std::int64_t scheduler_id);  // every node's
ts::Template assign_template(std::int64_t scheduler_id, const std::string& node);
ts::Template scheduler_heartbeat_template(std::int64_t id);
ts::Template serving_template(std::int64_t id);
ts::Template agent_heartbeat_template();  // every agent's
ts::Template agent_heartbeat_template(const std::string& node);
ts::Template nodewhy_template();  // every node's
ts::Template nodewhy_template(const std::string& node);
ts::Template agentbeat_template();  // every agent's
ts::Template agentbeat_template(const std::string& node);
ts::Template owner_template();  // every node's blocks
ts::Template owner_template(const std::string& node);
ts::Template running_template();  // every node's
ts::Template running_template(const std::string& node);
ts::Template complaint_template();
ts::Template complaint_template(const std::string& node);
ts::Template eval_template();
ts::Template subnet_template();
ts::Template loan_template();  // every campus's, every borrower's
ts::Template loan_template(const std::string& campus, const std::string& borrower, std::int64_t job);
ts::Template lent_template();  // every node's
ts::Template lent_template(const std::string& node);
ts::Template agentkey_template();  // every node's
ts::Template agentkey_template(const std::string& node);

// ---- Operations on a live system space. Each throws ts::TupleSpaceError
// when the server cannot be reached.

// Allocates the next job id (1, 2, ...) through a ("jobseq", n) counter tuple,
// taken under a lease and advanced atomically.
std::int64_t next_job_id(ts::Client& c);

// Replaces the ("job", id, ...) tuple's state atomically (taken under a
// lease, rewritten by its completion). Returns false when no such job.
bool set_job_state(ts::Client& c, std::int64_t id, JobState state);

// Holds a queued or running job: `hold` (one per job and node) is recorded
// while the job's record is taken, then the record is written back held, so
// a reader that sees `held` finds the reason. Returns false, changing nothing, when
// the job is absent, already held, or finished.
bool hold_job(ts::Client& c, const JobHold& hold);

// Records that a running job's feeder is lost: `lost` is written while the
// job's record is taken, then the record is written back failed, so a
// reader that sees the job failed finds why; then the job's end time is
// recorded and its space removed (which ends its piranhas' waits). Returns
// false, changing nothing, when the job is absent or not running (its
// feeder reported, or another agent recorded the loss first).
bool lose_job(ts::Client& c, const JobLost& lost, const std::string& space);

// Lets a held job run again: its state becomes `state` (queued or running)
// and its ("jobheld", ...) record goes. Returns false, changing nothing,
// when the job is absent or not held.
bool release_job(ts::Client& c, std::int64_t id, JobState state);

// Every job's ("jobexit", ...) status, by job id.
std::map<std::int64_t, std::int64_t> exit_status_by_job(ts::Client& c);

// Every job's ("jobheld", ...) record, by job id.
std::map<std::int64_t, JobHold> holds_by_job(ts::Client& c);

// Every job's ("joblost", ...) record, by job id.
std::map<std::int64_t, JobLost> losses_by_job(ts::Client& c);

// Every job's ("jobreq", ...) requirement text, by job id.
std::map<std::int64_t, std::string> requirements_by_job(ts::Client& c);

// Job `id`'s feeder patience (its ("jobpatience", ...) record); nullopt when
// it has none (a feeder of an older runtime: kFeederPatience applies).
std::optional<double> find_patience(ts::Client& c, std::int64_t id);

// Removes every record of the finished jobs that ended (their jobtime's
// end_time, else their submit_time) before `before`: job, jobexec,
// jobreq, jobstat, jobwork, jobtime, jobexit, jobheld, jobpatience, joblost,
// jobkey and jobowner. Returns how many jobs went.
std::size_t prune_finished_jobs(ts::Client& c, double before);

// Removes `node`'s ("ap", ...) records that ended before `before`. Returns
// how many went.
std::size_t prune_availability(ts::Client& c, const std::string& node, double before);

// Merges `times` into the job's ("jobtime", ...) tuple (JobTimes::merged),
// creating it when absent: the old tuples are taken under a lease and the
// merged one written with the completion, in one step. Does not wait for a
// tuple another writer holds for a moment; the two then leave duplicates,
// which the next call folds together and readers merge (jobtimes_by_job).
void record_job_times(ts::Client& c, const JobTimes& times);

// The records of `ts` that decode as `Record` (Record::from_tuple), in
// order; stray tuples of another shape are skipped.
template <class Record>
std::vector<Record> decode_all(const std::vector<ts::Tuple>& ts) {
  std::vector<Record> out;
  for (const auto& t : ts)
    if (auto r = Record::from_tuple(t)) out.push_back(std::move(*r));
  return out;
}
// The most records a list_* below reads in its one request: large enough
// for any real pool (rd_many needs a bound).
inline constexpr std::size_t kListMax = 100'000;

// Every tuple of a shape now in the system space, decoded; stray tuples of
// another shape are skipped.
//
// list_jobs: every job's record, in id order, including one taken this
// moment to be rewritten (set_job_state, hold_job, cancel: a take and a
// write, in between which no listing has it). A job whose launch record
// ("jobexec", written with or before its record, removed before it) is
// there but whose record is not is waited for, up to kRewriteWait in all,
// with a blocking rd; one that does not come back (a registration that died
// between the two writes, before they were written together) is left out.
inline constexpr std::chrono::milliseconds kRewriteWait{2000};
std::vector<JobRecord> list_jobs(ts::Client& c);
// The queued and running jobs only, by id: the read does not grow with the
// finished jobs kept for retention. A job whose record is out for a rewrite
// this moment is missing from it.
std::vector<JobRecord> list_live_jobs(ts::Client& c);
// The same, and of `known` (the jobs a caller's last listing found live)
// each one missing now is looked for again with a blocking rd, up to
// kRewriteWait in all: listed as its record says once it is back if still
// live; left out when its record is back and no longer live, or is not back
// within the wait. For a reader that acts on a job's absence (the campus
// withdraws its loans) and may wait; an agent's uplink, which may not, has
// its own grace (absent_jobs.h).
std::vector<JobRecord> list_live_jobs(ts::Client& c, const std::set<std::int64_t>& known);
std::vector<JobStat> list_jobstats(ts::Client& c);
std::vector<NodeRecord> list_nodes(ts::Client& c);
// Every node's ("nodeattr", ...) record (one request).
std::vector<NodeAttrs> list_node_attrs(ts::Client& c);
// Writes `attrs` as its node's record by atomic replace, unless the record
// there already says the same: true when it wrote.
bool publish_node_attrs(ts::Client& c, const NodeAttrs& attrs);
// Every agent's heartbeat and beat, every node's ("running", ...) record and
// reason: one request each, whatever the pool's size.
std::vector<AgentHeartbeat> list_agent_heartbeats(ts::Client& c);
std::vector<AgentBeat> list_agent_beats(ts::Client& c);
std::vector<NodeRun> list_running(ts::Client& c);
std::vector<NodeReason> list_node_reasons(ts::Client& c);
// A job's (every job's) work records, one per job and node: when a node's
// record is found twice (its writer, a KeyedSuperseder, writes the new one
// before it takes the old), the one with more tasks (counts only grow).
std::vector<JobWork> list_jobwork(ts::Client& c, std::int64_t id);
std::vector<JobWork> list_jobwork(ts::Client& c);  // every job's
// In time order (then as written).
std::vector<Complaint> list_complaints(ts::Client& c);
// The complaints among `ts`, decoded, in time order (then as given).
std::vector<Complaint> complaints_in_time_order(const std::vector<ts::Tuple>& ts);
std::vector<EvalRecord> list_eval_records(ts::Client& c);
// Every job's ("jobtime", ...) tuples, duplicates merged, by job id.
std::map<std::int64_t, JobTimes> jobtimes_by_job(ts::Client& c);
// One job's, merged; nullopt when it has none.
std::optional<JobTimes> find_jobtimes(ts::Client& c, std::int64_t id);
std::optional<JobLaunch> find_launch(ts::Client& c, std::int64_t id);
// Jobs `ids`' launch records and requirement texts, all asked together: one
// wait on a busy server, not two per job (docs/scale.md, limit 18). The i-th
// entry is ids[i]'s: `launch` nullopt when absent or malformed (registered
// without a program), `requirement` nullopt when it has none (any node may
// run it).
struct LaunchAndRequirement {
  std::optional<JobLaunch> launch;
  std::optional<std::string> requirement;
};
std::vector<LaunchAndRequirement> find_launches(ts::Client& c, const std::vector<std::int64_t>& ids);

// Replaces the single tuple matching `tmpl` (or adds it when absent) with
// `t`, atomically when it was present.
void replace(ts::Client& c, const ts::Template& tmpl, const ts::Tuple& t);

// Like replace(), but readers never find *no* tuple: `t` is written first and
// the tuples that matched `tmpl` before are taken after (each by its exact
// value), so for a moment a reader may see the old and the new one. For the
// tuples whose absence means something to their readers: a scheduler's
// heartbeat (absent: the scheduler is gone) and its assignments (agents take
// the highest epoch). replace()'s take-then-write leaves a gap in which an
// agent once saw no heartbeat and fell back to its native policy.
void supersede(ts::Client& c, const ts::Template& tmpl, const ts::Tuple& t);

// supersede() without a round trip, for a writer that rewrites one tuple
// often (a heartbeat, a node's assignment): it remembers the tuples it
// knows match its template, so that a write is the new tuple posted and
// each known old one discarded, posted (ts::Client::discard_posted): two
// requests the client does not wait for, where supersede() waits for three.
// Readers see what supersede() shows them (the new tuple, for a moment the
// old one too). It calls supersede() itself, reading, when it knows
// nothing: at its first write, after forget(), and when the client's
// session was lost since its last write (ts::Client::reconnects()), since a
// posted request lost with a session may or may not have happened. know()
// primes it from a read made elsewhere (the NPS reads a scheduler's every
// assignment at once). Errors: those of the client's calls; a posted
// request's error is thrown by a later call on the client: call forget()
// then, for what it knows may be wrong. Not thread-safe: one per writer,
// used with one client.
class Superseder {
 public:
  explicit Superseder(ts::Template tmpl) : tmpl_(std::move(tmpl)) {}
  void write(ts::Client& c, const ts::Tuple& t);
  // `present`: every tuple matching the template, read on `c` just now.
  void know(const ts::Client& c, std::vector<ts::Tuple> present);
  void forget() { known_.reset(); }
  const ts::Template& tmpl() const { return tmpl_; }

 private:
  ts::Template tmpl_;
  std::optional<std::vector<ts::Tuple>> known_;
  std::uint64_t sessions_ = 0;  // the client's reconnects() when known_ was last true
};

// supersede() for a family of tuples with one tuple per key (a job's
// ("jobwork", id, node, ...) records, one per node), rewritten in batches
// by their only writer (the job's reporter). It remembers the tuples it
// knows the family holds, so a batch of k rewrites is one out_many of the
// new tuples (waited for) and a posted discard of each old one
// (ts::Client::discard_posted): k + 1 requests and one wait, where k
// replace()s cost 2k requests and 2k waits (docs/scale.md, limit 19).
// Readers may see a key's old and new tuple for a moment, never neither;
// they keep the newer one (list_jobwork: the one with more tasks). It reads
// the family whole (one rd_many) when it knows nothing: at its first write,
// after forget(), and when the client's session was lost since its last
// write, for a posted discard lost with a session may or may not have
// happened; the tuples found then beside the new one are discarded too.
// `key` names a tuple's key; it is called on the tuples of the family only.
// Errors: those of the client's calls (it then knows nothing, and reads at
// the next write); a posted discard's error is thrown by a later call on
// the client: call forget() then. Not thread-safe: one per writer, used
// with one client.
class KeyedSuperseder {
 public:
  KeyedSuperseder(ts::Template family, std::function<std::string(const ts::Tuple&)> key)
      : family_(std::move(family)), key_(std::move(key)) {}
  // Writes `batch`'s tuples (at most one per key), each in place of the
  // tuples of its key; an empty batch sends nothing.
  void write(ts::Client& c, const std::vector<ts::Tuple>& batch);
  void forget() { known_.reset(); }

 private:
  ts::Template family_;
  std::function<std::string(const ts::Tuple&)> key_;
  std::optional<std::map<std::string, std::vector<ts::Tuple>>> known_;
  std::uint64_t sessions_ = 0;  // the client's reconnects() when known_ was last true
};

}  // namespace piranha::sys
