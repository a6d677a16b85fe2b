#include "piranha/nps/tick_timer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "piranha/base/percentile.h"

namespace piranha::nps {

std::string TickSummary::to_json() const {
  return nlohmann::ordered_json{
      {"ticks", ticks},     {"p50_ms", p50_ms},           {"p99_ms", p99_ms},          {"max_ms", max_ms},
      {"mean_ms", mean_ms}, {"read_p50_ms", read_p50_ms}, {"read_p99_ms", read_p99_ms}}
      .dump();
}

void TickTimer::began(double now, std::uint64_t decisions) {
  if (start_) ms_.push_back((now - *start_) * 1000);
  start_ = now;
  decisions_ = decisions;
}

void TickTimer::decided(double now, std::uint64_t decisions) {
  if (!start_ || decisions <= decisions_) return;
  ms_.push_back((now - *start_) * 1000);
  start_.reset();
}

void TickTimer::read(double now) {
  if (start_) read_ms_.push_back((now - *start_) * 1000);
}

TickSummary TickTimer::summary() const {
  TickSummary s;
  s.ticks = ms_.size();
  if (ms_.empty()) return s;
  std::vector<double> v = ms_;
  std::sort(v.begin(), v.end());
  s.p50_ms = percentile(v, 0.50);
  s.p99_ms = percentile(v, 0.99);
  s.max_ms = v.back();
  s.mean_ms = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  std::vector<double> r = read_ms_;
  std::sort(r.begin(), r.end());
  if (!r.empty()) {
    s.read_p50_ms = percentile(r, 0.50);
    s.read_p99_ms = percentile(r, 0.99);
  }
  return s;
}

}  // namespace piranha::nps
