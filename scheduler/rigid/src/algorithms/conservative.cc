// Conservative backfilling (seed 002): every queued job gets the earliest
// reservation where it fits.
#include <algorithm>
#include <cstdint>

#include "piranha/rigid/pick.h"
#include "prediction.h"

namespace piranha::rigid {

namespace {

// The reservations in queue order. With `only_now`, only which are at v.now
// is sure (others may be kNever): it stops once no later job could be
// reserved at v.now (the nodes free at now are fewer than any later job's
// width), and it leaves out a job whose reservation would start after every
// later window from now has closed. The profile is then exact only before
// `exact_until` (what was left out lies after it), where it has fewer
// reservations (more free nodes) than the full one: a window found there is
// the full schedule's; one found reaching past it starts no earlier than the
// full schedule's, so its job is left out too unless it starts now.
std::vector<Time> reserve(const SiteView& v, bool only_now) {
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
  // The narrowest width from each position on.
  std::vector<int> narrowest(v.queue.size() + 1, INT32_MAX);
  // The end of the longest window from now that a job after each position
  // could need, if it fits the nodes free now (kNever: one of unknown length).
  std::vector<Time> horizon(v.queue.size() + 1, v.now);
  if (only_now)
    for (std::size_t q = v.queue.size(); q-- > 0;) {
      narrowest[q] = std::min(narrowest[q + 1], v.queue[q].width);
      const Time p = v.queue[q].predicted;
      const Time end =
          v.queue[q].width > v.free ? v.now : finish(v.now, p == kUnknown ? p : std::max<Time>(p, 1));
      horizon[q] = std::max(horizon[q + 1], end);
    }
  Time exact_until = kNever;
  for (std::size_t q = 0; q < v.queue.size(); ++q) {
    // Reservations after now never take nodes from the first step.
    if (only_now && profile.front().free < narrowest[q]) break;
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
      if (only_now && start > v.now && start >= std::min(horizon[q + 1], exact_until)) {
        exact_until = std::min(exact_until, start);
        break;
      }
      if (k + 1 < profile.size() && profile[k + 1].at < end) continue;
      if (end > exact_until) {
        // Rare: a job that would start now in a profile no longer exact there.
        if (start == v.now) return reserve(v, false);
        exact_until = start;
        break;
      }
      out[q] = start;
      if (end != kNever && (k + 1 == profile.size() || profile[k + 1].at != end))
        profile.insert(profile.begin() + static_cast<std::ptrdiff_t>(k) + 1, Step{end, profile[k].free});
      for (std::size_t x = i; x <= k; ++x) profile[x].free -= width;
      break;
    }
  }
  return out;
}

}  // namespace

std::vector<Time> reservations(const SiteView& v) {
  return reserve(v, false);
}

std::vector<std::size_t> pick_conservative(const SiteView& v) {
  std::vector<std::size_t> out;
  const auto r = reserve(v, true);
  for (std::size_t i = 0; i < r.size(); ++i)
    if (r[i] == v.now) out.push_back(i);
  return out;
}

}  // namespace piranha::rigid
