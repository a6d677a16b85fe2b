#include "piranha/nps/ticker.h"

#include <algorithm>

namespace piranha::nps {

Ticker::Ticker(Clock::time_point first, Clock::duration period, Clock::duration gap)
    : period_(std::max<Clock::duration>(period, std::chrono::milliseconds(1))),
      gap_(gap),
      grid_(first),
      last_(first - gap) {}

Ticker::Tick Ticker::take(Clock::time_point now) {
  if (now >= grid_) {
    // A whole number of periods on, past now: a late tick does not shift the grid.
    grid_ += period_ * ((now - grid_) / period_ + 1);
    news_ = false;
    last_ = now;
    return Tick::Grid;
  }
  if (news_ && now >= last_ + gap_) {
    news_ = false;
    last_ = now;
    return Tick::Event;
  }
  return Tick::None;
}

Clock::time_point Ticker::next() const {
  return news_ ? std::min(grid_, last_ + gap_) : grid_;
}

}  // namespace piranha::nps
