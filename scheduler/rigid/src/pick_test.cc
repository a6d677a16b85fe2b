#include "piranha/rigid/pick.h"

#include <doctest/doctest.h>

#include <random>

#include "piranha/rigid/learner.h"
#include "test_util.h"

namespace piranha::rigid {
namespace {

using Picks = std::vector<std::size_t>;

using test::site;

}  // namespace

TEST_CASE("FIFO stops at the first head that does not fit, FirstFit goes on") {
  const std::vector<WaitingJob> q{{2, 5}, {3, 5}, {1, 5}};
  CHECK(pick_fifo(site(4, 4, {}, q)) == Picks{0});
  CHECK(pick_first_fit(site(4, 4, {}, q)) == Picks{0, 2});
  CHECK(pick_fifo(site(4, 1, {}, q)).empty());
}

TEST_CASE("Random starts jobs that fit until none does, the same for the same seed") {
  const std::vector<WaitingJob> q{{3, 5}, {3, 5}, {1, 5}};
  sched::Rng a(7, 2), b(7, 2);
  const auto p = pick_random(site(4, 4, {}, q), a);
  CHECK(p == pick_random(site(4, 4, {}, q), b));
  int used = 0;
  for (auto i : p) used += q[i].width;
  CHECK(used == 4);  // a 3 and the 1, in some order
  CHECK(p.size() == 2);
}

TEST_CASE("Random draws as docs/rigid.md defines it, bit for bit") {
  // The document's generator written out afresh: std::mt19937_64 seeded with
  // splitmix64(seed ^ splitmix64(2)); below(n) rejects draws at or above the
  // largest multiple of n below 2^64 and takes the rest modulo n.
  auto splitmix = [](std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  };
  // The check value docs/rigid.md gives for --seed 0.
  CHECK(sched::Rng(0, 2).next() == 2632384725926634961ULL);
  for (std::uint64_t seed : {0ULL, 1ULL, 12345ULL}) {
    CAPTURE(seed);
    std::mt19937_64 engine(splitmix(seed ^ splitmix(2)));
    auto below = [&](std::uint64_t n) {
      const std::uint64_t limit = (~std::uint64_t{0} / n) * n;
      std::uint64_t x = engine();
      while (x >= limit) x = engine();
      return x % n;
    };
    // Seven 1-wide jobs, four free nodes: draws among 7, 6, 5, 4 of them in queue order.
    const std::vector<WaitingJob> q(7, WaitingJob{1, 5});
    std::vector<std::size_t> left{0, 1, 2, 3, 4, 5, 6};
    Picks expected;
    for (int k = 0; k < 4; ++k) {
      const auto at = static_cast<std::ptrdiff_t>(below(left.size()));
      expected.push_back(left[static_cast<std::size_t>(at)]);
      left.erase(left.begin() + at);
    }
    sched::Rng rng(seed, 2);
    CHECK(pick_random(site(8, 4, {}, q), rng) == expected);
  }
}

TEST_CASE("shadow: when the head fits, counting every job that ends then") {
  const std::vector<RunningJob> r{{1, 10}, {1, 10}, {2, 20}};
  CHECK(shadow_of(site(4, 0, r, {}), 2).time == 10);
  CHECK(shadow_of(site(4, 0, r, {}), 2).extra == 0);
  CHECK(shadow_of(site(4, 0, r, {}), 3).time == 20);
  CHECK(shadow_of(site(4, 0, r, {}), 3).extra == 1);
  // An overrun job is expected to end a second from now.
  CHECK(shadow_of(site(4, 0, {{4, 3}}, {}, 5), 4).time == 6);
  // A job without a prediction leaves the shadow unknown.
  CHECK(shadow_of(site(4, 0, {{2, 10}, {2, kUnknown}}, {}), 3).time == kNever);
}

TEST_CASE("Backfill fills the gap before the head's shadow, EASY also uses its extra nodes") {
  // 4 nodes, 2 running until 10: the head (4 wide) starts at 10 with no spare node.
  const std::vector<RunningJob> r{{2, 10}};
  const std::vector<WaitingJob> q{{4, 5}, {1, 20}, {1, 10}};
  CHECK(pick_backfill(site(4, 2, r, q), false) == Picks{2});
  CHECK(pick_backfill(site(4, 2, r, q), true) == Picks{2});
  // The head needs 3: one node spare at 10, which EASY gives to a long job.
  const std::vector<WaitingJob> q3{{3, 5}, {1, 20}, {1, 20}};
  CHECK(pick_backfill(site(4, 2, r, q3), false).empty());
  CHECK(pick_backfill(site(4, 2, r, q3), true) == Picks{1});
  // Without a prediction for a running job both act as FIFO.
  CHECK(pick_backfill(site(4, 2, {{2, kUnknown}}, q), true).empty());
  // A queued job without a prediction backfills only onto extra nodes.
  const std::vector<WaitingJob> qu{{3, 5}, {1, kUnknown}};
  CHECK(pick_backfill(site(4, 2, r, qu), false).empty());
  CHECK(pick_backfill(site(4, 2, r, qu), true) == Picks{1});
}

TEST_CASE("Conservative: every queued job reserved in order, the earliest hole that holds it") {
  // 4 nodes, 2 busy until 10. A (4x5) waits for 10; B (2x10) fits before;
  // C (2x11) goes after A; D (2x5) beside C.
  const std::vector<RunningJob> r{{2, 10}};
  const std::vector<WaitingJob> q{{4, 5}, {2, 10}, {2, 11}, {2, 5}};
  CHECK(reservations(site(4, 2, r, q)) == std::vector<Time>{10, 0, 15, 15});
  CHECK(pick_conservative(site(4, 2, r, q)) == Picks{1});
  // A job of unknown length holds its nodes for ever; so does a running one.
  CHECK(reservations(site(4, 2, r, {{2, kUnknown}, {4, 1}})) == std::vector<Time>{0, kNever});
  CHECK(reservations(site(4, 2, {{2, kUnknown}}, {{2, 3}, {3, 1}})) == std::vector<Time>{0, kNever});
  // A predicted length of 0 still holds its nodes for a second.
  CHECK(reservations(site(2, 2, {}, {{2, 0}, {2, 0}})) == std::vector<Time>{0, 1});
}

TEST_CASE("runtime learning: the first run, then a weighted moving average per key") {
  RuntimeLearner l(0.5);
  RigidJob a;
  a.width = 4;
  RigidJob b = a;
  b.width = 8;
  CHECK_FALSE(l.predict(a));
  l.observe(a, 100);
  CHECK(*l.predict(a) == 100);
  l.observe(a, 200);
  CHECK(*l.predict(a) == 150);
  CHECK_FALSE(l.predict(b));
  RigidJob c = a;
  c.user = 3;
  CHECK_FALSE(l.predict(c));
}

}  // namespace piranha::rigid
