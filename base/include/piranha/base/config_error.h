// ConfigError: a bad configuration file (the agent's YAML, the server's auth
// file). what() is "FILE:LINE: problem" (LINE 1-based), e.g.
// "agent.yaml:7: unknown key 'laod' in availability (expected one of: ...)";
// "FILE: problem" when no line is at fault (the file cannot be read).
#pragma once

#include <stdexcept>

namespace piranha {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace piranha
