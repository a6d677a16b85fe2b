// LogReader: the records of a durable log file, in the format of
// log_format.h, one at a time, read from the file in chunks (never whole),
// with what is wrong with the file reported instead of read.
//
// The reader checks the framing only: the file header, each record's header
// (on its own, before its length is trusted) and each payload's checksum, and
// that the file reaches the offset its header says was synced. It does not
// look inside payloads and it decides nothing: whether damage is a torn last
// write or a damaged log is for its caller (recovery, log_recovery.h) to
// decide from the LogDamage it reports.
//
// It stops at the first damage: it reports it once, through the Reporter, and
// returns no record from there on, because a record boundary after a bad
// header cannot be trusted.
//
// It reads format 2 and, to migrate it, format 1 (no file header's synced
// end, no header checksum).
//
// Not thread-safe; one per file read. The file descriptor stays the caller's.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

namespace piranha::ts {

// What the reader found wrong at an offset.
enum class LogDamageKind : std::uint8_t {
  BadMagic,         // the file starts with neither format's magic
  BadFileHeader,    // a format-2 file header cut short, or whose checksum does not hold
  HeaderCutShort,   // fewer bytes left than a record header takes
  BadHeader,        // a record header whose checksum does not hold (format 2)
  BadLength,        // a length above kMaxPayload (format 1: or past the end of the file)
  PayloadCutShort,  // a checked header whose payload runs past the end of the file
  BadChecksum,      // the payload's checksum does not hold
  Truncated,        // the records end cleanly, but before the file header's synced end
};

struct LogDamage {
  LogDamageKind kind = LogDamageKind::BadMagic;
  int version = 0;               // the file's format, 0 when not known (bad magic)
  std::uint64_t offset = 0;      // where the bad record starts (0 for the file header)
  std::uint64_t bytes = 0;       // from `offset` to the end of the file: all the reader did not read
  std::uint64_t file_size = 0;   // the file's size when it was read
  std::uint64_t synced_end = 0;  // the file header's synced end (0 in format 1)
  // Where the bad record ends by its checked header (format 2), 0 when its
  // header is cut short or not checked.
  std::uint64_t record_end = 0;
  // Every byte from here to the end of the file is zero; file_size when the
  // last byte is not. Never below `offset`.
  std::uint64_t zeros_from = 0;
  std::string reason;  // what is wrong, as a phrase: "a checksum mismatch in a record of 12 bytes"
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

  // Reads the file open on `fd` (named `path` in messages) from offset 0 to
  // its size now, or to `limit` when that is lower; with a limit, the synced
  // end and the file header's checksum are not checked (a writer may be
  // rewriting the header while a compaction reads up to the limit). `reporter`
  // must outlive the reader. Throws std::runtime_error when a read fails.
  LogReader(int fd, std::string path, Reporter& reporter,
            std::uint64_t limit = std::numeric_limits<std::uint64_t>::max());
  LogReader(const LogReader&) = delete;
  LogReader& operator=(const LogReader&) = delete;

  // The next record's payload, a view valid until the next call; nullopt at
  // the end of the records: the end of the file, or the first damage,
  // reported before.
  std::optional<std::string_view> next();

  // The offset of the record next() returned last (undefined before one).
  std::uint64_t record_offset() const { return record_offset_; }

  // The offset just past the last record returned (past the file header
  // before any): the end of what was read whole, where a writer may append
  // once the rest of the file is cut.
  std::uint64_t end() const { return end_; }

  // Known once next() has been called: the format (1 or 2, 0 for a bad
  // magic), and format 2's synced end.
  int version() const { return version_; }
  std::uint64_t synced_end() const { return synced_end_; }
  std::uint64_t file_size() const { return file_size_; }

 private:
  std::optional<std::string_view> start();
  // Makes the bytes [offset, offset + n) of the file readable at
  // buffer_[offset - buffer_start_]; returns how many of them the file has.
  std::size_t load(std::uint64_t offset, std::size_t n);
  std::string_view view(std::uint64_t offset, std::size_t n) const;
  std::nullopt_t report(LogDamageKind kind, std::string reason, std::uint64_t record_end = 0);
  std::uint64_t zeros_from(std::uint64_t offset);

  int fd_;
  std::string path_;
  Reporter& reporter_;
  std::uint64_t file_size_ = 0;
  bool check_synced_end_ = true;
  bool started_ = false;
  bool stopped_ = false;
  int version_ = 0;
  std::uint64_t synced_end_ = 0;
  std::uint64_t record_offset_ = 0;
  std::uint64_t end_ = 0;
  std::string buffer_;
  std::uint64_t buffer_start_ = 0;
  std::size_t buffered_ = 0;
};

}  // namespace piranha::ts
