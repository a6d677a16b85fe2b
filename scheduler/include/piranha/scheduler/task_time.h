// Task-time prediction as the live system has it (the paper, §5): the running
// mean of a job's completed tasks.
//
// Before a job's first task completes there is nothing to average, and the
// scheduler must assume something: the cold-start value. The paper's
// scheduler saw 0 for the first 30 s of every job, which made every new job
// TSK's top job for a while and turned TSK into a kind of round robin. The
// default here is kDefaultColdStart = 0 for the same reason it arose there
// (an unmeasured job is tried at once and measured within one task), but it
// is a parameter: the simulator's --cold-start sets it, and a large value
// makes new jobs wait behind every measured one instead.
#pragma once

#include <cstdint>

namespace piranha::sched {

class TaskTimeEstimator {
 public:
  static constexpr double kDefaultColdStart = 0.0;

  explicit TaskTimeEstimator(double cold_start = kDefaultColdStart) : cold_start_(cold_start) {}

  // Records one completed task of `duration` (steps or seconds; the caller's unit).
  void observe(double duration) {
    ++count_;
    mean_ += (duration - mean_) / static_cast<double>(count_);
  }

  // The running mean of the completed tasks, or the cold-start value before the first.
  double estimate() const { return count_ == 0 ? cold_start_ : mean_; }

  std::int64_t completed() const { return count_; }

 private:
  double cold_start_;
  std::int64_t count_ = 0;
  double mean_ = 0;
};

}  // namespace piranha::sched
