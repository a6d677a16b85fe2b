#include "piranha/trellis/value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace piranha::trellis {
namespace {

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

void append_json(std::string& out, const Value& v) {
  struct Visitor {
    std::string& out;
    void operator()(std::monostate) { out += "null"; }
    void operator()(bool b) { out += b ? "true" : "false"; }
    void operator()(std::int64_t i) { out += std::to_string(i); }
    void operator()(double d) {
      if (!std::isfinite(d)) {
        out += "null";  // JSON has no infinities
        return;
      }
      // The shortest of %.15g..%.17g that reads back as the same double.
      char buf[32];
      for (int precision = 15; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, d);
        if (std::strtod(buf, nullptr) == d) break;
      }
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      out += s;
    }
    void operator()(const std::string& s) { append_json_string(out, s); }
    void operator()(const Value::List& l) {
      out.push_back('[');
      for (std::size_t i = 0; i < l.size(); ++i) {
        if (i) out.push_back(',');
        append_json(out, l[i]);
      }
      out.push_back(']');
    }
    void operator()(const Value::Map& m) {
      out.push_back('{');
      bool first = true;
      for (const auto& [k, x] : m) {
        if (!first) out.push_back(',');
        first = false;
        append_json_string(out, k);
        out.push_back(':');
        append_json(out, x);
      }
      out.push_back('}');
    }
  };
  std::visit(Visitor{out}, v.variant());
}

}  // namespace

const Value& Value::operator[](std::string_view key) const {
  static const Value kNull;
  if (!is_map()) return kNull;
  auto it = as_map().find(key);
  return it == as_map().end() ? kNull : it->second;
}

std::string to_json(const Value& v) {
  std::string out;
  append_json(out, v);
  return out;
}

}  // namespace piranha::trellis
