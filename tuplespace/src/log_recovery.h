// Recovery of the durable log at open (internal to DurableLog): the records
// LogReader reads are replayed into a Store, and what it reports as damage is
// judged by remedy_for, a pure function, and then acted on.
//
// The policy (docs/durability.md, "Recovery"):
//  - a torn last write (a header cut short, a length running past the end of
//    the file or above kMaxPayload, a checksum mismatch in the record that ends
//    exactly at the end of the file, or nothing but zero bytes from the bad
//    record on) is cut off, logged, and the records before it are kept;
//  - any other bad record is damage in the middle: refused, or with salvage the
//    records before it are kept and the rest of the file is moved aside;
//  - a file that is not a log, or a record whose checksum holds but whose
//    operations cannot be read (a bug, not a crash), is refused whatever the flags.
#pragma once

#include <cstdint>
#include <string>

#include "log_reader.h"
#include "piranha/tuplespace/durable_log.h"
#include "piranha/tuplespace/store.h"

namespace piranha::ts {

// What recovery does about the damage the reader reported.
enum class DamageRemedy : std::uint8_t {
  CutTornWrite,  // cut the file at the damage, keep the records before it
  MoveAside,     // keep the records before it, move the rest to PATH.dropped-OFFSET
  Refuse,        // refuse to start, pointing at --salvage
  NotALog,       // refuse to start whatever the flags
};

// The remedy for `damage` when the server was started with or without --salvage.
DamageRemedy remedy_for(const LogDamage& damage, bool salvage);

struct RecoveredLog {
  RecoveryReport report;       // every field filled in; `boot` is the new run's number
  std::uint64_t next_seq = 1;  // the first tuple number above every recovered one
};

// Recovers the log open on `fd` (read-write, O_APPEND) at `path`: a file that
// is empty or holds part of the magic (a crash while it was created) is
// started afresh; otherwise its records are replayed, damage is dealt with as
// remedy_for says (reported through options.log, which may be null), and the
// live tuples are restored into `store`, which must be empty, in tuple-number
// order. On return the file holds only whole, checked records and ends at
// report.bytes. Throws std::runtime_error naming the file, the offset and the
// problem when it refuses, or when the file cannot be read or written.
RecoveredLog recover_log(int fd, const std::string& path, const DurableLogOptions& options, Store& store);

}  // namespace piranha::ts
