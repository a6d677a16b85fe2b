#include "piranha/scheduler/csv_lines.h"

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

using piranha::InputError;
using piranha::csv::CsvLines;

namespace {

// Each line the reader stops at, as "LINE:TEXT".
std::vector<std::string> visited(const std::string& input, CsvLines::Comments comments) {
  std::istringstream in(input);
  CsvLines lines(in, "f.csv", comments);
  std::vector<std::string> seen;
  while (lines.next()) seen.push_back(std::to_string(lines.line()) + ":" + lines.text());
  return seen;
}

}  // namespace

TEST_CASE("csv lines: blank lines and comments are skipped, and each line keeps its number") {
  const std::string input = "# a comment\n\n  a, b ,c \r\n   # indented comment\nd\n\n";
  CHECK(visited(input, CsvLines::Comments::Skip) == std::vector<std::string>{"3:a, b ,c", "5:d"});
  CHECK(visited(input, CsvLines::Comments::Keep) ==
        std::vector<std::string>{"1:# a comment", "3:a, b ,c", "4:# indented comment", "5:d"});
}

TEST_CASE("csv lines: cells are split at commas and trimmed") {
  std::istringstream in(" x , y,,z,\n");
  CsvLines lines(in, "f.csv");
  REQUIRE(lines.next());
  CHECK(lines.raw() == " x , y,,z,");
  CHECK(lines.cells() == std::vector<std::string>{"x", "y", "", "z", ""});
  CHECK_FALSE(lines.next());
}

TEST_CASE("csv lines: a problem names the source and the line, or the last line read at the end") {
  std::istringstream in("h\n\nrow\n# trailing comment\n");
  CsvLines lines(in, "jobs.csv");
  REQUIRE(lines.next());
  REQUIRE(lines.next());
  CHECK_THROWS_WITH_AS(lines.fail("bad row"), "jobs.csv:3: bad row", InputError);
  CHECK_THROWS_WITH_AS(lines.fail_at(1, "bad header"), "jobs.csv:1: bad header", InputError);
  CHECK_FALSE(lines.next());
  CHECK(lines.line() == 4);
  CHECK_THROWS_WITH_AS(lines.fail("no jobs"), "jobs.csv:4: no jobs", InputError);

  std::istringstream empty("");
  CsvLines none(empty, "empty.csv");
  CHECK_FALSE(none.next());
  CHECK_THROWS_WITH_AS(none.fail("no rows"), "empty.csv: no rows", InputError);
}
