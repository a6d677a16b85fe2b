// Running build/bin/piranha from a test as a user runs it (for the
// scheduler's command tests): through the shell, stdout and stderr captured,
// files in a scratch directory of this process.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace cli_run {

struct Run {
  int status = -1;
  std::string out, err;
};

inline std::filesystem::path scratch() {
  static const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("sched_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `piranha <args>` through the shell, capturing stdout and stderr.
inline Run piranha(const std::string& args) {
  const auto out = scratch() / "out", err = scratch() / "err";
  const std::string cmd =
      std::string(PIRANHA_BIN_DIR) + "/piranha " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(cmd.c_str());
  return Run{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

// Writes `text` to a file of the scratch directory and returns its path.
inline std::filesystem::path write(const std::string& name, const std::string& text) {
  const std::filesystem::path p = scratch() / name;
  std::ofstream(p) << text;
  return p;
}

inline int lines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

}  // namespace cli_run
