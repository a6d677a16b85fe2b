// Runtime learning of seed 000 (WINNER), docs/rigid.md "Predictions": a
// weighted moving average of the run times of finished jobs with the same
// key, T <- alpha * T + (1 - alpha) * runtime, the first run setting T.
//
// The key stands for WINNER's program name: (user, executable, width) from
// the SWF fields, -1 where unknown. Not thread-safe.
#pragma once

#include <map>
#include <optional>
#include <tuple>

#include "piranha/rigid/workload.h"

namespace piranha::rigid {

class RuntimeLearner {
 public:
  explicit RuntimeLearner(double alpha = 0.5) : alpha_(alpha) {}

  // Records a finished job's run time (at factor 1).
  void observe(const RigidJob& j, Time runtime);

  // The learned run time (at factor 1), or nullopt before any job of its key finished.
  std::optional<double> predict(const RigidJob& j) const;

 private:
  using Key = std::tuple<std::int64_t, std::int64_t, int>;
  static Key key(const RigidJob& j) { return {j.user, j.executable, j.width}; }
  double alpha_;
  std::map<Key, double> learned_;
};

}  // namespace piranha::rigid
