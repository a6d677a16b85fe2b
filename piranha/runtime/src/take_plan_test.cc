#include "take_plan.h"

#include <doctest/doctest.h>

using piranha::detail::plan_take;
using piranha::detail::TakeMode;

TEST_CASE("take plan: the first task is taken alone, whatever the mean") {
  CHECK(plan_take(0, 0).mode == TakeMode::One);
  CHECK(plan_take(0, 5.0).mode == TakeMode::One);
}

TEST_CASE("take plan: tasks under 100 ms are asked for one ahead from the first completed on") {
  CHECK(plan_take(1, 0.007).mode == TakeMode::Ahead);
  CHECK(plan_take(1, 0.099).mode == TakeMode::Ahead);
  CHECK(plan_take(50, 0.010).mode == TakeMode::Ahead);
  CHECK(plan_take(1, 0.1).mode == TakeMode::One);
  CHECK(plan_take(50, 2.0).mode == TakeMode::One);
  CHECK(plan_take(1, 0.007).batch == 1);
}

TEST_CASE("take plan: short tasks are asked for one ahead until 8 have completed, then batched") {
  CHECK(plan_take(7, 0.000004).mode == TakeMode::Ahead);
  auto p = plan_take(8, 0.0000041);
  CHECK(p.mode == TakeMode::Batch);
  CHECK(p.batch == 487);  // 2 ms of 4.1 us tasks
  CHECK(plan_take(8, 0.0019).mode == TakeMode::Batch);
  CHECK(plan_take(8, 0.002).mode == TakeMode::Ahead);
}

TEST_CASE("take plan: a batch holds about 2 ms of work, 32 to 4096 tasks") {
  CHECK(plan_take(100, 0.0019).batch == 32);  // one task's worth: at least 32
  CHECK(plan_take(100, 0.00006).batch == 33);
  CHECK(plan_take(100, 0.0000099).batch == 202);
  CHECK(plan_take(100, 0.0000001).batch == 4096);
  CHECK(plan_take(100, 0).batch == 4096);  // tasks too short to time
}

TEST_CASE("take plan: a batch of big tasks stays under 1 MiB of tuples, but holds 32 at least") {
  CHECK(plan_take(100, 0.0000001, 1024).batch == 1024);
  CHECK(plan_take(100, 0.0000001, 10'000).batch == 104);
  CHECK(plan_take(100, 0.0000001, 100'000).batch == 32);
  CHECK(plan_take(100, 0.0000099, 1024).batch == 202);  // time bounds it first
  CHECK(plan_take(100, 0.0000001, 0).batch == 4096);    // size unknown
}
