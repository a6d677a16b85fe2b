#include "piranha/scheduler/html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace piranha::sched::html {
namespace {

// A colour-blind-safe palette (Okabe–Ito) followed by greys.
const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                          "#000000", "#F0E442", "#999999", "#666666", "#332288", "#882255"};

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A "nice" tick step covering `span` in about `ticks` steps.
double tick_step(double span, int ticks) {
  if (span <= 0) return 1;
  const double raw = span / ticks, mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

// As many decimals as the step needs: a step of 2.5 labels 2.5, 5.0, 7.5,
// not 2, 5, 8; a step of 0.005 labels 0.005, 0.010, not 0.01, 0.01.
std::string tick_label(double v, double step) {
  const double k = std::floor(std::log10(step) + 1e-9);
  const double m = step / std::pow(10.0, k);
  const int decimals = std::max(0, static_cast<int>(-k) + (std::fabs(m - 2.5) < 1e-6 ? 1 : 0));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, std::fabs(v) < step * 1e-6 ? 0.0 : v);
  return buf;
}

// Characters, not bytes: an en dash is one.
double length(const std::string& text) {
  double n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

// The estimated width of a text: 0.62 em a character, more than most
// glyphs of a sans-serif font take (digits 0.55 em).
double text_width(const std::string& text, double size) {
  return 0.62 * size * length(text);
}

constexpr double kGap = 2;  // room kept between texts that are near each other

void fit_y(ChartLayout& f, const Axes& a, double lo, double hi) {
  if (a.y_min < a.y_max) {
    f.y0 = a.y_min, f.y1 = a.y_max;
    return;
  }
  if (lo >= 0) lo = 0;
  if (hi <= lo) hi = lo + 1;
  const double step = tick_step(hi - lo, 5);
  f.y0 = std::floor(lo / step) * step;
  f.y1 = std::ceil(hi / step) * step;
}

using Anchor = ChartText::Anchor;

void add_text(ChartLayout& f, std::string text, double x, double y, Anchor anchor, double size,
              std::string css = {}, bool turned = false) {
  if (text.empty()) return;
  f.texts.push_back({std::move(text), x, y, anchor, size, turned, std::move(css)});
}

// The y ticks' labels, the left margin that fits them beside the turned
// y-axis title, the title (over the plot, kept within the chart) and the
// axis titles. The caller adds the x ticks' labels and the rest.
void frame_texts(ChartLayout& f, const Axes& a) {
  const double ystep = tick_step(f.y1 - f.y0, 5);
  std::vector<std::pair<double, std::string>> ticks;
  double widest = 0;
  for (double y = f.y0; y <= f.y1 + ystep * 1e-6; y += ystep) {
    ticks.emplace_back(y, tick_label(y, ystep));
    widest = std::max(widest, text_width(ticks.back().second, 11));
  }
  // The y-axis title's box reaches x = 14 + 0.25 em; tick labels end 6 left of the axis.
  f.left = std::max(f.left, 14 + 0.3 * 11 + kGap + widest + 6);
  const double title_w = text_width(a.title, 13);
  const double centre = (f.left + f.w - f.right) / 2;
  add_text(f, a.title, std::clamp(centre, title_w / 2 + kGap, f.w - title_w / 2 - kGap), 18, Anchor::Middle,
           13, "t");
  for (const auto& [y, label] : ticks) add_text(f, label, f.left - 6, f.py(y) + 4, Anchor::End, 11);
  add_text(f, a.x_label, (f.left + f.w - f.right) / 2, f.h - 10, Anchor::Middle, 11);
  add_text(f, a.y_label, 14, (f.top + f.h - f.bottom) / 2, Anchor::Middle, 11, {}, true);
}

// A chart at least as wide as its title: the right margin grows.
void fit_title(ChartLayout& f, const Axes& a) {
  const double need = text_width(a.title, 13) + 2 * kGap;
  if (f.w < need) f.right += need - f.w, f.w = need;
}

// x tick labels under the axis, every other one dropped until they do not touch.
void x_tick_texts(ChartLayout& f) {
  for (double xstep = tick_step(f.x1 - f.x0, 8);; xstep *= 2) {
    std::vector<ChartText> ticks;
    for (double x = std::ceil(f.x0 / xstep - 1e-9) * xstep; x <= f.x1 + xstep * 1e-6; x += xstep)
      ticks.push_back({tick_label(x, xstep), f.px(x), f.h - f.bottom + 17, Anchor::Middle, 11, false, {}});
    bool apart = true;
    for (std::size_t i = 1; i < ticks.size(); ++i) {
      Box a = ticks[i - 1].box(), b = ticks[i].box();
      a.x1 += kGap;
      apart = apart && !overlap(a, b);
    }
    if (apart || ticks.size() <= 2) {
      f.texts.insert(f.texts.end(), ticks.begin(), ticks.end());
      return;
    }
  }
}

const char* anchor_name(Anchor a) {
  return a == Anchor::Start ? "start" : a == Anchor::Middle ? "middle" : "end";
}

void svg_open(std::ostringstream& s, const ChartLayout& f, const Axes& a) {
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << num(f.w) << ' ' << num(f.h)
    << "\" width=\"" << num(f.w) << "\" height=\"" << num(f.h) << "\" role=\"img\" aria-label=\""
    << escape(a.title) << "\">\n";
  const double ystep = tick_step(f.y1 - f.y0, 5);
  for (double y = f.y0; y <= f.y1 + ystep * 1e-6; y += ystep)
    s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.w - f.right) << "\" y1=\"" << num(f.py(y))
      << "\" y2=\"" << num(f.py(y)) << "\" class=\"g\"/>\n";
  s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.left) << "\" y1=\"" << num(f.top) << "\" y2=\""
    << num(f.h - f.bottom) << "\" class=\"a\"/>";
  s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.w - f.right) << "\" y1=\"" << num(f.h - f.bottom)
    << "\" y2=\"" << num(f.h - f.bottom) << "\" class=\"a\"/>\n";
}

void svg_texts(std::ostringstream& s, const ChartLayout& f) {
  for (const auto& t : f.texts) {
    s << "<text ";
    if (t.turned)
      s << "transform=\"translate(" << num(t.x) << ',' << num(t.y) << ") rotate(-90)\"";
    else
      s << "x=\"" << num(t.x) << "\" y=\"" << num(t.y) << "\"";
    if (t.anchor != Anchor::Start) s << " text-anchor=\"" << anchor_name(t.anchor) << "\"";
    if (!t.css.empty()) s << " class=\"" << t.css << "\"";
    s << '>' << escape(t.text) << "</text>\n";
  }
}

}  // namespace

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string signed_pct(double v) {
  return (v >= 0 ? "+" : "") + fixed(v, 1) + "%";
}

Box ChartText::box() const {
  const double w = text_width(text, size);
  const double from = anchor == Anchor::Start ? 0 : anchor == Anchor::Middle ? -w / 2 : -w;
  // Ascent 0.85 em above the baseline, descent 0.25 em below it.
  if (!turned) return {x + from, y - 0.85 * size, x + from + w, y + 0.25 * size};
  // Turned anticlockwise: the text runs upwards from (x, y), its ascent to the left.
  return {x - 0.85 * size, y - from - w, x + 0.25 * size, y - from};
}

bool overlap(const Box& a, const Box& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

std::string bar_value(double v) {
  const double m = std::fabs(v);
  char buf[48];
  if (m < 1e3)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else if (m < 1e6)
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else if (m < 1e9)
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  return buf;
}

ChartLayout line_chart_layout(const Axes& a, const std::vector<Series>& series) {
  ChartLayout f;
  double lo = INFINITY, hi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
  for (const auto& s : series)
    for (auto [x, y] : s.points) {
      lo = std::min(lo, y), hi = std::max(hi, y);
      xlo = std::min(xlo, x), xhi = std::max(xhi, x);
    }
  if (!(xlo < xhi)) xlo = 0, xhi = 1;
  if (!(lo <= hi)) lo = 0, hi = 1;
  f.x0 = xlo, f.x1 = xhi;
  fit_y(f, a, lo, hi);
  // The legend, right of the plot: as wide as its longest name, as tall as its entries.
  double widest = 0;
  for (const auto& s : series) widest = std::max(widest, text_width(s.name, 11));
  const double plot_w = f.w - f.left - f.right;
  f.right = std::max(f.right, 35 + widest + kGap);
  f.h = std::max(f.h, f.top + 14 + 16 * static_cast<double>(series.size()) + kGap);
  frame_texts(f, a);
  f.w = f.left + plot_w + f.right;
  fit_title(f, a);
  // The first pass found the left margin; the texts again, for the width now.
  f.texts.clear();
  frame_texts(f, a);
  x_tick_texts(f);
  for (std::size_t i = 0; i < series.size(); ++i)
    add_text(f, series[i].name, f.w - f.right + 35, f.top + 14 + 16 * static_cast<double>(i), Anchor::Start,
             11);
  return f;
}

std::string line_chart(const Axes& a, const std::vector<Series>& series) {
  const ChartLayout f = line_chart_layout(a, series);
  std::ostringstream s;
  svg_open(s, f, a);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.6\" points=\"";
    for (auto [x, y] : series[i].points)
      s << num(f.px(x)) << ',' << num(f.py(std::clamp(y, f.y0, f.y1))) << ' ';
    s << "\"/>\n";
    const double ly = f.top + 14 + 16 * static_cast<double>(i);
    s << "<line x1=\"" << num(f.w - f.right + 10) << "\" x2=\"" << num(f.w - f.right + 30) << "\" y1=\""
      << num(ly - 4) << "\" y2=\"" << num(ly - 4) << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>\n";
  }
  svg_texts(s, f);
  s << "</svg>\n";
  return s.str();
}

ChartLayout bar_chart_layout(const Axes& a, const std::vector<std::pair<std::string, double>>& bars,
                             double reference) {
  ChartLayout f;
  f.right = 20;
  f.top = 38;  // the tallest bar's value stays clear of the title
  double hi = 0, value_w = 0, name_w = 0;
  for (const auto& [name, v] : bars) {
    hi = std::max(hi, v);
    value_w = std::max(value_w, text_width(bar_value(v), 10));
    name_w = std::max(name_w, text_width(name, 10));
  }
  if (std::isfinite(reference)) hi = std::max(hi, reference);
  f.x0 = 0, f.x1 = static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  // A slot holds its bar's value; a name wider than its slot is turned upright.
  const double slot = std::max(42.0, value_w + 3 * kGap);
  const bool turned = name_w + 2 * kGap > slot;
  const double plot_h = 230;
  // Names below the axis, then the x-axis title if any.
  f.bottom = (turned ? 6 + name_w + 2 * kGap : 24) + (a.x_label.empty() ? 0 : 20);
  f.h = f.top + plot_h + f.bottom;
  fit_y(f, a, 0, hi);
  frame_texts(f, a);
  f.w = std::max(420.0, f.left + f.right + slot * f.x1);
  fit_title(f, a);
  f.texts.clear();
  frame_texts(f, a);
  const double width = (f.w - f.left - f.right) / f.x1;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double centre = f.px(static_cast<double>(i)) + width / 2;
    const double top = f.py(std::min(bars[i].second, f.y1));
    add_text(f, bar_value(bars[i].second), centre, top - 3, Anchor::Middle, 10, "s");
    if (turned)
      add_text(f, bars[i].first, centre + 3.5, f.h - f.bottom + 6, Anchor::End, 10, "s", true);
    else
      add_text(f, bars[i].first, centre, f.h - f.bottom + 14, Anchor::Middle, 10, "s");
  }
  return f;
}

std::string bar_chart(const Axes& a, const std::vector<std::pair<std::string, double>>& bars,
                      double reference) {
  const ChartLayout f = bar_chart_layout(a, bars, reference);
  std::ostringstream s;
  svg_open(s, f, a);
  const double slot = (f.w - f.left - f.right) / f.x1;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double x = f.px(static_cast<double>(i)) + slot * 0.15, y = f.py(std::min(bars[i].second, f.y1));
    s << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(slot * 0.7) << "\" height=\""
      << num(f.py(f.y0) - y) << "\" fill=\"" << kColours[0] << "\"><title>" << escape(bars[i].first) << ": "
      << fixed(bars[i].second, 3) << "</title></rect>\n";
  }
  if (std::isfinite(reference))
    s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.w - f.right) << "\" y1=\""
      << num(f.py(reference)) << "\" y2=\"" << num(f.py(reference))
      << "\" stroke=\"#D55E00\" stroke-dasharray=\"5,4\"/>\n";
  svg_texts(s, f);
  s << "</svg>\n";
  return s.str();
}

std::string table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::ostringstream s;
  s << "<table><thead><tr>";
  for (const auto& h : header) s << "<th>" << escape(h) << "</th>";
  s << "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    s << "<tr>";
    for (const auto& c : r) s << "<td>" << escape(c) << "</td>";
    s << "</tr>\n";
  }
  s << "</tbody></table>\n";
  return s.str();
}

std::string page(const std::string& title, const std::string& body) {
  std::ostringstream s;
  s << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>" << escape(title)
    << "</title>\n<style>\n"
       "body{font:15px/1.5 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}\n"
       "h1,h2,h3{line-height:1.2}svg{display:block;margin:1em 0;font:11px "
       "sans-serif;max-width:100%;height:auto}\n"
       "svg .t{font-size:13px;font-weight:bold}svg .s{font-size:10px}svg .g{stroke:#e4e4e4}svg "
       ".a{stroke:#444}\n"
       "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px "
       "8px;text-align:right}\n"
       "td:first-child,th:first-child{text-align:left}code{background:#f3f3f3;padding:0 3px}\n"
       ".note{background:#fff8e0;border-left:4px solid #E69F00;padding:.5em 1em}\n"
       "</style></head><body>\n"
    << body << "\n</body></html>\n";
  return s.str();
}

}  // namespace piranha::sched::html
