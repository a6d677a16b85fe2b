#include "piranha/rigid/machine.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "piranha/scheduler/random.h"

namespace piranha::rigid {
namespace {

[[noreturn]] void bad(std::string_view item, const std::string& problem) {
  throw std::invalid_argument("--sites: \"" + std::string(item) + "\" " + problem);
}

double parse_factor(std::string_view item, const std::string& text) {
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(f) || f <= 0)
    bad(item, "has factor \"" + text + "\"; a factor is a number > 0");
  return f;
}

}  // namespace

int Machine::total_nodes() const {
  int n = 0;
  for (const auto& s : sites) n += s.nodes;
  return n;
}

int Machine::widest() const {
  int n = 0;
  for (const auto& s : sites) n = std::max(n, s.nodes);
  return n;
}

Machine single_site(int nodes) {
  Machine m;
  m.sites.push_back(Site{nodes, {1.0}});
  return m;
}

Machine parse_sites(std::string_view spec) {
  Machine m;
  std::size_t classes = 1;
  std::size_t pos = 0;
  if (spec.empty()) throw std::invalid_argument("--sites is empty");
  while (pos <= spec.size()) {
    const auto comma = std::min(spec.find(',', pos), spec.size());
    const std::string_view item = spec.substr(pos, comma - pos);
    pos = comma + 1;
    if (item.empty()) bad(item, "is empty");
    const auto star = item.find('*');
    const std::string count(item.substr(0, star));
    char* end = nullptr;
    const long nodes = std::strtol(count.c_str(), &end, 10);
    if (count.empty() || end != count.c_str() + count.size() || nodes < 1 || nodes > 1'000'000)
      bad(item, "does not start with a node count >= 1");
    Site s{static_cast<int>(nodes), {}};
    if (star == std::string_view::npos) {
      s.factors.push_back(1.0);
    } else {
      std::string rest(item.substr(star + 1));
      std::size_t p = 0;
      while (p <= rest.size()) {
        const auto slash = std::min(rest.find('/', p), rest.size());
        s.factors.push_back(parse_factor(item, rest.substr(p, slash - p)));
        p = slash + 1;
      }
    }
    if (s.factors.size() > 1) {
      if (classes > 1 && s.factors.size() != classes)
        bad(item, "gives " + std::to_string(s.factors.size()) + " factors; an earlier site gives " +
                      std::to_string(classes));
      classes = s.factors.size();
    }
    m.sites.push_back(std::move(s));
    if (comma == spec.size()) break;
  }
  for (auto& s : m.sites)
    if (s.factors.size() == 1 && classes > 1) s.factors.assign(classes, s.factors[0]);
  return m;
}

std::string to_string(const Machine& m) {
  std::ostringstream out;
  for (std::size_t i = 0; i < m.sites.size(); ++i) {
    const auto& s = m.sites[i];
    if (i) out << ",";
    out << s.nodes;
    const bool plain = std::all_of(s.factors.begin(), s.factors.end(), [](double f) { return f == 1.0; });
    if (plain) continue;
    for (std::size_t c = 0; c < s.factors.size(); ++c) out << (c ? "/" : "*") << s.factors[c];
  }
  return out.str();
}

int job_class(std::int64_t id, int classes) {
  if (classes <= 1) return 0;
  return static_cast<int>(sched::splitmix64(static_cast<std::uint64_t>(id)) %
                          static_cast<std::uint64_t>(classes));
}

Time scaled(Time seconds, double factor) {
  if (factor == 1.0) return seconds;
  return static_cast<Time>(std::ceil(static_cast<double>(seconds) * factor));
}

double factor_at(const Machine& m, const RigidJob& j, int site) {
  const auto& f = m.sites[static_cast<std::size_t>(site)].factors;
  return f[static_cast<std::size_t>(job_class(j.id, static_cast<int>(f.size())))];
}

Time runtime_at(const Machine& m, const RigidJob& j, int site) {
  return scaled(j.runtime, factor_at(m, j, site));
}

bool fits(const Machine& m, const RigidJob& j, int site) {
  return j.width <= m.sites[static_cast<std::size_t>(site)].nodes;
}

void check_fits(const Workload& w, const Machine& m) {
  const int widest = m.widest();
  for (const auto& j : w.jobs)
    if (j.width > widest)
      throw InputError(w.source, j.line,
                       "job " + std::to_string(j.id) + " needs " + std::to_string(j.width) +
                           " nodes; the largest site has " + std::to_string(widest));
}

}  // namespace piranha::rigid
