// Conservative backfilling against a straightforward reading of its rule, on
// random sites: every reservation, and the jobs started now, which the pass
// finds without building the whole schedule.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>

#include "piranha/rigid/pick.h"

namespace piranha::rigid {
namespace {

// docs/rigid.md's "Reservations" word for word: steps in a vector, each job's
// window found by a scan from now.
std::vector<Time> reference_reservations(const SiteView& v) {
  struct Step {
    Time at;
    int free;
  };
  std::vector<Step> profile{{v.now, v.free}};
  std::vector<std::pair<Time, int>> releases;
  for (const auto& r : v.running)
    if (r.predicted_end != kUnknown) releases.emplace_back(std::max(r.predicted_end, v.now + 1), r.width);
  std::sort(releases.begin(), releases.end());
  for (const auto& [at, width] : releases) {
    if (at == profile.back().at)
      profile.back().free += width;
    else
      profile.push_back({at, profile.back().free + width});
  }
  std::vector<Time> out;
  for (const auto& q : v.queue) {
    const Time len = q.predicted == kUnknown ? kNever : std::max<Time>(q.predicted, 1);
    out.push_back(kNever);
    for (std::size_t i = 0; i < profile.size(); ++i) {
      const Time start = profile[i].at, end = len == kNever ? kNever : start + len;
      std::size_t k = i;
      bool room = true;
      for (; k < profile.size() && profile[k].at < end; ++k) room = room && profile[k].free >= q.width;
      if (!room) continue;
      out.back() = start;
      if (end != kNever && (k == profile.size() || profile[k].at != end))
        profile.insert(profile.begin() + static_cast<std::ptrdiff_t>(k), Step{end, profile[k - 1].free});
      for (std::size_t x = i; x < k; ++x) profile[x].free -= q.width;
      break;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("Conservative reserves and starts as the straightforward schedule does, on random sites") {
  std::mt19937_64 rng(33);
  auto draw = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int round = 0; round < 4000; ++round) {
    CAPTURE(round);
    const int nodes = draw(1, 16);
    const Time now = draw(0, 100);
    std::vector<RunningJob> running;
    int free = nodes;
    while (free > 0 && draw(0, 3) > 0) {
      const int w = draw(1, free);
      // Predicted ends before, at and after now; a few unknown; several alike.
      const Time end = draw(0, 9) == 0 ? kUnknown : now + draw(-5, 40) / (round % 3 + 1);
      running.push_back({w, end});
      free -= w;
    }
    std::vector<WaitingJob> queue(static_cast<std::size_t>(draw(0, 40)));
    for (auto& q : queue) q = {draw(1, nodes), draw(0, 11) == 0 ? kUnknown : draw(0, 30)};
    const SiteView v{now, nodes, free, running, queue};
    const auto expected = reference_reservations(v);
    REQUIRE(reservations(v) == expected);
    std::vector<std::size_t> now_ones;
    for (std::size_t i = 0; i < expected.size(); ++i)
      if (expected[i] == now) now_ones.push_back(i);
    CHECK(pick_conservative(v) == now_ones);
  }
}

}  // namespace piranha::rigid
