#include "piranha/runtime/child.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>
#include <vector>

#include "piranha/testing/priority_probe.h"

using piranha::ChildProcess;
using piranha::SpawnOptions;

namespace {
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("child: runs a program with added environment and output file") {
  std::string out = "/tmp/piranha_child_test_" + std::to_string(getpid());
  SpawnOptions o;
  o.argv = {"sh", "-c", "echo \"$PIRANHA_X\"; exit 3"};
  o.env = {{"PIRANHA_X", "hello"}};
  o.output_file = out;
  ChildProcess c(o);
  auto st = c.wait();
  REQUIRE(st);
  CHECK(st->code == 3);
  CHECK_FALSE(st->ok());
  CHECK(st->describe() == "exit status 3");
  CHECK(slurp(out) == "hello\n");
  unlink(out.c_str());
}

TEST_CASE("child: a missing program is an error before anything runs") {
  SpawnOptions o;
  o.argv = {"/nonexistent/program"};
  CHECK_THROWS_WITH_AS(ChildProcess{o}, doctest::Contains("no such program"), std::runtime_error);
  CHECK_FALSE(piranha::find_program("no-such-program-piranha"));
  CHECK(piranha::find_program("sh"));
}

TEST_CASE("child: signals reach the whole process group, and the status names them") {
  SpawnOptions o;
  o.argv = {"sh", "-c", "sleep 30 & sleep 30; wait"};
  o.own_process_group = true;
  o.lowest_priority = true;
  ChildProcess c(o);
  CHECK_FALSE(c.wait(std::chrono::milliseconds(50)));
  CHECK(getpgid(c.pid()) == c.pid());
  c.signal(SIGTERM);
  auto st = c.wait(std::chrono::seconds(10));
  REQUIRE(st);
  CHECK(st->signal == SIGTERM);
  CHECK(st->shell_code() == 128 + SIGTERM);
  CHECK(st->describe() == "killed by signal 15 (SIGTERM)");
}

TEST_CASE("child: lowest_priority runs the program at nice 19 under SCHED_IDLE, and what it starts too") {
  SpawnOptions o;
  o.argv = {"sh", "-c", "sleep 30 & wait"};
  o.own_process_group = true;
  o.lowest_priority = true;
  ChildProcess c(o);
  CHECK(piranha::testing::nice_and_policy(c.pid()) == std::pair<int, int>(19, SCHED_IDLE));
  pid_t sleeper = 0;
  for (int i = 0; i < 500 && sleeper == 0; ++i) {
    std::ifstream kids("/proc/" + std::to_string(c.pid()) + "/task/" + std::to_string(c.pid()) + "/children");
    kids >> sleeper;
    if (sleeper == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(sleeper > 0);
  CHECK(piranha::testing::nice_and_policy(sleeper) == std::pair<int, int>(19, SCHED_IDLE));
  c.signal(SIGKILL);
  c.wait();
}
