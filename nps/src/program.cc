#include "piranha/nps/program.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "piranha/scheduler/strategy.h"

namespace piranha::nps {
namespace {

// YAML scalars for node names and strategy names: quoted, so that a node
// called "yes" or "1e3" stays a string.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string number(double d) {
  std::ostringstream o;
  o.precision(17);
  o << d;
  std::string s = o.str();
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string param_text(const trellis::Value& v) {
  if (v.is_string()) return v.as_string();
  if (v.is_number()) return trellis::to_json(v);
  return trellis::to_json(v);
}

[[noreturn]] void fail(const trellis::Program& p, int line, const std::string& message) {
  throw InputError(p.source, line, message);
}

}  // namespace

std::string standard_program_yaml(const StandardOptions& o) {
  // A strategy with a predictor of its own (xMIX) has its monitors use it.
  const std::string own = sched::make_strategy(o.strategy)->predictor();
  const std::string predictor = own.empty() ? o.predictor : own;
  std::ostringstream y;
  y << "# The standard Network Piranha Scheduler (docs/nps.md): one monitor and one\n"
       "# owner per node, an enabler, the jobs node, scheduler 0 (the one agents obey)\n"
       "# and an evaluator. Add schedulers with other ids to compare strategies; place\n"
       "# nodes on hosts (a hosts: section and host: keys) to spread it over machines.\n"
       "# Check an edited copy with: piranha nps check FILE\n";
  y << "program: nps\n";
  y << "nodes:\n";
  y << "  - name: enabler\n    type: enabler\n    params: {period: " << number(std::min(o.tick, o.period))
    << "}\n";
  y << "  - name: jobs\n    type: jobs\n    inferiors: [enabler]\n";
  for (const auto& n : o.nodes) {
    y << "  - name: " << quoted("owner_" + n) << "\n    type: owner\n    inferiors: [enabler]\n"
      << "    params: {node: " << quoted(n) << "}\n";
    y << "  - name: " << quoted("monitor_" + n) << "\n    type: monitor\n    inferiors: [enabler, "
      << quoted("owner_" + n) << "]\n"
      << "    params: {node: " << quoted(n) << ", obey: 0, predictor: " << predictor
      << ", window: " << o.window << "}\n";
  }
  std::string monitors;
  for (const auto& n : o.nodes) monitors += ", " + quoted("monitor_" + n);
  // Scheduler 0 is obeyed; shadows (1, 2, ...) decide and are recorded but
  // not obeyed (unless an evaluator's switch says so).
  auto scheduler = [&](std::size_t id, const std::string& strategy) {
    y << "  - name: scheduler_" << id << "\n    type: scheduler\n    inferiors: [jobs" << monitors << "]\n"
      << "    params: {id: " << id << ", strategy: " << quoted(strategy) << ", period: " << number(o.period)
      << ", predictor: " << o.predictor << ", window: " << o.window
      << ", spill: " << (o.spill ? "true" : "false") << ", on_events: " << (o.on_events ? "true" : "false")
      << ", cold_start: " << number(o.cold_start) << ", probe: " << (o.probe ? "true" : "false")
      << ", seed: " << o.seed << "}\n";
  };
  scheduler(0, o.strategy);
  std::string schedulers = "scheduler_0";
  for (std::size_t i = 0; i < o.shadows.size(); ++i) {
    scheduler(i + 1, o.shadows[i]);
    schedulers += ", scheduler_" + std::to_string(i + 1);
  }
  if (o.evaluator)
    y << "  - name: evaluator\n    type: evaluator\n    inferiors: [jobs, " << schedulers << monitors
      << "]\n";
  return y.str();
}

// Built in code, not parsed from standard_program_yaml(): the live NPS
// rebuilds it whenever nodes join, and parsing the YAML of 10,000 nodes took
// over a second. A test holds the two to the same program.
trellis::Program standard_program(const StandardOptions& o, const trellis::Registry& types) {
  using trellis::Value;
  const std::string own = sched::make_strategy(o.strategy)->predictor();
  const std::string predictor = own.empty() ? o.predictor : own;
  trellis::Program p;
  p.name = "nps";
  p.source = "<standard program>";
  p.nodes.reserve(2 * o.nodes.size() + 3 + o.shadows.size());
  auto add = [&](std::string name, const char* type, std::vector<std::string> inferiors, Value::Map params) {
    trellis::NodeSpec n;
    n.name = std::move(name);
    n.type = type;
    n.inferiors = std::move(inferiors);
    n.params = std::move(params);
    p.nodes.push_back(std::move(n));
  };
  add("enabler", "enabler", {}, {{"period", Value(std::min(o.tick, o.period))}});
  add("jobs", "jobs", {"enabler"}, {});
  std::vector<std::string> monitors;
  monitors.reserve(o.nodes.size());
  for (const auto& n : o.nodes) {
    add("owner_" + n, "owner", {"enabler"}, {{"node", Value(n)}});
    add("monitor_" + n, "monitor", {"enabler", "owner_" + n},
        {{"node", Value(n)},
         {"obey", Value(0)},
         {"predictor", Value(predictor)},
         {"window", Value(o.window)}});
    monitors.push_back("monitor_" + n);
  }
  auto below = [&](std::vector<std::string> first) {
    first.insert(first.end(), monitors.begin(), monitors.end());
    return first;
  };
  auto scheduler = [&](std::size_t id, const std::string& strategy) {
    add("scheduler_" + std::to_string(id), "scheduler", below({"jobs"}),
        {{"id", Value(static_cast<std::int64_t>(id))},
         {"strategy", Value(strategy)},
         {"period", Value(o.period)},
         {"predictor", Value(o.predictor)},
         {"window", Value(o.window)},
         {"spill", Value(o.spill)},
         {"on_events", Value(o.on_events)},
         {"cold_start", Value(o.cold_start)},
         {"probe", Value(o.probe)},
         {"seed", Value(o.seed)}});
  };
  scheduler(0, o.strategy);
  std::vector<std::string> schedulers{"jobs", "scheduler_0"};
  for (std::size_t i = 0; i < o.shadows.size(); ++i) {
    scheduler(i + 1, o.shadows[i]);
    schedulers.push_back("scheduler_" + std::to_string(i + 1));
  }
  if (o.evaluator) add("evaluator", "evaluator", below(schedulers), {});
  trellis::validate(p, types);
  check_nps_program(p);
  return p;
}

void check_nps_program(const trellis::Program& p) {
  std::map<std::string, const trellis::NodeSpec*, std::less<>> by_name;
  for (const auto& n : p.nodes) by_name[n.name] = &n;
  auto param = [](const trellis::NodeSpec& n, const std::string& key, const std::string& fallback) {
    auto it = n.params.find(key);
    return it == n.params.end() ? fallback : param_text(it->second);
  };
  auto type_of = [&](const std::string& name) {
    auto it = by_name.find(name);
    return it == by_name.end() ? std::string() : it->second->type;
  };
  bool enabler = false;
  std::map<std::int64_t, int> ids;
  std::map<std::string, int> monitored;
  for (const auto& n : p.nodes) {
    if (n.type == "enabler") enabler = true;
    if (n.type == "monitor") {
      const std::string node = param(n, "node", "");
      if (auto [it, fresh] = monitored.emplace(node, n.line); !fresh)
        fail(p, n.line,
             "monitor \"" + n.name + "\" watches node \"" + node + "\", which the monitor on line " +
                 std::to_string(it->second) + " already watches");
      bool below = false;
      for (const auto& i : n.inferiors) below = below || type_of(i) == "enabler";
      if (!below)
        fail(p, n.line,
             "monitor \"" + n.name + "\" has no enabler among its inferiors: nothing activates it");
    }
    if (n.type != "scheduler") continue;
    const auto id_it = n.params.find("id");
    const std::int64_t id = id_it != n.params.end() && id_it->second.is_int() ? id_it->second.as_int() : -1;
    if (auto [it, fresh] = ids.emplace(id, n.line); !fresh)
      fail(p, n.line,
           "scheduler \"" + n.name + "\" has id " + std::to_string(id) +
               ", already used by the scheduler on line " + std::to_string(it->second));
    bool jobs = false;
    std::vector<const trellis::NodeSpec*> monitors;
    for (const auto& i : n.inferiors) {
      if (type_of(i) == "jobs") jobs = true;
      if (type_of(i) == "monitor") monitors.push_back(by_name[i]);
    }
    if (!jobs) fail(p, n.line, "scheduler \"" + n.name + "\" has no jobs node among its inferiors");
    if (monitors.empty())
      fail(p, n.line,
           "scheduler \"" + n.name + "\" has no monitors among its inferiors: it would schedule no node");
    auto strategy = sched::make_strategy(param(n, "strategy", "TSK"));
    if (!strategy->uses_outlook()) continue;
    const std::string predictor =
        strategy->predictor().empty() ? param(n, "predictor", "REC_HIST") : strategy->predictor();
    const std::string window = param(n, "window", "10");
    for (const auto* m : monitors)
      if (param(*m, "predictor", "REC_HIST") != predictor || param(*m, "window", "10") != window)
        fail(p, n.line,
             "scheduler \"" + n.name + "\" (" + strategy->name() + ") predicts with " + predictor + " over " +
                 window + " steps, but monitor \"" + m->name + "\" (line " + std::to_string(m->line) +
                 ") predicts with " + param(*m, "predictor", "REC_HIST") + " over " +
                 param(*m, "window", "10"));
  }
  if (!enabler) fail(p, 0, "the program has no enabler: nothing would ever tick");
  // An evaluator's switching rule may only name schedulers it watches.
  for (const auto& n : p.nodes) {
    if (n.type != "evaluator") continue;
    const auto rule = n.params.find("switch");
    if (rule == n.params.end() || !rule->second.is_map() || !rule->second["among"].is_list()) continue;
    std::set<std::int64_t> below;
    for (const auto& i : n.inferiors) {
      if (type_of(i) != "scheduler") continue;
      const auto id = by_name[i]->params.find("id");
      if (id != by_name[i]->params.end() && id->second.is_int()) below.insert(id->second.as_int());
    }
    for (const auto& id : rule->second["among"].as_list())
      if (id.is_int() && !below.count(id.as_int()))
        fail(p, n.line,
             "evaluator \"" + n.name + "\": its switch names scheduler " + std::to_string(id.as_int()) +
                 ", which is not among its inferiors");
  }
}

std::vector<std::string> nps_program_warnings(const trellis::Program& p) {
  std::vector<std::string> out;
  for (const auto& n : p.nodes) {
    if (n.type != "scheduler") continue;
    const auto events = n.params.find("on_events");
    if (events != n.params.end() && events->second.is_bool() && events->second.as_bool()) continue;
    const auto period_it = n.params.find("period");
    const double period =
        period_it != n.params.end() && period_it->second.is_number() ? period_it->second.as_number() : 1.0;
    if (period <= kLongPeriodSeconds) continue;
    char every[32];
    std::snprintf(every, sizeof every, "%g", period);
    out.push_back(p.source + ":" + std::to_string(n.line) + ": warning: scheduler \"" + n.name +
                  "\" decides only every " + every +
                  " s (on_events is off): a job that arrives waits up to " + every +
                  " s for a node; on_events: true decides at once when a job arrives, ends or is "
                  "first measured, or a node joins");
  }
  return out;
}

double enabler_period(const trellis::Program& p) {
  for (const auto& n : p.nodes)
    if (n.type == "enabler") {
      auto it = n.params.find("period");
      return it != n.params.end() && it->second.is_number() ? it->second.as_number() : 10.0;
    }
  return 10.0;
}

std::string enabler_name(const trellis::Program& p) {
  for (const auto& n : p.nodes)
    if (n.type == "enabler") return n.name;
  return {};
}

}  // namespace piranha::nps
