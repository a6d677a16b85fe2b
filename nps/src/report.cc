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

// "scheduler 2 (TSK)".
std::string scheduler_name(std::int64_t id, const json& estimate) {
  return "scheduler " + std::to_string(id) + " (" + estimate.value("strategy", "") + ")";
}

// A job's turnaround as an estimate record gives it (its "jobs": {id: seconds}).
std::optional<double> replayed(const json& estimate, std::int64_t job) {
  const json& jobs = estimate.contains("jobs") ? estimate["jobs"] : json();
  const std::string key = std::to_string(job);
  if (!jobs.is_object() || !jobs.contains(key) || !jobs[key].is_number()) return std::nullopt;
  return jobs[key].get<double>();
}

double mean_over(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// "job 5 (observed 12.0 s, replayed 40.2 s) and job 3 (...)": the `count`
// jobs whose two turnarounds differ most, from pairs (job, (a, b)).
std::string most_different(std::vector<std::pair<std::int64_t, std::pair<double, double>>> jobs,
                           const std::string& a, const std::string& b, std::size_t count) {
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& x, const auto& y) {
    return std::abs(x.second.first - x.second.second) > std::abs(y.second.first - y.second.second);
  });
  std::string out;
  for (std::size_t i = 0; i < std::min(count, jobs.size()); ++i) {
    if (std::abs(jobs[i].second.first - jobs[i].second.second) < 0.05) break;
    out += std::string(out.empty()                             ? ""
                       : i + 1 == std::min(count, jobs.size()) ? " and "
                                                               : ", ") +
           "job " + std::to_string(jobs[i].first) + " (" + fmt(jobs[i].second.first, 1) + " s " + a + ", " +
           fmt(jobs[i].second.second, 1) + " s " + b + ")";
  }
  return out;
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
    if (r.kind == "estimate") {
      json e = j;
      e["time"] = r.time;
      estimates[j.value("scheduler", std::int64_t{0})] = e;
    } else if (r.kind == "decision")
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

  // Jobs: their own records. Their retreats are the job's own count (its
  // jobwork: what its summary says), by node and by cause; the nodes' come
  // from the same records.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> node_retreats;  // (all, the owner's)
  json jobs = json::array();
  double sum = 0;
  std::int64_t ended = 0;
  std::map<std::int64_t, double> observed, task_seconds;  // the finished jobs' turnarounds; their tasks' time
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
      observed[j.id] = t.end_time - j.submit_time;
    }
    json nodes = json::array();
    double seconds = 0;
    std::int64_t tasks = 0, total_retreats = 0, owner_retreats = 0;
    if (in.work.count(j.id))
      for (const auto& w : in.work.at(j.id)) {
        nodes.push_back(w.node);
        seconds += w.seconds;
        tasks += w.tasks;
        total_retreats += w.retreats;
        owner_retreats += w.owner_retreats;
        node_retreats[w.node].first += w.retreats;
        node_retreats[w.node].second += w.owner_retreats;
      }
    o["nodes"] = nodes;
    o["node_seconds"] = seconds;
    task_seconds[j.id] = seconds;
    o["tasks"] = tasks;
    o["retreats"] = total_retreats;
    o["owner_retreats"] = owner_retreats;
    o["gave_way_retreats"] = total_retreats - owner_retreats;
    jobs.push_back(o);
  }

  // Observed and replayed turnarounds over the same jobs: those finished in
  // the period that every scheduler's latest estimate replayed. Estimates
  // recorded before the records named their jobs compare as recorded.
  std::vector<std::int64_t> common;
  json left_out = json::array();
  for (const auto& [id, t] : observed) {
    std::string why;
    for (const auto& [s, e] : estimates)
      if (!replayed(e, id) && why.empty())
        why = observed.count(id) && in.times.count(id) && in.times.at(id).end_time > e.value("time", 0.0)
                  ? "it ended after the evaluator's latest estimate"
                  : "the evaluator did not replay it (it ran before the NPS watched the pool, or never held "
                    "an available node while the NPS watched)";
    if (estimates.empty()) why = "no estimate";
    if (why.empty())
      common.push_back(id);
    else
      left_out.push_back({{"id", id}, {"why", why}});
  }
  auto same_jobs_mean = [&](const json& e) -> std::optional<double> {
    if (common.empty()) return std::nullopt;
    std::vector<double> v;
    for (auto id : common) v.push_back(*replayed(e, id));
    return mean_over(v);
  };
  // Each scheduler's figure: its mean over the same jobs, else as recorded.
  auto figure = [&](const json& e) { return same_jobs_mean(e).value_or(e.value("estimate", 0.0)); };

  // Schedulers: the latest estimate of each, the obeyed one's observation beside it.
  json schedulers = json::array();
  std::optional<std::int64_t> obeyed, best;
  for (const auto& [id, e] : estimates) {
    const auto same = same_jobs_mean(e);
    schedulers.push_back({{"id", id},
                          {"strategy", e.value("strategy", "")},
                          {"obeyed", e.value("obeyed", false)},
                          {"estimated_mean_turnaround_seconds", e.value("estimate", 0.0)},
                          {"same_jobs_mean_turnaround_seconds", same ? json(*same) : json(nullptr)},
                          {"assignment_changes", changes[id]},
                          {"ended_jobs", e.value("ended_jobs", 0)}});
    if (e.value("obeyed", false)) obeyed = id;
    if (!best || figure(e) < figure(estimates[*best])) best = id;
  }
  for (const auto& [id, n] : changes)
    if (!estimates.count(id))
      schedulers.push_back({{"id", id},
                            {"strategy", nullptr},
                            {"obeyed", nullptr},
                            {"estimated_mean_turnaround_seconds", nullptr},
                            {"same_jobs_mean_turnaround_seconds", nullptr},
                            {"assignment_changes", n},
                            {"ended_jobs", 0}});

  // The comparison of the observed with the obeyed scheduler's replay, and
  // what the replay assumed that the pool did not do.
  json comparison = {{"jobs", common}, {"left_out", left_out}};
  if (obeyed && !common.empty()) {
    const json& o = estimates[*obeyed];
    std::vector<double> seen;
    double work = 0, took = 0;
    json per_job = json::array();
    std::vector<std::pair<std::int64_t, std::pair<double, double>>> pairs;
    for (auto id : common) {
      seen.push_back(observed[id]);
      const double w =
          o.contains("work") && o["work"].is_object() ? o["work"].value(std::to_string(id), 0.0) : 0;
      work += w;
      took += task_seconds[id];
      pairs.push_back({id, {observed[id], *replayed(o, id)}});
      per_job.push_back({{"id", id},
                         {"observed_seconds", observed[id]},
                         {"replayed_seconds", *replayed(o, id)},
                         {"replay_work_seconds", w},
                         {"task_seconds", task_seconds[id]}});
    }
    const double obs = mean_over(seen), rep = *same_jobs_mean(o);
    comparison["observed_mean_seconds"] = obs;
    comparison["replayed_mean_seconds"] = rep;
    comparison["per_job"] = per_job;
    const std::string n = std::to_string(common.size()) + (common.size() == 1 ? " job" : " jobs");
    std::string basis = "Observed and replayed turnarounds are over the same " + n +
                        ": those that finished in this period and that the evaluator replayed";
    if (!left_out.empty())
      basis += " (" + std::to_string(left_out.size()) +
               " more finished: " + std::string(left_out.size() == 1 ? "it is" : "they are") +
               " left out, each with its reason below)";
    comparison["basis"] = basis + ".";
    std::string why = "The replay of the obeyed " + scheduler_name(*obeyed, o) + " gives them a mean of " +
                      fmt(rep, 1) + " s against " + fmt(obs, 1) + " s observed";
    if (std::abs(rep - obs) < 0.05) {
      why += ": the same.";
    } else {
      why += " (" + std::string(rep > obs ? "+" : "") + fmt(rep - obs, 1) + " s). ";
      if (took > 0 && std::abs(work - took) > 0.1 * took)
        why += "The replay gave them " + fmt(work, 1) + " s of work where their tasks took " + fmt(took, 1) +
               " s: " +
               (work > took
                    ? "it rounds each task to whole steps of " + fmt(o.value("step", 0.1), 2) +
                          " s and counts the time a job held an available node as its work, one task at a "
                          "time per node, while a node held by a job also waits for tasks and runs as many "
                          "piranhas as it has cores. "
                    : std::string("it counts the time a job held an available node as its work, while the "
                                  "pool's tasks took longer than that time shows (several piranhas per "
                                  "node). "));
      else
        why +=
            "The replay gave them about the work their tasks took (" + fmt(work, 1) + " s against " +
            fmt(took, 1) + " s); the difference is in the timing: the replay decides " +
            (o.value("on_events", false) ? "at each arrival and end and " : "") + "every " +
            fmt(o.value("period", 1.0), 1) + " s in steps of " + fmt(o.value("step", 0.1), 2) +
            " s and starts a job's tasks on a node at once, while live a piranha starts, connects and takes "
            "its tasks. ";
      const std::string most = most_different(pairs, "observed", "replayed", 2);
      if (!most.empty()) why += "It differs most on " + most + ".";
    }
    comparison["explanation"] = why;
  } else if (!estimates.empty()) {
    comparison["basis"] =
        "The estimates were recorded without their jobs' turnarounds (an older NPS): they and the observed "
        "mean "
        "are not over the same jobs.";
  }

  // The verdict: the best figure, ties said as ties, and the jobs that make
  // the difference between the obeyed scheduler and the best other.
  std::string verdict;
  if (best && obeyed) {
    const double eo = figure(estimates[*obeyed]);
    std::vector<std::int64_t> tied;
    std::optional<std::int64_t> rival;  // the best scheduler other than the obeyed one
    for (const auto& [id, e] : estimates)
      if (id != *obeyed) {
        if (std::abs(figure(e) - eo) < 0.05) tied.push_back(id);
        if (!rival || figure(e) < figure(estimates[*rival])) rival = id;
      }
    const json& o = estimates[*obeyed];
    const std::string basis =
        common.empty() ? "replayed on the pool's own availability, arrivals and task times"
                       : "replayed on the pool's own availability, arrivals and task "
                         "times, over the same " +
                             std::to_string(common.size()) + (common.size() == 1 ? " job" : " jobs");
    auto differences = [&](std::int64_t other) {
      std::vector<std::pair<std::int64_t, std::pair<double, double>>> pairs;
      for (auto id : common) pairs.push_back({id, {*replayed(o, id), *replayed(estimates[other], id)}});
      return most_different(pairs, "obeyed", "under " + estimates[other].value("strategy", ""), 2);
    };
    const double eb = figure(estimates[*best]);
    if (*best != *obeyed && eb < eo - 0.05) {
      const json& b = estimates[*best];
      verdict = "Scheduler " + std::to_string(*best) + " (" + b.value("strategy", "") +
                ") would have served this pool best: " + basis + ", its mean turnaround is " + fmt(eb, 1) +
                " s against " + fmt(eo, 1) + " s for the obeyed " + scheduler_name(*obeyed, o) + ", " +
                fmt(100 * (eo - eb) / eo, 1) + "% less.";
      const std::string d = differences(*best);
      if (!d.empty()) verdict += " The jobs that make the difference: " + d + ".";
      verdict += " To obey it, run scheduler 0 with " + b.value("strategy", "") + " (nps run --strategy " +
                 b.value("strategy", "") + ") or give the evaluator a switch rule.";
    } else if (!tied.empty()) {
      std::string names;
      for (std::size_t i = 0; i < tied.size(); ++i)
        names += std::string(i == 0                 ? ""
                             : i + 1 == tied.size() ? " and "
                                                    : ", ") +
                 scheduler_name(tied[i], estimates[tied[i]]);
      verdict = "A tie: the obeyed " + scheduler_name(*obeyed, o) + " and " + names +
                " have the same mean turnaround, " + fmt(eo, 1) + " s (" + basis +
                "); no scheduler would have served this pool better.";
      const std::string d = differences(tied.front());
      verdict += d.empty() ? " Every job finishes at the same time under both in the replay: on this history "
                             "their decisions differ nowhere that matters, so there is nothing to change."
                           : " Their jobs finish at different times (" + d +
                                 ") that even out: either serves this pool as well.";
    } else {
      verdict = "The obeyed " + scheduler_name(*obeyed, o) + " served this pool best: " + basis +
                ", its mean turnaround is " + fmt(eo, 1) + " s";
      if (rival) {
        verdict += " against " + fmt(figure(estimates[*rival]), 1) + " s for the next best, " +
                   scheduler_name(*rival, estimates[*rival]) + ".";
        const std::string d = differences(*rival);
        if (!d.empty()) verdict += " The jobs that make the difference: " + d + "; keep it obeyed.";
      } else {
        verdict += "; no shadow was estimated.";
      }
    }
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
    for (const auto& s : spans)
      if (s.node == name) {
        mine.push_back(s);
        seen += s.end - s.start;
        if (s.available) up += s.end - s.start;
      }
    const auto [retreats, owner] = node_retreats[name];
    json complaints = json::array();
    for (const auto& c : in.complaints)
      if (c.node == name && within(c.time)) complaints.push_back(complaint_context(c, mine));
    nodes.push_back({{"name", name},
                     {"observed_seconds", seen},
                     {"available_seconds", up},
                     {"available_fraction", seen > 0 ? json(up / seen) : json(nullptr)},
                     {"availability_periods", ap_summary(ap_lengths(mine))},
                     {"prediction", accuracy.count(name) ? accuracy[name] : json(nullptr)},
                     {"retreats", retreats},
                     {"owner_retreats", owner},
                     {"gave_way_retreats", retreats - owner},
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
              {"comparison", comparison},
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
