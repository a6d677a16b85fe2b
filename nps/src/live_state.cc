// live_state (live_page.h): the page's JSON from the NPS's node states.
#include <algorithm>
#include <cstdio>
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

// A length of time as a person says it: "40 s", "12 min", "3.5 h".
std::string duration_words(double seconds) {
  char out[32];
  if (seconds < 90)
    std::snprintf(out, sizeof out, "%.0f s", seconds);
  else if (seconds < 90 * 60)
    std::snprintf(out, sizeof out, "%.0f min", seconds / 60);
  else
    std::snprintf(out, sizeof out, "%.1f h", seconds / 3600);
  return out;
}

std::string job_words(const json& job) {
  return job.is_null() ? "no job" : "job " + std::to_string(job.get<std::int64_t>());
}

// What a node's owner block leaves: when the block in force ends.
struct OwnerView {
  bool blocked = false;
  double until = 0;  // the end of the block in force
  std::size_t complaints = 0;
};

// Why the node is in its state, in words; `reason` is its agent's (the
// ("nodewhy", ...) record, "" when not known), which says which sensor.
std::string node_why(const std::string& state, const std::string& reason, const json& job,
                     const OwnerView& owner, double now) {
  if (state == "available")
    return "available to Piranha (its owner is away); " +
           (job.is_null() ? std::string("runs no job") : "runs " + job_words(job));
  if (state == "owner-blocked")
    return "its owner blocked it (piranha owner block) for another " + duration_words(owner.until - now);
  if (!reason.empty() && (state == "unavailable" || state == "down"))
    return "its agent reports it " + state + ": " + reason;
  if (state == "unavailable") return "its owner is using it (its agent reports it unavailable)";
  if (state == "down") return "its agent has not been heard from lately";
  if (state == "unknown") return "not reported yet";
  return "its agent reports it " + state;
}

// What the node is expected to do next: the obeyed scheduler's decision
// not yet carried out, else what its availability history predicts.
std::string node_next(const std::string& state, const json& job, const json& assigned, bool has_assignment,
                      const Value& monitor, const OwnerView& owner, double now) {
  if (has_assignment && assigned != job && state == "available")
    return assigned.is_null() ? "told to stop " + job_words(job) + ", stopping"
                              : "assigned " + job_words(assigned) + ", starting" +
                                    (job.is_null() ? "" : " (" + job_words(job) + " still runs)");
  if (state == "down") return "nothing until its agent is heard again";
  if (state == "owner-blocked")
    return "back to Piranha when the block ends, in " + duration_words(owner.until - now);
  const double ap = num(monitor["ap_length"]), fraction = num(monitor["fraction"], 1);
  if (monitor["history"].is_int() && monitor["history"].as_int() == 0)
    return "no availability history yet: nothing predicted";
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f %%", 100 * fraction);
  if (state == "available") {
    if (fraction >= 1) return "always idle in its recent history: expected to stay available";
    if (ap > 0)
      return "expected to stay available for about " + duration_words(ap) +
             " (predicted availability period)";
    return std::string("no availability period predicted (available ") + pct + " of its recent history)";
  }
  if (fraction <= 0) return "unavailable in all its recent history: not expected back soon";
  return std::string("available ") + pct + " of its recent history" +
         (ap > 0 ? ", in periods of about " + duration_words(ap) : std::string());
}

}  // namespace

json live_state(double now, const std::vector<Value>& states) {
  std::map<std::string, OwnerView> owners;
  for (const Value& s : states)
    if (s["blocked"].is_bool() && s["node"].is_string()) {
      OwnerView& o = owners[s["node"].as_string()];
      o.blocked = s["blocked"].as_bool();
      if (s["complaints"].is_list()) o.complaints = s["complaints"].as_list().size();
      if (s["blocks"].is_list())
        for (const Value& b : s["blocks"].as_list())
          if (b.is_list() && b.as_list().size() == 2) {
            const double start = num(b.as_list()[0]), end = num(b.as_list()[1]);
            if (start <= now && now < end) o.until = std::max(o.until, end);
          }
    }
  json nodes = json::array(), jobs = json::array(), schedulers = json::array(), retreats = json::array(),
       finished = json::array();
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
      if (s["ended"].is_list())
        for (const Value& e : s["ended"].as_list())
          finished.push_back({{"id", job_json(e["id"])},
                              {"name", e["name"].is_string() ? e["name"].as_string() : ""},
                              {"arrival", num(e["arrival"])},
                              {"end", num(e["end"])},
                              {"turnaround", num(e["turnaround"])},
                              {"owner_retreats", num(e["owner_retreats"])},
                              {"scheduler_retreats", num(e["scheduler_retreats"])}});
    }
  if (!have_evaluator)
    for (const Value& s : states)
      if (s["node"].is_string() && s["available"].is_bool() && s["obeys"].is_int())
        obeyed = s["obeys"].as_int();
  // The obeyed scheduler's decisions, to tell a node's job from the one it is told to take up.
  const Value* decided = nullptr;
  for (const Value& s : states)
    if (s["assignments"].is_map() && s["strategy"].is_string() && s["id"].is_int() &&
        s["id"].as_int() == obeyed)
      decided = &s["assignments"];
  for (const Value& s : states) {
    if (s["node"].is_string() && s["available"].is_bool()) {  // a monitor
      const std::string& name = s["node"].as_string();
      std::string state = s["state"].is_string() ? s["state"].as_string() : "unknown";
      const OwnerView& owner = owners[name];
      if (owner.blocked && state != "down") state = "owner-blocked";
      // As `piranha nodes` shows it: missed a beat, not yet down.
      const std::string reported = state;
      const bool suspect = s["suspect"].is_bool() && s["suspect"].as_bool() && state != "down";
      if (suspect) state = "suspect";
      const json job = job_json(s["running"]);
      const std::string reason = s["reason"].is_string() ? s["reason"].as_string() : "";
      const bool has_assignment = decided && decided->as_map().contains(name);
      const json assigned = has_assignment ? job_json((*decided)[name]) : json(nullptr);
      nodes.push_back(
          {{"name", name},
           {"state", state},
           {"job", job},
           {"assigned", assigned},
           {"starting", has_assignment && !assigned.is_null() && assigned != job && state == "available"},
           {"predicted_ap_seconds", num(s["ap_length"])},
           {"available_fraction", num(s["fraction"], 1)},
           {"reason", reason},
           {"why",
            suspect
                ? "its agent has missed a beat (a cut link, or a frozen agent?); it last reported " + reported
                : node_why(state, reason, job, owner, now)},
           {"next", node_next(state, job, assigned, has_assignment, s, owner, now)},
           {"complaints", owner.complaints}});
    } else if (s["jobs"].is_list()) {
      for (const Value& j : s["jobs"].as_list()) {
        const double tasks = num(j["tasks"], 1), left = num(j["tasks_left"], tasks);
        jobs.push_back({{"id", job_json(j["id"])},
                        {"name", j["name"].is_string() ? j["name"].as_string() : ""},
                        {"arrival", num(j["arrival"])},
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
          {"retreats", retreats},
          {"finished", finished}};
}

}  // namespace piranha::nps
