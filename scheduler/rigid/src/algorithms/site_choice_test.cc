#include "site_choice.h"

#include <doctest/doctest.h>

#include "../test_util.h"

namespace piranha::rigid {
namespace {

using Sites = std::vector<int>;

using test::site;

}  // namespace

TEST_CASE("a site's load: width x predicted work, queued and running, unknown counting 0") {
  // Queued: 2 x 10 and one of unknown length; running: 1 until 30 (20 left), 3 of unknown length.
  const std::vector<WaitingJob> q{{2, 10}, {4, kUnknown}};
  const std::vector<RunningJob> r{{1, 30}, {3, kUnknown}};
  CHECK(site_load(site(8, 4, r, q, 10)) == 2 * 10 + 1 * 20);
  // A running job past its prediction is expected to end at now + 1: 1 s left.
  CHECK(site_load(site(8, 7, {{1, 5}}, {}, 10)) == 1);
}

TEST_CASE("least loaded: loads per node compared exactly, ties to the lower site, the k ascending") {
  const std::vector<__int128> load{6, 5, 3, 3};
  const std::vector<int> nodes{4, 2, 2, 2};
  // Per node 1.5, 2.5, 1.5, 1.5: sites 0, 2, 3 tie, the lower two win.
  CHECK(least_loaded({0, 1, 2, 3}, 2, load, nodes) == Sites{0, 2});
  CHECK(least_loaded({3, 1}, 1, load, nodes) == Sites{3});
  // At most k candidates: all of them.
  CHECK(least_loaded({1, 3}, 2, load, nodes) == Sites{1, 3});
  // Loads too large for a double to tell apart still order exactly.
  const __int128 big = static_cast<__int128>(1) << 80;
  const std::vector<__int128> huge{big + 1, big};
  CHECK(least_loaded({0, 1}, 1, huge, std::vector<int>{1, 1}) == Sites{1});
}

TEST_CASE("earliest completion: an unknown completion last, ties to the lower site") {
  const std::vector<Time> c{kNever, 40, 30, 30};
  CHECK(earliest_completion({0, 1, 2, 3}, 1, c) == Sites{2});
  CHECK(earliest_completion({0, 1, 3}, 2, c) == Sites{1, 3});
  CHECK(earliest_completion({0, 1}, 1, std::vector<Time>{kNever, kNever}) == Sites{0});
}

TEST_CASE("completion if appended: behind the site's reservations, unknown when either is") {
  // 4 nodes, 2 busy until 10, a 4-wide job reserved at 10 for 5 s: a 2-wide 3 s job fits at once,
  // a 3-wide one after the 4-wide.
  const std::vector<RunningJob> r{{2, 10}};
  const std::vector<WaitingJob> q{{4, 5}};
  CHECK(completion_if_appended(site(4, 2, r, q), {2, 3}) == 3);
  CHECK(completion_if_appended(site(4, 2, r, q), {3, 3}) == 18);
  CHECK(completion_if_appended(site(4, 2, r, q), {2, kUnknown}) == kNever);
  CHECK(completion_if_appended(site(4, 2, {{2, kUnknown}}, {}), {3, 1}) == kNever);
}

}  // namespace piranha::rigid
