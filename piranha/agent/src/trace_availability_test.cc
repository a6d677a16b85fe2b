#include <doctest/doctest.h>

#include <stdexcept>

#include "piranha/agent/availability_source.h"

using piranha::AvailabilityTrace;
using piranha::Clock;
using piranha::TraceAvailability;
using namespace std::chrono_literals;

namespace {

const Clock::time_point kTraceStart{std::chrono::hours(5)};

// Ten one-minute steps.
//   ws01: ..###..###   changes at 2, 5, 7 and (wrapping) 10
//   ws02: ##########   never changes
//   ws03: ###.....##   available across the wrap-around
AvailabilityTrace pool() {
  AvailabilityTrace t;
  t.step_seconds = 60;
  t.length = 10;
  t.nodes = {"ws01", "ws02", "ws03"};
  t.periods = {{{2, 5}, {7, 10}}, {{0, 10}}, {{0, 3}, {8, 10}}};
  return t;
}

}  // namespace

TEST_CASE("trace availability: replays the node's steps at the time scale") {
  // Time scale 60: one 60-second step per real second.
  TraceAvailability src(pool(), "ws01", 60, 0, kTraceStart);
  auto v = src.evaluate(kTraceStart);
  CHECK_FALSE(v.available);
  CHECK(v.reason == "trace ws01: unavailable (step 0)");
  CHECK_FALSE(src.evaluate(kTraceStart + 2s - 1ns).available);
  v = src.evaluate(kTraceStart + 2s);
  CHECK(v.available);
  CHECK(v.reason == "trace ws01: available (step 2)");
  CHECK(src.step_at(kTraceStart + 4500ms) == 4);
  CHECK_FALSE(src.evaluate(kTraceStart + 5s).available);
}

TEST_CASE("trace availability: next evaluation is the exact time of the next change") {
  TraceAvailability src(pool(), "ws01", 60, 0, kTraceStart);
  CHECK(src.next_evaluation(kTraceStart) == kTraceStart + 2s);
  CHECK(src.next_evaluation(kTraceStart + 1500ms) == kTraceStart + 2s);
  CHECK(src.next_evaluation(kTraceStart + 2s) == kTraceStart + 5s);
  CHECK(src.next_evaluation(kTraceStart + 5s) == kTraceStart + 7s);
  // At step 7 the node stays available to the end; step 0 is unavailable, so
  // the wrap-around is the change.
  CHECK(src.next_evaluation(kTraceStart + 7s) == kTraceStart + 10s);
  auto v = src.evaluate(kTraceStart + 10s);
  CHECK_FALSE(v.available);
  CHECK(v.reason == "trace ws01: unavailable (step 0)");
  CHECK(src.next_evaluation(kTraceStart + 10s) == kTraceStart + 12s);
}

TEST_CASE("trace availability: an availability period across the wrap-around is one period") {
  TraceAvailability src(pool(), "ws03", 60, 0, kTraceStart);
  CHECK(src.next_evaluation(kTraceStart + 8s) == kTraceStart + 13s);
  CHECK(src.evaluate(kTraceStart + 12s).available);
  CHECK(src.step_at(kTraceStart + 12s) == 2);
}

TEST_CASE("trace availability: a node that never changes is re-evaluated once per pass") {
  TraceAvailability src(pool(), "ws02", 60, 0, kTraceStart);
  CHECK(src.evaluate(kTraceStart + 4s).available);
  CHECK(src.next_evaluation(kTraceStart + 4s) == kTraceStart + 10s);
}

TEST_CASE("trace availability: start step and times before the origin") {
  TraceAvailability src(pool(), "ws01", 60, 8, kTraceStart);
  CHECK(src.step_at(kTraceStart) == 8);
  CHECK(src.step_at(kTraceStart - 1h) == 8);
  CHECK(src.evaluate(kTraceStart).available);
  CHECK(src.next_evaluation(kTraceStart) == kTraceStart + 2s);  // step 0 after the wrap is unavailable
  CHECK(src.step_at(kTraceStart + 2s) == 0);
}

TEST_CASE("trace availability: at any time scale the verdict flips exactly at next_evaluation") {
  // 60 / 7 real seconds per step: boundaries fall between nanoseconds.
  for (double scale : {7.0, 60.0, 1440.0, 0.5}) {
    CAPTURE(scale);
    TraceAvailability src(pool(), "ws01", scale, 3, kTraceStart);
    Clock::time_point now = kTraceStart + 123ms;
    for (int i = 0; i < 40; ++i) {
      bool before = src.evaluate(now).available;
      Clock::time_point next = src.next_evaluation(now);
      REQUIRE(next > now);
      CHECK(src.evaluate(next - 1ns).available == before);
      CHECK(src.evaluate(next).available != before);
      now = next;
    }
  }
}

TEST_CASE("trace availability: a day of availability runs in seconds") {
  AvailabilityTrace day;
  day.step_seconds = 60;
  day.length = 1440;
  day.nodes = {"ws01"};
  day.periods = {{{0, 540}, {1080, 1440}}};  // away 09:00 to 18:00
  // Time scale 1440: a one-minute step lasts 1/24 s, the whole day 60 s.
  TraceAvailability src(day, "ws01", 1440.0, 0, kTraceStart);
  // Every step lasts 60 / 1440 s; the owner arrives at step 540, 22.5 s in.
  CHECK(src.next_evaluation(kTraceStart) == kTraceStart + 22500ms);
  CHECK(src.next_evaluation(kTraceStart + 22500ms) == kTraceStart + 45s);
}

TEST_CASE("trace availability: bad construction is rejected") {
  CHECK_THROWS_AS(TraceAvailability(pool(), "ws09", 60, 0, kTraceStart), std::invalid_argument);
  CHECK_THROWS_AS(TraceAvailability(pool(), "ws01", 0, 0, kTraceStart), std::invalid_argument);
  CHECK_THROWS_AS(TraceAvailability(pool(), "ws01", -1, 0, kTraceStart), std::invalid_argument);
  CHECK_THROWS_AS(TraceAvailability(pool(), "ws01", 60, 10, kTraceStart), std::invalid_argument);
  CHECK_THROWS_AS(TraceAvailability(pool(), "ws01", 60, -1, kTraceStart), std::invalid_argument);
}
