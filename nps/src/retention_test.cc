// The retention of the evaluator's records as a pure decision: which records
// go, given the records, the rule and the time.
#include "piranha/nps/retention.h"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

namespace piranha::nps {
namespace {

constexpr double kDay = 86400;

EvalRecord rec(const std::string& kind, double time, const nlohmann::json& j = nlohmann::json::object()) {
  return EvalRecord{kind, time, j.dump()};
}

std::vector<EvalRecord> spans_at(std::initializer_list<double> times) {
  std::vector<EvalRecord> out;
  for (double t : times) out.push_back(rec("span", t, {{"node", "ws01"}, {"start", t - 1}, {"end", t}}));
  return out;
}

TEST_CASE("retention: records older than the days go, the newer stay") {
  const auto records = spans_at({1 * kDay, 2 * kDay, 5 * kDay, 9 * kDay});
  const Retention r{5, 1000};
  CHECK(records_to_prune(records, r, 10.5 * kDay) == std::vector<std::size_t>{0, 1, 2});
  CHECK(records_to_prune(records, r, 7 * kDay) == std::vector<std::size_t>{0});
  CHECK(retention_cut(records, r, 7 * kDay) == 2 * kDay);
  CHECK(records_to_prune(records, r, 1 * kDay).empty());
}

TEST_CASE("retention: beyond the count, the oldest go, and records of one time go together") {
  const auto records = spans_at({1, 2, 3, 4, 5, 6});
  CHECK(records_to_prune(records, Retention{30, 4}, 10) == std::vector<std::size_t>{0, 1});
  CHECK(records_to_prune(records, Retention{30, 6}, 10).empty());
  // Two records at time 3 straddle the count's boundary: both go, so every
  // record from the cut's time on is kept.
  const auto tied = spans_at({1, 2, 3, 3, 4, 5});
  CHECK(records_to_prune(tied, Retention{30, 3}, 10) == std::vector<std::size_t>{0, 1, 2, 3});
  CHECK(retention_cut(tied, Retention{30, 3}, 10) == 4);
  CHECK(records_to_prune(spans_at({}), Retention{30, 3}, 10).empty());
  CHECK(retention_cut(records, Retention{30, 6}, 10) < 0);  // nothing goes: no cut
}

TEST_CASE("retention: a job that arrived before the cut loses its job record with its early spans") {
  const std::vector<EvalRecord> records = {
      rec("span", 10, {{"node", "ws01"}, {"job", 1}, {"start", 5}, {"end", 10}}),
      rec("span", 20, {{"node", "ws01"}, {"job", 1}, {"start", 10}, {"end", 20}}),
      rec("job", 20, {{"id", 1}, {"arrival", 5}, {"end", 20}}),
      rec("span", 30, {{"node", "ws01"}, {"job", 2}, {"start", 21}, {"end", 30}}),
      rec("job", 30, {{"id", 2}, {"arrival", 21}, {"end", 30}}),
  };
  // The count keeps the last four; the cut is 20, job 1 arrived at 5: its
  // record goes, job 2's stays.
  CHECK(records_to_prune(records, Retention{30, 4}, 40) == std::vector<std::size_t>{0, 2});
  CHECK(records_to_prune(records, Retention{30, 5}, 40).empty());
}

TEST_CASE(
    "retention: the latest switch and each scheduler's and node's latest figures stay, whatever their age") {
  const std::vector<EvalRecord> records = {
      rec("switch", 1, {{"from", 0}, {"to", 1}}),
      rec("estimate", 2, {{"scheduler", 0}, {"estimate", 9.0}}),
      rec("estimate", 2, {{"scheduler", 1}, {"estimate", 5.0}}),
      rec("accuracy", 2, {{"node", "ws01"}, {"fraction", 0.5}}),
      rec("switch", 3, {{"from", 1}, {"to", 2}}),
      rec("estimate", 4, {{"scheduler", 0}, {"estimate", 8.0}}),
      rec("accuracy", 4, {{"node", "ws02"}, {"fraction", 0.7}}),
      rec("span", 50 * kDay, {{"node", "ws01"}, {"start", 1}, {"end", 50 * kDay}}),
  };
  // Everything but the span is older than 30 days.
  CHECK(records_to_prune(records, Retention{30, 1000}, 51 * kDay) == std::vector<std::size_t>{0, 1});
  // By count too: the old switch and scheduler 0's older estimate go.
  CHECK(records_to_prune(records, Retention{30, 1}, 51 * kDay) == std::vector<std::size_t>{0, 1});
}

TEST_CASE("retention: a record whose json is not an object goes with its time") {
  std::vector<EvalRecord> records = {EvalRecord{"estimate", 1, "not json"}, EvalRecord{"job", 2, "[]"},
                                     rec("span", 3)};
  CHECK(records_to_prune(records, Retention{30, 1}, 10) == std::vector<std::size_t>{0, 1});
  CHECK(records_to_prune(records, Retention{30, 2}, 10) == std::vector<std::size_t>{0});
}

}  // namespace
}  // namespace piranha::nps
