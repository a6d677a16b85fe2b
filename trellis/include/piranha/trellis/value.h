// Value: the state of a trellis node, and the data a command carries.
//
// A Value is null, a boolean, a 64-bit integer, a double, a UTF-8 string, a
// list of Values or a map from strings to Values. It is what crosses a link
// between hosts (as msgpack, see wire.h), so node states never hold pointers
// or host-local handles. Comparison is strict: the integer 3 differs from the
// double 3.0, which is what lets a node decide reliably that its state did
// not change.
//
// A map is one sorted array (sorted_map.h). Lists and maps are shared, not
// copied: copying a Value that holds one copies a reference, and two Values
// that share one compare equal without looking inside. That is what keeps a trellis of 10,000 monitors cheap,
// where each state is delivered to its superiors and compared with the last
// one at every tick (docs/scale.md). A shared list or map is never changed in
// place: the mutable accessors copy it first when anything else shares it
// (copy on write), so a reference they return must not be kept across a copy
// of the Value it came from. Distinct Values may be used on distinct threads
// even when they share a list or map; one Value is not for concurrent use.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "piranha/trellis/sorted_map.h"

namespace piranha::trellis {

class Value {
 public:
  using List = std::vector<Value>;
  using Map = SortedMap<Value>;  // keys in byte order (sorted_map.h)
  Value() = default;
  // Out of line (value.cc): inlined, GCC 12 takes a Value moved within an
  // array for uninitialized (-Wmaybe-uninitialized, a false positive).
  Value(const Value&);
  Value(Value&&) noexcept;
  Value& operator=(const Value&);
  Value& operator=(Value&&) noexcept;
  ~Value();
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
  Value(List l) : v_(std::make_shared<List>(std::move(l))) {}
  Value(Map m) : v_(std::make_shared<Map>(std::move(m))) {}

  bool is_null() const { return std::holds_alternative<std::monostate>(v_); }
  bool is_bool() const { return std::holds_alternative<bool>(v_); }
  bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
  bool is_double() const { return std::holds_alternative<double>(v_); }
  // An int or a double.
  bool is_number() const { return is_int() || is_double(); }
  bool is_string() const { return std::holds_alternative<std::string>(v_); }
  bool is_list() const { return std::holds_alternative<Shared<List>>(v_); }
  bool is_map() const { return std::holds_alternative<Shared<Map>>(v_); }

  // The held value. Throw std::bad_variant_access on the wrong type.
  bool as_bool() const { return std::get<bool>(v_); }
  std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  const std::string& as_string() const { return std::get<std::string>(v_); }
  const List& as_list() const { return *std::get<Shared<List>>(v_); }
  const Map& as_map() const { return *std::get<Shared<Map>>(v_); }
  // Copy on write: the list or map is this Value's own afterwards.
  List& as_list() { return owned(std::get<Shared<List>>(v_)); }
  Map& as_map() { return owned(std::get<Shared<Map>>(v_)); }
  // An int or a double as a double; throws std::bad_variant_access otherwise.
  double as_number() const { return is_int() ? static_cast<double>(as_int()) : std::get<double>(v_); }

  // The entry `key` of a map, or null when this is not a map or has no such key.
  const Value& operator[](std::string_view key) const;
  // The same, looking first at position `hint` of the map (SortedMap's
  // find with a hint): for reading states that are all built alike.
  const Value& get(std::string_view key, std::size_t hint) const;

  // Calls f with the held value: std::monostate, bool, std::int64_t, double,
  // const std::string&, const List& or const Map&.
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(
        [&f](const auto& x) -> decltype(auto) {
          if constexpr (requires { *x; })
            return f(*x);
          else
            return f(x);
        },
        v_);
  }

  // Same type and same contents; a shared list or map is equal at once.
  friend bool operator==(const Value& a, const Value& b);

 private:
  template <class T>
  using Shared = std::shared_ptr<T>;
  template <class T>
  static T& owned(Shared<T>& p) {
    if (p.use_count() > 1) p = std::make_shared<T>(*p);
    return *p;
  }

  std::variant<std::monostate, bool, std::int64_t, double, std::string, Shared<List>, Shared<Map>> v_;
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
