// Backfilling FIFO (seed 000) and EASY: the head's shadow, then the jobs that
// may start before it without delaying the head.
#include <algorithm>

#include "piranha/rigid/pick.h"
#include "prediction.h"

namespace piranha::rigid {

Shadow shadow_of(const SiteView& v, int head_width) {
  std::vector<Time> ends;
  std::vector<int> widths;
  std::vector<std::size_t> order(v.running.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return end_of(v.running[a], v.now) < end_of(v.running[b], v.now);
  });
  int avail = v.free;
  Shadow s;
  if (avail >= head_width) return Shadow{v.now, avail - head_width};
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Time e = end_of(v.running[order[k]], v.now);
    if (e == kNever) return s;
    avail += v.running[order[k]].width;
    // Every job ending at the same instant frees its nodes then.
    if (avail >= head_width && (k + 1 == order.size() || end_of(v.running[order[k + 1]], v.now) != e))
      return Shadow{e, avail - head_width};
  }
  return s;
}

std::vector<std::size_t> pick_backfill(const SiteView& v, bool extra) {
  std::vector<std::size_t> out = pick_fifo(v);
  const std::size_t head = out.size();
  if (head == v.queue.size()) return out;
  int free = v.free;
  for (auto i : out) free -= v.queue[i].width;
  SiteView rest = v;
  rest.free = free;
  // The heads started now hold their nodes for their predicted lengths.
  std::vector<RunningJob> running(v.running.begin(), v.running.end());
  for (auto i : out)
    running.push_back(
        {v.queue[i].width, v.queue[i].predicted == kUnknown ? kUnknown : v.now + v.queue[i].predicted});
  rest.running = running;
  const Shadow s = shadow_of(rest, v.queue[head].width);
  if (s.time == kNever) return out;
  int spare = s.extra;
  for (std::size_t i = head + 1; i < v.queue.size() && free > 0; ++i) {
    const auto& q = v.queue[i];
    if (q.width > free) continue;
    const bool before_shadow = q.predicted != kUnknown && finish(v.now, q.predicted) <= s.time;
    if (before_shadow) {
      free -= q.width;
      out.push_back(i);
    } else if (extra && q.width <= spare) {
      free -= q.width;
      spare -= q.width;
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace piranha::rigid
