// How a piranha takes its tasks, decided from how long its tasks have taken
// so far: one at a time, one ahead (the next take travels while this task
// computes), or in leased batches (short tasks, whose round trips would
// otherwise cost more than their work). A pure function, used by piranha.cc
// and tested in take_plan_test.cc. Thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

namespace piranha::detail {

enum class TakeMode : std::uint8_t { One, Ahead, Batch };

struct TakePlan {
  TakeMode mode = TakeMode::One;
  std::size_t batch = 1;  // tasks per take: 1 unless mode is Batch
};

// Tasks shorter than this on average are taken in batches once
// kTasksBeforeBatching have completed.
inline constexpr double kShortTaskSeconds = 0.002;
inline constexpr std::int64_t kTasksBeforeBatching = 8;
// A batch holds about kBatchSeconds of work, and kMinTasksPerTake to kMaxTasksPerTake
// tasks: its round trip is then small beside its work however short the
// tasks are, and a retreat or the job's end leaves little held. Above
// kMinTasksPerTake, a batch also stays under kBatchBytes of task tuples, so that
// neither its answer nor the put-back of a retreat nears the server's
// request limit (16 MiB).
inline constexpr double kBatchSeconds = 0.002;
inline constexpr std::size_t kMinTasksPerTake = 32;
inline constexpr std::size_t kMaxTasksPerTake = 4096;
inline constexpr std::size_t kBatchBytes = 1 << 20;
// Tasks up to this long on average are asked for one ahead, from the first
// completed task on (one task held too many is the most it can cost). Longer
// ones are not: the task held ahead would wait a whole task's time that
// another piranha could use.
inline constexpr double kAheadBelowSeconds = 0.1;
inline constexpr std::int64_t kTasksBeforeAhead = 1;

// The plan for the next take, after `completed` tasks that took
// `mean_seconds` on average (anything when completed is 0) and whose
// largest tuple was about `task_bytes` long (0: unknown). piranha.cc passes
// the longer of the mean of all tasks so far and a recent mean, so that
// tasks that grow slower during a job are not batched on old evidence.
TakePlan plan_take(std::int64_t completed, double mean_seconds, std::size_t task_bytes = 0);

}  // namespace piranha::detail
