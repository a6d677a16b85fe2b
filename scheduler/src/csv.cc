#include "piranha/scheduler/csv.h"

namespace piranha::csv {

std::string trim(std::string_view s) {
  auto b = s.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(" \t\r");
  return std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> split(std::string_view line) {
  std::vector<std::string> out;
  std::size_t from = 0;
  while (true) {
    std::size_t comma = line.find(',', from);
    out.push_back(
        trim(line.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from)));
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return out;
}

}  // namespace piranha::csv
