// Shared plumbing of the scheduler's commands (sim, predict, trace, study):
// option values parsed by hand so that every bad value is one line on stderr
// and exit status 2, and output files that appear whole or not at all.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "piranha/base/progress.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace piranha::apps::schedcli {

// Prints "piranha: <message>" on stderr and exits with status 2.
[[noreturn]] void bad_input(const std::string& message);

// Runs `body`; an InputError or std::invalid_argument it throws becomes
// bad_input(what()).
void guarded(const std::function<void()>& body);

// Parses the value of `option`; bad_input unless it is an integer >= min
// (or a real number in [min, max]).
std::int64_t to_int(const std::string& option, const std::string& text, std::int64_t min);
double to_real(const std::string& option, const std::string& text, double min, double max);

// What --help shows for an option parsed with to_int or to_real, given the
// same bounds: INT or FLOAT (where CLI11 would say TEXT), and the range after
// its description: "(>= 1)", "(0 to 1)", "(> 0)" for a tiny positive
// minimum. Returns `o`.
CLI::Option* int_option(CLI::Option* o, std::int64_t min);
CLI::Option* real_option(CLI::Option* o, double min, double max);

// A duration in the unit that fits, to a tenth: "42.0 s", "3.5 min", "7.2 h",
// "144.5 d" (12,482,549 s).
std::string readable_duration(double seconds);

// Splits "a,b,c" (keeping commas inside parentheses), dropping empty items.
std::vector<std::string> split_list(const std::string& text);

// Writes `content` to `path` through a temporary file renamed into place;
// bad_input when it cannot.
void write_whole_file(const std::string& path, const std::string& content);

bool stderr_is_terminal();

// Progress on stderr for work that runs longer than two seconds, when stderr
// is a terminal (a line rewritten in place) or --progress asked for it (a
// line every five seconds): how far, and the time left at the pace of the
// last 30 s, "sim piranha:  42% 84/200 runs, about 1 min 20 s left". Never on
// stdout, which holds the tables and JSON.
class Progress {
 public:
  explicit Progress(std::string what);
  void update(double fraction, const std::string& detail = {});
  void finish();  // ends the progress line, if one was shown

 private:
  std::string what_;
  std::chrono::steady_clock::time_point begin_, last_;
  bool shown_ = false;
  ProgressMeter meter_;
};

// Adds --progress to `cmd`: Progress lines on stderr also when it is not a
// terminal (a log, a pipe).
void add_progress_flag(CLI::App& cmd);

}  // namespace piranha::apps::schedcli
