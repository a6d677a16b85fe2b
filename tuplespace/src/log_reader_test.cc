// LogReader on real log files: whole records come back in order, read in
// chunks; a torn tail, a header that does not check (a flipped length above
// all), a bad payload, a file shorter than its synced end, a bad magic and a
// bad file header are reported with their offset, size and reason, with
// nothing read past them; a format-1 file is still read.
#include "log_reader.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "log_file.h"
#include "log_format.h"
#include "log_v1_record.h"

using namespace piranha::ts;
namespace lf = piranha::ts::log_format;

namespace {

// Every report, so that a second one would show.
struct Reports final : LogReader::Reporter {
  std::vector<LogDamage> seen;
  void damage(const LogDamage& d) override { seen.push_back(d); }
};

// A file holding `bytes`, removed at the end of the test.
struct File {
  std::string path;
  int fd = -1;
  explicit File(std::string_view bytes) {
    path = (std::filesystem::temp_directory_path() / "piranha-reader-XXXXXX").string();
    fd = ::mkstemp(path.data());
    REQUIRE(fd >= 0);
    log_file::write_at(fd, bytes, 0, path);
  }
  ~File() {
    ::close(fd);
    std::filesystem::remove(path);
  }
};

std::string log_of(const std::vector<std::string>& payloads, std::uint64_t synced_end = lf::kFileHeaderSize) {
  std::string file = lf::file_header(synced_end);
  for (const auto& p : payloads) lf::append_record(file, p);
  return file;
}

// What reading a file to its end gives.
struct Read {
  std::vector<std::string> records;
  std::uint64_t end = 0;
  std::vector<LogDamage> damage;
};

Read read_whole(std::string_view bytes) {
  File file(bytes);
  Reports reports;
  LogReader reader(file.fd, file.path, reports);
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
  std::uint64_t at = lf::kFileHeaderSize;
  for (std::size_t k = 0; k < i; ++k) at += lf::kHeaderSize + payloads[k].size();
  return at;
}

void set_length(std::string& file, std::uint64_t record_offset, std::uint32_t length) {
  std::string field;
  lf::put_fixed32(field, length);
  file.replace(record_offset + 4, 4, field);
}

// A payload larger than the reader's chunk, so that it is read across several.
const std::vector<std::string> kPayloads = {"first", "", std::string(3'000'000, 'x'), "last"};

}  // namespace

TEST_CASE("crc32c is the Castagnoli CRC, in one piece or continued") {
  CHECK(lf::crc32c("123456789", 9) == 0xE3069283u);
  CHECK(lf::crc32c("56789", 5, lf::crc32c("1234", 4)) == 0xE3069283u);
  std::string zeros(32, '\0');
  CHECK(lf::crc32c(zeros.data(), zeros.size()) == 0x8A9136AAu);  // RFC 3720's test vector
}

TEST_CASE("log reader: records come back whole and in order, with their offsets") {
  std::string bytes = log_of(kPayloads, 100);
  File file(bytes);
  Reports reports;
  LogReader reader(file.fd, file.path, reports);
  for (std::size_t i = 0; i < kPayloads.size(); ++i) {
    auto p = reader.next();
    REQUIRE(p.has_value());
    CHECK(*p == kPayloads[i]);
    CHECK(reader.record_offset() == offset_of(kPayloads, i));
    CHECK(reader.end() == offset_of(kPayloads, i + 1));
  }
  CHECK(reader.version() == 2);
  CHECK(reader.synced_end() == 100);
  CHECK_FALSE(reader.next().has_value());
  CHECK_FALSE(reader.next().has_value());
  CHECK(reader.end() == bytes.size());
  CHECK(reports.seen.empty());
}

TEST_CASE("log reader: a file holding only its file header has no records and no damage") {
  Read r = read_whole(lf::file_header(lf::kFileHeaderSize));
  CHECK(r.records.empty());
  CHECK(r.end == lf::kFileHeaderSize);
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
      CHECK(d.zeros_from == last + left);
    }
  }
  SUBCASE("its payload cut short, after a header that checks") {
    Read r = read_whole(whole.substr(0, whole.size() - 1));
    CHECK(r.records == before);
    LogDamage d = only_damage(r, LogDamageKind::PayloadCutShort, last, lf::kHeaderSize + 3);
    CHECK(d.reason == "a record of 4 bytes with only 3 left in the file");
    CHECK(d.record_end == whole.size());
  }
  SUBCASE("zeros where its header should be") {
    Read r = read_whole(whole.substr(0, last) + std::string(20, '\0'));
    CHECK(r.records == before);
    LogDamage d = only_damage(r, LogDamageKind::BadHeader, last, 20);  // zeros never check
    CHECK(d.zeros_from == last);
  }
}

TEST_CASE("log reader: a flipped bit in a length is a header that does not check, never a cut-short record") {
  std::uint64_t second = offset_of(kPayloads, 1);
  for (std::uint32_t length : {std::uint32_t{16'785'408}, std::uint32_t{0x7fffffff}, std::uint32_t{4}}) {
    CAPTURE(length);
    std::string file = log_of(kPayloads);
    set_length(file, second, length);
    Read r = read_whole(file);
    CHECK(r.records == std::vector<std::string>{kPayloads[0]});
    LogDamage d = only_damage(r, LogDamageKind::BadHeader, second, file.size() - second);
    CHECK(d.reason == "a record header whose checksum does not hold");
    CHECK(d.record_end == 0);  // its length is not trusted
    CHECK(d.zeros_from == file.size());
  }
}

TEST_CASE("log reader: a checked header with a length above the maximum is a bad length") {
  std::string file = log_of({"first"});
  std::string header;
  lf::put_fixed32(header, lf::kMaxPayload + 1);
  lf::put_fixed32(header, 0);
  std::string checked;
  lf::put_fixed32(checked, lf::crc32c(header.data(), header.size()));
  file += checked + header;
  Read r = read_whole(file);
  CHECK(r.records == std::vector<std::string>{"first"});
  only_damage(r, LogDamageKind::BadLength, offset_of({"first"}, 1), lf::kHeaderSize);
}

TEST_CASE("log reader: a bad payload checksum stops the reading at that record") {
  SUBCASE("with more records after it") {
    std::string file = log_of(kPayloads);
    std::uint64_t third = offset_of(kPayloads, 2);
    file[third + lf::kHeaderSize + 500] ^= 0x01;
    Read r = read_whole(file);
    CHECK(r.records == std::vector<std::string>(kPayloads.begin(), kPayloads.begin() + 2));
    LogDamage d = only_damage(r, LogDamageKind::BadChecksum, third, file.size() - third);
    CHECK(d.reason == "a checksum mismatch in the payload of a record of 3000000 bytes");
    CHECK(d.record_end == offset_of(kPayloads, 3));  // the last record follows it
  }
  SUBCASE("in the last record, which reaches the end") {
    std::string file = log_of(kPayloads);
    file.back() ^= 0x01;
    Read r = read_whole(file);
    CHECK(r.records.size() == 3);
    std::uint64_t last = offset_of(kPayloads, 3);
    CHECK(only_damage(r, LogDamageKind::BadChecksum, last, file.size() - last).record_end == file.size());
  }
}

TEST_CASE("log reader: a file that ends before its synced end is truncated, even at a record boundary") {
  std::string whole = log_of(kPayloads);
  std::uint64_t cut = offset_of(kPayloads, 2);
  std::string file = log_of(kPayloads, whole.size()).substr(0, cut);
  Read r = read_whole(file);
  CHECK(r.records.size() == 2);
  LogDamage d = only_damage(r, LogDamageKind::Truncated, cut, 0);
  CHECK(d.synced_end == whole.size());
  CHECK(d.reason.find("the file ends at offset " + std::to_string(cut) + ", before offset " +
                      std::to_string(whole.size())) == 0);
}

TEST_CASE("log reader: a file that does not start with the magic has no records") {
  std::string file = log_of(kPayloads);
  file[3] = '?';
  Read r = read_whole(file);
  CHECK(r.records.empty());
  CHECK(only_damage(r, LogDamageKind::BadMagic, 0, file.size()).reason ==
        "not a piranha tuple-space log (bad magic)");
}

TEST_CASE("log reader: a file header cut short or that does not check is reported at offset 0") {
  std::string file = log_of(kPayloads, 1000);
  SUBCASE("cut short") {
    Read r = read_whole(file.substr(0, 20));
    only_damage(r, LogDamageKind::BadFileHeader, 0, 20);
  }
  SUBCASE("a flipped bit in its synced end") {
    file[9] ^= 0x10;
    Read r = read_whole(file);
    CHECK(only_damage(r, LogDamageKind::BadFileHeader, 0, file.size()).reason ==
          "a file header whose checksum does not hold");
  }
}

TEST_CASE("log reader: a format-1 file is read, its damage reported as before") {
  std::string file = std::string(lf::kMagicV1) + lf::v1_record("one") + lf::v1_record("two");
  Read whole = read_whole(file);
  CHECK(whole.records == std::vector<std::string>{"one", "two"});
  CHECK(whole.damage.empty());
  Read cut = read_whole(file.substr(0, file.size() - 1));
  CHECK(cut.records == std::vector<std::string>{"one"});
  LogDamage d = only_damage(cut, LogDamageKind::BadLength, 8 + 11, 10);
  CHECK(d.version == 1);
}
