// AssignmentBook: which requests supersede a batch of assignments, checked
// against a model of the space (the tuples it would hold afterwards).
#include "piranha/nps/assignment_book.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <random>
#include <string>

namespace piranha::nps {
namespace {

sys::Assignment at(std::int64_t epoch, const std::string& node, std::int64_t job, std::int64_t id = 0) {
  return sys::Assignment{id, epoch, node, job};
}

// The space after `w`: its outs added, then each take removing up to n of
// the oldest tuples its template matches, as the server does.
std::vector<ts::Tuple> after(std::vector<ts::Tuple> space, const AssignmentBook::Writes& w) {
  space.insert(space.end(), w.out.begin(), w.out.end());
  for (const auto& [t, n] : w.take) {
    std::size_t taken = 0;
    std::erase_if(space, [&](const ts::Tuple& x) { return taken < n && t.matches(x) && ++taken; });
  }
  return space;
}

std::vector<std::string> texts(const std::vector<ts::Tuple>& ts) {
  std::vector<std::string> out;
  for (const auto& t : ts) out.push_back(ts::to_string(t));
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("assignment book: a decision that moves whole groups is one out and one take per old group") {
  AssignmentBook book;
  std::vector<ts::Tuple> space;
  for (const char* n : {"a", "b", "c"}) space.push_back(at(10, n, 1).to_tuple());
  space.push_back(at(11, "d", 2).to_tuple());
  book.know(0, space);
  REQUIRE(book.knows(0));
  CHECK_FALSE(book.knows(1));
  // a, b and c leave job 1 (all of epoch 10's job-1 group); d stays.
  const auto w = book.supersede({at(20, "a", 2), at(20, "b", 2), at(20, "c", 0), at(11, "d", 2)});
  CHECK(w.out.size() == 3);
  REQUIRE(w.take.size() == 1);
  CHECK(w.take[0].second == 3);
  space = after(space, w);
  CHECK(space.size() == 4);
  for (const char* n : {"a", "b", "c", "d"}) CHECK(book.count(0, n) == 1);
}

TEST_CASE("assignment book: part of a group is taken tuple by tuple, and strays of a node go too") {
  AssignmentBook book;
  std::vector<ts::Tuple> space{at(10, "a", 1).to_tuple(), at(10, "b", 1).to_tuple(),
                               at(10, "c", 1).to_tuple(), at(5, "a", 3).to_tuple()};  // a stray of a, older
  book.know(0, space);
  const auto w = book.supersede({at(20, "a", 2)});
  space = after(space, w);
  // b and c keep their job-1 tuples: only a's (both) went.
  CHECK(std::count(space.begin(), space.end(), at(10, "b", 1).to_tuple()) == 1);
  CHECK(std::count(space.begin(), space.end(), at(10, "c", 1).to_tuple()) == 1);
  CHECK(std::count(space.begin(), space.end(), at(20, "a", 2).to_tuple()) == 1);
  CHECK(space.size() == 3);
  CHECK(book.count(0, "a") == 1);
}

TEST_CASE("assignment book: random decisions leave each node exactly its newest assignment") {
  std::mt19937 rng(7);
  AssignmentBook book;
  std::vector<ts::Tuple> space;
  const std::vector<std::string> nodes{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"};
  // Another scheduler's assignments are never touched.
  space.push_back(at(1, "n0", 9, 1).to_tuple());
  book.know(0, {});
  std::map<std::string, sys::Assignment> want;
  for (std::int64_t epoch = 1; epoch <= 200; ++epoch) {
    std::vector<sys::Assignment> next;
    for (const auto& n : nodes)
      if (rng() % 3 == 0) next.push_back(want[n] = at(epoch, n, static_cast<std::int64_t>(rng() % 3)));
    space = after(space, book.supersede(next));
    std::vector<ts::Tuple> expect{at(1, "n0", 9, 1).to_tuple()};
    for (const auto& [n, a] : want) expect.push_back(a.to_tuple());
    REQUIRE(texts(space) == texts(expect));
  }
  // Rewriting what is there writes nothing.
  std::vector<sys::Assignment> same;
  for (const auto& [n, a] : want) same.push_back(a);
  const auto w = book.supersede(same);
  CHECK(w.out.empty());
  CHECK(w.take.empty());
}

}  // namespace
}  // namespace piranha::nps
