// Strict YAML reading for configuration files (internal to piranha/): every
// problem becomes an InputError "FILE:LINE: problem" naming the key, unknown
// and duplicate keys are errors. Used by the agent's configuration
// (agent_config.cc) and the server's auth file (auth_config.cc).
#pragma once

#include <strings.h>
#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>
#include <string>

#include "piranha/base/input_error.h"

namespace piranha::yaml {

inline std::string join(std::initializer_list<const char*> words) {
  std::string out;
  for (const char* w : words) out += (out.empty() ? "" : ", ") + std::string(w);
  return out;
}

inline std::string fmt(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// Reads one document strictly, turning every problem into an InputError that
// names the file, the 1-based line and the key.
class Reader {
 public:
  explicit Reader(std::string name) : name_(std::move(name)) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& problem) const {
    throw InputError(name_, mark.is_null() ? 0 : mark.line + 1, problem);
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& problem) const { fail(at.Mark(), problem); }

  // Checks that `map` is a mapping whose keys are all in `allowed`, each once.
  void check_keys(const YAML::Node& map, const std::string& section,
                  std::initializer_list<const char*> allowed) const {
    if (!map.IsMap()) fail(map, section + " must be a mapping of keys");
    std::set<std::string> seen;
    for (const auto& kv : map) {
      const YAML::Node& key = kv.first;
      if (!key.IsScalar()) fail(key, "keys in " + section + " must be plain names");
      const std::string k = key.Scalar();
      bool known = false;
      for (const char* a : allowed) known |= k == a;
      if (!known)
        fail(key, "unknown key '" + k + "' in " + section + " (expected one of: " + join(allowed) + ")");
      if (!seen.insert(k).second) fail(key, "duplicate key '" + k + "' in " + section);
    }
  }

  // The value's mark, falling back to its key's when the value is empty.
  static YAML::Mark mark_of(const YAML::Node& map, const std::string& key) {
    for (const auto& kv : map)
      if (kv.first.Scalar() == key) return kv.second.IsNull() ? kv.first.Mark() : kv.second.Mark();
    return map.Mark();
  }

  std::string describe(const YAML::Node& v) const {
    if (v.IsNull()) return "nothing";
    if (v.IsSequence()) return "a list";
    if (v.IsMap()) return "a mapping";
    return "'" + v.Scalar() + "'";
  }

  // A finite number in (lo, hi] (lo_open) or [lo, hi], at `at`.
  double number(const YAML::Node& v, const YAML::Mark& at, const std::string& what, double lo, bool lo_open,
                double hi) const {
    double d = 0;
    bool ok = v.IsScalar();
    if (ok) {
      try {
        d = v.as<double>();
      } catch (const YAML::Exception&) {
        ok = false;
      }
    }
    if (!ok || !std::isfinite(d)) fail(at, what + " must be a number, got " + describe(v));
    if (lo_open ? !(d > lo) : !(d >= lo))
      fail(at, what + " must be " + (lo_open ? "> " : ">= ") + fmt(lo) + ", got " + fmt(d));
    if (d > hi) fail(at, what + " must be <= " + fmt(hi) + ", got " + fmt(d));
    return d;
  }
  double number(const YAML::Node& map, const std::string& key, const std::string& what, double lo,
                bool lo_open, double hi) const {
    return number(map[key], mark_of(map, key), what, lo, lo_open, hi);
  }

  template <typename Int>
  Int integer(const YAML::Node& map, const std::string& key, const std::string& what, Int lo, Int hi) const {
    const YAML::Node v = map[key];
    Int i = 0;
    bool ok = v.IsScalar();
    if (ok) {
      const std::string& s = v.Scalar();
      auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
      ok = !s.empty() && ec == std::errc() && end == s.data() + s.size();
      // from_chars reports out-of-range separately; it is still not a valid value.
      if (!ok && ec == std::errc::result_out_of_range)
        fail(mark_of(map, key), what + " is out of range, got " + describe(v));
    }
    if (!ok) fail(mark_of(map, key), what + " must be an integer, got " + describe(v));
    if (i < lo || i > hi)
      fail(mark_of(map, key), what + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                  "], got " + std::to_string(i));
    return i;
  }

  bool boolean(const YAML::Node& map, const std::string& key, const std::string& what) const {
    const YAML::Node v = map[key];
    if (v.IsScalar()) {
      try {
        return v.as<bool>();
      } catch (const YAML::Exception&) {
      }
    }
    fail(mark_of(map, key), what + " must be true or false, got " + describe(v));
  }

  std::string text(const YAML::Node& map, const std::string& key, const std::string& what) const {
    const YAML::Node v = map[key];
    if (!v.IsScalar() || v.Scalar().empty())
      fail(mark_of(map, key), what + " must be a non-empty string, got " + describe(v));
    return v.Scalar();
  }

  // One of `choices` (compared case-insensitively, reported as written).
  std::size_t choice(const YAML::Node& map, const std::string& key, const std::string& what,
                     std::initializer_list<const char*> choices) const {
    const YAML::Node v = map[key];
    if (v.IsScalar()) {
      std::size_t i = 0;
      for (const char* c : choices) {
        if (strcasecmp(v.Scalar().c_str(), c) == 0) return i;
        ++i;
      }
    }
    fail(mark_of(map, key), what + " must be one of: " + join(choices) + ", got " + describe(v));
  }

 private:
  std::string name_;
};

inline YAML::Node parse_yaml(const Reader& r, const std::string& text) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, "invalid YAML: " + e.msg);
  }
}

// The whole file at `path`; `what` names it in errors ("the agent
// configuration"). Throws InputError when it cannot be read.
inline std::string read_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open " + what);
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path, "cannot read " + what);
  return text.str();
}

}  // namespace piranha::yaml
