#include "piranha/rigid/learner.h"

namespace piranha::rigid {

void RuntimeLearner::observe(const RigidJob& j, Time runtime) {
  const auto [it, fresh] = learned_.try_emplace(key(j), static_cast<double>(runtime));
  if (!fresh) it->second = alpha_ * it->second + (1 - alpha_) * static_cast<double>(runtime);
}

std::optional<double> RuntimeLearner::predict(const RigidJob& j) const {
  const auto it = learned_.find(key(j));
  if (it == learned_.end()) return std::nullopt;
  return it->second;
}

}  // namespace piranha::rigid
