#include "piranha/runtime/short_slice.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace piranha {

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
