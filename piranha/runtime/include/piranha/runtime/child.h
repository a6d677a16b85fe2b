// ChildProcess: a program this process starts and supervises (a piranha run
// by an agent, a feeder run by `piranha submit`, local piranhas).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace piranha {

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is the program: a path, or a name looked up in PATH
  // Added to (or replacing in) this process's environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Left out of the environment the child inherits (before `env` is added).
  std::vector<std::string> unset_env;
  std::string cwd;                 // empty: this process's
  bool own_process_group = false;  // the child leads a new process group
  bool lowest_priority = false;    // nice 19 and SCHED_IDLE, as piranhas run
  // The child is killed (SIGKILL) when this process dies, so that a
  // supervisor killed outright leaves nothing running unsupervised.
  bool die_with_parent = false;
  // Where stdout/stderr go: empty inherits this process's; else a file
  // opened for appending.
  std::string output_file;
  // When >= 0, the child's stderr goes to this descriptor instead (after
  // output_file took stdout). The caller keeps and closes it.
  int stderr_fd = -1;
  // The identity the child runs under: it drops every supplementary group,
  // then takes `gid` and `uid`, before it changes to `cwd` and execs, and a
  // failure of any of these is the start's error. Needs root (CAP_SETUID
  // and CAP_SETGID). nullopt: this process's identity and groups.
  struct Identity {
    uid_t uid = 0;
    gid_t gid = 0;
  };
  std::optional<Identity> identity;
  // Resource limits set in the child before exec (setrlimit, soft and hard
  // alike, so the program cannot raise them): {RLIMIT_..., value}. A
  // failure is the start's error.
  std::vector<std::pair<int, unsigned long long>> limits;
};

// How a child ended: exit code, or the signal that killed it.
struct ExitStatus {
  int code = 0;  // valid when signal == 0
  int signal = 0;
  bool ok() const { return signal == 0 && code == 0; }
  // As a shell reports it: the code, or 128 + signal.
  int shell_code() const { return signal ? 128 + signal : code; }
  // "exit status 3", "killed by signal 9 (SIGKILL)".
  std::string describe() const;
};

class ChildProcess {
 public:
  // Starts the child. Throws std::runtime_error naming the program when it
  // cannot be found or executed (the error is detected before this returns).
  explicit ChildProcess(const SpawnOptions& options);
  // Kills (SIGKILL, its group if it leads one) and reaps a child still running.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Sends `sig` to the child (to its whole group if it leads one). Does
  // nothing once it has been reaped.
  void signal(int sig);

  // Reaps the child if it has ended, without waiting.
  std::optional<ExitStatus> poll();
  // Waits up to `timeout` for the child to end (negative: for ever).
  std::optional<ExitStatus> wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(-1));

  bool running() { return !poll().has_value(); }
  std::optional<ExitStatus> status() const { return status_; }

 private:
  pid_t pid_ = -1;
  bool group_ = false;
  std::optional<ExitStatus> status_;
};

// The absolute path of `program` (looked up in PATH when it has no '/'), or
// nullopt when there is no such executable.
std::optional<std::string> find_program(const std::string& program);

}  // namespace piranha
