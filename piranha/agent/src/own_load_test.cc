#include "piranha/agent/own_load.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <ctime>

#include "piranha/testing/temp_dir.h"

using piranha::Clock;
using piranha::OwnLoad;
using namespace std::chrono_literals;

namespace {

const Clock::time_point kLoadStart{};

// What the kernel's averages approach after `t` seconds of one busy CPU
// starting from 0: 1 - exp(-t / T).
double rise(double t, double period) {
  return 1 - std::exp(-t / period);
}

// Burns CPU in this process until it has used `seconds` more of it.
void burn_cpu(double seconds) {
  auto cpu_now = [] {
    timespec ts{};
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  };
  double until = cpu_now() + seconds;
  volatile double x = 0;
  while (cpu_now() < until)
    for (int i = 0; i < 10000; ++i) x = x + 1;
}

// One /proc/<pid>/stat line: comm, then fields 3.. with pgrp, utime, stime,
// cutime, cstime in ticks at their positions.
std::string stat_line(int pid, const std::string& comm, long pgrp, long utime, long stime, long cutime = 0,
                      long cstime = 0) {
  return std::to_string(pid) + " (" + comm + ") R 1 " + std::to_string(pgrp) + " " + std::to_string(pgrp) +
         " 0 -1 4194560 100 0 0 0 " + std::to_string(utime) + " " + std::to_string(stime) + " " +
         std::to_string(cutime) + " " + std::to_string(cstime) + " 20 0 1 0 100 1000 200\n";
}

}  // namespace

TEST_CASE("own load: the first sample is only the baseline") {
  OwnLoad own;
  own.sample(kLoadStart, 100.0);
  CHECK(own.load() == std::array<double, 3>{0, 0, 0});
}

TEST_CASE("own load: one busy piranha rises like the kernel's averages, however it is sampled") {
  OwnLoad coarse, fine;
  coarse.sample(kLoadStart, 0);
  fine.sample(kLoadStart, 0);
  coarse.sample(kLoadStart + 600s, 600);
  for (int s = 5; s <= 600; s += 5) fine.sample(kLoadStart + std::chrono::seconds(s), s);
  for (const OwnLoad* own : {&coarse, &fine}) {
    CHECK(own->load()[0] == doctest::Approx(rise(600, 60)));
    CHECK(own->load()[1] == doctest::Approx(rise(600, 300)));
    CHECK(own->load()[2] == doctest::Approx(rise(600, 900)));
  }
}

TEST_CASE("own load: half a CPU contributes half") {
  OwnLoad own;
  own.sample(kLoadStart, 0);
  own.sample(kLoadStart + 120s, 60);
  CHECK(own.load()[0] == doctest::Approx(0.5 * rise(120, 60)));
}

TEST_CASE("own load: decays with the kernel's damping once the piranha stops") {
  OwnLoad own;
  own.sample(kLoadStart, 0);
  own.sample(kLoadStart + 600s, 600);
  auto busy = own.load();
  own.sample(kLoadStart + 660s, 600);
  CHECK(own.load()[0] == doctest::Approx(busy[0] * std::exp(-1.0)));
  CHECK(own.load()[1] == doctest::Approx(busy[1] * std::exp(-60.0 / 300)));
  CHECK(own.load()[2] == doctest::Approx(busy[2] * std::exp(-60.0 / 900)));
}

TEST_CASE("own load: a CPU total that goes down counts as no work and becomes the baseline") {
  OwnLoad own;
  own.sample(kLoadStart, 50);
  own.sample(kLoadStart + 60s, 10);  // a piranha exited; its CPU left the sum
  CHECK(own.load()[0] == 0);
  own.sample(kLoadStart + 120s, 70);  // 60 s of CPU in 60 s, counted from 10
  CHECK(own.load()[0] == doctest::Approx(rise(60, 60)));
}

TEST_CASE("own load: samples that do not move time forward are ignored") {
  OwnLoad own;
  own.sample(kLoadStart + 10s, 0);
  own.sample(kLoadStart + 10s, 5);
  own.sample(kLoadStart + 5s, 5);
  CHECK(own.load()[0] == 0);
  own.sample(kLoadStart + 70s, 60);
  CHECK(own.load()[0] == doctest::Approx(rise(60, 60)));
}

TEST_CASE("own load: subtract clamps at zero") {
  OwnLoad own;
  own.sample(kLoadStart, 0);
  own.sample(kLoadStart + 600s, 600);
  auto left = own.subtract({1.5, 0.2, 0.0});
  CHECK(left[0] == doctest::Approx(1.5 - rise(600, 60)));
  CHECK(left[1] == 0);
  CHECK(left[2] == 0);
}

TEST_CASE("own load: /proc stat parsing copes with odd command names and vanished processes") {
  piranha::testing::TempDir proc;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  proc.write("100/stat", stat_line(100, "worker) (x y", 77, 300, 100, 40, 10));
  proc.write("101/stat", stat_line(101, "child", 77, 50, 50));
  proc.write("102/stat", stat_line(102, "other", 78, 1000, 1000));
  proc.write("103/stat", "103 (truncated) R 1 77");            // a process caught mid-exit
  std::filesystem::create_directories(proc / "104");           // vanished: no stat file
  proc.write("self/stat", stat_line(1, "self", 77, 9999, 0));  // not a pid directory

  CHECK(piranha::process_cpu_seconds(100, proc.path()) == doctest::Approx(400 / hz));
  CHECK(piranha::process_cpu_seconds(104, proc.path()) == 0);
  CHECK(piranha::process_cpu_seconds(999, proc.path()) == 0);
  // Group 77: 100 (own 400 + reaped children 50) and 101 (100).
  CHECK(piranha::group_cpu_seconds(77, proc.path()) == doctest::Approx(550 / hz));
  CHECK(piranha::group_cpu_seconds(78, proc.path()) == doctest::Approx(2000 / hz));
  CHECK(piranha::group_cpu_seconds(79, proc.path()) == 0);
  CHECK(piranha::group_cpu_seconds(0, proc.path()) == 0);
  CHECK(piranha::group_cpu_seconds(77, proc / "missing") == 0);
}

TEST_CASE("own load: a real process group's CPU, including reaped children, and 0 once it is gone") {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t leader = ::fork();
  REQUIRE(leader >= 0);
  if (leader == 0) {
    ::setpgid(0, 0);
    // A short-lived child in the group burns CPU and is reaped: its CPU must
    // stay in the group's total through the leader's children's time.
    pid_t child = ::fork();
    if (child == 0) {
      burn_cpu(0.05);
      ::_exit(0);
    }
    ::waitpid(child, nullptr, 0);
    burn_cpu(0.05);
    char c = 'r';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::setpgid(leader, leader);  // either side may win the race; both set the same group
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  ::close(ready[0]);

  // 0.1 s of CPU in all; clock-tick accounting may round down by a tick or two.
  CHECK(piranha::group_cpu_seconds(leader) >= 0.07);
  CHECK(piranha::process_cpu_seconds(leader) >= 0.03);
  CHECK(piranha::process_cpu_seconds(leader) < piranha::group_cpu_seconds(leader));

  ::kill(leader, SIGKILL);
  ::waitpid(leader, nullptr, 0);
  CHECK(piranha::group_cpu_seconds(leader) == 0);
  CHECK(piranha::process_cpu_seconds(leader) == 0);
}
