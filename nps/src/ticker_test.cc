// When the live NPS ticks: a fixed grid, and an event tick at once when news
// comes between two grid ticks (ticker.h). Times are passed in: no clock.
#include "piranha/nps/ticker.h"

#include <doctest/doctest.h>

namespace piranha::nps {
namespace {

using namespace std::chrono_literals;
using Tick = Ticker::Tick;

const Clock::time_point t0{};

TEST_CASE("ticker: grid ticks every period from the first, and a late tick does not shift the grid") {
  Ticker t(t0, 1s, 20ms);
  CHECK(t.take(t0) == Tick::Grid);
  CHECK(t.take(t0 + 500ms) == Tick::None);
  CHECK(t.next() == t0 + 1s);
  CHECK(t.take(t0 + 1s) == Tick::Grid);
  CHECK(t.take(t0 + 2300ms) == Tick::Grid);  // late...
  CHECK(t.next() == t0 + 3s);                // ...and the next is still on the grid
  CHECK(t.take(t0 + 5500ms) == Tick::Grid);  // periods missed are not made up
  CHECK(t.take(t0 + 5600ms) == Tick::None);
  CHECK(t.next() == t0 + 6s);
}

TEST_CASE("ticker: an arrival between grid ticks gets an event tick at once, and the grid stays") {
  Ticker t(t0, 5s, 20ms);
  CHECK(t.take(t0) == Tick::Grid);
  CHECK(t.take(t0 + 100ms) == Tick::None);
  t.news();                                  // a job was submitted 100 ms after the tick
  CHECK(t.next() <= t0 + 100ms);             // due now
  CHECK(t.take(t0 + 100ms) == Tick::Event);  // not at 5 s
  CHECK(t.take(t0 + 200ms) == Tick::None);   // the news was used
  CHECK(t.next() == t0 + 5s);
  CHECK(t.take(t0 + 5s) == Tick::Grid);
}

TEST_CASE("ticker: news within the gap after a tick waits for the gap's end, not for the grid") {
  Ticker t(t0, 5s, 20ms);
  CHECK(t.take(t0) == Tick::Grid);
  t.news();
  CHECK(t.take(t0 + 5ms) == Tick::None);
  CHECK(t.next() == t0 + 20ms);
  t.news();  // more news meanwhile: still one tick
  CHECK(t.take(t0 + 20ms) == Tick::Event);
  CHECK(t.take(t0 + 30ms) == Tick::None);
  // News just before a grid tick is served by the grid tick.
  t.news();
  CHECK(t.take(t0 + 5s) == Tick::Grid);
  CHECK(t.take(t0 + 5s + 30ms) == Tick::None);
}

TEST_CASE("ticker: a period under a millisecond counts as a millisecond, never a division by zero") {
  Ticker t(t0, Clock::duration(0), 20ms);
  CHECK(t.take(t0) == Ticker::Tick::Grid);
  CHECK(t.next() == t0 + 1ms);
  CHECK(t.take(t0 + 500us) == Ticker::Tick::None);
  CHECK(t.take(t0 + 5ms) == Ticker::Tick::Grid);
}

}  // namespace
}  // namespace piranha::nps
