#include "piranha/scheduler/avail_trace.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <unordered_map>

#include "piranha/scheduler/csv.h"
#include "piranha/scheduler/csv_lines.h"

namespace piranha {
namespace {

using csv::trim;

// `text` as an integer; fails the current line, naming `what`, otherwise.
std::int64_t parse_int(const std::string& text, const std::string& what, const csv::CsvLines& lines) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size())
    lines.fail(what + " \"" + text + "\" is not an integer");
  return v;
}

}  // namespace

std::optional<std::size_t> AvailabilityTrace::index_of(const std::string& node) const {
  auto it = std::find(nodes.begin(), nodes.end(), node);
  if (it == nodes.end()) return std::nullopt;
  return static_cast<std::size_t>(it - nodes.begin());
}

bool AvailabilityTrace::available(std::size_t n, std::int64_t s) const {
  const auto& ps = periods.at(n);
  // The last period starting at or before s is the only one that can hold it.
  auto it = std::upper_bound(ps.begin(), ps.end(), s,
                             [](std::int64_t v, const StepPeriod& p) { return v < p.start; });
  return it != ps.begin() && s < std::prev(it)->end;
}

std::int64_t AvailabilityTrace::next_change(std::size_t n, std::int64_t s) const {
  const auto& ps = periods.at(n);
  auto it = std::upper_bound(ps.begin(), ps.end(), s,
                             [](std::int64_t v, const StepPeriod& p) { return v < p.start; });
  if (it != ps.begin() && s < std::prev(it)->end) {
    // Available until the period ends, unless the next one starts right there.
    std::int64_t end = std::prev(it)->end;
    for (; it != ps.end() && it->start == end; ++it) end = it->end;
    return end;
  }
  return it == ps.end() ? length : it->start;
}

double AvailabilityTrace::available_fraction() const {
  if (nodes.empty() || length <= 0) return 0.0;
  double up = 0;
  for (const auto& ps : periods)
    for (const auto& p : ps) up += static_cast<double>(p.end - p.start);
  return up / (static_cast<double>(length) * static_cast<double>(nodes.size()));
}

AvailabilityTrace parse_trace(std::istream& in, const std::string& name) {
  AvailabilityTrace t;
  bool have_length = false, have_header = false;
  // Rows keep their line numbers so an overlap names the later row.
  std::vector<std::vector<std::pair<StepPeriod, int>>> rows;
  // Node name -> index: a pool of thousands of nodes has hundreds of rows each.
  std::unordered_map<std::string, std::size_t> index;
  csv::CsvLines lines(in, name, csv::CsvLines::Comments::Keep);
  while (lines.next()) {
    const std::string& text = lines.text();
    if (lines.is_comment()) {
      auto colon = text.find(':');
      if (colon == std::string::npos) continue;  // a comment, like the version line
      std::string key = trim(std::string_view(text).substr(1, colon - 1));
      std::string value = trim(std::string_view(text).substr(colon + 1));
      if (have_header && (key == "step_seconds" || key == "length"))
        lines.fail("metadata \"" + key + "\" after the header; it must come before \"node,start,end\"");
      if (key == "step_seconds") {
        t.step_seconds = parse_int(value, "step_seconds", lines);
        if (t.step_seconds < 1) lines.fail("step_seconds must be at least 1");
      } else if (key == "length") {
        t.length = parse_int(value, "length", lines);
        if (t.length < 1) lines.fail("length must be at least 1");
        have_length = true;
      }
      continue;
    }
    if (!have_header) {
      auto cols = lines.cells();
      if (cols != std::vector<std::string>{"node", "start", "end"}) {
        bool header_like = false;
        for (const auto& c : cols) header_like |= c == "node" || c == "start" || c == "end";
        if (!header_like)
          lines.fail("missing the header \"node,start,end\" before the first row \"" + text + "\"");
        for (const auto& c : cols)
          if (c != "node" && c != "start" && c != "end") lines.fail("unknown column \"" + c + "\"");
        lines.fail("expected the header \"node,start,end\", got \"" + text + "\"");
      }
      if (!have_length) lines.fail("missing \"# length: N\" metadata before the header");
      have_header = true;
      continue;
    }
    auto cells = lines.cells();
    if (cells.size() != 3)
      lines.fail("expected 3 fields (node,start,end), got " + std::to_string(cells.size()));
    if (cells[0].empty()) lines.fail("empty node name");
    StepPeriod p{parse_int(cells[1], "start", lines), parse_int(cells[2], "end", lines)};
    if (p.start < 0) lines.fail("start " + std::to_string(p.start) + " is negative");
    if (p.start >= p.end)
      lines.fail("start " + std::to_string(p.start) + " is not before end " + std::to_string(p.end));
    if (p.end > t.length)
      lines.fail("end " + std::to_string(p.end) + " is past the trace length " + std::to_string(t.length));
    const auto [it, added] = index.try_emplace(cells[0], t.nodes.size());
    if (added) {
      t.nodes.push_back(cells[0]);
      rows.emplace_back();
    }
    rows[it->second].push_back({p, lines.line()});
  }
  if (!have_length) lines.fail("missing \"# length: N\" metadata");
  if (!have_header) lines.fail("missing the header \"node,start,end\"");
  for (std::size_t n = 0; n < rows.size(); ++n) {
    auto& r = rows[n];
    std::stable_sort(r.begin(), r.end(),
                     [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
    std::vector<StepPeriod> ps;
    for (std::size_t i = 0; i < r.size(); ++i) {
      if (i > 0 && r[i].first.start < r[i - 1].first.end) {
        int later = std::max(r[i].second, r[i - 1].second);
        int earlier = std::min(r[i].second, r[i - 1].second);
        lines.fail_at(later,
                      "period of " + t.nodes[n] + " overlaps the one on line " + std::to_string(earlier));
      }
      ps.push_back(r[i].first);
    }
    t.periods.push_back(std::move(ps));
  }
  return t;
}

AvailabilityTrace read_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open the trace file");
  return parse_trace(in, path);
}

void write_trace(std::ostream& out, const AvailabilityTrace& t) {
  out << "# piranha availability trace v1\n"
      << "# step_seconds: " << t.step_seconds << "\n"
      << "# length: " << t.length << "\n"
      << "node,start,end\n";
  for (std::size_t n = 0; n < t.nodes.size(); ++n)
    for (const auto& p : t.periods[n]) out << t.nodes[n] << ',' << p.start << ',' << p.end << '\n';
}

}  // namespace piranha
