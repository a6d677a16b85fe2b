#include <algorithm>

#include "piranha/agent/availability_source.h"

namespace piranha {
namespace {

// Looking at every process's CPU time costs a /proc scan; evaluations
// triggered by each key press must not repeat it many times a second.
constexpr auto kMinCpuSampleInterval = std::chrono::milliseconds(500);

void keep_smallest(std::optional<double>& idle, std::optional<double> candidate) {
  if (candidate && (!idle || *candidate < *idle)) idle = candidate;
}

Clock::duration seconds(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

}  // namespace

LiveAvailability::LiveAvailability(LiveOptions options, Clock::time_point now)
    : options_(std::move(options)),
      input_(options_.input_devices, now),
      x_(options_.x_display),
      next_rescan_(now + seconds(options_.rescan_seconds)) {}

void LiveAvailability::set_piranha_groups(std::vector<pid_t> pgids) {
  std::map<pid_t, double> kept;
  // A new group starts from 0: all the CPU it has used so far is new.
  for (pid_t g : pgids) kept[g] = group_cpu_.count(g) ? group_cpu_[g] : 0.0;
  group_cpu_ = std::move(kept);
}

void LiveAvailability::sample_own_cpu(Clock::time_point now) {
  if (last_cpu_sample_ && now - *last_cpu_sample_ < kMinCpuSampleInterval) return;
  last_cpu_sample_ = now;
  // Summed per group as increments, so that a group whose processes exit
  // (and whose CPU time thereby leaves /proc) does not look like negative
  // work by the others.
  for (auto& [pgid, last] : group_cpu_) {
    double cpu = group_cpu_seconds(pgid, options_.proc_dir);
    own_cpu_total_ += std::max(0.0, cpu - last);
    last = cpu;
  }
  own_.sample(now, own_cpu_total_);
}

Verdict LiveAvailability::evaluate(Clock::time_point now) {
  if (now >= next_rescan_) {
    input_.rescan(now);
    next_rescan_ = now + seconds(options_.rescan_seconds);
  }
  sample_own_cpu(now);
  reading_ = Reading{};
  if (auto load = read_loadavg(options_.loadavg_path)) {
    reading_.load = own_.subtract(*load);
    reading_.own_piranhas_excluded = true;
  }
  keep_smallest(reading_.input_idle_seconds, input_.idle_seconds(now));
  if (options_.terminals)
    keep_smallest(reading_.input_idle_seconds,
                  terminal_idle_seconds(options_.wall_clock(), options_.terminal_dir));
  if (options_.x11) keep_smallest(reading_.input_idle_seconds, x_.idle_seconds());
  return judge(reading_, options_.thresholds);
}

Clock::time_point LiveAvailability::next_evaluation(Clock::time_point now) {
  return now + seconds(options_.poll_seconds);
}

}  // namespace piranha
