// PiranhaHost: the priority a piranha runs at, and the one it retreats at.
#include "piranha/agent/piranha_host.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <unistd.h>

#include <string>
#include <utility>

#include "piranha/testing/priority_probe.h"

namespace {

using namespace piranha;
using piranha::testing::kernel_keeps_slices;
using piranha::testing::nice_and_policy;
using piranha::testing::slice_of;

PiranhaEnvironment environment() {
  PiranhaEnvironment env;
  env.server = "tcp://127.0.0.1:1";
  env.node = "n1";
  return env;
}

}  // namespace

TEST_CASE(
    "piranha host: a piranha runs at nice 19 under SCHED_IDLE and retreats at nice 0 with a short slice") {
  PiranhaHost host(environment());
  // A program that outlives the test's checks and ignores the retreat signal.
  host.start(sys::JobLaunch{1, "sh", {"-c", "trap '' USR1; sleep 30"}, "/"}, 1);
  auto groups = host.groups();
  REQUIRE(groups.size() == 1);
  pid_t pid = groups[0];
  CHECK(nice_and_policy(pid) == std::pair<int, int>(19, SCHED_IDLE));
  auto now = Clock::now();
  host.retreat(now, std::chrono::milliseconds(10'000), now);
  CHECK(host.retreating());
  CHECK(nice_and_policy(pid) == std::pair<int, int>(0, SCHED_OTHER));
  if (kernel_keeps_slices())
    CHECK(slice_of(pid) == 100'000);
  else
    MESSAGE("this kernel keeps no per-thread slice; only the policy and nice are checked");
}

TEST_CASE("piranha host: with the normal priority a piranha runs as the agent does") {
  PiranhaEnvironment env = environment();
  env.lowest_priority = false;
  PiranhaHost host(env);
  host.start(sys::JobLaunch{1, "sh", {"-c", "trap '' USR1; sleep 30"}, "/"}, 1);
  auto groups = host.groups();
  REQUIRE(groups.size() == 1);
  CHECK(nice_and_policy(groups[0]) == nice_and_policy(getpid()));
  CHECK(nice_and_policy(groups[0]).second != SCHED_IDLE);
}
