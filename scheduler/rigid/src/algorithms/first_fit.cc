// FirstFit (seed 000): every job in queue order that fits the nodes still free.
#include "piranha/rigid/pick.h"

namespace piranha::rigid {

std::vector<std::size_t> pick_first_fit(const SiteView& v) {
  std::vector<std::size_t> out;
  int free = v.free;
  for (std::size_t i = 0; i < v.queue.size() && free > 0; ++i)
    if (v.queue[i].width <= free) {
      free -= v.queue[i].width;
      out.push_back(i);
    }
  return out;
}

}  // namespace piranha::rigid
