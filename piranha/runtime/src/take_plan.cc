#include "take_plan.h"

#include <algorithm>

namespace piranha::detail {

TakePlan plan_take(std::int64_t completed, double mean_seconds, std::size_t task_bytes) {
  if (completed >= kTasksBeforeBatching && mean_seconds < kShortTaskSeconds) {
    // Rounded down, and no task is taken as lasting under 100 ns.
    auto size = static_cast<std::size_t>(kBatchSeconds / std::max(mean_seconds, 1e-7));
    std::size_t most = task_bytes > 0
                           ? std::clamp(kBatchBytes / task_bytes, kMinTasksPerTake, kMaxTasksPerTake)
                           : kMaxTasksPerTake;
    return {TakeMode::Batch, std::clamp(size, kMinTasksPerTake, most)};
  }
  if (completed >= kTasksBeforeAhead && mean_seconds < kAheadBelowSeconds) return {TakeMode::Ahead, 1};
  return {TakeMode::One, 1};
}

}  // namespace piranha::detail
