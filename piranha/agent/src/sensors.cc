#include "piranha/agent/sensors.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace piranha {

std::optional<std::array<double, 3>> read_loadavg(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "re");
  if (!f) return std::nullopt;
  std::array<double, 3> load{};
  int n = std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]);
  std::fclose(f);
  if (n != 3) return std::nullopt;
  return load;
}

std::optional<double> terminal_idle_seconds(std::chrono::system_clock::time_point now,
                                            const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::nullopt;
  std::optional<double> idle;
  const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
  while (dirent* e = ::readdir(d)) {
    // Only the numbered entries are terminals; /dev/pts/ptmx is the
    // multiplexer, touched by every program that opens a new pty.
    std::string name = e->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat st {};
    if (::stat((dir + "/" + name).c_str(), &st) != 0) continue;
    double atime = static_cast<double>(st.st_atim.tv_sec) + static_cast<double>(st.st_atim.tv_nsec) * 1e-9;
    double seconds = std::max(0.0, now_s - atime);
    if (!idle || seconds < *idle) idle = seconds;
  }
  ::closedir(d);
  return idle;
}

}  // namespace piranha
