#include "piranha/rigid/workload.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace piranha::rigid {
namespace {

[[noreturn]] void fail(const std::string& name, int line, const std::string& problem) {
  throw InputError(name, line, problem);
}

// SWF fields that must be integers (1-based): job, submit, run time,
// allocated and requested processors, requested time, user, executable.
constexpr bool integer_field(int f) {
  return f == 1 || f == 2 || f == 4 || f == 5 || f == 8 || f == 9 || f == 12 || f == 14;
}

double number(const std::string& name, int line, int field, const std::string& text) {
  if (integer_field(field)) {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size())
      fail(name, line, "field " + std::to_string(field) + " \"" + text + "\" is not an integer");
    return static_cast<double>(v);
  }
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v))
    fail(name, line, "field " + std::to_string(field) + " \"" + text + "\" is not a number");
  return v;
}

}  // namespace

Workload parse_swf(std::istream& in, const std::string& name) {
  Workload w;
  w.source = name;
  std::set<std::int64_t> ids;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos) continue;
    if (text[first] == ';') {
      const std::string key = "MaxNodes:";
      const auto at = text.find(key);
      if (at != std::string::npos) {
        std::istringstream value(text.substr(at + key.size()));
        int n = 0;
        if (value >> n && n > 0) w.max_nodes = n;
      }
      continue;
    }
    std::istringstream fields(text);
    std::vector<std::string> f;
    for (std::string item; fields >> item;) f.push_back(item);
    if (f.size() != 18) fail(name, line, "expected 18 fields, found " + std::to_string(f.size()));
    double v[19];
    for (int i = 1; i <= 18; ++i) {
      v[i] = number(name, line, i, f[static_cast<std::size_t>(i - 1)]);
      if (v[i] < -1)
        fail(name, line,
             "field " + std::to_string(i) + " is " + f[static_cast<std::size_t>(i - 1)] + "; below -1");
    }
    RigidJob j;
    j.id = static_cast<std::int64_t>(v[1]);
    j.line = line;
    if (v[2] < 0) fail(name, line, "job " + std::to_string(j.id) + " has no submit time");
    if (!ids.insert(j.id).second) fail(name, line, "job " + std::to_string(j.id) + " appears twice");
    const auto requested = static_cast<std::int64_t>(v[8]), allocated = static_cast<std::int64_t>(v[5]);
    const std::int64_t width = requested >= 1 ? requested : allocated;
    if (v[4] < 0 || width < 1) {
      ++w.skipped;
      continue;
    }
    if (width > 1'000'000)
      fail(name, line, "job " + std::to_string(j.id) + " asks for " + std::to_string(width) + " processors");
    j.submit = static_cast<Time>(v[2]);
    j.runtime = static_cast<Time>(v[4]);
    j.width = static_cast<int>(width);
    j.estimate = v[9] >= 0 ? static_cast<Time>(v[9]) : kUnknown;
    j.user = static_cast<std::int64_t>(v[12]);
    j.executable = static_cast<std::int64_t>(v[14]);
    w.jobs.push_back(j);
  }
  if (w.jobs.empty()) throw InputError(name, "no jobs");
  std::sort(w.jobs.begin(), w.jobs.end(), [](const RigidJob& a, const RigidJob& b) {
    return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
  });
  return w;
}

Workload read_swf(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open");
  return parse_swf(in, path);
}

Workload scale_load(const Workload& w, double factor) {
  Workload out = w;
  for (auto& j : out.jobs) {
    j.runtime = static_cast<Time>(std::ceil(static_cast<double>(j.runtime) * factor));
    if (j.estimate != kUnknown)
      j.estimate = static_cast<Time>(std::ceil(static_cast<double>(j.estimate) * factor));
  }
  return out;
}

Workload at_most_width(const Workload& w, int nodes) {
  Workload out = w;
  std::erase_if(out.jobs, [&](const RigidJob& j) { return j.width > nodes; });
  return out;
}

}  // namespace piranha::rigid
