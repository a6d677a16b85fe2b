// FIFO (seed 000): the head while it fits; never past a head that does not.
#include "piranha/rigid/pick.h"

namespace piranha::rigid {

std::vector<std::size_t> pick_fifo(const SiteView& v) {
  std::vector<std::size_t> out;
  int free = v.free;
  for (std::size_t i = 0; i < v.queue.size() && v.queue[i].width <= free; ++i) {
    free -= v.queue[i].width;
    out.push_back(i);
  }
  return out;
}

}  // namespace piranha::rigid
