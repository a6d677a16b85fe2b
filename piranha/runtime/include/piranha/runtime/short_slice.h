// Short time slices for the threads that must act the moment an owner
// comes back: the agent's own, and a retreating piranha's.
//
// Under Linux's EEVDF scheduler (6.6 and later) a thread that wakes runs
// ahead of the running one only if its virtual deadline is earlier, and the
// deadline lies one slice after it becomes eligible. A busy owner's threads
// and an agent at the same nice have the same default slice, so each of the
// agent's wake-ups (the availability change, a piranha's exit) could wait
// for the owner's slice to end, and for the next one's. A SCHED_OTHER
// thread may ask for its own slice (sched_attr's sched_runtime, kept since
// Linux 6.12; older kernels accept and ignore it, and before 6.6 CFS
// preempts on wake-up anyway): with a short one, it runs as soon as it
// wakes. Not a higher priority: the same share of the CPU, in shorter turns.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>

namespace piranha {

// The kernel's struct sched_attr, for sched_setattr(2) and sched_getattr(2)
// (glibc 2.36 wraps neither).
struct SchedAttr {
  std::uint32_t size, sched_policy;
  std::uint64_t sched_flags;
  std::int32_t sched_nice;
  std::uint32_t sched_priority;
  std::uint64_t sched_runtime, sched_deadline, sched_period;
};

// Thread `tid` (0: the calling thread) to SCHED_OTHER at `nice`, asking for
// time slices of `slice` (the kernel clamps it to 0.1–100 ms; 0: the
// kernel's default). Returns false when the kernel refused: no
// sched_setattr, or `nice` below the thread's own without the privilege to
// lower it. Thread-safe; raw system calls only, so a child may call it
// between fork and exec.
bool set_slice(pid_t tid, std::chrono::nanoseconds slice, int nice);

// set_slice() for the calling thread at its own nice, if it runs under
// SCHED_OTHER (a thread an operator put under another policy is left as it
// is). Threads it starts afterwards inherit the slice, and so would its
// child processes but for use_default_slice(). Returns whether the slice
// was set. Thread-safe; raw system calls only (sched_getscheduler,
// getpriority, sched_setattr), so a child may call it between fork and exec.
bool use_slice(std::chrono::nanoseconds slice);

// use_slice() with the kernel's default slice: what a child process calls
// between fork and exec, so that a program the agent starts does not run
// with the agent's short slice (ChildProcess does).
inline bool use_default_slice() {
  return use_slice(std::chrono::nanoseconds(0));
}

}  // namespace piranha
