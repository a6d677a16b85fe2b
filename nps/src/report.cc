// build_report (report.h): the system space's records gathered into one
// JSON document over a period.
#include "piranha/nps/report.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace piranha::nps {
namespace {

using json = nlohmann::json;

struct Span {
  std::string node, state, retreat;
  bool available = false;
  std::optional<std::int64_t> job;
  double start = 0, end = 0;
};

std::string fmt(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// The availability periods a node's spans show: runs of available spans.
std::vector<double> ap_lengths(const std::vector<Span>& spans) {
  std::vector<double> out;
  std::optional<std::pair<double, double>> run;
  for (const auto& s : spans) {
    if (s.available && run && s.start <= run->second + 1e-6) {
      run->second = s.end;
    } else if (s.available) {
      if (run) out.push_back(run->second - run->first);
      run = std::pair(s.start, s.end);
    } else if (run) {
      out.push_back(run->second - run->first);
      run.reset();
    }
  }
  if (run) out.push_back(run->second - run->first);
  return out;
}

json ap_summary(std::vector<double> v) {
  if (v.empty()) return {{"count", 0}};
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  return {{"count", v.size()},
          {"mean_seconds", sum / static_cast<double>(v.size())},
          {"median_seconds", v[v.size() / 2]},
          {"max_seconds", v.back()}};
}

// What Piranha did on the node when its owner complained: the job it ran
// then, and the latest retreat before (how long a piranha stayed after the
// node stopped being available).
json complaint_context(const sys::Complaint& c, const std::vector<Span>& spans) {
  json j = {{"time", c.time}, {"text", c.text}, {"job", nullptr}, {"state", nullptr}, {"retreat", nullptr}};
  for (const auto& s : spans) {
    // The span in force then, or the node's last one if it ended shortly before.
    if ((s.start <= c.time && c.time < s.end) || (s.end <= c.time && c.time - s.end < 60)) {
      j["job"] = s.job ? json(*s.job) : json(nullptr);
      j["state"] = s.state;
    }
    // A piranha still there while the node was not available: the retreat's length.
    if (!s.available && s.job && s.start <= c.time && c.time - s.end < 600)
      j["retreat"] = {{"job", *s.job}, {"at", s.start}, {"seconds", s.end - s.start}};
  }
  return j;
}

}  // namespace

json build_report(const ReportInput& in) {
  double from = in.now;
  for (const auto& r : in.records) from = std::min(from, r.time);
  for (const auto& j : in.jobs) from = std::min(from, j.submit_time);
  for (const auto& c : in.complaints) from = std::min(from, c.time);
  if (in.since) from = *in.since;
  const double to = in.now;
  auto within = [&](double t) { return t >= from && t <= to; };

  std::vector<Span> spans;
  std::map<std::int64_t, json> estimates;  // scheduler -> latest estimate in the period
  std::map<std::int64_t, std::int64_t> changes;
  std::map<std::string, json> accuracy;
  json switches = json::array();
  std::size_t in_period = 0;
  for (const auto& r : in.records) {
    const json j = json::parse(r.json, nullptr, false);
    if (!j.is_object()) continue;
    if (r.kind == "span") {
      Span s{j.value("node", ""),
             j.value("state", ""),
             j.value("retreat", ""),
             j.value("available", false),
             std::nullopt,
             std::max(from, j.value("start", 0.0)),
             std::min(to, j.value("end", 0.0))};
      if (j.contains("job") && j["job"].is_number_integer()) s.job = j["job"].get<std::int64_t>();
      if (s.end <= s.start || s.node.empty()) continue;
      spans.push_back(s);
      ++in_period;
      continue;
    }
    if (!within(r.time)) continue;
    ++in_period;
    if (r.kind == "estimate")
      estimates[j.value("scheduler", std::int64_t{0})] = j;
    else if (r.kind == "decision")
      ++changes[j.value("scheduler", std::int64_t{0})];
    else if (r.kind == "accuracy")
      accuracy[j.value("node", "")] = j;
    else if (r.kind == "switch") {
      json sw = j;
      sw["time"] = r.time;
      switches.push_back(sw);
    }
  }
  // Each node's stretch since its last recorded span, as its agent shows it now.
  std::map<std::string, double> last_end;
  for (const auto& r : in.records)
    if (r.kind == "span")
      if (const json j = json::parse(r.json, nullptr, false); j.is_object())
        last_end[j.value("node", "")] = std::max(last_end[j.value("node", "")], j.value("end", 0.0));
  std::set<std::string> open;
  for (const auto& c : in.current) {
    const auto last = last_end.find(c.node);
    if (last == last_end.end() || last->second >= to) continue;  // the evaluator never saw it
    spans.push_back({c.node, c.state, "", c.state == "available", c.job, std::max(from, last->second), to});
    open.insert(c.node);
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) {
    return std::tie(a.node, a.start) < std::tie(b.node, b.start);
  });

  // Jobs: their own records, with retreats by cause from the spans.
  std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> retreats;
  for (const auto& s : spans)
    if (s.job && !s.retreat.empty())
      (s.retreat == "owner" ? retreats[*s.job].first : retreats[*s.job].second)++;
  json jobs = json::array();
  double sum = 0;
  std::int64_t ended = 0;
  for (const auto& j : in.jobs) {
    const auto t = in.times.count(j.id) ? in.times.at(j.id) : sys::JobTimes{j.id, 0, 0};
    if (!(within(j.submit_time) || (t.end_time > 0 && within(t.end_time)))) continue;
    json o = {{"id", j.id},
              {"name", j.name},
              {"state", std::string(sys::name(j.state))},
              {"submit", j.submit_time}};
    o["first_start"] = t.start_time > 0 ? json(t.start_time) : json(nullptr);
    o["end"] = t.end_time > 0 ? json(t.end_time) : json(nullptr);
    o["turnaround_seconds"] = t.end_time > 0 ? json(t.end_time - j.submit_time) : json(nullptr);
    if (t.end_time > 0 && sys::is_finished(j.state)) {
      sum += t.end_time - j.submit_time;
      ++ended;
    }
    json nodes = json::array();
    double seconds = 0;
    std::int64_t tasks = 0, total_retreats = 0;
    if (in.work.count(j.id))
      for (const auto& w : in.work.at(j.id)) {
        nodes.push_back(w.node);
        seconds += w.seconds;
        tasks += w.tasks;
        total_retreats += w.retreats;
      }
    o["nodes"] = nodes;
    o["node_seconds"] = seconds;
    o["tasks"] = tasks;
    o["piranha_retreats"] = total_retreats;
    o["owner_retreats"] = retreats[j.id].first;
    o["scheduler_retreats"] = retreats[j.id].second;
    jobs.push_back(o);
  }

  // Schedulers: the latest estimate of each, the obeyed one's observation beside it.
  json schedulers = json::array();
  std::optional<std::int64_t> obeyed, best;
  for (const auto& [id, e] : estimates) {
    schedulers.push_back({{"id", id},
                          {"strategy", e.value("strategy", "")},
                          {"obeyed", e.value("obeyed", false)},
                          {"estimated_mean_turnaround_seconds", e.value("estimate", 0.0)},
                          {"assignment_changes", changes[id]},
                          {"ended_jobs", e.value("ended_jobs", 0)}});
    if (e.value("obeyed", false)) obeyed = id;
    if (!best || e.value("estimate", 0.0) < estimates[*best].value("estimate", 0.0)) best = id;
  }
  for (const auto& [id, n] : changes)
    if (!estimates.count(id))
      schedulers.push_back({{"id", id},
                            {"strategy", nullptr},
                            {"obeyed", nullptr},
                            {"estimated_mean_turnaround_seconds", nullptr},
                            {"assignment_changes", n},
                            {"ended_jobs", 0}});
  std::string verdict;
  if (best && obeyed) {
    const auto& b = estimates[*best];
    const auto& o = estimates[*obeyed];
    const double eb = b.value("estimate", 0.0), eo = o.value("estimate", 0.0);
    if (*best == *obeyed || !(eb < eo))
      verdict =
          "The obeyed scheduler " + std::to_string(*obeyed) + " (" + o.value("strategy", "") +
          ") served this pool best: replayed on the pool's own availability, arrivals and task times, no "
          "shadow beat its estimated mean turnaround of " +
          fmt(eo, 1) + " s.";
    else
      verdict = "Scheduler " + std::to_string(*best) + " (" + b.value("strategy", "") +
                ") would have served this pool best: replayed on the pool's own availability, arrivals and "
                "task times, its estimated mean turnaround is " +
                fmt(eb, 1) + " s against " + fmt(eo, 1) + " s for the obeyed scheduler " +
                std::to_string(*obeyed) + " (" + o.value("strategy", "") + "), " +
                fmt(100 * (eo - eb) / eo, 1) + "% less.";
  } else {
    verdict = "No estimates yet: the evaluator estimates after a job ends.";
  }

  // Nodes: availability, APs, predictions, retreats and complaints.
  std::set<std::string> names;
  for (const auto& s : spans) names.insert(s.node);
  for (const auto& [n, a] : accuracy) names.insert(n);
  for (const auto& c : in.complaints)
    if (within(c.time)) names.insert(c.node);
  json nodes = json::array();
  for (const auto& name : names) {
    std::vector<Span> mine;
    double seen = 0, up = 0;
    std::int64_t owner = 0, scheduler = 0;
    for (const auto& s : spans)
      if (s.node == name) {
        mine.push_back(s);
        seen += s.end - s.start;
        if (s.available) up += s.end - s.start;
        owner += s.retreat == "owner";
        scheduler += s.retreat == "scheduler";
      }
    json complaints = json::array();
    for (const auto& c : in.complaints)
      if (c.node == name && within(c.time)) complaints.push_back(complaint_context(c, mine));
    nodes.push_back({{"name", name},
                     {"observed_seconds", seen},
                     {"available_seconds", up},
                     {"available_fraction", seen > 0 ? json(up / seen) : json(nullptr)},
                     {"availability_periods", ap_summary(ap_lengths(mine))},
                     {"prediction", accuracy.count(name) ? accuracy[name] : json(nullptr)},
                     {"owner_retreats", owner},
                     {"scheduler_retreats", scheduler},
                     {"complaints", complaints},
                     {"known", !mine.empty()}});
  }

  json gantt = json::array();
  for (const auto& s : spans)
    gantt.push_back({{"node", s.node},
                     {"state", s.state},
                     {"available", s.available},
                     {"job", s.job ? json(*s.job) : json(nullptr)},
                     {"start", s.start},
                     {"end", s.end},
                     {"retreat", s.retreat.empty() ? json(nullptr) : json(s.retreat)},
                     {"open", open.count(s.node) > 0 && s.end >= to}});

  json out = {{"since", from},
              {"until", to},
              {"jobs", jobs},
              {"observed_mean_turnaround_seconds",
               ended > 0 ? json(sum / static_cast<double>(ended)) : json(nullptr)},
              {"schedulers", schedulers},
              {"verdict", verdict},
              {"switches", switches},
              {"nodes", nodes},
              {"gantt", gantt}};
  const bool empty = jobs.empty() && in_period == 0 && nodes.empty();
  out["empty"] = empty;
  if (empty)
    out["message"] = "nothing was recorded in this period: no job, no evaluator record, no complaint";
  return out;
}

}  // namespace piranha::nps
