// Values: the five field types a tuple may hold.
//
// A field is a 64-bit signed integer, a double, a UTF-8 string, a byte blob or
// a boolean. Types are strict: the integer 3 never equals the double 3.0 and a
// string never equals a blob with the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>

namespace piranha::ts {

// The type of a field. The numeric codes are part of the wire protocol
// (docs/protocol.md); never renumber them.
enum class Type : std::uint8_t { Int = 0, Double = 1, String = 2, Blob = 3, Bool = 4 };

inline constexpr int kTypeCount = 5;

// "int", "double", "string", "blob", "bool".
std::string_view type_name(Type t);

// Uninterpreted bytes. Distinct from std::string so that a blob and a string
// never match each other.
struct Blob {
  std::string bytes;
  Blob() = default;
  explicit Blob(std::string b) : bytes(std::move(b)) {}
  friend bool operator==(const Blob&, const Blob&) = default;
};

// One field value. The variant's index equals static_cast<int>(Type).
using Value = std::variant<std::int64_t, double, std::string, Blob, bool>;

inline Type type_of(const Value& v) {
  return static_cast<Type>(v.index());
}

// Human-readable rendering, for messages and tools: 3, 3.5, "text", blob(12), true.
std::string to_string(const Value& v);

// Maps a C++ type to the field type that carries it. Only these map; any other
// type is a compile-time error when used as a field, which is what makes the
// tuple API type-safe.
template <class T, class = void>
struct field_type_of;  // intentionally undefined

template <class T>
struct field_type_of<T, std::enable_if_t<std::is_same_v<std::decay_t<T>, bool>>> {
  static constexpr Type value = Type::Bool;
  using storage = bool;
};
template <class T>
struct field_type_of<
    T, std::enable_if_t<std::is_integral_v<std::decay_t<T>> && !std::is_same_v<std::decay_t<T>, bool> &&
                        !std::is_same_v<std::decay_t<T>, char>>> {
  static constexpr Type value = Type::Int;
  using storage = std::int64_t;
};
template <class T>
struct field_type_of<T, std::enable_if_t<std::is_floating_point_v<std::decay_t<T>>>> {
  static constexpr Type value = Type::Double;
  using storage = double;
};
template <class T>
struct field_type_of<T, std::enable_if_t<std::is_same_v<std::decay_t<T>, std::string> ||
                                         std::is_same_v<std::decay_t<T>, std::string_view> ||
                                         std::is_same_v<std::decay_t<T>, const char*> ||
                                         std::is_same_v<std::decay_t<T>, char*>>> {
  static constexpr Type value = Type::String;
  using storage = std::string;
};
template <class T>
struct field_type_of<T, std::enable_if_t<std::is_same_v<std::decay_t<T>, Blob>>> {
  static constexpr Type value = Type::Blob;
  using storage = Blob;
};

// The Value holding `v`, converted to its storage type.
template <class T>
Value make_value(T&& v) {
  using S = typename field_type_of<T>::storage;
  if constexpr (std::is_same_v<S, std::string>)
    return Value(std::in_place_index<2>, std::string(std::string_view(v)));
  else
    return Value(std::in_place_index<static_cast<std::size_t>(field_type_of<T>::value)>,
                 static_cast<S>(std::forward<T>(v)));
}

}  // namespace piranha::ts
