#include "piranha/nps/tick_timer.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>

#include "piranha/base/percentile.h"

namespace piranha::nps {

std::string TickSummary::to_json(bool with_log) const {
  nlohmann::ordered_json j{{"ticks", ticks},
                           {"p50_ms", p50_ms},
                           {"p99_ms", p99_ms},
                           {"max_ms", max_ms},
                           {"mean_ms", mean_ms},
                           {"read_p50_ms", read_p50_ms},
                           {"read_p99_ms", read_p99_ms},
                           {"rebuilds", rebuilds},
                           {"rebuild_max_ms", rebuild_max_ms}};
  if (with_log) {
    auto& l = j["log"] = nlohmann::ordered_json::array();
    for (const auto& t : log)
      l.push_back({t.began, t.ms,
                   t.read_ms < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(t.read_ms),
                   t.rebuilt ? 1 : 0});
  }
  return j.dump();
}

void TickTimer::end(double now) {
  current_->ms = (now - current_->began) * 1000;
  ticks_.push_back(*current_);
  if (ticks_.size() > kKept) ticks_.pop_front();
  current_.reset();
}

void TickTimer::began(double now, std::uint64_t decisions) {
  if (current_) end(now);
  current_ = TimedTick{now, 0, -1, false};
  decisions_ = decisions;
}

void TickTimer::decided(double now, std::uint64_t decisions) {
  if (current_ && decisions > decisions_) end(now);
}

void TickTimer::read(double now) {
  if (current_) current_->read_ms = (now - current_->began) * 1000;
}

void TickTimer::rebuilt() {
  if (current_) current_->rebuilt = true;
}

TickSummary TickTimer::summary(double since) const {
  TickSummary s;
  std::vector<double> v, r;
  for (const auto& t : ticks_) {
    if (t.began < since) continue;
    s.log.push_back(t);
    v.push_back(t.ms);
    if (t.read_ms >= 0) r.push_back(t.read_ms);
    if (t.rebuilt) {
      ++s.rebuilds;
      s.rebuild_max_ms = std::max(s.rebuild_max_ms, t.ms);
    }
  }
  s.ticks = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.p50_ms = percentile(v, 0.50);
  s.p99_ms = percentile(v, 0.99);
  s.max_ms = v.back();
  s.mean_ms = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  std::sort(r.begin(), r.end());
  if (!r.empty()) {
    s.read_p50_ms = percentile(r, 0.50);
    s.read_p99_ms = percentile(r, 0.99);
  }
  return s;
}

}  // namespace piranha::nps
