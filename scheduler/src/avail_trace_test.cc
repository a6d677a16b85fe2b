#include "piranha/scheduler/avail_trace.h"

#include <doctest/doctest.h>

#include <sstream>

using piranha::AvailabilityTrace;
using piranha::InputError;
using piranha::parse_trace;

namespace {

AvailabilityTrace parse(const std::string& text) {
  std::istringstream in(text);
  return parse_trace(in, "t.avail.csv");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const char* kHeader = "# piranha availability trace v1\n# step_seconds: 60\n# length: 100\nnode,start,end\n";

}  // namespace

TEST_CASE("trace: nodes in order of first appearance, periods sorted") {
  auto t = parse(std::string(kHeader) + "ws02,50,60\nws01,0,10\nws02,5,20\n");
  CHECK(t.length == 100);
  CHECK(t.step_seconds == 60);
  REQUIRE(t.nodes == std::vector<std::string>{"ws02", "ws01"});
  CHECK(t.periods[0] == std::vector<piranha::StepPeriod>{{5, 20}, {50, 60}});
  CHECK(*t.index_of("ws01") == 1);
  CHECK_FALSE(t.index_of("ws03"));
}

TEST_CASE("trace: availability is half-open and next_change finds edges") {
  auto t = parse(std::string(kHeader) + "a,10,20\na,20,30\na,40,100\n");
  CHECK_FALSE(t.available(0, 9));
  CHECK(t.available(0, 10));
  CHECK(t.available(0, 29));
  CHECK_FALSE(t.available(0, 30));
  CHECK(t.next_change(0, 0) == 10);
  CHECK(t.next_change(0, 12) == 30);  // adjacent periods are one stretch
  CHECK(t.next_change(0, 30) == 40);
  CHECK(t.next_change(0, 50) == 100);
  CHECK(t.available_fraction() == doctest::Approx(0.8));
}

TEST_CASE("trace: write then parse gives the same trace") {
  auto t = parse(std::string(kHeader) + "b,1,2\na,3,99\nb,7,100\n");
  std::ostringstream out;
  write_trace(out, t);
  auto u = parse(out.str());
  CHECK(u.nodes == t.nodes);
  CHECK(u.periods == t.periods);
  CHECK(u.length == t.length);
  CHECK(u.step_seconds == t.step_seconds);
}

TEST_CASE("trace: every defect is named with its line") {
  CHECK(error_of("node,start,end\na,0,1\n") ==
        "t.avail.csv:1: missing \"# length: N\" metadata before the header");
  CHECK(error_of("# length: 10\na,0,1\n") ==
        "t.avail.csv:2: missing the header \"node,start,end\" before the first row \"a,0,1\"");
  CHECK(error_of("# length: 10\nnode,start,end\n# length: 20\n") ==
        "t.avail.csv:3: metadata \"length\" after the header; it must come before \"node,start,end\"");
  CHECK(error_of("# length: 10\nnode,start,end,x\n") == "t.avail.csv:2: unknown column \"x\"");
  CHECK(error_of(std::string(kHeader) + "a,0,101\n") ==
        "t.avail.csv:5: end 101 is past the trace length 100");
  CHECK(error_of(std::string(kHeader) + "a,5,5\n") == "t.avail.csv:5: start 5 is not before end 5");
  CHECK(error_of(std::string(kHeader) + "a,x,5\n") == "t.avail.csv:5: start \"x\" is not an integer");
  CHECK(error_of(std::string(kHeader) + "a,1.5,5\n") == "t.avail.csv:5: start \"1.5\" is not an integer");
  CHECK(error_of(std::string(kHeader) + "a,-1,5\n") == "t.avail.csv:5: start -1 is negative");
  CHECK(error_of(std::string(kHeader) + "a,0,10\nb,0,3\na,5,20\n") ==
        "t.avail.csv:7: period of a overlaps the one on line 5");
  CHECK(error_of(std::string(kHeader) + "a,0\n") ==
        "t.avail.csv:5: expected 3 fields (node,start,end), got 2");
  CHECK(error_of("# length: zero\n") == "t.avail.csv:1: length \"zero\" is not an integer");
  CHECK(error_of("# length: 10\n") == "t.avail.csv:1: missing the header \"node,start,end\"");
  CHECK_THROWS_AS(piranha::read_trace("/nonexistent/x.avail.csv"), InputError);
}
