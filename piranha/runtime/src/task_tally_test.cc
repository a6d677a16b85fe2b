#include "piranha/runtime/task_tally.h"

#include <doctest/doctest.h>

using piranha::TaskTally;
namespace ts = piranha::ts;

TEST_CASE("task tally: counts done tasks per node and retreats") {
  TaskTally t;
  CHECK(t.add(piranha::done_record("ws01", 1.0, 0.5)));
  CHECK(t.add(piranha::done_record("ws01", 2.0, 1.5)));
  CHECK(t.add(piranha::done_record("ws02", 2.0, 1.0)));
  CHECK(t.add(piranha::retreat_record("ws02", 3.0, 1)));
  CHECK_FALSE(t.add(ts::Tuple::of("result", 1)));
  CHECK(t.tasks_done() == 3);
  CHECK(t.retreats() == 1);
  CHECK(t.mean_task_seconds() == doctest::Approx(1.0));
  CHECK(t.per_node().at("ws01").tasks == 2);
  CHECK(t.per_node().at("ws02").retreats == 1);
  auto st = t.stat(4, 10, 99.0);
  CHECK(st.tasks_done == 3);
  CHECK(st.tasks_left == 7);
  CHECK(st.updated_at == 99.0);
  CHECK(t.summary() == "3 tasks, mean 1.00 s, 1 retreat; ws01 2 tasks, ws02 1 task (1 retreat)");
}

TEST_CASE("task tally: retreats by the cause their agent gave, the owner's counted apart") {
  TaskTally t;
  CHECK(t.add(piranha::retreat_record("ws01", 1.0, 1, piranha::RetreatCause::Owner)));
  CHECK(t.add(piranha::retreat_record("ws01", 2.0, 0, piranha::RetreatCause::GivesWay)));
  CHECK(t.add(piranha::retreat_record("ws02", 3.0, 2, piranha::RetreatCause::Owner)));
  CHECK(t.retreats() == 3);
  CHECK(t.owner_retreats() == 2);
  CHECK(t.per_node().at("ws01").retreats == 2);
  CHECK(t.per_node().at("ws01").owner_retreats == 1);
  CHECK(t.summary() ==
        "0 tasks, mean 0.0 us, 3 retreats (2 for the owner); ws01 0 tasks (2 retreats), ws02 0 tasks (1 "
        "retreat)");
}

TEST_CASE("task tally: empty") {
  TaskTally t;
  CHECK(t.mean_task_seconds() == 0.0);
  CHECK(t.stat(1, 0, 0).tasks_left == 0);
  CHECK(t.summary() == "0 tasks, mean 0.0 us, 0 retreats");
}

TEST_CASE("task tally: one done record of several tasks counts each of them") {
  TaskTally t;
  CHECK(piranha::done_record("ws01", 1.0, 0.5).size() == 4);
  CHECK(piranha::done_record("ws01", 1.0, 0.5, 32).size() == 5);
  CHECK(t.add(piranha::done_record("ws01", 1.0, 0.032, 32)));
  CHECK(t.add(piranha::done_record("ws01", 2.0, 0.008)));
  CHECK(t.tasks_done() == 33);
  CHECK(t.per_node().at("ws01").tasks == 33);
  CHECK(t.mean_task_seconds() == doctest::Approx(0.040 / 33));
}
