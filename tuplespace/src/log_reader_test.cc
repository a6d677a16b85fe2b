// LogReader on log files built in memory: whole records come back in order,
// and a torn tail, a bad checksum, a bad length and a bad magic are reported
// with their offset, size and reason, with nothing read past them.
#include "log_reader.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "log_format.h"

using namespace piranha::ts;
namespace lf = piranha::ts::log_format;

namespace {

// Every report, so that a second one would show.
struct Reports final : LogReader::Reporter {
  std::vector<LogDamage> seen;
  void damage(const LogDamage& d) override { seen.push_back(d); }
};

std::string log_of(const std::vector<std::string>& payloads) {
  std::string file(lf::kMagic);
  for (const auto& p : payloads) lf::append_record(file, p);
  return file;
}

// What reading a file to its end gives.
struct Read {
  std::vector<std::string> records;
  std::uint64_t end = 0;
  std::vector<LogDamage> damage;
};

Read read_whole(std::string_view file) {
  Reports reports;
  LogReader reader(file, reports);
  Read r;
  while (auto p = reader.next()) r.records.emplace_back(*p);
  CHECK_FALSE(reader.next().has_value());  // nothing after the end or the damage, ever
  r.end = reader.end();
  r.damage = reports.seen;
  return r;
}

// The one damage `r` reports, checked for its kind, offset and size.
LogDamage only_damage(const Read& r, LogDamageKind kind, std::uint64_t offset, std::uint64_t bytes) {
  REQUIRE(r.damage.size() == 1);
  CHECK(r.damage[0].kind == kind);
  CHECK(r.damage[0].offset == offset);
  CHECK(r.damage[0].bytes == bytes);
  CHECK(r.end == offset);  // the end of what was read whole
  return r.damage[0];
}

// The offset of record i in log_of(payloads).
std::uint64_t offset_of(const std::vector<std::string>& payloads, std::size_t i) {
  std::uint64_t at = lf::kMagic.size();
  for (std::size_t k = 0; k < i; ++k) at += lf::kHeaderSize + payloads[k].size();
  return at;
}

void set_length(std::string& file, std::uint64_t record_offset, std::uint32_t length) {
  std::string field;
  lf::put_fixed32(field, length);
  file.replace(record_offset + 4, 4, field);
}

const std::vector<std::string> kPayloads = {"first", "", std::string(100'000, 'x'), "last"};

}  // namespace

TEST_CASE("log reader: records come back whole and in order, with their offsets") {
  std::string file = log_of(kPayloads);
  Reports reports;
  LogReader reader(file, reports);
  CHECK(reader.end() == 0);
  for (std::size_t i = 0; i < kPayloads.size(); ++i) {
    auto p = reader.next();
    REQUIRE(p.has_value());
    CHECK(*p == kPayloads[i]);
    CHECK(reader.record_offset() == offset_of(kPayloads, i));
    CHECK(reader.end() == offset_of(kPayloads, i + 1));
  }
  CHECK_FALSE(reader.next().has_value());
  CHECK_FALSE(reader.next().has_value());
  CHECK(reader.end() == file.size());
  CHECK(reports.seen.empty());
}

TEST_CASE("log reader: a file holding only the magic has no records and no damage") {
  Read r = read_whole(lf::kMagic);
  CHECK(r.records.empty());
  CHECK(r.end == lf::kMagic.size());
  CHECK(r.damage.empty());
}

TEST_CASE("log reader: a torn tail is reported at the last record, after the records before it") {
  std::string whole = log_of(kPayloads);
  std::uint64_t last = offset_of(kPayloads, 3);
  const std::vector<std::string> before(kPayloads.begin(), kPayloads.begin() + 3);

  SUBCASE("its header cut short") {
    for (std::size_t left : {std::size_t{1}, lf::kHeaderSize - 1}) {
      CAPTURE(left);
      Read r = read_whole(whole.substr(0, last + left));
      CHECK(r.records == before);
      LogDamage d = only_damage(r, LogDamageKind::HeaderCutShort, last, left);
      CHECK(d.reason == "a record header cut short (" + std::to_string(left) + " bytes)");
      CHECK(d.reaches_end);
      CHECK_FALSE(d.only_zeros);
    }
  }
  SUBCASE("its payload cut short") {
    Read r = read_whole(whole.substr(0, whole.size() - 1));
    CHECK(r.records == before);
    LogDamage d = only_damage(r, LogDamageKind::BadLength, last, lf::kHeaderSize + 3);
    CHECK(d.reason == "a record of 4 bytes with only 3 left in the file");
    CHECK(d.reaches_end);
  }
  SUBCASE("zeros where its header should be") {
    Read r = read_whole(whole.substr(0, last) + std::string(20, '\0'));
    CHECK(r.records == before);
    LogDamage d = only_damage(r, LogDamageKind::BadChecksum, last, 20);  // a zero length with a zero checksum
    CHECK_FALSE(d.reaches_end);
    CHECK(d.only_zeros);
  }
}

TEST_CASE("log reader: a bad checksum stops the reading at that record") {
  SUBCASE("with more records after it") {
    std::string file = log_of(kPayloads);
    std::uint64_t second = offset_of(kPayloads, 2);
    file[second + lf::kHeaderSize + 500] ^= 0x01;
    Read r = read_whole(file);
    CHECK(r.records == std::vector<std::string>(kPayloads.begin(), kPayloads.begin() + 2));
    LogDamage d = only_damage(r, LogDamageKind::BadChecksum, second, file.size() - second);
    CHECK(d.reason == "a checksum mismatch in a record of 100000 bytes");
    CHECK_FALSE(d.reaches_end);  // the last record follows it
    CHECK_FALSE(d.only_zeros);
  }
  SUBCASE("in the last record, which reaches the end") {
    std::string file = log_of(kPayloads);
    file.back() ^= 0x01;
    Read r = read_whole(file);
    CHECK(r.records.size() == 3);
    std::uint64_t last = offset_of(kPayloads, 3);
    CHECK(only_damage(r, LogDamageKind::BadChecksum, last, file.size() - last).reaches_end);
  }
  SUBCASE("in a length changed to one within the file") {
    std::string file = log_of(kPayloads);
    set_length(file, offset_of(kPayloads, 0), 4);
    Read r = read_whole(file);
    CHECK(r.records.empty());
    only_damage(r, LogDamageKind::BadChecksum, lf::kMagic.size(), file.size() - lf::kMagic.size());
  }
}

TEST_CASE("log reader: a length above the maximum or past the end of the file is a bad length") {
  std::uint64_t first = offset_of(kPayloads, 1);
  for (std::uint32_t length : {lf::kMaxPayload + 1, std::uint32_t{0x7fffffff}, std::uint32_t{200'000}}) {
    CAPTURE(length);
    std::string file = log_of(kPayloads);
    set_length(file, first, length);
    Read r = read_whole(file);
    CHECK(r.records == std::vector<std::string>{kPayloads[0]});
    LogDamage d = only_damage(r, LogDamageKind::BadLength, first, file.size() - first);
    CHECK(d.reason == "a record of " + std::to_string(length) + " bytes with only " +
                          std::to_string(file.size() - first - lf::kHeaderSize) + " left in the file");
    CHECK(d.reaches_end);  // the file is far shorter than any of these lengths
  }
}

TEST_CASE("log reader: a file that does not start with the magic has no records") {
  std::string file = log_of(kPayloads);
  file[3] = '?';
  Read r = read_whole(file);
  CHECK(r.records.empty());
  CHECK(only_damage(r, LogDamageKind::BadMagic, 0, file.size()).reason ==
        "not a piranha tuple-space log (bad magic)");
}
