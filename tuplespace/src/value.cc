#include "piranha/tuplespace/value.h"

#include <cstring>
#include <sstream>

#include "piranha/tuplespace/tuple.h"

namespace piranha::ts {

std::string_view type_name(Type t) {
  switch (t) {
    case Type::Int: return "int";
    case Type::Double: return "double";
    case Type::String: return "string";
    case Type::Blob: return "blob";
    case Type::Bool: return "bool";
  }
  return "?";
}

std::string to_string(const Value& v) {
  switch (type_of(v)) {
    case Type::Int: return std::to_string(std::get<std::int64_t>(v));
    case Type::Double: {
      std::ostringstream os;
      os << std::get<double>(v);
      std::string s = os.str();
      if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
      return s;
    }
    case Type::String: {
      // Appended piece by piece, not with operator+: GCC 12 at -O3 warns
      // falsely that the concatenation's memcpy may overlap (-Wrestrict).
      std::string s;
      s.append(1, '"').append(std::get<std::string>(v)).append(1, '"');
      return s;
    }
    case Type::Blob: return "blob(" + std::to_string(std::get<Blob>(v).bytes.size()) + ")";
    case Type::Bool: return std::get<bool>(v) ? "true" : "false";
  }
  return "?";
}

std::string to_string(const Tuple& t) {
  std::string s = "(";
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i) s += ", ";
    s += to_string(t[i]);
  }
  return s + ")";
}

std::string to_string(const Template& t) {
  std::string s = "(";
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (i) s += ", ";
    const Field& f = t[i];
    if (f.is_formal()) {
      s += '?';  // not "?" + std::string(...): the same false -Wrestrict as above
      s += type_name(f.type);
    } else {
      s += to_string(*f.actual);
    }
  }
  return s + ")";
}

Template Template::exactly(const Tuple& t) {
  std::vector<Field> fields;
  fields.reserve(t.size());
  for (const Value& v : t.fields()) fields.push_back(Field::of(v));
  return Template(std::move(fields));
}

bool Template::matches(const Tuple& t) const {
  if (t.size() != fields_.size()) return false;
  for (std::size_t i = 0; i < fields_.size(); ++i) {
    const Field& f = fields_[i];
    if (type_of(t[i]) != f.type) return false;
    if (!f.actual) continue;
    // Doubles compare by bit pattern, as the store compares canonical bytes:
    // NaN matches an identical NaN, and 0.0 does not match -0.0.
    if (f.type == Type::Double) {
      double a = std::get<double>(*f.actual), b = std::get<double>(t[i]);
      if (std::memcmp(&a, &b, sizeof a) != 0) return false;
    } else if (!(*f.actual == t[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace piranha::ts
