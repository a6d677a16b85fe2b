// Random (seed 000): repeatedly a uniformly drawn job among those that fit.
#include "piranha/rigid/pick.h"

namespace piranha::rigid {

std::vector<std::size_t> pick_random(const SiteView& v, sched::Rng& rng) {
  std::vector<std::size_t> out;
  std::vector<bool> taken(v.queue.size(), false);
  int free = v.free;
  for (;;) {
    std::vector<std::size_t> fitting;
    for (std::size_t i = 0; i < v.queue.size(); ++i)
      if (!taken[i] && v.queue[i].width <= free) fitting.push_back(i);
    if (fitting.empty()) return out;
    const std::size_t i = fitting[rng.below(fitting.size())];
    taken[i] = true;
    free -= v.queue[i].width;
    out.push_back(i);
  }
}

}  // namespace piranha::rigid
