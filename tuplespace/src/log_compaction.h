// Compaction of the durable log (internal to DurableLog): a snapshot of the
// live tuples written as a new log file, off the server's event loop.
//
// SnapshotWriter writes a format-2 log of Boot and Put records to a file.
// LogCompactor uses it on a thread of its own: it replays the log file
// itself (not the Store, which belongs to the event loop) up to the end it
// was started at, writes the live tuples as a snapshot to PATH.tmp, then
// copies the records the log grows by meanwhile (told by committed()) until
// it is within kCatchUpBytes of the log's end (or kCatchUpRounds have passed:
// a log written faster than it is copied is left to the owner), and syncs. The owner then
// copies the last few records, syncs and renames (DurableLog::finish_compaction):
// only that last step runs on the event loop.
//
// The log file keeps being the log until the rename: a crash at any point
// leaves it whole, and PATH.tmp is never read.
//
// Thread-safety: LogCompactor's members are for one owner thread; the
// compaction thread is internal. SnapshotWriter is single-threaded.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

namespace piranha::ts {

// A new log file of Boot and Put records, about 1 MiB each. It syncs every
// kSyncEveryBytes as it writes (Redis's aof-rewrite-incremental-fsync): left
// to pile up, a rewrite's dirty pages make the kernel throttle every writer,
// the event loop's commits among them, for up to a second at a time.
class SnapshotWriter {
 public:
  // Creates (or empties) `path` with a file header; throws std::runtime_error
  // naming the file when it cannot. Closes the file on destruction unless
  // release() took it.
  explicit SnapshotWriter(std::string path);
  ~SnapshotWriter();
  SnapshotWriter(const SnapshotWriter&) = delete;
  SnapshotWriter& operator=(const SnapshotWriter&) = delete;

  void boot(std::uint64_t boot);
  void put(std::uint64_t seq, std::string_view space, std::string_view tuple);
  // Writes what is buffered as a record.
  void flush();
  // Flushes, then appends the bytes [from, to) of the log open on `log_fd` as they are.
  void copy(int log_fd, const std::string& log_path, std::uint64_t from, std::uint64_t to);
  // Flushes and syncs the file.
  void sync();
  // Flushes, writes the file header with the file's size as its synced end,
  // and syncs the file.
  void seal();

  static constexpr std::uint64_t kSyncEveryBytes = 4u << 20;

  std::uint64_t size() const { return size_; }
  std::uint64_t tuples() const { return tuples_; }
  const std::string& path() const { return path_; }
  // Hands the open file to the caller.
  int release();

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t tuples_ = 0;
  std::uint64_t unsynced_ = 0;
  std::string payload_;
  std::string record_;
};

class LogCompactor {
 public:
  // Copy until the log's end is this close; the rest is the owner's.
  static constexpr std::uint64_t kCatchUpBytes = 1u << 20;
  // At most this many rounds of copying, each what the log grew by during the last.
  static constexpr int kCatchUpRounds = 8;

  // Starts the thread: a snapshot of the log at `log_path` (open on
  // `log_fd`, which the compactor duplicates) up to `snapshot_end`, a record
  // boundary, written to `tmp_path` with a Boot record for `boot`.
  LogCompactor(int log_fd, std::string log_path, std::string tmp_path, std::uint64_t snapshot_end,
               std::uint64_t boot);
  // Stops the thread at its next record and joins it; the snapshot is abandoned.
  ~LogCompactor();
  LogCompactor(const LogCompactor&) = delete;
  LogCompactor& operator=(const LogCompactor&) = delete;

  // The log's committed end now: the thread copies up to it.
  void committed(std::uint64_t end) { committed_.store(end); }

  // True once the thread has finished, well or not.
  bool done() const { return done_.load(); }

  // Once done(): the snapshot, synced, holding the log's records up to
  // copied_to(); null after a failure, whose reason error() gives.
  SnapshotWriter* snapshot();
  std::uint64_t copied_to() const { return copied_to_; }
  const std::string& error() const { return error_; }

 private:
  void run();
  int log_fd_;
  std::string log_path_;
  std::string tmp_path_;
  std::uint64_t snapshot_end_;
  std::uint64_t boot_;
  std::atomic<std::uint64_t> committed_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> done_{false};
  // Written by the thread before done_ is set; read by the owner after.
  std::unique_ptr<SnapshotWriter> snapshot_;
  std::uint64_t copied_to_ = 0;
  std::string error_;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace piranha::ts
