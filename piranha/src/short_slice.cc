#include "short_slice.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace piranha {
namespace {

// The kernel's struct sched_attr (glibc 2.36 has no sched_setattr).
struct SchedAttr {
  std::uint32_t size, sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime, sched_deadline, sched_period;
};

}  // namespace

bool set_slice(pid_t tid, std::chrono::nanoseconds slice, int nice) {
  SchedAttr attr{};
  attr.size = sizeof attr;
  attr.sched_policy = SCHED_OTHER;
  attr.sched_nice = nice;
  attr.sched_runtime = static_cast<std::uint64_t>(slice.count());
  return syscall(SYS_sched_setattr, tid, &attr, 0) == 0;
}

bool use_slice(std::chrono::nanoseconds slice) {
  if (sched_getscheduler(0) != SCHED_OTHER) return false;
  errno = 0;
  int nice = getpriority(PRIO_PROCESS, 0);  // on Linux, the calling thread's
  if (nice == -1 && errno != 0) return false;
  return set_slice(0, slice, nice);
}

}  // namespace piranha
