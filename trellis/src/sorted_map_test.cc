// SortedMap (Value::Map) against std::map, its model, and Value's sharing of
// lists and maps (copy on write).
#include "piranha/trellis/sorted_map.h"

#include <map>
#include <random>

#include "piranha/trellis/value.h"
#include "test_util.h"

namespace piranha::trellis {

TEST_CASE("trellis: SortedMap keeps keys in byte order and answers as std::map does") {
  std::mt19937 rng(7);
  SortedMap<int> m;
  std::map<std::string, int, std::less<>> model;
  const char* keys[] = {"b", "a", "ab", "", "Z", "\xff", "b2", "tick", "node", "a"};
  for (int round = 0; round < 2000; ++round) {
    const std::string k = keys[rng() % std::size(keys)] + std::string(rng() % 3 == 0 ? "x" : "");
    const int v = static_cast<int>(rng() % 100);
    switch (rng() % 5) {
      case 0: CHECK(m.insert_or_assign(k, v).second == model.insert_or_assign(k, v).second); break;
      case 1: CHECK(m.try_emplace(k, v).second == model.try_emplace(k, v).second); break;
      case 2: CHECK(m.erase(k) == model.erase(k)); break;
      case 3:
        m.insert_or_assign(m.end(), k, v);  // a wrong hint still lands in order
        model.insert_or_assign(k, v);
        break;
      case 4: CHECK((m[k] += v) == (model[k] += v)); break;
    }
    REQUIRE(m.size() == model.size());
    CHECK(std::equal(m.begin(), m.end(), model.begin(), model.end(), [](const auto& a, const auto& b) {
      return a.first == b.first && a.second == b.second;
    }));
    CHECK(m.count(k) == model.count(k));
    CHECK((m.find(k) == m.end()) == (model.find(k) == model.end()));
  }
  CHECK_THROWS_AS(m.at("missing"), std::out_of_range);
  const SortedMap<int> firsts{{"b", 1}, {"a", 2}, {"b", 3}};
  CHECK(firsts.at("b") == 1);
  CHECK(firsts.begin()->first == "a");
}

TEST_CASE("trellis: SortedMap's find with a hint answers as find does, whatever the hint") {
  std::mt19937 rng(11);
  const char* keys[] = {"", "a", "ab", "b", "node", "tick", "z", "\xff"};
  for (int round = 0; round < 300; ++round) {
    SortedMap<int> m;
    for (const char* k : keys)
      if (rng() % 2) m.insert_or_assign(k, 1);
    for (const char* k : keys)
      for (std::size_t hint = 0; hint <= m.size() + 1; ++hint) {
        INFO("key \"" << k << "\", hint " << hint << ", size " << m.size());
        CHECK(std::as_const(m).find(k, hint) == std::as_const(m).find(k));
      }
  }
  const Value state = Value::Map{{"node", "ws01"}, {"tick", 3}};
  CHECK(state.get("tick", 1) == Value(3));
  CHECK(state.get("tick", 0) == Value(3));  // a wrong hint: still found
  CHECK(state.get("jobs", 0).is_null());    // missing, and known so at the hint
  CHECK(Value(3).get("tick", 0).is_null());
}

TEST_CASE("trellis: a copied Value shares its map until one side changes it") {
  Value a = Value::Map{{"tick", 1}, {"node", "ws01"}};
  Value b = a;
  CHECK(&std::as_const(a).as_map() == &std::as_const(b).as_map());  // shared, not copied
  CHECK(a == b);
  b.as_map().insert_or_assign("tick", 2);  // copies first
  CHECK(a["tick"] == Value(1));
  CHECK(b["tick"] == Value(2));
  CHECK_FALSE(a == b);
  // Equal contents in distinct maps still compare equal, and strictly.
  CHECK(Value(Value::Map{{"x", 3}}) == Value(Value::Map{{"x", 3}}));
  CHECK_FALSE(Value(Value::Map{{"x", 3}}) == Value(Value::Map{{"x", 3.0}}));
  Value l = Value::List{1, 2};
  Value k = l;
  k.as_list().push_back(3);
  CHECK(l.as_list().size() == 2);
  CHECK(k.as_list().size() == 3);
  // A map no other Value shares is changed in place.
  const Value::Map* before = &std::as_const(b).as_map();
  b.as_map().insert_or_assign("x", 1);
  CHECK(&std::as_const(b).as_map() == before);
}

}  // namespace piranha::trellis
