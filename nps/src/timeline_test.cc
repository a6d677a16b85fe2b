// Timeline (timeline.h) on hand-made states and records: no sockets, no clock.
#include "piranha/nps/timeline.h"

#include <doctest/doctest.h>

namespace piranha::nps {
namespace {

using json = nlohmann::json;

json node(const std::string& name, const std::string& state, json job = nullptr) {
  return {{"name", name}, {"state", state}, {"job", job}};
}

json state(double time, json nodes, std::int64_t obeyed = 0, const std::string& strategy = "TSK") {
  return {{"time", time},
          {"nodes", std::move(nodes)},
          {"obeyed", {{"id", obeyed}, {"strategy", strategy}}},
          {"retreats", json::array()},
          {"finished", json::array()}};
}

}  // namespace

TEST_CASE("timeline: a node's unchanged state extends its stretch, a new state or job opens another") {
  Timeline t;
  t.observe(state(10, {node("ws01", "available", 5)}));
  t.observe(state(11, {node("ws01", "available", 5)}));
  t.observe(state(12, {node("ws01", "unavailable", 5)}));
  t.observe(state(14, {node("ws01", "unavailable")}));
  const json h = t.history(0);
  const json spans = h["nodes"]["ws01"];
  REQUIRE(spans.size() == 3);
  CHECK(spans[0] == json::array({10.0, 12.0, "available", 5}));
  CHECK(spans[1] == json::array({12.0, 14.0, "unavailable", 5}));
  CHECK(spans[2] == json::array({14.0, 14.0, "unavailable", nullptr}));
  CHECK(h["open"]["ws01"] == true);
  CHECK(h["time"] == 14.0);
  // A node gone from the state has its stretch closed, not extended.
  t.observe(state(20, json::array()));
  CHECK(t.history(0)["open"]["ws01"] == false);
  CHECK(t.history(0)["nodes"]["ws01"][2][1] == 14.0);
}

TEST_CASE("timeline: history(since) leaves out stretches and marks that ended before since") {
  Timeline t;
  t.observe(state(10, {node("ws01", "available")}));
  t.observe(state(20, {node("ws01", "down")}));
  json s = state(30, {node("ws01", "available")});
  s["retreats"] = {{{"time", 15.0}, {"node", "ws01"}, {"job", 3}, {"by", "owner"}}};
  t.observe(s);
  const json h = t.history(21);
  REQUIRE(h["nodes"]["ws01"].size() == 2);  // [10, 20] ended before 21
  CHECK(h["nodes"]["ws01"][0][2] == "down");
  CHECK(h["marks"].empty());  // the retreat at 15
  CHECK(t.history(15)["marks"].size() == 1);
}

TEST_CASE(
    "timeline: retreats repeated in every state are marked once, and a change of obeyed scheduler is a "
    "switch") {
  Timeline t;
  const json r = {{"time", 7.0}, {"node", "ws02"}, {"job", 4}, {"by", "scheduler"}};
  for (double time : {8.0, 9.0, 10.0}) {
    json s = state(time, {node("ws02", "available")}, time < 10 ? 0 : 2, time < 10 ? "TSK" : "SRT");
    s["retreats"] = {r};
    t.observe(s);
  }
  const json marks = t.history(0)["marks"];
  REQUIRE(marks.size() == 2);
  CHECK(marks[0]["kind"] == "retreat");
  CHECK(marks[0]["by"] == "scheduler");
  CHECK(marks[1]["kind"] == "switch");
  CHECK(marks[1]["time"] == 10.0);
  CHECK(marks[1]["from"] == 0);
  CHECK(marks[1]["to"] == 2);
  CHECK(marks[1]["from_strategy"] == "TSK");
  CHECK(marks[1]["to_strategy"] == "SRT");
}

TEST_CASE("timeline: ended jobs stay listed once each with their turnaround, the latest `finished` of them") {
  TimelineOptions o;
  o.finished = 2;
  o.keep_seconds = 10;
  Timeline t(o);
  for (int id = 1; id <= 3; ++id) {
    json s = state(100.0 * id, {node("ws01", "available")});
    s["finished"] = {{{"id", id},
                      {"name", "spin"},
                      {"arrival", 1.0},
                      {"end", 100.0 * id},
                      {"turnaround", 100.0 * id - 1}}};
    t.observe(s);
    t.observe(s);  // sent again: kept once
  }
  const json f = t.history(0)["finished"];
  REQUIRE(f.size() == 2);
  CHECK(f[0]["id"] == 2);
  CHECK(f[1]["id"] == 3);
  CHECK(f[1]["turnaround"] == 299.0);  // kept by count, not age: job 2 ended long before the cut
}

TEST_CASE("timeline: memory stays bounded by stretches per node and by age") {
  TimelineOptions o;
  o.spans_per_node = 8;
  o.keep_seconds = 1000;
  Timeline t(o);
  for (int i = 0; i < 100; ++i)  // a change every second: 100 stretches seen
    t.observe(state(i, {node("ws01", i % 2 ? "available" : "unavailable"), node("ws02", "available", i)}));
  CHECK(t.span_count() == 16);
  CHECK(t.history(0)["nodes"]["ws01"].back()[0] == 99.0);  // the newest kept
  // Much later, the old stretches age out; the open one goes on.
  t.observe(state(5000, {node("ws02", "available", 99)}));
  CHECK(t.history(0)["nodes"]["ws02"].size() == 1);
  CHECK(t.history(0)["nodes"].contains("ws01") == false);  // closed at 100 s, older than keep_seconds
}

TEST_CASE("timeline: seeded from the evaluator's records, before what is observed") {
  const std::vector<EvalRecord> records = {
      {"span", 50,
       R"({"node":"ws01","state":"available","available":true,"job":3,"start":40,"end":50,)"
       R"("retreat":"owner"})"},
      {"decision", 50, R"({"scheduler":0,"node":"ws01","job":null})"},
      {"job", 60, R"({"id":3,"name":"spin","arrival":30,"end":60,"turnaround":30,"owner_retreats":1})"},
      {"switch", 61, R"({"from":0,"to":1,"from_strategy":"TSK","to_strategy":"SRT"})"},
      {"span", 62, "not json"},
  };
  Timeline t;
  t.seed(records);
  t.observe(state(70, {node("ws01", "unavailable")}, 1, "SRT"));
  const json h = t.history(0);
  REQUIRE(h["nodes"]["ws01"].size() == 2);
  CHECK(h["nodes"]["ws01"][0] == json::array({40.0, 50.0, "available", 3}));
  CHECK(h["nodes"]["ws01"][1][0] == 70.0);
  REQUIRE(h["marks"].size() == 2);
  CHECK(h["marks"][0]["kind"] == "retreat");
  CHECK(h["marks"][0]["time"] == 50.0);
  CHECK(h["marks"][1]["kind"] == "switch");
  REQUIRE(h["finished"].size() == 1);
  CHECK(h["finished"][0]["turnaround"] == 30.0);
  CHECK(h["finished"][0]["owner_retreats"] == 1);
}

}  // namespace piranha::nps
