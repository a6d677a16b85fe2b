// Child processes, ports, memory figures and a watchdog for the benchmark
// (internal).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace piranha::bench {

// A program started with fork+exec, its stdout and stderr appended to a log
// file. It receives SIGTERM if this process dies first. The destructor stops
// it (SIGTERM, then SIGKILL after a grace period).
class ChildProcess {
 public:
  ChildProcess(std::vector<std::string> argv, std::string log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False once the process has exited.
  bool running();
  // Waits for the process to exit by itself; returns its exit status (128+N
  // when killed by signal N).
  int wait();
  // SIGTERM, then SIGKILL when it has not exited within `grace`.
  int stop(std::chrono::milliseconds grace = std::chrono::milliseconds(3000));
  // The last lines of its log, for error messages.
  std::string log_tail() const;
  // CPU time (user + system, all threads) it used; complete once it has
  // exited, else what /proc says so far.
  double cpu_seconds() const;

 private:
  void reaped(int raw, const struct rusage& usage);
  pid_t pid_ = -1;
  std::optional<int> status_;
  double cpu_seconds_ = 0;
  std::string log_path_;
};

// A TCP port on 127.0.0.1 that was free a moment ago.
int free_tcp_port();

// VmRSS of a process in bytes, from /proc/<pid>/status.
std::uint64_t resident_bytes(pid_t pid);

// CPU time (user + system) of a live process's threads, from
// /proc/<pid>/task/*/schedstat (nanoseconds), else /proc/<pid>/stat (clock
// ticks, usually 10 ms).
double process_cpu_seconds(pid_t pid);

// CPU time of this process so far (all threads).
double self_cpu_seconds();

// The 1-minute load average, from /proc/loadavg: how busy the machine was.
double load_average();

// The path of an executable: `name` itself when it holds a '/', else the
// first match in PATH. Empty when none is executable.
std::string find_executable(const std::string& name);

// Kills every live ChildProcess and exits with status 3 when a phase of the
// benchmark has not finished within `limit`, so a lost message cannot hang a
// run (or a CI job) for ever.
class Watchdog {
 public:
  Watchdog(std::string phase, std::chrono::seconds limit);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// "Intel(R) Xeon(R) ...", "Linux 6.1.0 x86_64", and friends.
struct Machine {
  std::string cpu;
  unsigned cpus = 0;
  std::string kernel;
  std::uint64_t memory_bytes = 0;
};
Machine describe_machine();

}  // namespace piranha::bench
