#include "piranha/agent/availability.h"

#include <cmath>
#include <cstdio>

namespace piranha {
namespace {

std::string format(const char* fmt, double a, double b) {
  char buf[96];
  std::snprintf(buf, sizeof buf, fmt, a, b);
  return buf;
}

void add(std::string& reasons, const std::string& reason) {
  if (!reasons.empty()) reasons += "; ";
  reasons += reason;
}

}  // namespace

Verdict judge(const Reading& reading, const Thresholds& thresholds) {
  std::string reasons;
  if (reading.load) {
    const std::array<double, 3> limit = {thresholds.load1, thresholds.load5, thresholds.load15};
    const char* names[] = {"1-min", "5-min", "15-min"};
    for (std::size_t i = 0; i < 3; ++i) {
      // Written as !(a < b) so that a NaN reading counts as too high.
      if (!((*reading.load)[i] < limit[i]))
        add(reasons, std::string(names[i]) + format(" load %.2f >= %.2f", (*reading.load)[i], limit[i]));
    }
    if (!reasons.empty() && reading.own_piranhas_excluded) reasons += ", own piranhas excluded";
  }
  if (reading.input_idle_seconds && !(*reading.input_idle_seconds >= thresholds.input_idle_seconds)) {
    // Floor the idle time so that the message never reads "60 s < 60 s".
    add(reasons, format("keyboard/mouse idle %.0f s < %g s", std::floor(*reading.input_idle_seconds),
                        thresholds.input_idle_seconds));
  }
  if (reasons.empty()) return {true, "idle"};
  return {false, reasons};
}

}  // namespace piranha
