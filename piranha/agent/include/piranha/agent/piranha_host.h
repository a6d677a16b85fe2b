// PiranhaHost: the piranha processes an agent runs on its node, all for one
// job at a time, and their retreat.
//
// Piranhas run at the lowest CPU priority (nice 19, SCHED_IDLE), each in its
// own process group so that a retreat reaches whatever they started. A
// retreat sends SIGUSR1 (the runtime turns it into should_retreat()); a
// piranha still running `grace` later is killed with SIGKILL, its tasks
// returning to the space as its leases end. Suspension (SIGSTOP / SIGCONT)
// is the operator's option for short absences.
//
// Each piranha is watched through a pidfd, so the agent's poll wakes the
// moment one exits and retreat latencies are measured to the exit itself.
// Its stderr comes through a pipe the host drains (whenever reap() runs;
// fds() includes the pipes, so poll wakes for them): the text is passed on
// to the output file (or the agent's stderr) as it comes, and its last
// kStderrTail bytes are kept for PiranhaExit::stderr_tail.
//
// What a job's program may do is the node's LaunchPolicy (launch_policy.h):
// a program it does not allow is not started (start() throws, and the agent
// holds the job with the reason); piranhas run as its user, without the
// agent's supplementary groups, within its resource limits. They never get
// the agent's key: PIRANHA_KEY is left out of their environment, and with
// job keys on (a server with --auth) it names a key pair made for their job
// on this node, in a file only the piranhas' user can read, in a directory
// of the host's own (0711, its files' names known to their piranhas only),
// made in the temporary directory with the first key, named after the
// agent's process (kKeyDirPrefix, its pid and start time) and removed with
// the host. An agent killed outright (SIGKILL) cannot remove it: the next
// host made on the node removes such directories of agents no longer
// running (remove_leftover_key_dirs).
// Its public key goes to `announce` before the job's first piranha here
// starts, and to `withdraw` once its last one here has ended, when the file
// is removed (docs/security.md, "Piranhas").
// Not thread-safe; the agent's loop owns it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "piranha/agent/launch_policy.h"
#include "piranha/base/clock.h"
#include "piranha/runtime/child.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/runtime/task_tally.h"
#include "piranha/tuplespace/curve.h"

namespace piranha {

// Everything a piranha process needs besides its job.
struct PiranhaEnvironment {
  std::string server;            // PIRANHA_SERVER
  std::string node;              // PIRANHA_NODE
  std::string output_file;       // empty: the agent's own stdout/stderr
  int heartbeat_timeout_ms = 0;  // 0: the client default
  // nice 19 under SCHED_IDLE (AgentSettings::priority, Idle); false: as the agent runs.
  bool lowest_priority = true;
  LaunchPolicy launch;  // allowed programs, the piranhas' user, their limits
  // Each job's piranhas get a key pair of their own (PIRANHA_KEY); false:
  // no PIRANHA_KEY at all (a server without --auth needs none).
  bool job_keys = false;
  // Piranhas of another pool's job (a campus loan, lending.h): $PIRANHA_POOL, the agent's own
  // pool's name, is left out of their environment as well, and so is PIRANHA_SERVER_KEY (the
  // agent's server's) unless server_key names the borrower's.
  bool foreign = false;
  // A foreign job's credentials on a borrower with --auth (lending.h, LoanCredentials): this key
  // pair, in a key file made as a job key's is (PIRANHA_KEY), instead of a new one per job, and
  // the borrower server's public key (PIRANHA_SERVER_KEY). Nothing is announced or withdrawn for
  // it: the campus wrote its record on the borrower.
  std::optional<ts::CurveKeyPair> given_key;
  std::string server_key;
  // Called with a job's key as it is made, before the job's piranhas start,
  // and as it goes, after they have all ended here; on the host's thread.
  std::function<void(const sys::JobKey&)> announce, withdraw;
};

// One piranha that ended, and how.
struct PiranhaExit {
  std::int64_t job_id = 0;
  pid_t pid = 0;
  ExitStatus status;
  bool retreated = false;  // it had been told to retreat
  bool killed = false;     // it outlived its grace period and was killed
  // From the availability change that caused the retreat to the exit.
  std::optional<std::chrono::duration<double>> retreat_latency;
  // The last lines of what it wrote on stderr (at most kStderrTail bytes,
  // starting at a line).
  std::string stderr_tail;
};

inline constexpr std::size_t kStderrTail = 2048;

// The job keys' directories are named kKeyDirPrefix, their agent's
// process_stamp, "-" and six characters of mkdtemp's.
inline constexpr const char* kKeyDirPrefix = "piranha-keys-";

// "PID-START" for a running process: its pid and its start time in clock
// ticks since boot (/proc/PID/stat), which a later process given the same
// pid does not share. Empty when no such process runs (or /proc is absent).
std::string process_stamp(pid_t pid);

// Removes the job keys' directories in `tmp` whose agent no longer runs
// (no process has their stamp), with their key files: only directories
// named as above, owned by this process's user, not symbolic links; a
// directory that holds anything but key files stays. Returns how many it
// removed. Nothing when /proc cannot be read.
std::size_t remove_leftover_key_dirs(const std::string& tmp);

class PiranhaHost {
 public:
  // Throws std::runtime_error when env.output_file cannot be opened, and
  // when env.launch.user is not a user here or this process is not root to
  // take it on. (A job keys' directory that cannot be made makes start() throw.)
  explicit PiranhaHost(PiranhaEnvironment env);
  ~PiranhaHost();  // kills whatever still runs, removes the job keys' files

  // Job keys' directories of agents no longer running that the constructor
  // removed (remove_leftover_key_dirs in the temporary directory).
  std::size_t leftovers_removed() const { return leftovers_removed_; }
  PiranhaHost(const PiranhaHost&) = delete;
  PiranhaHost& operator=(const PiranhaHost&) = delete;

  // Starts `count` piranhas of `job`. Throws std::runtime_error when the
  // program cannot be started, saying why: not found, not among the allowed
  // programs, without an allowed checksum, or its exec failed (the piranhas
  // started before stay).
  void start(const sys::JobLaunch& job, int count);

  // Tells every running piranha to retreat, because of an availability (or
  // assignment) change at `change`, for `cause` (which the piranha writes in
  // its retreat record: task_tally.h); kills those still running at now + grace.
  // Suspended piranhas are continued first, and every piranha leaves
  // SCHED_IDLE and nice 19 for nice 0 with a 100 us slice (best effort: it
  // needs the privilege; the slice needs Linux 6.12's EEVDF), so that it gets
  // the processor to retreat even against a busy owner: a short slice is an
  // early deadline, so each wake-up of the retreat runs before the owner's
  // busy threads finish their slices.
  void retreat(Clock::time_point change, std::chrono::milliseconds grace, Clock::time_point now,
               RetreatCause cause = RetreatCause::Unknown);
  void suspend(Clock::time_point now);
  void resume();

  // Reaps piranhas that ended and kills those past their grace period.
  std::vector<PiranhaExit> reap(Clock::time_point now);

  // The job the piranhas run (or were last told to run); nullopt when none run.
  std::optional<std::int64_t> job() const;
  std::size_t running() const { return procs_.size(); }
  bool retreating() const;
  bool suspended() const { return suspended_since_.has_value(); }
  std::optional<Clock::time_point> suspended_since() const { return suspended_since_; }

  // Process groups of the running piranhas (for subtracting their load).
  std::vector<pid_t> groups() const;
  // pidfds that become readable when a piranha exits, and the stderr pipes.
  std::vector<int> fds() const;
  // Whether some piranha has no pidfd (an old kernel): its exit is noticed
  // only by calling reap(), so the caller polls often.
  bool exits_need_polling() const;
  // The next kill deadline, if any piranha is retreating.
  std::optional<Clock::time_point> next_deadline() const;

 private:
  struct Proc {
    std::int64_t job_id = 0;
    std::unique_ptr<ChildProcess> child;
    int pidfd = -1;
    int err_fd = -1;  // read end of its stderr pipe; -1 once at its end
    std::string err_tail;
    std::optional<Clock::time_point> change;  // retreat requested for this change
    std::optional<Clock::time_point> kill_at;
    bool killed = false;
  };
  // A job's key pair on this node, while its piranhas run here.
  struct JobKeyFile {
    sys::JobKey key;
    std::string file;  // the secret key's file
  };
  // Reads what `p` wrote on stderr so far, passing it on to output_fd_.
  void drain(Proc& p);
  // Job `id`'s key file, made (and announced) if it has none.
  const JobKeyFile& key_of(std::int64_t id);
  // Withdraws and removes the keys of jobs with no piranha left here.
  void drop_unused_keys();
  PiranhaEnvironment env_;
  std::optional<PiranhaIdentity> identity_;
  std::string keys_dir_;  // job keys: the directory of their files, once the first is made
  std::size_t leftovers_removed_ = 0;
  std::map<std::int64_t, JobKeyFile> keys_;
  std::uint64_t keys_made_ = 0;
  int output_fd_ = 2;  // where the piranhas' stderr is passed on
  std::vector<Proc> procs_;
  std::optional<Clock::time_point> suspended_since_;
};

}  // namespace piranha
