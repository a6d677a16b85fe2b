// short_slice.h: the slice a thread asks for, and that a child does not
// inherit it.
#include "piranha/runtime/short_slice.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <utility>

#include "piranha/runtime/child.h"
#include "piranha/testing/priority_probe.h"

using piranha::testing::kernel_keeps_slices;
using piranha::testing::nice_and_policy;
using piranha::testing::slice_of;
using namespace std::chrono_literals;

namespace {
// Runs `f` on a thread of its own, so that what it sets dies with it.
template <class F>
void on_a_thread(F f) {
  std::thread(f).join();
}
}  // namespace

TEST_CASE("short slice: a thread asks for its own slice at its own nice, and can go back to the default") {
  if (!kernel_keeps_slices()) {
    MESSAGE("this kernel keeps no per-thread slice; nothing to check");
    return;
  }
  on_a_thread([] {
    const std::uint64_t standard = slice_of(0);
    REQUIRE(setpriority(PRIO_PROCESS, 0, 3) == 0);  // raising one's own nice needs no privilege
    REQUIRE(piranha::use_slice(300us));
    CHECK(slice_of(0) == 300'000);
    CHECK(getpriority(PRIO_PROCESS, 0) == 3);  // its nice kept
    CHECK(sched_getscheduler(0) == SCHED_OTHER);
    REQUIRE(piranha::use_default_slice());
    CHECK(slice_of(0) == standard);
    CHECK(getpriority(PRIO_PROCESS, 0) == 3);
  });
}

TEST_CASE("short slice: a thread under another policy is left as it is") {
  on_a_thread([] {
    sched_param p{};
    REQUIRE(sched_setscheduler(0, SCHED_IDLE, &p) == 0);
    CHECK_FALSE(piranha::use_slice(100us));
    CHECK(sched_getscheduler(0) == SCHED_IDLE);
  });
}

TEST_CASE("short slice: a child process starts with the kernel's default, not its parent's short slice") {
  if (!kernel_keeps_slices()) {
    MESSAGE("this kernel keeps no per-thread slice; nothing to check");
    return;
  }
  on_a_thread([] {
    const std::uint64_t standard = slice_of(0);
    REQUIRE(piranha::use_slice(100us));
    REQUIRE(slice_of(0) == 100'000);
    piranha::SpawnOptions o;
    o.argv = {"sleep", "30"};
    piranha::ChildProcess child(o);
    CHECK(slice_of(child.pid()) == standard);
    CHECK(nice_and_policy(child.pid()) == nice_and_policy(getpid()));
  });
}
