// The job runtime's internal state, shared by job_runtime.cc, feeder.cc and
// worker.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "piranha/job.h"

namespace piranha::detail {

using SteadyClock = std::chrono::steady_clock;

struct TaskState {
  ts::Tuple tuple;
  ts::Tuple progress;
  ts::LeaseId lease = 0;
  double started = 0;               // wall clock, for the done record
  SteadyClock::time_point taken;    // for the task's duration
  SteadyClock::time_point renewed;  // when the lease was last granted or renewed
  bool held = true;
};

struct WorkerState {
  ts::Client* client = nullptr;
  std::unique_ptr<ts::Space> space;
  std::vector<std::string> args;
  std::int64_t job_id = 0;
  std::string node;
  std::chrono::milliseconds lease{0};
  std::atomic<bool>* retreat = nullptr;  // set by the signal watcher
  std::vector<std::shared_ptr<TaskState>> held;
  bool job_ended = false;
  SteadyClock::time_point last_job_check{};
};

}  // namespace piranha::detail

namespace piranha {

struct Feeder::Impl {
  ts::Client* client = nullptr;
  std::unique_ptr<ts::Space> space;
  std::vector<std::string> args;
  std::int64_t job_id = 0;
  std::atomic<std::int64_t> tasks_put{0};
};

}  // namespace piranha
