// For tests: a process's nice value and scheduling policy, read from
// /proc/PID/stat (fields 19 and 41), as another process sees them; a
// thread's time slice, as sched_getattr(2) tells it.
#pragma once

#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "piranha/runtime/short_slice.h"

namespace piranha::testing {

inline std::pair<int, int> nice_and_policy(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));  // after "pid (comm) "
  std::vector<std::string> f((std::istream_iterator<std::string>(rest)),
                             std::istream_iterator<std::string>());
  return {std::stoi(f.at(16)), std::stoi(f.at(38))};
}

// A SCHED_OTHER thread's time slice in ns (sched_runtime; 0 if unreadable).
inline std::uint64_t slice_of(pid_t tid) {
  SchedAttr a{};
  if (syscall(SYS_sched_getattr, tid, &a, sizeof a, 0) != 0) return 0;
  return a.sched_runtime;
}

// Whether this kernel keeps a SCHED_OTHER thread's own slice (EEVDF, 6.12
// and later): set on a short-lived thread of our own, at its own nice (so
// that a niced test run needs no privilege), then read back.
inline bool kernel_keeps_slices() {
  bool kept = false;
  std::thread([&] {
    SchedAttr a{};
    a.size = sizeof a;
    a.sched_nice = getpriority(PRIO_PROCESS, 0);
    a.sched_runtime = 200'000;
    kept = syscall(SYS_sched_setattr, 0, &a, 0) == 0 && slice_of(0) == 200'000;
  }).join();
  return kept;
}

}  // namespace piranha::testing
