// Test helpers (internal): doctest prints Values as JSON.
#pragma once

#include <doctest/doctest.h>

#include "piranha/trellis/value.h"

namespace doctest {
template <>
struct StringMaker<piranha::trellis::Value> {
  static String convert(const piranha::trellis::Value& v) { return piranha::trellis::to_json(v).c_str(); }
};
}  // namespace doctest
