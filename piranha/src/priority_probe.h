// For tests: a process's nice value and scheduling policy, read from
// /proc/PID/stat (fields 19 and 41), as another process sees them.
#pragma once

#include <sys/types.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace piranha::testing {

inline std::pair<int, int> nice_and_policy(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream rest(text.substr(text.rfind(')') + 2));  // after "pid (comm) "
  std::vector<std::string> f((std::istream_iterator<std::string>(rest)), std::istream_iterator<std::string>());
  return {std::stoi(f.at(16)), std::stoi(f.at(38))};
}

}  // namespace piranha::testing
