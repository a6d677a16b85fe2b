// The job runtime's internal state, shared by job_runtime.cc, feeder.cc and
// piranha.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "piranha/base/clock.h"
#include "piranha/runtime/job.h"

namespace piranha::detail {

struct TaskState {
  ts::Tuple tuple;
  ts::Tuple progress;
  ts::LeaseId lease = 0;
  double started_at = 0;          // wall clock, for the done record
  Clock::time_point taken;        // for the task's duration
  Clock::time_point renewed;      // when the lease was last granted or renewed
  Clock::time_point renew_tried;  // the last attempt, successful or not
  bool held = true;
  bool started = false;  // handed to the piranha (not just prefetched)
  bool batched = false;  // taken in a batch: its completion is posted
};

// A short task completed and not yet sent: the completions of a batch's
// tasks are sent together, as one step, when the batch is done.
struct Finished {
  ts::LeaseId lease = 0;
  std::vector<ts::Tuple> outs;  // the task's results, without its done record
  double started_at = 0;
  double seconds = 0;
};

struct PiranhaState {
  ts::Client* client = nullptr;
  std::unique_ptr<ts::Space> space;
  std::vector<std::string> args;
  std::int64_t job_id = 0;
  std::string node;
  std::chrono::milliseconds lease{0};
  std::atomic<bool>* retreat = nullptr;       // set by the signal watcher
  std::atomic<int>* retreat_cause = nullptr;  // a RetreatCause, set with it
  // Started and prefetched, in the order taken (a batch's first task last):
  // tasks end mostly from the front, so a batch of thousands is released
  // in constant time per task.
  std::deque<std::shared_ptr<TaskState>> held;
  // No held task's lease needs renewing before then (should_retreat).
  Clock::time_point next_renewal{};
  // Short tasks are taken several at a time; the ones not yet handed out.
  std::deque<std::shared_ptr<TaskState>> prefetched;
  std::vector<ts::Field> prefetch_fields;            // the template they matched
  std::vector<Finished> unsent;                      // completed short tasks, to be sent together
  std::size_t unsent_bytes = 0;                      // their results' approximate size
  std::vector<Finished> unsettled;                   // sent together; the answer not yet read
  std::vector<ts::Field> ahead_fields;               // the template of the task asked for ahead
  std::chrono::milliseconds request_timeout{30000};  // the client's
  std::int64_t tasks_completed = 0;
  double task_seconds = 0;         // summed, for the batching decision
  double recent_task_seconds = 0;  // an exponential mean (weight 0.1 per task), for the same
  std::size_t task_bytes = 0;      // the largest task tuple taken, about, for the same
  std::int64_t lost = 0;           // posted completions refused so far
  bool job_ended = false;
  // The server was unreachable past the client's deadline, or a held task's
  // lease has surely ended unrenewed: the piranha stops and exits with
  // piranha::kExitCutOff, and its agent starts another once the server is back.
  bool cut_off = false;
  bool start_noted = false;  // this piranha's first task was noted in ("jobtime", ...)
  Clock::time_point last_job_check{};
};

// Sends the completed short tasks' completions as one posted step (piranha.cc).
void send_completions(PiranhaState& s);
// The task asked for ahead (Client::prefetch), waiting for its answer at most
// `limit`; nullopt when none was asked for or none came.
std::optional<ts::Leased> take_ahead(PiranhaState& s, std::chrono::milliseconds limit);
// Holds a task taken ahead and not handed out (to be put back).
void hold_ahead(PiranhaState& s, ts::Leased&& task);
// Reads which posted completions the server refused, once every posted
// request has been answered (`answered`): a refused batch's tasks are
// completed one by one, since the others' leases may still be held; a
// refused single completion is counted in s.lost. Without `answered` (a
// retreat that did not wait for them) they are only counted.
void settle_completions(PiranhaState& s, bool answered);

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
