#include "sched_cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "piranha/base/input_error.h"
#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/predictor.h"
#include "piranha/scheduler/strategy.h"

namespace piranha::apps::schedcli {

void bad_input(const std::string& message) {
  std::cout.flush();
  std::cerr << "piranha: " << message << "\n";
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(2);
}

void guarded(const std::function<void()>& body) {
  try {
    body();
  } catch (const InputError& e) {
    bad_input(e.what());
  } catch (const std::invalid_argument& e) {  // bad options
    bad_input(e.what());
  }
}

std::int64_t to_int(const std::string& option, const std::string& text, std::int64_t min) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size())
    bad_input(option + " \"" + text + "\" is not an integer");
  if (v < min) bad_input(option + " " + text + " must be at least " + std::to_string(min));
  return v;
}

double to_real(const std::string& option, const std::string& text, double min, double max) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v))
    bad_input(option + " \"" + text + "\" is not a number");
  if (v < min || v > max) {
    std::ostringstream range;
    range << option << " " << text << " is not between " << min << " and " << max;
    bad_input(range.str());
  }
  return v;
}

CLI::Option* int_option(CLI::Option* o, std::int64_t min) {
  o->type_name("INT");
  return o->description(o->get_description() + " (>= " + std::to_string(min) + ")");
}

CLI::Option* real_option(CLI::Option* o, double min, double max) {
  std::ostringstream range;
  // A bound of 1e9 or more is no bound a person sets; a minimum of 1e-9 is "positive".
  if (min > 0 && min < 1e-6)
    range << " (> 0)";
  else if (max >= 1e9)
    range << " (>= " << min << ")";
  else
    range << " (" << min << " to " << max << ")";
  o->type_name("FLOAT");
  return o->description(o->get_description() + range.str());
}

std::string readable_duration(double seconds) {
  char buf[32];
  if (std::abs(seconds) < 100)
    std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (std::abs(seconds) < 6000)
    std::snprintf(buf, sizeof buf, "%.1f min", seconds / 60);
  else if (std::abs(seconds) < 2 * 86400)
    std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.1f d", seconds / 86400);
  return buf;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  for (auto& item : sched::split_strategy_list(text))
    if (!item.empty()) out.push_back(item);
  return out;
}

void write_whole_file(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) bad_input(path + ": cannot write (" + std::strerror(errno) + ")");
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      bad_input(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    bad_input(path + ": cannot write (" + why + ")");
  }
}

bool stderr_is_terminal() {
  return ::isatty(STDERR_FILENO) != 0;
}

namespace {
bool g_progress_asked = false;  // --progress
}  // namespace

void add_progress_flag(CLI::App& cmd) {
  cmd.add_flag("--progress", g_progress_asked,
               "print progress lines with the time left on stderr even when it is not a terminal (on a "
               "terminal they are shown anyway)");
}

Progress::Progress(std::string what) : what_(std::move(what)), begin_(std::chrono::steady_clock::now()) {}

void Progress::update(double fraction, const std::string& detail) {
  const auto now = std::chrono::steady_clock::now();
  meter_.observe(std::chrono::duration<double>(now - begin_).count(), fraction);
  if (now - begin_ < std::chrono::seconds(2)) return;
  const bool tty = stderr_is_terminal();
  if (!tty && !g_progress_asked) return;
  if (!tty && shown_ && now - last_ < std::chrono::seconds(5)) return;
  last_ = now;
  shown_ = true;
  const auto left = meter_.seconds_left(1 - fraction);
  const std::string eta = left ? ", about " + time_left_words(*left) + " left" : ", time left not known yet";
  // On a terminal the line is rewritten: blanks wipe the end of a longer one.
  std::fprintf(stderr, "%s%s: %3.0f%% %s%s%s", tty ? "\r" : "", what_.c_str(), 100 * fraction, detail.c_str(),
               eta.c_str(), tty ? "      " : "\n");
  std::fflush(stderr);
}

void Progress::finish() {
  if (shown_ && stderr_is_terminal()) std::fprintf(stderr, "\n");
  shown_ = false;
}

}  // namespace piranha::apps::schedcli
