// Recovery's judgement of the damage the log reader reports, as a table: what
// is a torn last write (moved aside, the rest recovered), what is a damaged
// log (refused, or moved aside under --salvage), and what is refused whatever
// the flags. The files themselves are damaged and recovered in
// durable_log_test.cc and tests/durability_test.cc.
#include "log_recovery.h"

#include <doctest/doctest.h>

#include "log_format.h"

using namespace piranha::ts;
namespace lf = piranha::ts::log_format;

namespace {

// Damage at offset 1000 of a 5000-byte file synced up to 800, nothing zero.
LogDamage damage(LogDamageKind kind) {
  LogDamage d;
  d.kind = kind;
  d.version = 2;
  d.offset = 1000;
  d.file_size = 5000;
  d.bytes = 4000;
  d.synced_end = 800;
  d.zeros_from = 5000;
  if (kind == LogDamageKind::PayloadCutShort) d.record_end = 9000;
  if (kind == LogDamageKind::BadChecksum) d.record_end = 5000;
  return d;
}

bool torn(const LogDamage& d) {
  bool t = torn_last_write(d);
  for (bool salvage : {false, true})
    CHECK(remedy_for(d, salvage) == (t         ? DamageRemedy::CutTornWrite
                                     : salvage ? DamageRemedy::MoveAside
                                               : DamageRemedy::Refuse));
  return t;
}

}  // namespace

TEST_CASE("recovery: past the synced end, a record cut short by the end of the file is a torn write") {
  CHECK(torn(damage(LogDamageKind::HeaderCutShort)));
  CHECK(torn(damage(LogDamageKind::PayloadCutShort)));
}

TEST_CASE("recovery: below the synced end, or in a file shorter than it, nothing is a torn write") {
  for (auto kind : {LogDamageKind::HeaderCutShort, LogDamageKind::PayloadCutShort, LogDamageKind::BadChecksum,
                    LogDamageKind::BadHeader}) {
    CAPTURE(static_cast<int>(kind));
    LogDamage d = damage(kind);
    d.zeros_from = d.offset;  // even all zeros
    d.synced_end = d.offset + 1;
    CHECK_FALSE(torn(d));
  }
  CHECK_FALSE(torn(damage(LogDamageKind::Truncated)));
}

TEST_CASE("recovery: a header that does not check is damage unless zeros reach into it") {
  LogDamage d = damage(LogDamageKind::BadHeader);
  CHECK_FALSE(torn(d));  // a flipped length, data after it
  d.zeros_from = d.offset;
  CHECK(torn(d));       // allocated, never written
  d.zeros_from = 1024;  // zeros from the sector at 1024, after the header (1000..1012)
  CHECK_FALSE(torn(d));
  d.offset = 1020;  // the header is 1020..1032: the sector at 1024 cuts it
  CHECK(torn(d));
  d.zeros_from = 1030;  // not from a sector boundary: written, not left unwritten
  CHECK_FALSE(torn(d));
}

TEST_CASE(
    "recovery: a payload that does not check is damage unless it ends the file in sector-aligned zeros") {
  LogDamage d = damage(LogDamageKind::BadChecksum);
  CHECK_FALSE(torn(d));  // a flipped bit in the last record: data all the way
  d.zeros_from = 4000;   // from a sector boundary (4096 after rounding) to the end
  CHECK(torn(d));
  d.zeros_from = 4990;  // the next boundary is 5120, past the end: no unwritten sector
  CHECK_FALSE(torn(d));
  d.zeros_from = 4000;
  d.record_end = 4500;  // more data after the record: not a write cut short
  CHECK_FALSE(torn(d));
}

TEST_CASE("recovery: a checked length above the maximum and a bad file header are damage") {
  CHECK_FALSE(torn(damage(LogDamageKind::BadLength)));
  LogDamage h = damage(LogDamageKind::BadFileHeader);
  h.offset = 0;
  h.synced_end = 0;
  CHECK_FALSE(torn(h));
}

TEST_CASE("recovery: in a format-1 log nothing is a torn write") {
  for (auto kind : {LogDamageKind::HeaderCutShort, LogDamageKind::BadLength, LogDamageKind::BadChecksum}) {
    LogDamage d = damage(kind);
    d.version = 1;
    d.synced_end = 0;
    CHECK_FALSE(torn(d));
  }
}

TEST_CASE("recovery: a file that is not a log is refused whatever the flags") {
  for (bool salvage : {false, true}) {
    LogDamage d = damage(LogDamageKind::BadMagic);
    d.version = 0;
    CHECK(remedy_for(d, salvage) == DamageRemedy::NotALog);
  }
}
