#include "piranha/tuplespace/durable_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "background_sync.h"
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
using log_file::sync_dir;
using log_file::sync_fd;
using log_file::write_all;

void put_bytes(std::string& out, std::string_view b) {
  put_fixed32(out, static_cast<std::uint32_t>(b.size()));
  out.append(b);
}

int open_log(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + errno_text());
  return fd;
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
  file_->fd = open_log(path_);
  recover();
  store_.set_journal(this);
}

DurableLog::~DurableLog() {
  store_.set_journal(nullptr);
  try {
    if (syncer_) syncer_->wait_idle();
    commit();
    if (unsynced_) sync_fd(file_->fd, path_);
  } catch (const std::exception& e) {
    if (opt_.log) opt_.log(e.what());
  }
}

LeaseId DurableLog::first_lease() const {
  return LeaseId{report_.boot} << lf::kLeaseBootShift;
}

void DurableLog::recover() {
  auto started = steady_ms();
  RecoveredLog recovered = recover_log(file_->fd, path_, opt_, store_);
  report_ = recovered.report;
  size_ = report_.bytes;
  store_.resume_numbering(recovered.next_seq, first_lease());

  // As if the last rewrite were empty: a log recovered above compact_min_bytes is
  // rewritten by this first commit, so churn from earlier runs does not pile up.
  compacted_size_ = 0;
  buffer_.push_back(static_cast<char>(lf::OpCode::Boot));
  put_fixed64(buffer_, report_.boot);
  commit();
  if (unsynced_) sync_fd(file_->fd, path_);
  unsynced_ = false;
  last_sync_ms_ = steady_ms();
  if (opt_.log)
    opt_.log("recovered " + std::to_string(report_.tuples) + " tuples from " + path_ + " (" +
             std::to_string(report_.records) + " records, " + std::to_string(report_.bytes) + " bytes) in " +
             std::to_string(steady_ms() - started) + " ms; run " + std::to_string(report_.boot) +
             ", leases of earlier runs are void; fsync " + std::string(fsync_policy_name(opt_.fsync)));
}

void DurableLog::commit() {
  if (buffer_.empty()) return;
  throw_if_sync_failed();
  std::string record;
  record.reserve(buffer_.size() + lf::kHeaderSize);
  lf::append_record(record, buffer_);
  buffer_.clear();
  write_all(file_->fd, record, path_, size_);
  size_ += record.size();
  if (opt_.fsync == FsyncPolicy::Always)
    sync_fd(file_->fd, path_);
  else
    unsynced_ = true;
  if (size_ > std::max(opt_.compact_min_bytes, 2 * compacted_size_)) compact();
}

void DurableLog::sync_if_due(std::int64_t now_ms) {
  if (opt_.fsync != FsyncPolicy::EverySec) return;
  throw_if_sync_failed();
  if (!unsynced_ || now_ms - last_sync_ms_ < 1000) return;
  if (!syncer_) syncer_ = std::make_unique<BackgroundSync>();
  syncer_->request(file_->fd);
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

void DurableLog::compact() {
  auto started = steady_ms();
  std::uint64_t before = size_;
  std::string tmp = path_ + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(tmp + ": cannot create: " + errno_text());
  std::uint64_t written = 0, tuples = 0;
  std::string payload, out;
  auto flush = [&] {
    out.clear();
    lf::append_record(out, payload);
    payload.clear();
    write_all(fd, out, tmp, written);
    written += out.size();
  };
  try {
    write_all(fd, lf::kMagic, tmp, 0);
    written = lf::kMagic.size();
    payload.push_back(static_cast<char>(lf::OpCode::Boot));
    put_fixed64(payload, report_.boot);
    store_.for_each_tuple([&](std::string_view space, std::uint64_t seq, std::string_view tuple) {
      payload.push_back(static_cast<char>(lf::OpCode::Put));
      put_fixed64(payload, seq);
      put_bytes(payload, space);
      put_bytes(payload, tuple);
      ++tuples;
      if (payload.size() >= (1u << 20)) flush();
    });
    flush();
    sync_fd(fd, tmp);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path_.c_str()) != 0)
    throw std::runtime_error(tmp + ": cannot rename to " + path_ + ": " + errno_text());
  sync_dir(opt_.dir);
  if (syncer_) syncer_->wait_idle();  // it may be syncing the old file
  ::close(file_->fd);
  file_->fd = -1;
  file_->fd = open_log(path_);
  size_ = compacted_size_ = written;
  unsynced_ = false;
  if (opt_.log)
    opt_.log("rewrote " + path_ + " as " + std::to_string(tuples) +
             " live tuples: " + std::to_string(before) + " -> " + std::to_string(written) + " bytes in " +
             std::to_string(steady_ms() - started) + " ms");
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
