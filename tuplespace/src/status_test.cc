#include "piranha/tuplespace/status.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "piranha/tuplespace/protocol.h"

using namespace piranha::ts;

namespace {

constexpr int kCodes = static_cast<int>(Code::Unrecognized) + 1;

Code code_at(int i) {
  return static_cast<Code>(i);
}

// The rows of the table under "## Errors" in docs/protocol.md: the code's
// word and who sends it.
std::vector<std::pair<std::string, std::string>> documented_codes() {
  std::ifstream in(std::string(PIRANHA_SOURCE_DIR) + "/docs/protocol.md");
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  auto section = text.find("\n## Errors\n");
  REQUIRE(section != std::string::npos);
  auto end = text.find("\n## ", section + 1);
  std::istringstream lines(text.substr(section, end - section));
  std::vector<std::pair<std::string, std::string>> rows;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("| `")) continue;
    auto word_end = line.find('`', 3);
    auto by_start = line.find("| ", word_end) + 2;
    auto by_end = line.find(" |", by_start);
    rows.emplace_back(line.substr(3, word_end - 3), line.substr(by_start, by_end - by_start));
  }
  return rows;
}

}  // namespace

TEST_CASE("every code has its own wire word, which maps back to it") {
  for (int i = 0; i < kCodes; ++i) {
    CAPTURE(i);
    CHECK_FALSE(code_to_wire(code_at(i)).empty());
    CHECK(code_from_wire(code_to_wire(code_at(i))) == code_at(i));
  }
  CHECK(code_to_wire(Code::UnknownLease) == "unknown_lease");
  CHECK(code_to_wire(Code::BadReply) == "bad_reply");
}

TEST_CASE("a word this version does not know is Code::Unrecognized") {
  CHECK(code_from_wire("lease_stolen") == Code::Unrecognized);
  CHECK(code_from_wire("") == Code::Unrecognized);
  CHECK(code_from_wire("Unknown_Lease") == Code::Unrecognized);
}

TEST_CASE("an error reply with a code this version does not know keeps the word in its message") {
  // encode_error sends only known codes: write a newer server's reply by
  // replacing the word in a known one of the same length.
  std::string f;
  encode_error(f, 5, Code::UnknownLease, "it went");
  f.replace(f.find("unknown_lease"), 13, "lease_stolen!");
  Reply r = decode_reply(f);
  CHECK(r.status == Reply::Status::Error);
  CHECK(r.code == Code::Unrecognized);
  CHECK(r.message == "lease_stolen!: it went");
}

TEST_CASE("docs/protocol.md lists every code in one table, in the enum's order") {
  auto rows = documented_codes();
  REQUIRE(rows.size() == static_cast<std::size_t>(kCodes));
  for (int i = 0; i < kCodes; ++i) {
    CAPTURE(rows[i].first);
    CHECK(rows[i].first == code_to_wire(code_at(i)));
    CHECK(rows[i].second == (sent_by_server(code_at(i)) ? "server" : "client"));
  }
}
