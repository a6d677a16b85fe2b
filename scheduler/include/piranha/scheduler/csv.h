// The small CSV dialect of Piranha's text formats (*.avail.csv, *.jobs.csv):
// comma-separated cells, surrounding blanks ignored, no quoting.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace piranha::csv {

// `s` without leading and trailing blanks (spaces, tabs, carriage returns).
std::string trim(std::string_view s);

// The trimmed cells of one line; a trailing comma gives a trailing empty cell.
std::vector<std::string> split(std::string_view line);

}  // namespace piranha::csv
