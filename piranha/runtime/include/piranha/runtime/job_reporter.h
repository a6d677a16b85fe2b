// JobReporter: the feeder-side thread that keeps a job's statistics current.
// (Not the NPS's monitor, which is a scheduler component: this one reports on
// one job, from inside it.)
//
// Every quarter second it collects the done and retreat records the job's
// piranhas left in its space (task_tally.h), publishes the job's
// ("jobstat", ...) tuple (at least every 5 s, so that its updated_at shows
// the feeder alive), and watches for `piranha cancel`: a cancelled job's
// space is removed, which ends every blocked operation on it, in the feeder
// and in the piranhas, with error "space_removed". The same for a job an
// agent recorded failed because this feeder was silent past its patience
// (frozen, or cut off from the server: feeder_silence.h); lost() then says
// so. A tick that cannot reach the server is tried again at the next, so
// the feeder is heard again within a second of the server's answering.
//
// Promptness, which the NPS relies on to learn a job's mean task time within
// one scheduling period: a piranha writes a task's done record with the
// task's completion (posted at once, even for batched short tasks), so a
// task completed at time t is counted in jobstat by about t + 0.25 s plus a
// round trip (tests/job_test.cc measures it).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

#include "piranha/runtime/sysspace.h"
#include "piranha/runtime/task_tally.h"

namespace piranha {

class JobReporter {
 public:
  // Starts the thread, with its own connection to `server`, whose calls wait
  // up to `patience` for an answer. `tasks_put` is the feeder's running
  // count of tasks written; it must outlive the reporter.
  JobReporter(std::string server, sys::JobRecord job, const std::atomic<std::int64_t>& tasks_put,
              std::chrono::milliseconds patience);
  // Stops the thread (as stop()).
  ~JobReporter();
  JobReporter(const JobReporter&) = delete;
  JobReporter& operator=(const JobReporter&) = delete;

  // Collects the last records, publishes the final jobstat and joins the
  // thread. Idempotent.
  void stop();

  // Whether somebody cancelled the job. Safe from any thread.
  bool cancelled() const { return cancelled_.load(); }
  // Whether an agent recorded the job failed, its feeder lost. Safe from
  // any thread.
  bool lost() const { return lost_.load(); }
  // Why, from the job's ("joblost", ...) record; read it only after stop().
  const std::string& lost_reason() const { return lost_reason_; }

  // The tally; read it only after stop().
  const TaskTally& tally() const { return tally_; }

 private:
  void run();
  void collect(ts::Client& c);
  std::string server_;
  sys::JobRecord job_;
  const std::atomic<std::int64_t>& tasks_put_;
  TaskTally tally_;
  std::chrono::milliseconds patience_;
  std::atomic<bool> cancelled_{false};
  std::atomic<bool> lost_{false};
  std::string lost_reason_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace piranha
