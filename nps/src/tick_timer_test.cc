#include "piranha/nps/tick_timer.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

using piranha::nps::TickTimer;

TEST_CASE("tick timer: a tick lasts from its reading to the decision after it") {
  TickTimer t;
  CHECK_FALSE(t.deciding());
  t.began(10.0, 5);
  t.decided(10.004, 5);  // no decision yet
  CHECK(t.deciding());
  t.decided(10.020, 6);
  CHECK_FALSE(t.deciding());
  t.decided(10.030, 7);  // a decision outside a tick is not a tick
  const auto s = t.summary();
  REQUIRE(s.ticks == 1);
  CHECK(s.max_ms == doctest::Approx(20));
}

TEST_CASE("tick timer: a tick still undecided when the next begins counts up to it") {
  TickTimer t;
  t.began(0.0, 0);
  t.began(1.5, 0);
  t.decided(1.6, 1);
  const auto s = t.summary();
  REQUIRE(s.ticks == 2);
  CHECK(s.max_ms == doctest::Approx(1500));
  CHECK(s.p50_ms == doctest::Approx(100));
}

TEST_CASE("tick timer: nearest-rank percentiles over many ticks") {
  TickTimer t;
  for (int i = 1; i <= 200; ++i) {
    t.began(i * 10.0, static_cast<std::uint64_t>(i - 1));
    t.decided(i * 10.0 + i / 1000.0, static_cast<std::uint64_t>(i));
  }
  const auto s = t.summary();
  CHECK(s.ticks == 200);
  CHECK(s.p50_ms == doctest::Approx(100));
  CHECK(s.p99_ms == doctest::Approx(198));
  CHECK(s.max_ms == doctest::Approx(200));
  CHECK(s.mean_ms == doctest::Approx(100.5));
  CHECK(s.to_json().find("\"ticks\":200") != std::string::npos);
}

TEST_CASE("tick timer: the reading part of each tick, apart from its deciding") {
  TickTimer t;
  t.read(0.5);  // before any tick: nothing to measure
  for (int i = 1; i <= 4; ++i) {
    t.began(i * 10.0, static_cast<std::uint64_t>(i - 1));
    t.read(i * 10.0 + i * 0.010);
    t.decided(i * 10.0 + i * 0.010 + 0.005, static_cast<std::uint64_t>(i));
  }
  const auto s = t.summary();
  CHECK(s.read_p50_ms == doctest::Approx(20));
  CHECK(s.read_p99_ms == doctest::Approx(40));
  CHECK(s.p99_ms == doctest::Approx(45));
  CHECK(nlohmann::json::parse(s.to_json()).at("read_p99_ms").get<double>() == doctest::Approx(40));
}

TEST_CASE("tick timer: a window of ticks, the rebuilds among them, and the log") {
  TickTimer t;
  for (int i = 0; i < 10; ++i) {
    t.began(i * 1.0, static_cast<std::uint64_t>(i));
    if (i < 3) t.rebuilt();  // a pool registering: slow ticks
    t.decided(i * 1.0 + (i < 3 ? 0.9 : 0.01 * (i + 1)), static_cast<std::uint64_t>(i + 1));
  }
  const auto all = t.summary();
  CHECK(all.ticks == 10);
  CHECK(all.rebuilds == 3);
  CHECK(all.rebuild_max_ms == doctest::Approx(900));
  CHECK(all.max_ms == doctest::Approx(900));
  const auto steady = t.summary(3.0);  // the ticks that began at 3 s or later
  CHECK(steady.ticks == 7);
  CHECK(steady.rebuilds == 0);
  CHECK(steady.max_ms == doctest::Approx(100));
  CHECK(steady.p50_ms == doctest::Approx(70));
  const auto j = nlohmann::json::parse(steady.to_json(true));
  REQUIRE(j.at("log").size() == 7);
  CHECK(j.at("log")[0][0].get<double>() == doctest::Approx(3.0));
  CHECK(j.at("log")[0][1].get<double>() == doctest::Approx(40));
  CHECK(j.at("log")[0][2].is_null());  // no reading marked
  CHECK(nlohmann::json::parse(all.to_json()).contains("log") == false);
}

TEST_CASE("tick timer: keeps the last ticks only") {
  TickTimer t;
  const std::size_t n = TickTimer::kKept + 5;
  for (std::size_t i = 0; i < n; ++i) {
    t.began(static_cast<double>(i), i);
    t.decided(static_cast<double>(i) + 0.001, i + 1);
  }
  const auto s = t.summary();
  CHECK(s.ticks == TickTimer::kKept);
  CHECK(s.log.front().began == doctest::Approx(5.0));
}
