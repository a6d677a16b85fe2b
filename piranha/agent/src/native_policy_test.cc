#include "piranha/agent/native_policy.h"

#include <doctest/doctest.h>

#include <map>

using piranha::LiveJob;
using piranha::NativePolicy;
using piranha::NativePolicyKind;

TEST_CASE("native policy: names") {
  CHECK(piranha::native_policy_from("fair") == NativePolicyKind::Fair);
  CHECK(piranha::native_policy_from("FCFS") == NativePolicyKind::Fcfs);
  CHECK_FALSE(piranha::native_policy_from("FIAR"));
}

TEST_CASE("native policy: FCFS takes the earliest arrived job, ties by id") {
  NativePolicy p(NativePolicyKind::Fcfs, 1);
  // Seen together: id (submission) order.
  CHECK(p.choose({{5}, {3}, {9}}, std::nullopt) == 3);
  // Job 1 is first seen later: it arrived after 3, 5 and 9 here.
  CHECK(p.choose({{5}, {3}, {9}, {1}}, 3) == 3);
  CHECK(p.choose({{5}, {9}, {1}}, 3) == 5);
  CHECK_FALSE(p.choose({}, 5));
}

TEST_CASE("native policy: FAIR keeps a live job when nothing new arrives") {
  NativePolicy p(NativePolicyKind::Fair, 7);
  auto first = p.choose({{1}, {2}}, std::nullopt);
  REQUIRE(first);
  for (int i = 0; i < 50; ++i) CHECK(p.choose({{1}, {2}}, first) == first);
}

TEST_CASE("native policy: FAIR leaves an ended job") {
  NativePolicy p(NativePolicyKind::Fair, 7);
  p.choose({{1}, {2}}, std::nullopt);
  CHECK(p.choose({{2}}, 1) == 2);
  CHECK_FALSE(p.choose({}, 2));
}

TEST_CASE("native policy: FAIR spreads nodes evenly over jobs") {
  // Many nodes, each its own policy: a node without a job picks uniformly;
  // when a third job arrives each switches to it with probability 1/3.
  std::map<std::int64_t, int> count;
  const int nodes = 3000;
  for (int n = 0; n < nodes; ++n) {
    NativePolicy p(NativePolicyKind::Fair, static_cast<std::uint64_t>(n) + 1);
    auto j = p.choose({{1}, {2}}, std::nullopt);
    j = p.choose({{1}, {2}, {3}}, j);
    ++count[*j];
  }
  // Expected 1000 each; 5 standard deviations is about 130.
  for (std::int64_t id : {1, 2, 3}) CHECK(std::abs(count[id] - nodes / 3) < 130);
}

TEST_CASE("native policy: FAIR switches to a new job with probability 1/q, else keeps its job") {
  // Three live jobs, the node runs job 2; job 4 arrives: q = 4.
  std::map<std::int64_t, int> count;
  const int nodes = 4000;
  for (int n = 0; n < nodes; ++n) {
    NativePolicy p(NativePolicyKind::Fair, static_cast<std::uint64_t>(n) + 1);
    p.choose({{1}, {2}, {3}}, 2);
    ++count[*p.choose({{1}, {2}, {3}, {4}}, 2)];
  }
  CHECK(count.size() == 2);
  // Expected 1000 switches; 5 standard deviations is about 137.
  CHECK(std::abs(count[4] - nodes / 4) < 137);
  CHECK(count[2] == nodes - count[4]);
}

TEST_CASE("native policy: FAIR is reproducible from its seed") {
  NativePolicy a(NativePolicyKind::Fair, 42), b(NativePolicyKind::Fair, 42);
  std::vector<LiveJob> jobs{{1}, {2}, {3}, {4}};
  std::optional<std::int64_t> ja, jb;
  for (int i = 0; i < 20; ++i) {
    jobs.push_back({5 + i});
    ja = a.choose(jobs, ja);
    jb = b.choose(jobs, jb);
    CHECK(ja == jb);
  }
}
