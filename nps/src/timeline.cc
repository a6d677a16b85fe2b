// Timeline (timeline.h): the live page's bounded history.
#include "piranha/nps/timeline.h"

#include <algorithm>
#include <set>

namespace piranha::nps {
namespace {

using json = nlohmann::json;

std::int64_t job_id(const json& j) {
  return j.is_number_integer() ? j.get<std::int64_t>() : 0;
}

json job_json(std::int64_t id) {
  return id == 0 ? json(nullptr) : json(id);
}

double number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::uint32_t Timeline::state_index(const std::string& state) {
  const auto it = std::find(states_.begin(), states_.end(), state);
  if (it != states_.end()) return static_cast<std::uint32_t>(it - states_.begin());
  states_.push_back(state);
  return static_cast<std::uint32_t>(states_.size() - 1);
}

void Timeline::add_mark(json mark) {
  // The same retreat comes with every state while it is among the
  // evaluator's latest: kept once.
  const double t = number(mark, "time");
  for (auto it = marks_.rbegin(); it != marks_.rend() && number(*it, "time") >= t; ++it)
    if (*it == mark) return;
  const auto at = std::upper_bound(marks_.begin(), marks_.end(), t,
                                   [](double time, const json& m) { return time < number(m, "time"); });
  marks_.insert(at, std::move(mark));
}

void Timeline::add_finished(const json& job) {
  const std::int64_t id = job_id(job.value("id", json()));
  if (id == 0) return;
  for (const auto& f : finished_)
    if (job_id(f["id"]) == id) return;
  finished_.push_back({{"id", id},
                       {"name", text(job, "name")},
                       {"arrival", number(job, "arrival")},
                       {"end", number(job, "end")},
                       {"turnaround", number(job, "turnaround")},
                       {"owner_retreats", job.value("owner_retreats", 0)},
                       {"scheduler_retreats", job.value("scheduler_retreats", 0)}});
  now_ = std::max(now_, number(job, "end"));
}

void Timeline::seed(std::span<const EvalRecord> records) {
  for (const EvalRecord& r : records) {
    const json j = json::parse(r.json, nullptr, false);
    if (!j.is_object()) continue;
    if (r.kind == "span") {
      const std::string node = text(j, "node");
      if (node.empty()) continue;
      const Span s{number(j, "start"), number(j, "end"), job_id(j.value("job", json())),
                   state_index(text(j, "state"))};
      rows_[node].spans.push_back(s);
      now_ = std::max(now_, s.end);
      if (const std::string by = text(j, "retreat"); !by.empty() && s.job != 0)
        add_mark({{"time", s.end}, {"kind", "retreat"}, {"node", node}, {"job", s.job}, {"by", by}});
    } else if (r.kind == "job") {
      add_finished(j);
    } else if (r.kind == "switch") {
      add_mark({{"time", r.time},
                {"kind", "switch"},
                {"from", j.value("from", 0)},
                {"to", j.value("to", 0)},
                {"from_strategy", text(j, "from_strategy")},
                {"to_strategy", text(j, "to_strategy")}});
      now_ = std::max(now_, r.time);
    }
  }
  prune();
}

void Timeline::observe(const json& state) {
  const double t = number(state, "time");
  now_ = std::max(now_, t);
  std::set<std::string, std::less<>> present;
  if (const auto nodes = state.find("nodes"); nodes != state.end() && nodes->is_array())
    for (const json& n : *nodes) {
      const std::string name = text(n, "name");
      if (name.empty()) continue;
      present.insert(name);
      Row& row = rows_[name];
      const Span now{t, t, job_id(n.value("job", json())), state_index(text(n, "state"))};
      if (row.open && !row.spans.empty()) {
        Span& last = row.spans.back();
        last.end = std::max(last.end, t);
        if (last.state == now.state && last.job == now.job) continue;
      }
      row.spans.push_back(now);
      row.open = true;
    }
  for (auto& [name, row] : rows_)
    if (!present.contains(name)) row.open = false;
  if (const auto retreats = state.find("retreats"); retreats != state.end() && retreats->is_array())
    for (const json& r : *retreats)
      add_mark({{"time", number(r, "time")},
                {"kind", "retreat"},
                {"node", text(r, "node")},
                {"job", job_id(r.value("job", json()))},
                {"by", text(r, "by")}});
  if (const auto obeyed = state.find("obeyed"); obeyed != state.end() && obeyed->is_object()) {
    const std::int64_t id = obeyed->value("id", std::int64_t{-1});
    if (obeyed_ >= 0 && id >= 0 && id != obeyed_)
      add_mark({{"time", t},
                {"kind", "switch"},
                {"from", obeyed_},
                {"to", id},
                {"from_strategy", obeyed_strategy_},
                {"to_strategy", text(*obeyed, "strategy")}});
    if (id >= 0) {
      obeyed_ = id;
      obeyed_strategy_ = text(*obeyed, "strategy");
    }
  }
  if (const auto finished = state.find("finished"); finished != state.end() && finished->is_array())
    for (const json& f : *finished) add_finished(f);
  prune();
}

void Timeline::prune() {
  const double cut = now_ - o_.keep_seconds;
  for (auto& [name, row] : rows_) {
    while (!row.spans.empty() && (row.spans.front().end < cut || row.spans.size() > o_.spans_per_node))
      row.spans.pop_front();
    if (row.spans.empty()) row.open = false;
  }
  std::erase_if(rows_, [](const auto& kv) { return kv.second.spans.empty(); });
  while (!marks_.empty() && (number(marks_.front(), "time") < cut || marks_.size() > o_.marks))
    marks_.pop_front();
  while (finished_.size() > o_.finished) finished_.pop_front();
}

json Timeline::history(double since) const {
  json nodes = json::object(), open = json::object(), marks = json::array(), finished = json::array();
  for (const auto& [name, row] : rows_) {
    json spans = json::array();
    for (const Span& s : row.spans)
      if (s.end >= since) spans.push_back({s.start, s.end, states_[s.state], job_json(s.job)});
    nodes[name] = std::move(spans);
    open[name] = row.open;
  }
  for (const json& m : marks_)
    if (number(m, "time") >= since) marks.push_back(m);
  for (const json& f : finished_) finished.push_back(f);
  return {{"time", now_},
          {"since", since},
          {"nodes", std::move(nodes)},
          {"open", std::move(open)},
          {"marks", std::move(marks)},
          {"finished", std::move(finished)}};
}

std::size_t Timeline::span_count() const {
  std::size_t n = 0;
  for (const auto& [name, row] : rows_) n += row.spans.size();
  return n;
}

}  // namespace piranha::nps
