// Recovery's judgement of the damage the log reader reports, as a table: what
// is a torn last write (cut), what is damage in the middle (refused, or moved
// aside under --salvage), and what is refused whatever the flags. The files
// themselves are damaged and recovered in tests/durability_test.cc.
#include "log_recovery.h"

#include <doctest/doctest.h>

using namespace piranha::ts;

namespace {

LogDamage damage(LogDamageKind kind, bool reaches_end, bool only_zeros = false) {
  LogDamage d;
  d.kind = kind;
  d.offset = 100;
  d.bytes = 50;
  d.reaches_end = reaches_end;
  d.only_zeros = only_zeros;
  return d;
}

}  // namespace

TEST_CASE("recovery: a header cut short, a bad length and a bad last checksum are torn last writes") {
  for (bool salvage : {false, true}) {
    CAPTURE(salvage);
    CHECK(remedy_for(damage(LogDamageKind::HeaderCutShort, true), salvage) == DamageRemedy::CutTornWrite);
    CHECK(remedy_for(damage(LogDamageKind::BadLength, true), salvage) == DamageRemedy::CutTornWrite);
    CHECK(remedy_for(damage(LogDamageKind::BadLength, false), salvage) == DamageRemedy::CutTornWrite);
    CHECK(remedy_for(damage(LogDamageKind::BadChecksum, true), salvage) == DamageRemedy::CutTornWrite);
  }
}

TEST_CASE("recovery: a bad checksum with more records after it is damage in the middle") {
  CHECK(remedy_for(damage(LogDamageKind::BadChecksum, false), false) == DamageRemedy::Refuse);
  CHECK(remedy_for(damage(LogDamageKind::BadChecksum, false), true) == DamageRemedy::MoveAside);
}

TEST_CASE("recovery: nothing but zeros from the bad record on is a torn last write") {
  CHECK(remedy_for(damage(LogDamageKind::BadChecksum, false, true), false) == DamageRemedy::CutTornWrite);
}

TEST_CASE("recovery: a file that is not a log is refused whatever the flags") {
  for (bool salvage : {false, true}) {
    CHECK(remedy_for(damage(LogDamageKind::BadMagic, false), salvage) == DamageRemedy::NotALog);
    CHECK(remedy_for(damage(LogDamageKind::BadMagic, false, true), salvage) == DamageRemedy::NotALog);
  }
}
