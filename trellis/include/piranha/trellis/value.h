// Value: the state of a trellis node, and the data a command carries.
//
// A Value is null, a boolean, a 64-bit integer, a double, a UTF-8 string, a
// list of Values or a map from strings to Values. It is what crosses a link
// between hosts (as msgpack, see wire.h), so node states never hold pointers
// or host-local handles. Comparison is strict: the integer 3 differs from the
// double 3.0, which is what lets a node decide reliably that its state did
// not change.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace piranha::trellis {

class Value {
 public:
  using List = std::vector<Value>;
  using Map = std::map<std::string, Value, std::less<>>;
  using Variant = std::variant<std::monostate, bool, std::int64_t, double, std::string, List, Map>;

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : v_(b) {}
  Value(int i) : v_(std::int64_t{i}) {}
  Value(long i) : v_(std::int64_t{i}) {}
  Value(long long i) : v_(std::int64_t{i}) {}
  Value(unsigned i) : v_(std::int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(std::string_view s) : v_(std::string(s)) {}
  Value(List l) : v_(std::move(l)) {}
  Value(Map m) : v_(std::move(m)) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  // An int or a double.
  bool is_number() const { return is_int() || is_double(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<List>(v_); }
  bool is_map() const { return std::holds_alternative<Map>(v_); }

  // The held value. Throw std::bad_variant_access on the wrong type.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return std::get<List>(v_); }
  const Map& as_map() const { return std::get<Map>(v_); }
  List& as_list() { return std::get<List>(v_); }
  Map& as_map() { return std::get<Map>(v_); }
  // An int or a double as a double; throws std::bad_variant_access otherwise.
  double as_number() const { return is_int() ? static_cast<double>(as_int()) : std::get<double>(v_); }

  // The entry `key` of a map, or null when this is not a map or has no such key.
  const Value& operator[](std::string_view key) const;

  const Variant& variant() const { return v_; }

  friend bool operator==(const Value&, const Value&) = default;

 private:
  Variant v_;
};

// Compact JSON, for logs and the command line: null, true, 3, 3.5, "text",
// [1,2], {"a":1}, written by nlohmann-json. Doubles always show a fraction or
// exponent (3.0), so the type survives a round trip through a reader that
// keeps it, and read back as the same double; a non-finite one is null. Map
// keys come in byte order. Control characters in strings are escaped; bytes
// that are not UTF-8 become U+FFFD, so the result is always valid JSON.
// Never throws but std::bad_alloc.
std::string to_json(const Value& v);

}  // namespace piranha::trellis
