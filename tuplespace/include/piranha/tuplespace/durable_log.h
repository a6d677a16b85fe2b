// DurableLog: the tuple-space server's on-disk state (`piranha ts serve --data DIR`).
//
// An append-only log of the Store's changes, DIR/tuples.log, in the format
// docs/durability.md describes (constants in src/log_format.h). A DurableLog
// is the Store's Journal: the Store reports each change, the log buffers it,
// and commit() writes everything buffered since the last commit as one
// checksummed record with one write(2) (group commit), followed by one
// fdatasync(2) under FsyncPolicy::Always. A record is recovered whole or not
// at all, so the changes of one commit (an event-loop turn) are atomic.
//
// Guarantees, when the server replies only after commit():
//  - a process crash (SIGKILL) loses no acknowledged change under any policy:
//    write(2) has handed it to the kernel;
//  - a machine crash loses none under Always, the last second or two under
//    EverySec, and what the kernel had not written back under No.
//
// Recovery (open) replays the log: every tuple written and not erased comes
// back, leased ones included (a lease does not survive a restart). A torn or
// corrupt last record is reported through `log`, dropped (the file is cut
// there) and the rest recovered. A bad record with valid data after it
// (corruption in the middle) makes open throw, unless `salvage` is set: then
// the records before it are kept and the rest of the file is moved aside to
// DIR/tuples.log.dropped-OFFSET.
//
// The log is rewritten as a snapshot of the live tuples (compaction) when it
// has grown to twice its size after the last rewrite, and at open when it is
// above compact_min_bytes.
//
// One server per DIR: open takes an exclusive flock on DIR/LOCK.
// Not thread-safe: owned by the server's loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "piranha/tuplespace/store.h"

namespace piranha::ts {

// When the log is flushed to the device, as Redis's appendfsync.
enum class FsyncPolicy : std::uint8_t {
  Always,    // fdatasync before every reply that depends on a change
  EverySec,  // fdatasync at most once a second, from the event loop
  No,        // never; the kernel writes back when it likes
};

// "always", "everysec", "no"; nullopt-like failure is reported by the caller.
std::string_view fsync_policy_name(FsyncPolicy p);
// Throws InputError naming the accepted values.
FsyncPolicy parse_fsync_policy(std::string_view name);

struct DurableLogOptions {
  std::string dir;  // created when missing
  FsyncPolicy fsync = FsyncPolicy::Always;
  bool salvage = false;  // drop what follows a bad record in the middle instead of refusing
  // Rewrite the log when it exceeds max(compact_min_bytes, 2 x its size after the last rewrite).
  std::uint64_t compact_min_bytes = 64u << 20;
  // One line per notable event (recovery, dropped tail, compaction). Null: quiet.
  std::function<void(std::string_view)> log;
};

// What open() found.
struct RecoveryReport {
  std::uint64_t tuples = 0;         // restored into the Store
  std::uint64_t records = 0;        // log records replayed
  std::uint64_t bytes = 0;          // log bytes kept
  std::uint64_t boot = 0;           // this run's number, 1 for a fresh DIR
  std::uint64_t dropped_bytes = 0;  // cut from a bad tail (or salvaged away)
};

class BackgroundSync;

class DurableLog final : public Journal {
 public:
  // Opens or creates DIR, replays its log into `store` (which must be empty),
  // starts this run's numbering and attaches itself as the store's journal.
  // Throws std::runtime_error naming the file, the offset and the problem
  // when DIR cannot be used or the log is corrupt in the middle (without
  // salvage).
  DurableLog(DurableLogOptions options, Store& store);
  ~DurableLog() override;  // commits and syncs what is buffered; detaches from the store
  DurableLog(const DurableLog&) = delete;
  DurableLog& operator=(const DurableLog&) = delete;

  const RecoveryReport& recovery() const { return report_; }

  // The first lease id of this run. Lease ids of earlier runs are all below
  // it, so a server can tell a lease lost in a restart from any other.
  LeaseId first_lease() const;

  // Writes the buffered changes as one record, then syncs under Always.
  // Does nothing when nothing is buffered. Throws std::runtime_error naming
  // the file and offset when the write or sync fails: the changes are then
  // not durable and must not be acknowledged.
  void commit();

  // True when changes are buffered (commit() would write).
  bool pending() const { return !buffer_.empty(); }
  // Bytes buffered since the last commit.
  std::size_t pending_bytes() const { return buffer_.size(); }

  // Under EverySec: when something was written since the last sync and a
  // second has passed (now_ms is a steady clock), starts an fdatasync on a
  // thread of the log's own and returns without waiting for it. Otherwise
  // nothing. Throws std::runtime_error naming the file when an earlier
  // background sync failed (the caller must stop acknowledging changes).
  void sync_if_due(std::int64_t now_ms);

  // Background syncs completed so far (EverySec only).
  std::uint64_t background_syncs() const;

  // Journal.
  void put(std::uint64_t seq, std::string_view space, std::string_view tuple) override;
  void erase(std::uint64_t seq) override;
  void renumber(std::uint64_t from, std::uint64_t to) override;
  void drop_space(std::string_view space) override;

  // The log file's path.
  const std::string& path() const { return path_; }

 private:
  struct File;
  void recover();
  void throw_if_sync_failed();
  void compact();
  DurableLogOptions opt_;
  Store& store_;
  std::string path_;
  std::unique_ptr<File> file_;
  std::string buffer_;  // ops of the record being built
  RecoveryReport report_;
  std::uint64_t size_ = 0;            // bytes in the file
  std::uint64_t compacted_size_ = 0;  // size after the last rewrite; 0 at open
  std::int64_t last_sync_ms_ = 0;
  bool unsynced_ = false;
  // EverySec's syncs; after file_, so it is gone before the file closes.
  std::unique_ptr<BackgroundSync> syncer_;
};

}  // namespace piranha::ts
