#include "piranha/rigid/pick.h"

#include <algorithm>

namespace piranha::rigid {
namespace {

Time end_of(const RunningJob& r, Time now) {
  return r.predicted_end == kUnknown ? kNever : std::max(r.predicted_end, now + 1);
}

// Saturating now + length; kUnknown length lasts for ever.
Time finish(Time now, Time length) {
  return length == kUnknown || length >= kNever - now ? kNever : now + length;
}

}  // namespace

std::vector<std::size_t> pick_fifo(const SiteView& v) {
  std::vector<std::size_t> out;
  int free = v.free;
  for (std::size_t i = 0; i < v.queue.size() && v.queue[i].width <= free; ++i) {
    free -= v.queue[i].width;
    out.push_back(i);
  }
  return out;
}

std::vector<std::size_t> pick_first_fit(const SiteView& v) {
  std::vector<std::size_t> out;
  int free = v.free;
  for (std::size_t i = 0; i < v.queue.size(); ++i)
    if (v.queue[i].width <= free) {
      free -= v.queue[i].width;
      out.push_back(i);
    }
  return out;
}

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
  for (std::size_t i = head + 1; i < v.queue.size(); ++i) {
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

std::vector<Time> reservations(const SiteView& v) {
  // The profile: free nodes from each breakpoint on; the last lasts for ever.
  struct Step {
    Time at;
    int free;
  };
  std::vector<Step> profile{{v.now, v.free}};
  std::vector<std::pair<Time, int>> releases;
  for (const auto& r : v.running) {
    const Time e = end_of(r, v.now);
    if (e != kNever) releases.emplace_back(e, r.width);
  }
  std::sort(releases.begin(), releases.end());
  for (const auto& [at, width] : releases) {
    if (at == profile.back().at)
      profile.back().free += width;
    else
      profile.push_back({at, profile.back().free + width});
  }
  std::vector<Time> out(v.queue.size(), kNever);
  for (std::size_t q = 0; q < v.queue.size(); ++q) {
    const int width = v.queue[q].width;
    // A predicted length of 0 holds its nodes for one second.
    const Time p = v.queue[q].predicted;
    const Time len = p == kUnknown ? kUnknown : std::max<Time>(p, 1);
    // Steps i..k all have room; the window starting at step i is found
    // once step k reaches its end (the last step lasts for ever).
    std::size_t i = 0;
    for (std::size_t k = 0; k < profile.size(); ++k) {
      if (profile[k].free < width) {
        i = k + 1;
        continue;
      }
      const Time start = profile[i].at, end = finish(start, len);
      if (k + 1 < profile.size() && profile[k + 1].at < end) continue;
      out[q] = start;
      if (end != kNever && (k + 1 == profile.size() || profile[k + 1].at != end))
        profile.insert(profile.begin() + static_cast<std::ptrdiff_t>(k) + 1, Step{end, profile[k].free});
      for (std::size_t x = i; x <= k; ++x) profile[x].free -= width;
      break;
    }
  }
  return out;
}

std::vector<std::size_t> pick_conservative(const SiteView& v) {
  std::vector<std::size_t> out;
  const auto r = reservations(v);
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i] == v.now) out.push_back(i);
  return out;
}

}  // namespace piranha::rigid
