#include "piranha/trellis/stats.h"

#include <cstdio>

namespace piranha::trellis {
namespace {

std::string us(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(d.count()) / 1e3);
  return buf;
}

}  // namespace

std::string format_report(const Report& r) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-24s %10s %8s %6s %10s %10s %8s %12s %12s\n", "node", "recalcs",
                "changes", "errors", "mean_us", "max_us", "probes", "top_mean_us", "top_max_us");
  out += line;
  for (const auto& n : r.nodes) {
    std::snprintf(line, sizeof line, "%-24s %10llu %8llu %6llu %10s %10s %8llu %12s %12s\n", n.name.c_str(),
                  static_cast<unsigned long long>(n.calculation.count),
                  static_cast<unsigned long long>(n.changes), static_cast<unsigned long long>(n.errors),
                  us(n.calculation.mean()).c_str(), us(n.calculation.max).c_str(),
                  static_cast<unsigned long long>(n.probe_to_top.count), us(n.probe_to_top.mean()).c_str(),
                  us(n.probe_to_top.max).c_str());
    out += line;
  }
  if (!r.links.empty()) {
    std::snprintf(line, sizeof line, "%-24s %6s %10s %10s %10s %10s %6s\n", "link", "state", "rtt_mean_us",
                  "rtt_max_us", "sent", "received", "downs");
    out += line;
    for (const auto& l : r.links) {
      std::snprintf(line, sizeof line, "%-24s %6s %10s %10s %10llu %10llu %6llu\n", l.host.c_str(),
                    l.state == LinkState::Up ? "up" : "down", us(l.round_trip.mean()).c_str(),
                    us(l.round_trip.max).c_str(), static_cast<unsigned long long>(l.sent),
                    static_cast<unsigned long long>(l.received), static_cast<unsigned long long>(l.downs));
      out += line;
    }
  }
  std::snprintf(line, sizeof line, "deadline misses: %llu\n", static_cast<unsigned long long>(r.misses));
  out += line;
  for (const auto& m : r.recent_misses) {
    std::snprintf(line, sizeof line, "  miss: probe of %s reached %s after %s us (deadline %s us)\n",
                  m.origin.c_str(), m.top.c_str(), us(m.latency).c_str(), us(m.deadline).c_str());
    out += line;
  }
  return out;
}

}  // namespace piranha::trellis
