// Template fields for the system space's templates (internal to piranha/).
#pragma once

#include <cstdint>
#include <string>

#include "piranha/tuplespace/tuple.h"

namespace piranha::sys::detail {

namespace ts = piranha::ts;

inline ts::Field tag(const char* t) {
  return ts::Field::of(ts::Value(std::string(t)));
}
inline ts::Field str(const std::string& s) {
  return ts::Field::of(ts::Value(s));
}
inline ts::Field num(std::int64_t v) {
  return ts::Field::of(ts::Value(v));
}
inline ts::Field any(ts::Type t) {
  return ts::Field::formal(t);
}

}  // namespace piranha::sys::detail
