#include "piranha/agent/availability.h"

#include <doctest/doctest.h>

#include <cmath>

using piranha::judge;
using piranha::Reading;
using piranha::Thresholds;

TEST_CASE("availability: the defaults are the paper's") {
  Thresholds t;
  CHECK(t.load1 == 0.7);
  CHECK(t.load5 == 0.4);
  CHECK(t.load15 == 0.1);
  CHECK(t.input_idle_seconds == 60);
}

TEST_CASE("availability: a quiet node is available") {
  auto v = judge(Reading{std::array<double, 3>{0.69, 0.39, 0.09}, 60.0}, Thresholds{});
  CHECK(v.available);
  CHECK(v.reason == "idle");
}

TEST_CASE("availability: each load average must be strictly under its threshold") {
  Thresholds t;
  auto v1 = judge(Reading{std::array<double, 3>{0.93, 0.0, 0.0}, 100.0}, t);
  CHECK_FALSE(v1.available);
  CHECK(v1.reason == "1-min load 0.93 >= 0.70");
  auto v5 = judge(Reading{std::array<double, 3>{0.0, 0.4, 0.0}, 100.0}, t);
  CHECK_FALSE(v5.available);
  CHECK(v5.reason == "5-min load 0.40 >= 0.40");
  auto v15 = judge(Reading{std::array<double, 3>{0.0, 0.0, 0.1}, 100.0}, t);
  CHECK_FALSE(v15.available);
  CHECK(v15.reason == "15-min load 0.10 >= 0.10");
}

TEST_CASE("availability: recent input blocks, exactly the idle threshold does not") {
  Thresholds t;
  auto busy = judge(Reading{std::nullopt, 3.7}, t);
  CHECK_FALSE(busy.available);
  CHECK(busy.reason == "keyboard/mouse idle 3 s < 60 s");
  // Never "60 s < 60 s": the idle time is floored.
  CHECK(judge(Reading{std::nullopt, 59.9}, t).reason == "keyboard/mouse idle 59 s < 60 s");
  CHECK(judge(Reading{std::nullopt, 60.0}, t).available);
}

TEST_CASE("availability: missing readings never block, and every failure is reported") {
  CHECK(judge(Reading{}, Thresholds{}).available);
  auto v = judge(Reading{std::array<double, 3>{0.8, 0.5, 0.0}, 1.0}, Thresholds{});
  CHECK_FALSE(v.available);
  CHECK(v.reason == "1-min load 0.80 >= 0.70; 5-min load 0.50 >= 0.40; keyboard/mouse idle 1 s < 60 s");
}

TEST_CASE("availability: a load without the agent's own piranhas says so, after the load's criteria") {
  Reading r{std::array<double, 3>{2.31, 0.5, 0.0}, 1.0};
  r.own_piranhas_excluded = true;
  CHECK(judge(r, Thresholds{}).reason ==
        "1-min load 2.31 >= 0.70; 5-min load 0.50 >= 0.40, own piranhas excluded; keyboard/mouse idle 1 s < "
        "60 s");
  // Only a failing load is qualified: input alone says nothing of the piranhas.
  r.load = std::array<double, 3>{0.1, 0.1, 0.0};
  CHECK(judge(r, Thresholds{}).reason == "keyboard/mouse idle 1 s < 60 s");
  r.input_idle_seconds = 100;
  CHECK(judge(r, Thresholds{}).reason == "idle");
}

TEST_CASE("availability: a NaN load counts as too high") {
  auto v = judge(Reading{std::array<double, 3>{std::nan(""), 0.0, 0.0}, std::nullopt}, Thresholds{});
  CHECK_FALSE(v.available);
}

TEST_CASE("availability: thresholds are honoured as given") {
  Thresholds t;
  t.load1 = 2.0;
  t.input_idle_seconds = 0;
  CHECK(judge(Reading{std::array<double, 3>{1.5, 0.0, 0.0}, 0.0}, t).available);
}
