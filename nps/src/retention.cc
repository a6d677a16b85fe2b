// records_to_prune and retention_cut (retention.h).
#include "piranha/nps/retention.h"

#include <algorithm>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace piranha::nps {
namespace {

using json = nlohmann::json;

constexpr double kSecondsPerDay = 86400;

// The first record kept by age and count alone.
std::size_t first_kept(std::span<const EvalRecord> records, const Retention& r, double now) {
  const double oldest = now - r.days * kSecondsPerDay;
  std::size_t first = records.size() > r.max_records ? records.size() - r.max_records : 0;
  while (first < records.size() && records[first].time < oldest) ++first;
  // Records of one time go together, so every record from the cut's time on is kept.
  while (first > 0 && first < records.size() && records[first].time == records[first - 1].time) ++first;
  return first;
}

}  // namespace

double retention_cut(std::span<const EvalRecord> records, const Retention& retention, double now) {
  const std::size_t first = first_kept(records, retention, now);
  if (first == 0) return -std::numeric_limits<double>::infinity();  // nothing goes by age or count
  return first < records.size() ? records[first].time : now;
}

std::vector<std::size_t> records_to_prune(std::span<const EvalRecord> records, const Retention& retention,
                                          double now) {
  const std::size_t first = first_kept(records, retention, now);
  const double cut = retention_cut(records, retention, now);
  std::vector<bool> keep(records.size(), false);
  for (std::size_t i = first; i < records.size(); ++i) keep[i] = true;
  // What a restarted NPS and a report need whatever its age: the latest
  // switch, each scheduler's latest estimate, each node's latest accuracy.
  std::optional<std::size_t> last_switch;
  std::map<std::string, std::size_t> latest;  // "estimate <id>" or "accuracy <node>" -> index
  for (std::size_t i = 0; i < records.size(); ++i) {
    const EvalRecord& r = records[i];
    if (r.kind == "switch") {
      last_switch = i;
    } else if (r.kind == "estimate" || r.kind == "accuracy" || (r.kind == "job" && keep[i])) {
      const json j = json::parse(r.json, nullptr, false);
      if (!j.is_object()) continue;
      if (r.kind == "estimate")
        latest["estimate " + std::to_string(j.value("scheduler", std::int64_t{0}))] = i;
      else if (r.kind == "accuracy")
        latest["accuracy " + j.value("node", std::string())] = i;
      else if (j.value("arrival", 0.0) < cut)
        keep[i] = false;  // its spans before the cut are gone: the job record goes too
    }
  }
  if (last_switch) keep[*last_switch] = true;
  for (const auto& [key, i] : latest) keep[i] = true;
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (!keep[i]) out.push_back(i);
  return out;
}

}  // namespace piranha::nps
