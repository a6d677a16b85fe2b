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

// ---- Where a chart's texts go: pure, so that a test can check that no two
// overlap. Sizes are SVG units (px); a text's extent is estimated from its
// length and font size (no font metrics offline), on the generous side.

// An axis-aligned box: x0 <= x1, y0 <= y1.
struct Box {
  double x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
// Whether two boxes share more than an edge.
bool overlap(const Box& a, const Box& b);

struct ChartText {
  enum class Anchor { Start, Middle, End };
  std::string text;
  double x = 0, y = 0;  // the anchor: on the baseline (turned: the baseline runs upwards through it)
  Anchor anchor = Anchor::Start;
  double size = 11;     // font size
  bool turned = false;  // rotated 90 degrees anticlockwise, read upwards
  std::string css;      // its class: "t" (title), "s" (small) or none
  Box box() const;      // the room it takes, estimated
};

// A chart's frame (plot area at [left, w - right] x [top, h - bottom]) and
// every text in it: title, axis titles, tick labels, legend entries, bar
// values and names.
struct ChartLayout {
  double w = 640, h = 340, left = 60, right = 170, top = 30, bottom = 50;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;  // the data range drawn
  std::vector<ChartText> texts;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (w - left - right); }
  double py(double y) const { return h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom); }
};

// The layouts line_chart and bar_chart draw. Margins grow to fit the widest
// tick label, legend entry and bar name; x tick labels are thinned out until
// they fit; a bar's slot is as wide as its value's label; bar names are
// turned upright below the axis when any is wider than its slot. No two
// texts' boxes overlap, and every box is within [0, w] x [0, h].
ChartLayout line_chart_layout(const Axes& axes, const std::vector<Series>& series);
ChartLayout bar_chart_layout(const Axes& axes, const std::vector<std::pair<std::string, double>>& bars,
                             double reference = std::numeric_limits<double>::quiet_NaN());

// A bar's value as its label says it: two decimals under 1,000, then
// "12.5k", "12.48M", "3.10G".
std::string bar_value(double v);

// A table; cells are escaped; `numeric` right-aligns every column but the first.
std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// A whole page around `body` (already HTML) with a small inline stylesheet.
std::string page(const std::string& title, const std::string& body);

// Formats a number with `digits` decimals.
std::string fixed(double v, int digits);
// A signed percentage with one decimal: "+3.2%", "-0.5%", "+0.0%".
std::string signed_pct(double v);

}  // namespace piranha::sched::html
