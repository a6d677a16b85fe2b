#include "piranha/agent/own_load.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace piranha {
namespace {

constexpr std::array<double, 3> kPeriods = {60.0, 300.0, 900.0};

// The fields of /proc/<pid>/stat the agent needs.
struct ProcStat {
  long pgrp = 0;
  double utime = 0, stime = 0, cutime = 0, cstime = 0;  // in clock ticks
};

// Reads one stat file with plain syscalls: a process may vanish at any moment,
// and that must be an ordinary "no" rather than an exception.
std::optional<ProcStat> read_stat(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char buf[1024];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  // Field 2, the command name, is in parentheses and may itself contain
  // spaces and parentheses; the fields after the last ')' are plain numbers.
  char* p = nullptr;
  for (char* q = buf; *q; ++q)
    if (*q == ')') p = q;
  if (!p) return std::nullopt;
  ++p;
  // After ')': state (field 3), then numeric fields 4 .. 17.
  while (*p == ' ') ++p;
  if (!*p) return std::nullopt;
  ++p;  // the state letter
  double field[18] = {};
  for (int i = 4; i <= 17; ++i) {
    char* end = nullptr;
    field[i] = std::strtod(p, &end);
    if (end == p) return std::nullopt;
    p = end;
  }
  ProcStat s;
  s.pgrp = static_cast<long>(field[5]);
  s.utime = field[14];
  s.stime = field[15];
  s.cutime = field[16];
  s.cstime = field[17];
  return s;
}

double ticks_per_second() {
  static const double hz = [] {
    long v = ::sysconf(_SC_CLK_TCK);
    return v > 0 ? static_cast<double>(v) : 100.0;
  }();
  return hz;
}

}  // namespace

void OwnLoad::sample(Clock::time_point now, double cpu_seconds) {
  if (!last_time_) {
    last_time_ = now;
    last_cpu_ = cpu_seconds;
    return;
  }
  double dt = std::chrono::duration<double>(now - *last_time_).count();
  if (dt <= 0) return;
  double used = std::max(0.0, cpu_seconds - last_cpu_);
  double fraction = used / dt;
  for (std::size_t i = 0; i < 3; ++i) {
    double e = std::exp(-dt / kPeriods[i]);
    own_[i] = own_[i] * e + fraction * (1 - e);
  }
  last_time_ = now;
  last_cpu_ = cpu_seconds;
}

std::array<double, 3> OwnLoad::subtract(std::array<double, 3> loadavg) const {
  for (std::size_t i = 0; i < 3; ++i) loadavg[i] = std::max(0.0, loadavg[i] - own_[i]);
  return loadavg;
}

double process_cpu_seconds(pid_t pid, const std::string& proc) {
  auto s = read_stat(proc + "/" + std::to_string(pid) + "/stat");
  if (!s) return 0;
  return (s->utime + s->stime) / ticks_per_second();
}

double group_cpu_seconds(pid_t pgid, const std::string& proc) {
  // Kernel threads report group 0; no piranha group can be <= 0.
  if (pgid <= 0) return 0;
  DIR* dir = ::opendir(proc.c_str());
  if (!dir) return 0;
  double ticks = 0;
  while (dirent* e = ::readdir(dir)) {
    const char* name = e->d_name;
    if (*name < '0' || *name > '9') continue;
    auto s = read_stat(proc + "/" + name + "/stat");
    if (s && s->pgrp == pgid) ticks += s->utime + s->stime + s->cutime + s->cstime;
  }
  ::closedir(dir);
  return ticks / ticks_per_second();
}

}  // namespace piranha
