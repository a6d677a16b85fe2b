// Template arguments for the typed tuple API: actuals, formals and bindings.
//
//   space.in("task", ts::formal<std::int64_t>, ts::formal<std::string>);
//   std::int64_t id; std::string row;
//   space.in("task", ts::bind(id), ts::bind(row));   // classic Linda ?id ?row
//
// A plain value is an actual. formal<T> matches any value of T's field type.
// bind(x) is a formal of x's type that receives the matched value into x.
// Types outside the five field types do not compile.
#pragma once

#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "piranha/tuplespace/tuple.h"

namespace piranha::ts {

template <class T>
struct formal_t {
  static constexpr Type type = field_type_of<T>::value;
};

// A typed formal: formal<std::int64_t>, formal<double>, formal<std::string>,
// formal<Blob>, formal<bool>.
template <class T>
inline constexpr formal_t<T> formal{};

template <class T>
struct bound_t {
  T* target;
  static constexpr Type type = field_type_of<T>::value;
};

// A formal that stores the matched field into `x` when the operation returns.
template <class T>
bound_t<T> bind(T& x) {
  return bound_t<T>{&x};
}

namespace detail {

template <class T>
struct is_formal : std::false_type {};
template <class T>
struct is_formal<formal_t<T>> : std::true_type {};
template <class T>
struct is_bound : std::false_type {};
template <class T>
struct is_bound<bound_t<T>> : std::true_type {};

template <class A>
Field field_of(A&& a) {
  using D = std::decay_t<A>;
  if constexpr (is_formal<D>::value || is_bound<D>::value)
    return Field::formal(D::type);
  else
    return Field::of(make_value(std::forward<A>(a)));
}

template <class... A>
Template template_of(A&&... args) {
  static_assert(sizeof...(A) >= 1 && sizeof...(A) <= kMaxFields, "a template has 1..kMaxFields fields");
  std::vector<Field> fields;
  fields.reserve(sizeof...(A));
  (fields.push_back(field_of(std::forward<A>(args))), ...);
  return Template(std::move(fields));
}

template <class A>
void bind_one(const A& a, const Value& v) {
  using D = std::decay_t<A>;
  if constexpr (is_bound<D>::value) {
    using T = std::remove_pointer_t<decltype(a.target)>;
    using S = typename field_type_of<T>::storage;
    *a.target = static_cast<T>(std::get<S>(v));
  }
}

// Writes matched values into every bind() argument.
template <class... A>
void bind_all(const Tuple& t, const A&... args) {
  std::size_t i = 0;
  (bind_one(args, t[i++]), ...);
}

template <class... A>
Tuple tuple_of(A&&... args) {
  static_assert(sizeof...(A) >= 1 && sizeof...(A) <= kMaxFields, "a tuple has 1..kMaxFields fields");
  static_assert(((!is_formal<std::decay_t<A>>::value && !is_bound<std::decay_t<A>>::value) && ...),
                "a tuple written with out() may not hold formals");
  return Tuple::of(std::forward<A>(args)...);
}

}  // namespace detail
}  // namespace piranha::ts
