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
// not 2, 5, 8.
std::string tick_label(double v, double step) {
  char buf[32];
  const bool whole = std::fabs(step - std::round(step)) < 1e-9;
  std::snprintf(buf, sizeof buf, step >= 1 && whole ? "%.0f" : step >= 0.1 ? "%.1f" : "%.2f", v);
  return buf;
}

struct Frame {
  double w = 640, h = 340, left = 60, right = 170, top = 30, bottom = 50;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  double px(double x) const { return left + (x - x0) / (x1 - x0) * (w - left - right); }
  double py(double y) const { return h - bottom - (y - y0) / (y1 - y0) * (h - top - bottom); }
};

void fit_y(Frame& f, const Axes& a, double lo, double hi) {
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

void axes_svg(std::ostringstream& s, const Frame& f, const Axes& a, bool x_ticks) {
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << f.w << ' ' << f.h << "\" width=\"" << f.w
    << "\" height=\"" << f.h << "\" role=\"img\" aria-label=\"" << escape(a.title) << "\">\n";
  s << "<text x=\"" << num(f.w / 2 - f.right / 2 + f.left / 2)
    << "\" y=\"18\" text-anchor=\"middle\" class=\"t\">" << escape(a.title) << "</text>\n";
  const double ystep = tick_step(f.y1 - f.y0, 5);
  for (double y = f.y0; y <= f.y1 + ystep * 1e-6; y += ystep) {
    s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.w - f.right) << "\" y1=\"" << num(f.py(y))
      << "\" y2=\"" << num(f.py(y)) << "\" class=\"g\"/>";
    s << "<text x=\"" << num(f.left - 6) << "\" y=\"" << num(f.py(y) + 4) << "\" text-anchor=\"end\">"
      << tick_label(y, ystep) << "</text>\n";
  }
  if (x_ticks) {
    const double xstep = tick_step(f.x1 - f.x0, 8);
    for (double x = std::ceil(f.x0 / xstep) * xstep; x <= f.x1 + xstep * 1e-6; x += xstep)
      s << "<text x=\"" << num(f.px(x)) << "\" y=\"" << num(f.h - f.bottom + 16)
        << "\" text-anchor=\"middle\">" << tick_label(x, xstep) << "</text>\n";
  }
  s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.left) << "\" y1=\"" << num(f.top) << "\" y2=\""
    << num(f.h - f.bottom) << "\" class=\"a\"/>";
  s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.w - f.right) << "\" y1=\"" << num(f.h - f.bottom)
    << "\" y2=\"" << num(f.h - f.bottom) << "\" class=\"a\"/>\n";
  s << "<text x=\"" << num((f.left + f.w - f.right) / 2) << "\" y=\"" << num(f.h - 10)
    << "\" text-anchor=\"middle\">" << escape(a.x_label) << "</text>\n";
  s << "<text transform=\"translate(14," << num((f.top + f.h - f.bottom) / 2)
    << ") rotate(-90)\" text-anchor=\"middle\">" << escape(a.y_label) << "</text>\n";
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

std::string line_chart(const Axes& a, const std::vector<Series>& series) {
  Frame f;
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
  std::ostringstream s;
  axes_svg(s, f, a, true);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColours[i % std::size(kColours)];
    s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.6\" points=\"";
    for (auto [x, y] : series[i].points)
      s << num(f.px(x)) << ',' << num(f.py(std::clamp(y, f.y0, f.y1))) << ' ';
    s << "\"/>\n";
    const double ly = f.top + 14 + 16 * static_cast<double>(i);
    s << "<line x1=\"" << num(f.w - f.right + 10) << "\" x2=\"" << num(f.w - f.right + 30) << "\" y1=\""
      << num(ly - 4) << "\" y2=\"" << num(ly - 4) << "\" stroke=\"" << colour << "\" stroke-width=\"2\"/>";
    s << "<text x=\"" << num(f.w - f.right + 35) << "\" y=\"" << num(ly) << "\">" << escape(series[i].name)
      << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

std::string bar_chart(const Axes& a, const std::vector<std::pair<std::string, double>>& bars,
                      double reference) {
  Frame f;
  f.right = 20;
  f.bottom = 80;
  f.w = std::max(420.0, 80 + 42.0 * static_cast<double>(bars.size()));
  double hi = 0;
  for (const auto& b : bars) hi = std::max(hi, b.second);
  if (std::isfinite(reference)) hi = std::max(hi, reference);
  f.x0 = 0, f.x1 = static_cast<double>(std::max<std::size_t>(bars.size(), 1));
  fit_y(f, a, 0, hi);
  std::ostringstream s;
  axes_svg(s, f, a, false);
  const double slot = (f.w - f.left - f.right) / f.x1;
  for (std::size_t i = 0; i < bars.size(); ++i) {
    const double x = f.px(static_cast<double>(i)) + slot * 0.15, y = f.py(std::min(bars[i].second, f.y1));
    s << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(slot * 0.7) << "\" height=\""
      << num(f.py(f.y0) - y) << "\" fill=\"" << kColours[0] << "\"><title>" << escape(bars[i].first) << ": "
      << fixed(bars[i].second, 3) << "</title></rect>";
    s << "<text x=\"" << num(x + slot * 0.35) << "\" y=\"" << num(y - 3)
      << "\" text-anchor=\"middle\" class=\"s\">" << fixed(bars[i].second, 2) << "</text>";
    const double lx = x + slot * 0.35, ly = f.h - f.bottom + 12;
    s << "<text transform=\"translate(" << num(lx) << ',' << num(ly) << ") rotate(40)\" class=\"s\">"
      << escape(bars[i].first) << "</text>\n";
  }
  if (std::isfinite(reference))
    s << "<line x1=\"" << num(f.left) << "\" x2=\"" << num(f.w - f.right) << "\" y1=\""
      << num(f.py(reference)) << "\" y2=\"" << num(f.py(reference))
      << "\" stroke=\"#D55E00\" stroke-dasharray=\"5,4\"/>\n";
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
