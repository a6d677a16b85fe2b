// live_state (live_page.h): the page's JSON from the NPS's node states.
#include <algorithm>
#include <map>

#include "piranha/nps/live_page.h"

namespace piranha::nps {
namespace {

using json = nlohmann::json;
using trellis::Value;

json job_json(const Value& v) {
  return v.is_int() ? json(v.as_int()) : json(nullptr);
}
double num(const Value& v, double fallback = 0) {
  return v.is_number() ? v.as_number() : fallback;
}

}  // namespace

json live_state(double now, const std::vector<Value>& states) {
  std::map<std::string, bool> blocked;
  std::map<std::string, std::size_t> complaints;
  for (const Value& s : states)
    if (s["blocked"].is_bool() && s["node"].is_string()) {
      blocked[s["node"].as_string()] = s["blocked"].as_bool();
      if (s["complaints"].is_list()) complaints[s["node"].as_string()] = s["complaints"].as_list().size();
    }
  json nodes = json::array(), jobs = json::array(), schedulers = json::array(), retreats = json::array();
  std::int64_t obeyed = 0;
  bool have_evaluator = false;
  for (const Value& s : states)
    if (s["schedulers"].is_map() && s["obeyed"].is_int()) {
      obeyed = s["obeyed"].as_int();
      have_evaluator = true;
      if (s["retreats"].is_list())
        for (const Value& r : s["retreats"].as_list())
          retreats.push_back({{"time", num(r["time"])},
                              {"node", r["node"].is_string() ? r["node"].as_string() : ""},
                              {"job", job_json(r["job"])},
                              {"by", r["by"].is_string() ? r["by"].as_string() : ""}});
    }
  for (const Value& s : states) {
    if (s["node"].is_string() && s["available"].is_bool()) {  // a monitor
      const std::string& name = s["node"].as_string();
      std::string state = s["state"].is_string() ? s["state"].as_string() : "unknown";
      if (blocked[name] && state != "down") state = "owner-blocked";
      if (!have_evaluator && s["obeys"].is_int()) obeyed = s["obeys"].as_int();
      nodes.push_back({{"name", name},
                       {"state", state},
                       {"job", job_json(s["running"])},
                       {"predicted_ap_seconds", num(s["ap_length"])},
                       {"complaints", complaints[name]}});
    } else if (s["jobs"].is_list()) {
      for (const Value& j : s["jobs"].as_list()) {
        const double tasks = num(j["tasks"], 1), left = num(j["tasks_left"], tasks);
        jobs.push_back({{"id", job_json(j["id"])},
                        {"name", j["name"].is_string() ? j["name"].as_string() : ""},
                        {"tasks", static_cast<std::int64_t>(tasks)},
                        {"tasks_left", static_cast<std::int64_t>(left)},
                        {"progress", tasks > 0 ? (tasks - left) / tasks : 0.0},
                        {"mean_task_seconds", num(j["task_time"])},
                        {"measured", j["measured"].is_bool() && j["measured"].as_bool()}});
      }
    } else if (s["assignments"].is_map() && s["strategy"].is_string()) {
      json assignments = json::object();
      for (const auto& [node, job] : s["assignments"].as_map()) assignments[node] = job_json(job);
      schedulers.push_back({{"id", s["id"].is_int() ? s["id"].as_int() : -1},
                            {"strategy", s["strategy"].as_string()},
                            {"assignments", assignments}});
    }
  }
  std::string strategy;
  for (auto& s : schedulers) {
    s["obeyed"] = s["id"] == obeyed;
    if (s["id"] == obeyed) strategy = s["strategy"];
  }
  for (const Value& s : states)
    if (s["schedulers"].is_map())
      for (auto& j : schedulers)
        if (const Value& e = s["schedulers"][std::to_string(j["id"].get<std::int64_t>())]["estimate"];
            e.is_number())
          j["estimated_mean_turnaround_seconds"] = e.as_number();
  std::sort(nodes.begin(), nodes.end(), [](const json& a, const json& b) { return a["name"] < b["name"]; });
  return {{"time", now},
          {"obeyed", {{"id", obeyed}, {"strategy", strategy}}},
          {"nodes", nodes},
          {"jobs", jobs},
          {"schedulers", schedulers},
          {"retreats", retreats}};
}

}  // namespace piranha::nps
