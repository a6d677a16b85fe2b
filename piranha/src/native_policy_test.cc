#include <doctest/doctest.h>

#include <map>

#include "piranha/native_policy.h"

using piranha::LiveJob;
using piranha::NativePolicy;
using piranha::NativePolicyKind;

TEST_CASE("native policy: names") {
  CHECK(piranha::native_policy_from("fair") == NativePolicyKind::Fair);
  CHECK(piranha::native_policy_from("FCFS") == NativePolicyKind::Fcfs);
  CHECK_FALSE(piranha::native_policy_from("FIAR"));
}

TEST_CASE("native policy: FCFS takes the earliest job, ties by id") {
  NativePolicy p(NativePolicyKind::Fcfs, 1);
  CHECK(p.choose({{5, 10.0}, {3, 10.0}, {9, 2.0}}, std::nullopt) == 9);
  CHECK(p.choose({{5, 10.0}, {3, 10.0}}, 5) == 3);
  CHECK_FALSE(p.choose({}, 3));
}

TEST_CASE("native policy: FAIR keeps a live job when nothing new arrives") {
  NativePolicy p(NativePolicyKind::Fair, 7);
  auto first = p.choose({{1, 0.0}, {2, 1.0}}, std::nullopt);
  REQUIRE(first);
  for (int i = 0; i < 50; ++i) CHECK(p.choose({{1, 0.0}, {2, 1.0}}, first) == first);
}

TEST_CASE("native policy: FAIR leaves an ended job") {
  NativePolicy p(NativePolicyKind::Fair, 7);
  p.choose({{1, 0.0}, {2, 1.0}}, std::nullopt);
  CHECK(p.choose({{2, 1.0}}, 1) == 2);
}

TEST_CASE("native policy: FAIR spreads nodes evenly over jobs") {
  // Many nodes, each its own policy: a node without a job picks uniformly;
  // when a third job arrives each switches to it with probability 1/3.
  std::map<std::int64_t, int> count;
  const int nodes = 3000;
  for (int n = 0; n < nodes; ++n) {
    NativePolicy p(NativePolicyKind::Fair, static_cast<std::uint64_t>(n) + 1);
    auto j = p.choose({{1, 0.0}, {2, 1.0}}, std::nullopt);
    j = p.choose({{1, 0.0}, {2, 1.0}, {3, 2.0}}, j);
    ++count[*j];
  }
  // Expected 1000 each; 5 standard deviations is about 130.
  for (std::int64_t id : {1, 2, 3}) CHECK(std::abs(count[id] - nodes / 3) < 130);
}

TEST_CASE("native policy: FAIR is reproducible from its seed") {
  NativePolicy a(NativePolicyKind::Fair, 42), b(NativePolicyKind::Fair, 42);
  std::vector<LiveJob> jobs{{1, 0.0}, {2, 1.0}, {3, 2.0}, {4, 3.0}};
  CHECK(a.choose(jobs, std::nullopt) == b.choose(jobs, std::nullopt));
}
