// OwnLoad: the part of the load average that the agent's own piranhas cause.
//
// A busy piranha keeps one CPU busy, which drives the kernel's 1-minute load
// average towards 1.0; judged naively, the node would then look unavailable,
// the piranha would retreat, the load would fall, and the node would oscillate
// between available and unavailable. The agent therefore estimates its
// piranhas' contribution with the kernel's own exponential damping and judges
// the load average minus that contribution.
//
// The estimate: at each sample, with dt the time since the previous sample and
// u the piranhas' CPU fraction over that interval (CPU seconds consumed / dt),
// each average decays as  own = own * e + u * (1 - e),  e = exp(-dt / T),
// T = 60, 300 and 900 seconds, as the kernel does every 5 seconds for the
// run-queue length.
#pragma once

#include <sys/types.h>

#include <array>
#include <optional>
#include <string>

#include "piranha/agent/availability.h"

namespace piranha {

// Pure and deterministic: times and CPU totals are passed in. Not thread-safe.
class OwnLoad {
 public:
  // Records that, at time `now`, the piranhas have consumed `cpu_seconds` of
  // CPU in total. The first sample only sets the baseline. A sample that does
  // not move time forward is ignored. A total that went down (a piranha exited
  // and its CPU time left the sum) counts as no CPU used and becomes the new
  // baseline.
  void sample(Clock::time_point now, double cpu_seconds);

  // The piranhas' current contribution to the 1-, 5- and 15-minute averages.
  std::array<double, 3> load() const { return own_; }

  // max(0, loadavg[i] - load()[i]) for each average.
  std::array<double, 3> subtract(std::array<double, 3> loadavg) const;

 private:
  std::optional<Clock::time_point> last_time_;
  double last_cpu_ = 0;
  std::array<double, 3> own_ = {0, 0, 0};
};

// CPU seconds (user + system) consumed so far by process `pid`, from
// <proc>/<pid>/stat. 0 when the process does not exist or vanishes while being
// read; never throws.
double process_cpu_seconds(pid_t pid, const std::string& proc = "/proc");

// CPU seconds consumed so far by every process in process group `pgid`
// (piranhas run in their own group, so their children count), from
// <proc>/*/stat. Each member counts its own user + system time plus that of
// its children it has already reaped, so a short-lived child's CPU is not lost
// when it exits. Processes that vanish mid-scan count 0; never throws.
double group_cpu_seconds(pid_t pgid, const std::string& proc = "/proc");

}  // namespace piranha
