#include "piranha/tuplespace/durable_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>

#include "background_sync.h"
#include "log_compaction.h"
#include "log_file.h"
#include "log_format.h"
#include "log_recovery.h"
#include "piranha/base/clock.h"
#include "piranha/base/input_error.h"

namespace piranha::ts {

namespace lf = log_format;

std::string_view fsync_policy_name(FsyncPolicy p) {
  switch (p) {
    case FsyncPolicy::Always: return "always";
    case FsyncPolicy::EverySec: return "everysec";
    case FsyncPolicy::No: return "no";
  }
  return "?";
}

FsyncPolicy parse_fsync_policy(std::string_view name) {
  if (name == "always") return FsyncPolicy::Always;
  if (name == "everysec") return FsyncPolicy::EverySec;
  if (name == "no") return FsyncPolicy::No;
  throw InputError("fsync policy \"" + std::string(name) + "\"", "expected always, everysec or no");
}

namespace {

using lf::put_fixed32;
using lf::put_fixed64;
using log_file::errno_text;
using log_file::sync_fd;

void put_bytes(std::string& out, std::string_view b) {
  put_fixed32(out, static_cast<std::uint32_t>(b.size()));
  out.append(b);
}

int open_log(const std::string& path) {
  // Not O_APPEND: records are written at the end with pwrite, and the file
  // header at offset 0.
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + errno_text());
  return fd;
}

// A new log holds only its file header. It is written aside and renamed into
// place, so that a log file that exists always has a whole header, and one
// shorter than that is damage, not a crash during its creation.
void create_log(const std::string& path, const std::string& dir) {
  std::string tmp = path + ".tmp";
  int fd = log_file::create(tmp);
  try {
    log_file::write_at(fd, lf::file_header(lf::kFileHeaderSize), 0, tmp);
    sync_fd(fd, tmp);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  log_file::rename_synced(tmp, path, dir);
}

std::int64_t steady_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct DurableLog::File {
  int fd = -1;
  int lock_fd = -1;
  ~File() {
    if (fd >= 0) ::close(fd);
    if (lock_fd >= 0) ::close(lock_fd);  // releases the flock
  }
};

DurableLog::DurableLog(DurableLogOptions options, Store& store)
    : opt_(std::move(options)), store_(store), file_(std::make_unique<File>()) {
  std::error_code ec;
  std::filesystem::create_directories(opt_.dir, ec);
  if (ec) throw std::runtime_error(opt_.dir + ": cannot create the data directory: " + ec.message());
  std::string lock = opt_.dir + "/LOCK";
  file_->lock_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (file_->lock_fd < 0) throw std::runtime_error(lock + ": cannot open: " + errno_text());
  if (::flock(file_->lock_fd, LOCK_EX | LOCK_NB) != 0)
    throw std::runtime_error(opt_.dir + ": in use by another server (" + lock + " is locked)");
  path_ = opt_.dir + "/tuples.log";
  if (!std::filesystem::exists(path_, ec)) create_log(path_, opt_.dir);
  file_->fd = open_log(path_);
  recover();
  store_.set_journal(this);
}

DurableLog::~DurableLog() {
  store_.set_journal(nullptr);
  compactor_.reset();  // abandoned: the log is whole without it
  if (closer_.joinable()) closer_.join();
  try {
    if (syncer_) syncer_->wait_idle();
    commit();
    if (unsynced_) sync_fd(file_->fd, path_);
    // A clean stop: the file header covers every record, so that a cut at
    // any record boundary is seen at the next start.
    write_header(size_);
    sync_fd(file_->fd, path_);
  } catch (const std::exception& e) {
    if (opt_.log) opt_.log(e.what());
  }
}

LeaseId DurableLog::first_lease() const {
  return LeaseId{report_.boot} << lf::kLeaseBootShift;
}

void DurableLog::write_header(std::uint64_t synced_end) {
  log_file::write_at(file_->fd, lf::file_header(synced_end), 0, path_);
  header_end_ = synced_end;
}

void DurableLog::recover() {
  auto started = steady_ms();
  RecoveredLog recovered = recover_log(file_->fd, path_, opt_, store_);
  report_ = recovered.report;
  size_ = report_.bytes;
  store_.resume_numbering(recovered.next_seq, first_lease());
  if (recovered.version == 1) {
    migrate();
  } else {
    // What was read is on the device before the header says so: a server
    // killed under everysec or no may have left it in the page cache only.
    sync_fd(file_->fd, path_);
    write_header(size_);
  }
  synced_ = size_;

  // As if the last rewrite were empty: a log recovered above compact_min_bytes is
  // rewritten after this first commit, so churn from earlier runs does not pile up.
  compacted_size_ = 0;
  buffer_.push_back(static_cast<char>(lf::OpCode::Boot));
  put_fixed64(buffer_, report_.boot);
  commit();
  if (unsynced_) sync_fd(file_->fd, path_);
  unsynced_ = false;
  synced_ = size_;
  last_sync_ms_ = steady_ms();
  if (opt_.log)
    opt_.log("recovered " + std::to_string(report_.tuples) + " tuples from " + path_ + " (" +
             std::to_string(report_.records) + " records, " + std::to_string(report_.bytes) + " bytes) in " +
             std::to_string(steady_ms() - started) + " ms; run " + std::to_string(report_.boot) +
             ", leases of earlier runs are void; fsync " + std::string(fsync_policy_name(opt_.fsync)));
}

void DurableLog::migrate() {
  std::uint64_t before = size_;
  SnapshotWriter snapshot(path_ + ".tmp");
  snapshot.boot(report_.boot - 1);
  store_.for_each_tuple([&](std::string_view space, std::uint64_t seq, std::string_view tuple) {
    snapshot.put(seq, space, tuple);
  });
  snapshot.seal();
  log_file::rename_synced(snapshot.path(), path_, opt_.dir);
  ::close(file_->fd);
  file_->fd = snapshot.release();
  size_ = header_end_ = snapshot.size();
  report_.bytes = size_;
  if (opt_.log)
    opt_.log(path_ + ": rewrote the format-1 log in format 2: " + std::to_string(before) + " -> " +
             std::to_string(size_) + " bytes");
}

void DurableLog::commit() {
  if (buffer_.empty()) return;
  throw_if_sync_failed();
  std::string record;
  record.reserve(buffer_.size() + lf::kHeaderSize);
  lf::append_record(record, buffer_);
  try {
    log_file::write_at(file_->fd, record, size_, path_);
  } catch (const LogFullError&) {
    // What fitted is cut off again (freeing its blocks), so that the file
    // ends at the last whole record and the next try writes at its end.
    if (::ftruncate(file_->fd, static_cast<off_t>(size_)) != 0)
      throw std::runtime_error(path_ + ": cannot cut a record the disk had no room for at offset " +
                               std::to_string(size_) + ": " + log_file::errno_text());
    throw;
  }
  buffer_.clear();
  // The header advances to what the last sync covered, in the same sync as
  // this record: it never claims a byte that was not already on the device.
  if (synced_ > header_end_) write_header(synced_);
  size_ += record.size();
  if (opt_.fsync == FsyncPolicy::Always) {
    sync_fd(file_->fd, path_);
    synced_ = size_;
  } else {
    unsynced_ = true;
  }
  last_commit_ms_ = steady_ms();
  if (compactor_) {
    compactor_->committed(size_);
    poll_compaction();
  } else if (size_ > std::max(opt_.compact_min_bytes, 2 * compacted_size_)) {
    start_compaction();
  }
}

void DurableLog::sync_if_due(std::int64_t now_ms) {
  throw_if_sync_failed();
  poll_compaction();
  if (opt_.fsync == FsyncPolicy::Always) {
    // Idle: the header catches up with the last commit, so that a cut of the
    // file at that commit's start is seen at the next start too.
    if (header_end_ < synced_ && buffer_.empty() && now_ms - last_commit_ms_ >= 100) {
      write_header(synced_);
      sync_fd(file_->fd, path_);
    }
    return;
  }
  if (opt_.fsync != FsyncPolicy::EverySec) return;
  if (syncer_) synced_ = std::max(synced_, syncer_->synced_mark());
  if (!unsynced_ && header_end_ < synced_ && buffer_.empty() && now_ms - last_commit_ms_ >= 1000) {
    write_header(synced_);  // on the device with the next background sync
    unsynced_ = true;
  }
  if (!unsynced_ || now_ms - last_sync_ms_ < 1000) return;
  if (!syncer_) syncer_ = std::make_unique<BackgroundSync>();
  syncer_->request(file_->fd, size_);
  unsynced_ = false;
  last_sync_ms_ = now_ms;
}

void DurableLog::throw_if_sync_failed() {
  if (!syncer_) return;
  if (std::string error = syncer_->take_error(); !error.empty())
    throw std::runtime_error(path_ + ": " + error);
}

std::uint64_t DurableLog::background_syncs() const {
  return syncer_ ? syncer_->completed() : 0;
}

void DurableLog::start_compaction() {
  compaction_started_ms_ = steady_ms();
  compaction_before_ = size_;
  compactor_ = std::make_unique<LogCompactor>(file_->fd, path_, path_ + ".tmp", size_, report_.boot);
}

void DurableLog::poll_compaction() {
  if (!compactor_ || !compactor_->done()) return;
  auto paused = steady_us();
  SnapshotWriter* snapshot = compactor_->snapshot();
  if (!snapshot) return abandon_compaction(compactor_->error());
  // The records committed since the thread last looked, then the switch.
  std::uint64_t tail = size_ - compactor_->copied_to();
  try {
    snapshot->copy(file_->fd, path_, compactor_->copied_to(), size_);
  } catch (const LogFullError& e) {
    return abandon_compaction(e.what());
  }
  auto copied = steady_us();
  try {
    snapshot->seal();
  } catch (const LogFullError& e) {
    return abandon_compaction(e.what());
  }
  auto sealed = steady_us();
  if (syncer_) {
    syncer_->wait_idle();  // it may be syncing the old file
    syncer_->forget_mark();
  }
  log_file::rename_synced(snapshot->path(), path_, opt_.dir);
  auto renamed = steady_us();
  int old_fd = std::exchange(file_->fd, snapshot->release());
  std::uint64_t tuples = snapshot->tuples();
  size_ = compacted_size_ = synced_ = header_end_ = snapshot->size();
  unsynced_ = false;
  close_in_background(old_fd);
  ++compactions_;
  std::int64_t pause = steady_us() - paused;
  longest_pause_us_ = std::max(longest_pause_us_, pause);
  if (opt_.log)
    opt_.log("rewrote " + path_ + " as " + std::to_string(tuples) +
             " live tuples: " + std::to_string(compaction_before_) + " -> " + std::to_string(size_) +
             " bytes in " + std::to_string(steady_ms() - compaction_started_ms_) +
             " ms, of which requests waited " + std::to_string(pause / 1000) + " ms (copying the last " +
             std::to_string(tail) + " bytes " + std::to_string((copied - paused) / 1000) + " ms, syncing " +
             std::to_string((sealed - copied) / 1000) + " ms, renaming " +
             std::to_string((renamed - sealed) / 1000) + " ms)");
}

void DurableLog::abandon_compaction(std::string error) {
  compactor_.reset();
  ::unlink((path_ + ".tmp").c_str());
  // The log is whole without the rewrite; the next one waits until it has doubled again.
  compacted_size_ = size_;
  if (opt_.log)
    opt_.log(path_ + ".tmp: rewriting the log failed, the log stays as it is (" + std::to_string(size_) +
             " bytes): " + error);
}

void DurableLog::close_in_background(int fd) {
  if (closer_.joinable()) closer_.join();
  closer_ = std::thread([fd, done = std::shared_ptr<LogCompactor>(std::move(compactor_))]() mutable {
    done.reset();  // joins its finished thread and closes its descriptor of the old log
    // Freed at once, a large file's blocks held the file system's journal, and
    // with it the event loop's writes, for seconds: freed 16 MiB at a time
    // instead, from the end (as RocksDB deletes its files in chunks).
    struct stat st {};
    if (::fstat(fd, &st) == 0)
      for (off_t size = st.st_size; size > 0;) {
        size = std::max<off_t>(0, size - (16 << 20));
        if (::ftruncate(fd, size) != 0) break;
      }
    ::close(fd);
  });
}

void DurableLog::wait_for_compaction() {
  while (compactor_) {
    if (!compactor_->done()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    poll_compaction();
  }
}

void DurableLog::put(std::uint64_t seq, std::string_view space, std::string_view tuple) {
  buffer_.push_back(static_cast<char>(lf::OpCode::Put));
  put_fixed64(buffer_, seq);
  put_bytes(buffer_, space);
  put_bytes(buffer_, tuple);
}

void DurableLog::erase(std::uint64_t seq) {
  buffer_.push_back(static_cast<char>(lf::OpCode::Erase));
  put_fixed64(buffer_, seq);
}

void DurableLog::renumber(std::uint64_t from, std::uint64_t to) {
  buffer_.push_back(static_cast<char>(lf::OpCode::Renumber));
  put_fixed64(buffer_, from);
  put_fixed64(buffer_, to);
}

void DurableLog::drop_space(std::string_view space) {
  buffer_.push_back(static_cast<char>(lf::OpCode::Drop));
  put_bytes(buffer_, space);
}

}  // namespace piranha::ts
