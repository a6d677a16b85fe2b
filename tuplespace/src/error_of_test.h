// For tuplespace_test: what a call throws, in words.
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace piranha::ts::testing {

// The message of what `f` throws, or "(no error)" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace piranha::ts::testing
