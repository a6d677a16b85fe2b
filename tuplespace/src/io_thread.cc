// keep_io_thread_near() (server.h).
#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "piranha/tuplespace/server.h"

namespace piranha::ts {
namespace {

// libzmq names its I/O threads "ZMQbg/IO/0", "ZMQbg/IO/1", ...; the default
// context has one. -1 when there is none, or more than one (another context:
// a process that also runs trellis links), since which is ours is unknown.
pid_t find_io_thread() {
  pid_t found = -1;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream comm(t.path() / "comm");
    std::string name;
    std::getline(comm, name);
    if (name != "ZMQbg/IO/0") continue;
    if (found >= 0) return -1;
    found = static_cast<pid_t>(std::atol(t.path().filename().c_str()));
  }
  return found;
}

}  // namespace

void keep_io_thread_near() {
  // The CPU this thread last moved the I/O thread to.
  thread_local int moved_to = -1;
  // Found once; looked for again on the first calls, since the first may
  // come before libzmq's thread has named itself (and a walk of
  // /proc/self/task is too dear for every call of a process that has none,
  // or two).
  static std::atomic<pid_t> io_thread{-1};
  static std::atomic<int> lookups{0};
  constexpr int kLookups = 20;
  int cpu = sched_getcpu();
  if (cpu < 0 || cpu == moved_to) return;
  pid_t io = io_thread.load(std::memory_order_relaxed);
  if (io < 0) {
    if (lookups.fetch_add(1, std::memory_order_relaxed) >= kLookups) return;
    io = find_io_thread();
    if (io < 0) return;
    io_thread.store(io, std::memory_order_relaxed);
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  // Refused for a CPU outside the thread's allowed set (cgroups, taskset):
  // the I/O thread then stays where it may.
  sched_setaffinity(io, sizeof set, &set);
  moved_to = cpu;
}

}  // namespace piranha::ts
