#include <algorithm>
#include <cmath>
#include <istream>
#include <map>
#include <sstream>

#include "piranha/scheduler/csv.h"
#include "piranha/scheduler/csv_lines.h"
#include "piranha/scheduler/trace_tools.h"

namespace piranha::sched {
namespace {

using csv::trim;

// Splits at commas outside double quotes.
std::vector<std::string> fields(const std::string& s) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char c : s) {
    if (c == '"') quoted = !quoted;
    if (c == ',' && !quoted)
      out.emplace_back();
    else
      out.back() += c;
  }
  for (auto& f : out) f = trim(f);
  return out;
}

bool to_number(const std::string& s, double& v) {
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(v);
}

// Sorted, merged periods (overlapping or touching ones become one).
std::vector<StepPeriod> merged(std::vector<StepPeriod> ps) {
  std::sort(ps.begin(), ps.end(), [](const StepPeriod& a, const StepPeriod& b) { return a.start < b.start; });
  std::vector<StepPeriod> out;
  for (const auto& p : ps) {
    if (!out.empty() && p.start <= out.back().end)
      out.back().end = std::max(out.back().end, p.end);
    else
      out.push_back(p);
  }
  return out;
}

}  // namespace

AvailabilityTrace import_ap_tuples(std::istream& in, const std::string& name, std::int64_t step_seconds,
                                   double origin, std::int64_t length) {
  struct Row {
    std::string node;
    double start, end;
  };
  std::vector<Row> rows;
  csv::CsvLines lines(in, name);
  while (lines.next()) {
    std::string text = lines.text();
    if (text.front() == '(' && text.back() == ')') text = text.substr(1, text.size() - 2);
    auto f = fields(text);
    if (f.size() != 4 || f[0] != "\"ap\"")
      lines.fail("expected (\"ap\", node, start, end), got \"" + lines.text() + "\"");
    if (f[1].size() < 3 || f[1].front() != '"' || f[1].back() != '"')
      lines.fail("node must be a quoted string");
    Row r{f[1].substr(1, f[1].size() - 2), 0, 0};
    if (!to_number(f[2], r.start)) lines.fail("start \"" + f[2] + "\" is not a number");
    if (!to_number(f[3], r.end)) lines.fail("end \"" + f[3] + "\" is not a number");
    if (r.end < r.start) lines.fail("end is before start");
    rows.push_back(r);
  }
  if (rows.empty()) throw InputError(name, "no (\"ap\", ...) tuples");
  if (origin < 0) {
    origin = rows[0].start;
    for (const auto& r : rows) origin = std::min(origin, r.start);
  }
  AvailabilityTrace t;
  t.step_seconds = step_seconds;
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<StepPeriod>> periods;
  std::int64_t last = 0;
  const auto step = static_cast<double>(step_seconds);
  for (const auto& r : rows) {
    // Only steps wholly inside the period count as available.
    const auto a = static_cast<std::int64_t>(std::ceil((r.start - origin) / step));
    const auto b = static_cast<std::int64_t>(std::floor((r.end - origin) / step));
    auto [it, fresh] = index.emplace(r.node, t.nodes.size());
    if (fresh) {
      t.nodes.push_back(r.node);
      periods.emplace_back();
    }
    last = std::max(last, b);
    if (a < 0 || a >= b) continue;
    periods[it->second].push_back({a, b});
  }
  t.length = length > 0 ? length : std::max<std::int64_t>(last, 1);
  for (auto& ps : periods) {
    std::vector<StepPeriod> kept;
    for (auto p : merged(ps)) {
      p.end = std::min(p.end, t.length);
      if (p.start < p.end) kept.push_back(p);
    }
    t.periods.push_back(std::move(kept));
  }
  return t;
}

AvailabilityTrace import_matrix(std::istream& in, const std::string& name, std::int64_t step_seconds) {
  AvailabilityTrace t;
  t.step_seconds = step_seconds;
  csv::CsvLines lines(in, name);
  bool header = false;
  std::int64_t s = 0;
  while (lines.next()) {
    auto f = fields(lines.text());
    if (!header) {
      for (const auto& n : f) {
        if (n.empty()) lines.fail("empty node name in the header");
        if (std::find(t.nodes.begin(), t.nodes.end(), n) != t.nodes.end())
          lines.fail("node " + n + " repeats");
        t.nodes.push_back(n);
      }
      t.periods.resize(t.nodes.size());
      header = true;
      continue;
    }
    if (f.size() != t.nodes.size())
      lines.fail("expected " + std::to_string(t.nodes.size()) + " fields, got " + std::to_string(f.size()));
    for (std::size_t n = 0; n < f.size(); ++n) {
      if (f[n] != "0" && f[n] != "1") lines.fail("value \"" + f[n] + "\" is neither 0 nor 1");
      if (f[n] == "0") continue;
      auto& ps = t.periods[n];
      if (!ps.empty() && ps.back().end == s)
        ps.back().end = s + 1;
      else
        ps.push_back({s, s + 1});
    }
    ++s;
  }
  if (!header) throw InputError(name, "missing the header of node names");
  if (s == 0) throw InputError(name, "no rows");
  t.length = s;
  return t;
}

TraceStats trace_stats(const AvailabilityTrace& t) {
  TraceStats st;
  st.available_fraction = t.available_fraction();
  std::vector<std::int64_t> lengths;
  const std::int64_t day =
      std::max<std::int64_t>(1, std::llround(86400.0 / static_cast<double>(t.step_seconds)));
  std::vector<double> wk_up(24, 0), wk_all(24, 0), we_up(24, 0), we_all(24, 0);
  for (std::size_t n = 0; n < t.nodes.size(); ++n) {
    std::int64_t up = 0;
    for (const auto& p : t.periods[n]) {
      lengths.push_back(p.end - p.start);
      up += p.end - p.start;
    }
    st.per_node.push_back(static_cast<double>(up) / static_cast<double>(t.length));
    std::size_t k = 0;
    for (std::int64_t s = 0; s < t.length; ++s) {
      while (k < t.periods[n].size() && t.periods[n][k].end <= s) ++k;
      const bool a = k < t.periods[n].size() && t.periods[n][k].start <= s;
      const auto hour = static_cast<std::size_t>((s % day) * 24 / day);
      const bool weekend = (s / day) % 7 >= 5;
      (weekend ? we_all : wk_all)[hour] += 1;
      if (a) (weekend ? we_up : wk_up)[hour] += 1;
    }
  }
  for (std::size_t h = 0; h < 24; ++h) {
    st.weekday_hour.push_back(wk_all[h] > 0 ? wk_up[h] / wk_all[h] : 0);
    st.weekend_hour.push_back(we_all[h] > 0 ? we_up[h] / we_all[h] : 0);
  }
  st.aps = static_cast<std::int64_t>(lengths.size());
  st.bucket_edges = {1, 2, 3, 5, 10, 20, 30, 60, 120, 240, 480, 960, 1440, 2880};
  st.bucket_counts.assign(st.bucket_edges.size(), 0);
  if (!lengths.empty()) {
    std::sort(lengths.begin(), lengths.end());
    double sum = 0;
    for (auto l : lengths) {
      sum += static_cast<double>(l);
      auto it = std::upper_bound(st.bucket_edges.begin(), st.bucket_edges.end(), l);
      ++st.bucket_counts[static_cast<std::size_t>(it - st.bucket_edges.begin()) - 1];
    }
    auto q = [&](double f) {
      return static_cast<double>(
          lengths[static_cast<std::size_t>(f * static_cast<double>(lengths.size() - 1))]);
    };
    st.mean_ap = sum / static_cast<double>(lengths.size());
    st.median_ap = q(0.5), st.p10_ap = q(0.1), st.p90_ap = q(0.9),
    st.max_ap = static_cast<double>(lengths.back());
  }
  return st;
}

}  // namespace piranha::sched
