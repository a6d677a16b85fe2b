// Every doctest case must be selectable by its CTest name. doctest_discover_tests
// registers each TEST_CASE under its name, and CTest cuts a name at ';' (its
// list separator), while '[' and ']' are wildcards to doctest's -tc filter: a
// case named with either would be registered under a name that selects no
// test, and would silently never run. This reads every test source.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::vector<std::string> bad_test_names(const std::filesystem::path& root) {
  std::vector<std::string> bad;
  // A TEST_CASE's name: its first string literal, possibly split over lines.
  static const std::regex kName(R"re(TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+))re");
  for (const auto& dir : {"base", "tuplespace", "trellis", "scheduler", "piranha", "nps", "apps", "tests",
                          "bench", "examples"}) {
    std::filesystem::path d = root / dir;
    if (!std::filesystem::exists(d)) continue;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(d)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      std::string source = text.str();
      for (std::sregex_iterator it(source.begin(), source.end(), kName), end; it != end; ++it) {
        std::string name = (*it)[1];
        if (name.find_first_of(";[]") != std::string::npos)
          bad.push_back(entry.path().lexically_relative(root).string() + ": " + name);
      }
    }
  }
  return bad;
}

}  // namespace

TEST_CASE(
    "no test case name has a semicolon or a square bracket, which would keep CTest from ever running it") {
  std::filesystem::path root = PIRANHA_SOURCE_DIR;
  REQUIRE(std::filesystem::exists(root / "tests" / "test_names_test.cc"));
  std::vector<std::string> bad = bad_test_names(root);
  std::string all;
  for (const auto& b : bad) all += b + "\n";
  INFO(all);
  CHECK(bad.empty());
}
