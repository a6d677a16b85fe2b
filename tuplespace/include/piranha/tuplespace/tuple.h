// Tuples and templates: what is stored in a space and what selects from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "piranha/tuplespace/value.h"

namespace piranha::ts {

// A tuple has between 1 and kMaxFields fields. The limit is part of the wire
// protocol: a server rejects longer tuples and templates.
inline constexpr std::size_t kMaxFields = 16;

// An ordered list of 1..kMaxFields values. Cheap to move; copying copies values.
class Tuple {
 public:
  Tuple() = default;
  explicit Tuple(std::vector<Value> fields) : fields_(std::move(fields)) {}

  // Tuple::of("task", 3, 2.5) builds a tuple from C++ values.
  template <class... Ts>
  static Tuple of(Ts&&... vs) {
    std::vector<Value> f;
    f.reserve(sizeof...(Ts));
    (f.push_back(make_value(std::forward<Ts>(vs))), ...);
    return Tuple(std::move(f));
  }

  std::size_t size() const { return fields_.size(); }
  const Value& operator[](std::size_t i) const { return fields_.at(i); }
  const std::vector<Value>& fields() const { return fields_; }

  // The field at `i` as a T (int64_t, double, std::string, Blob, bool).
  // Throws std::bad_variant_access when the field holds another type.
  template <class T>
  const T& get(std::size_t i) const {
    return std::get<T>(fields_.at(i));
  }

  // The whole tuple as a std::tuple of the given types, for structured bindings:
  //   auto [tag, id, row] = t.as<std::string, std::int64_t, Blob>();
  // Throws std::invalid_argument when the arity differs and
  // std::bad_variant_access when a type differs.
  template <class... Ts>
  std::tuple<Ts...> as() const {
    if (sizeof...(Ts) != fields_.size())
      throw std::invalid_argument("tuple has " + std::to_string(fields_.size()) + " fields, asked for " +
                                  std::to_string(sizeof...(Ts)));
    return as_impl<Ts...>(std::index_sequence_for<Ts...>{});
  }

  friend bool operator==(const Tuple&, const Tuple&) = default;

 private:
  template <class... Ts, std::size_t... I>
  std::tuple<Ts...> as_impl(std::index_sequence<I...>) const {
    return std::tuple<Ts...>(std::get<Ts>(fields_[I])...);
  }
  std::vector<Value> fields_;
};

// ("task", 3, 2.5) style rendering.
std::string to_string(const Tuple& t);

// One template field: an actual (matches an equal value of the same type) or a
// typed formal (matches any value of that type).
struct Field {
  Type type = Type::Int;
  std::optional<Value> actual;  // empty for a formal

  static Field formal(Type t) { return Field{t, std::nullopt}; }
  static Field of(Value v) {
    Type t = type_of(v);
    return Field{t, std::move(v)};
  }
  bool is_formal() const { return !actual.has_value(); }
  friend bool operator==(const Field&, const Field&) = default;
};

// A template selects tuples of the same arity whose every field matches.
class Template {
 public:
  Template() = default;
  explicit Template(std::vector<Field> fields) : fields_(std::move(fields)) {}
  // The template that matches `t` (and its equals) alone: every field actual.
  static Template exactly(const Tuple& t);

  std::size_t size() const { return fields_.size(); }
  const Field& operator[](std::size_t i) const { return fields_.at(i); }
  const std::vector<Field>& fields() const { return fields_; }

  // True when `t` has this template's arity and every field matches.
  bool matches(const Tuple& t) const;

  friend bool operator==(const Template&, const Template&) = default;

 private:
  std::vector<Field> fields_;
};

// ("task", ?int, 2.5) style rendering.
std::string to_string(const Template& t);

}  // namespace piranha::ts
