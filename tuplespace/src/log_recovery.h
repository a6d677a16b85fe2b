// Recovery of the durable log at open (internal to DurableLog): the records
// LogReader reads are replayed into a Store, and what it reports as damage is
// judged by remedy_for, a pure function, and then acted on.
//
// The policy (docs/durability.md, "Recovery"): a torn last write is only
// what a write cut short by a crash can leave, and only past the file
// header's synced end (below it every byte had reached the device, so it may
// have been acknowledged):
//  - the file ends inside a record header, or inside the payload of a record
//    whose header checks; or
//  - the file ends in zeros from a record's start or from a 512-byte boundary
//    inside its header (a header that does not check) or inside its payload
//    (a payload that does not check, in a record that ends exactly at the end
//    of the file): the blocks a file system allocated but never wrote.
// It is moved to PATH.dropped-OFFSET, logged, and the records before it are
// kept. Anything else (damage below the synced end, a file that ends before
// it, a header that does not check with data after it, a payload that does
// not check followed by more data, a checked length above kMaxPayload, any
// damage in a format-1 file) is a damaged log: refused, or with salvage the
// records before it are kept and the rest is moved aside. A file that is not a
// log, or a record whose checksum holds but whose operations cannot be read (a
// bug, not a crash), is refused whatever the flags.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "log_reader.h"
#include "piranha/tuplespace/durable_log.h"
#include "piranha/tuplespace/store.h"

namespace piranha::ts {

// What recovery does about the damage the reader reported.
enum class DamageRemedy : std::uint8_t {
  CutTornWrite,  // move the torn write to PATH.dropped-OFFSET, keep the records before it
  MoveAside,     // keep the records before it, move the rest to PATH.dropped-OFFSET
  Refuse,        // refuse to start, pointing at --salvage
  NotALog,       // refuse to start whatever the flags
};

// True when `damage` is a write a crash cut short that no reply can have
// depended on (the rules above).
bool torn_last_write(const LogDamage& damage);

// The remedy for `damage` when the server was started with or without --salvage.
DamageRemedy remedy_for(const LogDamage& damage, bool salvage);

// The live tuples a log's records leave, replayed one record at a time.
// Holds each live tuple's bytes once; the log itself is never held whole.
class LogReplay {
 public:
  // seq -> (space, canonical tuple bytes)
  using LiveTuples = std::map<std::uint64_t, std::pair<std::string, std::string>>;

  // Applies one record's operations. Throws std::runtime_error when an
  // operation cannot be read (its record's checksum held: a bug).
  void apply(std::string_view payload);

  LiveTuples live;
  std::uint64_t max_seq = 0;
  std::uint64_t boot = 0;
};

struct RecoveredLog {
  RecoveryReport report;       // every field filled in; `boot` is the new run's number
  std::uint64_t next_seq = 1;  // the first tuple number above every recovered one
  int version = 2;             // the format the file was in; 1 must be rewritten
};

// Recovers the log open on `fd` (read-write) at `path`: its records are
// replayed, damage is dealt with as remedy_for says (reported through
// options.log, which may be null), and the live tuples are restored into
// `store`, which must be empty, in tuple-number order. On return the file
// holds only whole, checked records and ends at report.bytes (a file moved
// aside whole is started afresh with a file header). Throws
// std::runtime_error naming the file, the offset and the problem when it
// refuses, or when the file cannot be read or written.
RecoveredLog recover_log(int fd, const std::string& path, const DurableLogOptions& options, Store& store);

}  // namespace piranha::ts
