#include "log_compaction.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <utility>

#include "log_file.h"
#include "log_format.h"
#include "log_reader.h"
#include "log_recovery.h"

namespace piranha::ts {

namespace lf = log_format;

SnapshotWriter::SnapshotWriter(std::string path) : path_(std::move(path)) {
  fd_ = log_file::create(path_);
  // Synced end 0 until seal(): a file header that claims nothing.
  log_file::write_at(fd_, lf::file_header(0), 0, path_);
  size_ = lf::kFileHeaderSize;
}

SnapshotWriter::~SnapshotWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void SnapshotWriter::boot(std::uint64_t boot) {
  payload_.push_back(static_cast<char>(lf::OpCode::Boot));
  lf::put_fixed64(payload_, boot);
}

void SnapshotWriter::put(std::uint64_t seq, std::string_view space, std::string_view tuple) {
  payload_.push_back(static_cast<char>(lf::OpCode::Put));
  lf::put_fixed64(payload_, seq);
  lf::put_fixed32(payload_, static_cast<std::uint32_t>(space.size()));
  payload_.append(space);
  lf::put_fixed32(payload_, static_cast<std::uint32_t>(tuple.size()));
  payload_.append(tuple);
  ++tuples_;
  if (payload_.size() >= (1u << 20)) flush();
}

void SnapshotWriter::flush() {
  if (payload_.empty()) return;
  record_.clear();
  lf::append_record(record_, payload_);
  payload_.clear();
  log_file::write_at(fd_, record_, size_, path_);
  size_ += record_.size();
  unsynced_ += record_.size();
  if (unsynced_ >= kSyncEveryBytes) sync();
}

void SnapshotWriter::copy(int log_fd, const std::string& log_path, std::uint64_t from, std::uint64_t to) {
  flush();
  log_file::copy_range(log_fd, log_path, from, to, fd_, path_, size_);
  size_ += to - from;
  unsynced_ += to - from;
}

void SnapshotWriter::sync() {
  if (!payload_.empty()) flush();
  log_file::sync_fd(fd_, path_);
  unsynced_ = 0;
}

void SnapshotWriter::seal() {
  flush();
  log_file::write_at(fd_, lf::file_header(size_), 0, path_);
  log_file::sync_fd(fd_, path_);
}

int SnapshotWriter::release() {
  return std::exchange(fd_, -1);
}

namespace {

struct Damage final : LogReader::Reporter {
  std::optional<LogDamage> found;
  void damage(const LogDamage& d) override { found = d; }
};

}  // namespace

LogCompactor::LogCompactor(int log_fd, std::string log_path, std::string tmp_path, std::uint64_t snapshot_end,
                           std::uint64_t boot)
    : log_fd_(::dup(log_fd)),
      log_path_(std::move(log_path)),
      tmp_path_(std::move(tmp_path)),
      snapshot_end_(snapshot_end),
      boot_(boot),
      committed_(snapshot_end),
      thread_([this] { run(); }) {}

LogCompactor::~LogCompactor() {
  stop_ = true;
  thread_.join();
  if (log_fd_ >= 0) ::close(log_fd_);
}

SnapshotWriter* LogCompactor::snapshot() {
  return error_.empty() ? snapshot_.get() : nullptr;
}

void LogCompactor::run() {
  try {
    if (log_fd_ < 0)
      throw std::runtime_error(log_path_ + ": cannot duplicate its descriptor: " + log_file::errno_text());
    auto writer = std::make_unique<SnapshotWriter>(tmp_path_);
    LogReplay replay;
    {
      Damage damage;
      LogReader reader(log_fd_, log_path_, damage, snapshot_end_);
      while (auto payload = reader.next()) {
        if (stop_) throw std::runtime_error("stopped");
        replay.apply(*payload);
      }
      // The records up to snapshot_end_ were written and read back by this
      // run: damage there is the device's, and the rewrite must not hide it.
      if (damage.found)
        throw std::runtime_error(log_path_ + ": offset " + std::to_string(damage.found->offset) + ": " +
                                 damage.found->reason + " while rewriting the log");
    }
    writer->boot(boot_);
    while (!replay.live.empty()) {
      if (stop_) throw std::runtime_error("stopped");
      auto node = replay.live.extract(replay.live.begin());
      writer->put(node.key(), node.mapped().first, node.mapped().second);
    }
    // Each round copies what the log grew by during the one before; a log
    // written faster than it can be copied is left to the owner after
    // kCatchUpRounds, so that the rewrite ends.
    std::uint64_t copied = snapshot_end_;
    for (int round = 0; round < kCatchUpRounds; ++round) {
      if (stop_) throw std::runtime_error("stopped");
      std::uint64_t end = committed_.load();
      if (end - copied <= kCatchUpBytes) break;
      writer->copy(log_fd_, log_path_, copied, end);
      copied = end;
    }
    // Synced here, so that seal() on the event loop syncs only the last few records.
    writer->sync();
    copied_to_ = copied;
    snapshot_ = std::move(writer);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  done_ = true;
}

}  // namespace piranha::ts
