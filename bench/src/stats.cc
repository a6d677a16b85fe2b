#include "stats.h"

#include <algorithm>
#include <numeric>

#include "piranha/base/percentile.h"

namespace piranha::bench {

Latency summarize(std::vector<double> us) {
  Latency l;
  if (us.empty()) return l;
  std::sort(us.begin(), us.end());
  l.samples = us.size();
  l.p50 = percentile(us, 0.50);
  l.p90 = percentile(us, 0.90);
  l.p99 = percentile(us, 0.99);
  l.min = us.front();
  l.mean = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
  return l;
}

}  // namespace piranha::bench
