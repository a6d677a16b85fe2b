#include "piranha/nps/whole_reads.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

using piranha::nps::WholeReads;

TEST_CASE("whole reads: every shape at the first tick, then at most one a tick, each every period") {
  WholeReads w(5);
  CHECK(w.due(100).size() == WholeReads::kShapes);
  CHECK(w.due(101).empty());
  CHECK(w.due(104.9).empty());
  // All five are due at 105: one a tick, the most overdue first.
  std::vector<WholeReads::Shape> seen;
  for (double t : {105.0, 106.0, 107.0, 108.0, 109.0}) {
    const auto d = w.due(t);
    REQUIRE(d.size() == 1);
    seen.push_back(d[0]);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(std::unique(seen.begin(), seen.end()) == seen.end());  // each once
  // Staggered from then on: each again 5 s after its own read.
  CHECK(w.due(109.5).empty());
  const auto d = w.due(110.0);
  REQUIRE(d.size() == 1);
  CHECK(w.read_at(d[0]) == 110.0);
}

TEST_CASE("whole reads: the most overdue shape goes first, and a clock that went back reads all") {
  WholeReads w(5);
  w.due(0);
  // Ticks 10 s apart (a slow pool): one shape each, never two.
  for (double t = 10; t <= 50; t += 10) CHECK(w.due(t).size() == 1);
  // Now the oldest read is the one read at 10.
  double oldest = 1e9;
  for (std::size_t s = 0; s < WholeReads::kShapes; ++s)
    oldest = std::min(oldest, w.read_at(static_cast<WholeReads::Shape>(s)));
  CHECK(oldest == 10);
  const auto d = w.due(60);
  REQUIRE(d.size() == 1);
  CHECK(w.read_at(d[0]) == 60);
  CHECK(w.due(20).size() == WholeReads::kShapes);
}

TEST_CASE("whole reads: a read adopted keeps the records whose events came after it began, drops the gone") {
  using Seen = std::map<std::string, std::pair<std::string, int>>;
  const auto key = [](const std::pair<std::string, int>& r) { return r.first; };
  Seen seen{{"n1", {"n1", 5}}, {"n2", {"n2", 2}}, {"n3", {"n3", 1}}, {"n5", {"n5", 7}}};
  // n1 and n5 written after the read began (events 5 and 7 > 3), n2 before.
  const std::map<std::string, std::uint64_t> event_at{{"n1", 5}, {"n2", 2}, {"n5", 7}};
  std::vector<std::pair<std::string, int>> read{{"n1", 4}, {"n2", 3}, {"n4", 1}};
  piranha::nps::adopt_whole_read(seen, event_at, read, 3, key);
  CHECK(seen == Seen{{"n1", {"n1", 5}}, {"n2", {"n2", 3}}, {"n4", {"n4", 1}}, {"n5", {"n5", 7}}});
  // Nothing since: the read is the whole truth.
  piranha::nps::adopt_whole_read(seen, event_at, read, 7, key);
  CHECK(seen == Seen{{"n1", {"n1", 4}}, {"n2", {"n2", 3}}, {"n4", {"n4", 1}}});
}
