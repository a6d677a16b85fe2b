#include "stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace piranha::bench {

Latency summarize(std::vector<double> us) {
  Latency l;
  if (us.empty()) return l;
  std::sort(us.begin(), us.end());
  auto rank = [&](double q) {
    auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(us.size())));
    return us[std::clamp<std::size_t>(i, 1, us.size()) - 1];
  };
  l.samples = us.size();
  l.p50 = rank(0.50);
  l.p90 = rank(0.90);
  l.p99 = rank(0.99);
  l.min = us.front();
  l.mean = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
  return l;
}

}  // namespace piranha::bench
