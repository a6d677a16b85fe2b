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
// The file header holds a synced end: an offset below which every byte had
// reached the device when it was written (it advances with each commit's
// write, to what the previous sync covered, and when the log is idle).
//
// Recovery (open) reads the log in chunks and replays it: every tuple written
// and not erased comes back, leased ones included (a lease does not survive a
// restart). A torn last write (what a write cut short by a crash leaves, past
// the synced end: log_recovery.h has the exact rules) is moved to
// DIR/tuples.log.dropped-OFFSET, reported through `log`, and the rest
// recovered. Any other damage (a record that does not check below the synced
// end, a file shorter than it, a record header that does not check with data
// after it, ...) makes open throw, unless `salvage` is set: then the records
// before it are kept and the rest of the file is moved aside to
// DIR/tuples.log.dropped-OFFSET. A format-1 log (before the synced end and
// the record header checksum) is read, any damage in it refused unless
// `salvage`, and rewritten in format 2 at open.
//
// The log is rewritten as a snapshot of the live tuples (compaction) when it
// has grown to twice its size after the last rewrite, and after open when it
// is above compact_min_bytes. The snapshot is written on a thread of the
// log's own from the log file itself; commit() and sync_if_due() only start
// it and, once it is done, append the last few records and rename it over
// the log (log_compaction.h). A rewrite that fails (a full disk) is
// abandoned and reported through `log`: the log is whole without it, and the
// next one starts once the log has doubled again.
//
// One server per DIR: open takes an exclusive flock on DIR/LOCK.
// Not thread-safe: owned by the server's loop thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>

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

// Thrown by commit() when the device holding the log has no room for the
// record (ENOSPC, EDQUOT): nothing of it counts (what part of it was written
// is cut off again), and the changes stay buffered, so that a later commit()
// writes them, with whatever was buffered since, once there is room. what()
// names the file, the offset and the system's reason.
class LogFullError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class BackgroundSync;
class LogCompactor;

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
  // Does nothing when nothing is buffered. Throws LogFullError when the
  // device has no room (the changes stay buffered: see above), and
  // std::runtime_error naming the file and offset when the write or sync
  // fails otherwise. Either way the changes are not durable and must not be
  // acknowledged; after a runtime_error the log is not to be used again.
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

  // True while a compaction is under way.
  bool compacting() const { return compactor_ != nullptr; }
  // Waits for a compaction under way and switches to its file (tests and
  // benchmarks; a server never waits). Throws as commit() does.
  void wait_for_compaction();
  // Compactions finished so far, and the longest time one kept the caller
  // waiting in commit() or sync_if_due() (its last step), in microseconds.
  std::uint64_t compactions() const { return compactions_; }
  std::int64_t longest_compaction_pause_us() const { return longest_pause_us_; }

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
  // Writes the file header with `synced_end` (not synced here).
  void write_header(std::uint64_t synced_end);
  // Rewrites a format-1 log as format 2 from the store, at open.
  void migrate();
  void start_compaction();
  // Finishes a compaction whose thread is done; nothing otherwise.
  void poll_compaction();
  // Drops a compaction that failed (`error`) and its file, logging why.
  // `error` by value: it may be the compactor's own, which this resets.
  void abandon_compaction(std::string error);
  // Closes a replaced log's descriptor `fd` and ends the finished compactor_
  // on closer_, off the event loop: the last close frees the file's blocks
  // and ending the compactor joins its thread, together tens of milliseconds
  // to seconds for a large log.
  void close_in_background(int fd);
  DurableLogOptions opt_;
  Store& store_;
  std::string path_;
  std::unique_ptr<File> file_;
  std::string buffer_;  // ops of the record being built
  RecoveryReport report_;
  std::uint64_t size_ = 0;        // bytes in the file
  std::uint64_t synced_ = 0;      // bytes known to be on the device
  std::uint64_t header_end_ = 0;  // the synced end the file header holds
  std::int64_t last_commit_ms_ = 0;
  std::uint64_t compactions_ = 0;
  std::int64_t longest_pause_us_ = 0;
  std::int64_t compaction_started_ms_ = 0;
  std::uint64_t compaction_before_ = 0;
  std::uint64_t compacted_size_ = 0;  // size after the last rewrite; 0 at open
  std::int64_t last_sync_ms_ = 0;
  bool unsynced_ = false;
  // EverySec's syncs; after file_, so it is gone before the file closes.
  std::unique_ptr<BackgroundSync> syncer_;
  // Closes replaced logs; joined before the next one and on destruction.
  std::thread closer_;
  // The compaction under way; last, so its thread stops first.
  std::unique_ptr<LogCompactor> compactor_;
};

}  // namespace piranha::ts
