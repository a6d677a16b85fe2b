// LogReader: the records of a durable log, in the format of log_format.h, one
// at a time, with what is wrong with the file reported instead of read.
//
// The reader checks the framing only: the magic, each record's header and its
// checksum. It does not look inside payloads and it decides nothing: whether
// damage is a torn last write or a damaged log is for its caller (recovery,
// log_recovery.h) to decide from the LogDamage it reports.
//
// It stops at the first damage: it reports it once, through the Reporter, and
// returns no record from there on, because a record boundary after a bad
// header cannot be trusted.
//
// Not thread-safe; cheap to make, one per file read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace piranha::ts {

// What the reader found wrong at an offset.
enum class LogDamageKind : std::uint8_t {
  BadMagic,        // the file does not start with log_format::kMagic
  HeaderCutShort,  // fewer bytes left than a record header takes
  BadLength,       // a length above kMaxPayload or running past the end of the file
  BadChecksum,     // the checksum does not match the record's length and payload
};

struct LogDamage {
  LogDamageKind kind = LogDamageKind::BadMagic;
  std::uint64_t offset = 0;  // where the bad record starts (0 for a bad magic)
  std::uint64_t bytes = 0;   // from `offset` to the end of the file: all the reader did not read
  std::string reason;        // what is wrong, as a phrase: "a checksum mismatch in a record of 12 bytes"
  // The bad record, as far as its header says, reaches the end of the file:
  // its header is cut short, or its length ends it at the end of the file or past it.
  bool reaches_end = false;
  bool only_zeros = false;  // every byte from `offset` on is zero
};

class LogReader {
 public:
  // Told of damage; LevelDB's log::Reader::Reporter.
  class Reporter {
   public:
    virtual ~Reporter() = default;
    // Called at most once per reader, before next() returns nullopt for it.
    virtual void damage(const LogDamage& damage) = 0;
  };

  // Reads `file`, the whole log file's bytes, magic included. `file`'s bytes
  // and `reporter` must outlive the reader.
  LogReader(std::string_view file, Reporter& reporter);
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // The next record's payload, a view into `file`; nullopt at the end of the
  // records: the end of the file, or the first damage, reported before.
  std::optional<std::string_view> next();

  // The offset of the record next() returned last (undefined before one).
  std::uint64_t record_offset() const { return record_offset_; }

  // The offset just past the last record returned (past the magic before
  // any): the end of what was read whole, where a writer may append once the
  // rest of the file is cut.
  std::uint64_t end() const { return end_; }

 private:
  std::nullopt_t report(LogDamageKind kind, std::string reason, bool reaches_end);

  std::string_view file_;
  Reporter& reporter_;
  bool started_ = false;
  bool stopped_ = false;
  std::uint64_t record_offset_ = 0;
  std::uint64_t end_ = 0;
};

}  // namespace piranha::ts
