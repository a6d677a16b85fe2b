#include "piranha/rigid/workload.h"

#include <doctest/doctest.h>

#include <sstream>

namespace piranha::rigid {
namespace {

Workload parse(const std::string& text) {
  std::istringstream in(text);
  return parse_swf(in, "w.swf");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const char* kLine2 = "2 5 -1 30 4 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n";

}  // namespace

TEST_CASE("SWF: header, 18 fields, width from requested else allocated, sorted by submit") {
  const auto w = parse(
      "; Version: 2\n; MaxNodes: 64\n\n"
      "1 10 -1 100 8 -1 -1 16 200 -1 1 7 -1 3 0 -1 -1 -1\n" +
      std::string(kLine2) + "3 5 -1 -1 4 -1 -1 -1 -1 -1 0 -1 -1 -1 0 -1 -1 -1\n");
  CHECK(w.max_nodes == 64);
  CHECK(w.skipped == 1);  // job 3: run time -1
  REQUIRE(w.jobs.size() == 2);
  CHECK(w.jobs[0].id == 2);
  CHECK(w.jobs[0].width == 4);
  CHECK(w.jobs[0].estimate == kUnknown);
  CHECK(w.jobs[0].line == 5);
  CHECK(w.jobs[1].id == 1);
  CHECK(w.jobs[1].width == 16);
  CHECK(w.jobs[1].estimate == 200);
  CHECK(w.jobs[1].user == 7);
  CHECK(w.jobs[1].executable == 3);
}

TEST_CASE("SWF defects are named by file and line") {
  CHECK(error_of("; c\n2 5 -1 30 4\n") == "w.swf:2: expected 18 fields, found 5");
  CHECK(error_of("2 5 -1 3x 4 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n") ==
        "w.swf:1: field 4 \"3x\" is not an integer");
  CHECK(error_of("2 5 -1 30 4 0.5 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n") ==
        "no error");  // field 6 may be real
  CHECK(error_of("2 5 -1 30 -4 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n") ==
        "w.swf:1: field 5 is -4; below -1");
  CHECK(error_of(std::string(kLine2) + kLine2) == "w.swf:2: job 2 appears twice");
  CHECK(error_of("2 -1 -1 30 4 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n") ==
        "w.swf:1: job 2 has no submit time");
  CHECK(error_of("; only comments\n") == "w.swf: no jobs");
  CHECK_THROWS_WITH_AS(read_swf("/nonexistent.swf"), "/nonexistent.swf: cannot open", InputError);
}

TEST_CASE("SWF: load factor rounds run times and estimates up, width filter") {
  const auto w = parse("1 0 -1 3 8 -1 -1 -1 5 -1 1 -1 -1 -1 0 -1 -1 -1\n" + std::string(kLine2));
  const auto s = scale_load(w, 1.5);
  CHECK(s.jobs[0].runtime == 5);   // ceil(4.5)
  CHECK(s.jobs[0].estimate == 8);  // ceil(7.5)
  CHECK(s.jobs[1].runtime == 45);
  CHECK(at_most_width(w, 4).jobs.size() == 1);
}

}  // namespace piranha::rigid
