// Self-contained HTML with inline SVG charts, for the simulator's and the
// study's reports: no scripts, no external files, readable offline.
#pragma once

#include <limits>
#include <string>
#include <utility>
#include <vector>

namespace piranha::sched::html {

// Escapes &, <, >, " for text and attribute values.
std::string escape(const std::string& text);

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
};

struct Axes {
  std::string title, x_label, y_label;
  // The y range; when min >= max it is fitted to the data (from 0 when all y >= 0).
  double y_min = 0, y_max = 0;
};

// A line chart with a legend; one colour per series.
std::string line_chart(const Axes& axes, const std::vector<Series>& series);

// A bar chart of labelled values, optionally with a dashed reference line
// (e.g. 1.0 = TSK) when `reference` is finite.
std::string bar_chart(const Axes& axes, const std::vector<std::pair<std::string, double>>& bars,
                      double reference = std::numeric_limits<double>::quiet_NaN());

// A table; cells are escaped; `numeric` right-aligns every column but the first.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// A whole page around `body` (already HTML) with a small inline stylesheet.
std::string page(const std::string& title, const std::string& body);

// Formats a number with `digits` decimals.
std::string fixed(double v, int digits);
// A signed percentage with one decimal: "+3.2%", "-0.5%", "+0.0%".
std::string signed_pct(double v);

}  // namespace piranha::sched::html
