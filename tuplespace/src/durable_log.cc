#include "piranha/tuplespace/durable_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <utility>

#include "background_sync.h"
#include "log_format.h"

namespace piranha::ts {

namespace lf = log_format;

namespace log_format {

std::uint32_t crc32c(const char* data, std::size_t n, std::uint32_t crc) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
      std::uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i)
    crc = table[(crc ^ static_cast<std::uint8_t>(data[i])) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

}  // namespace log_format

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
  throw std::invalid_argument("fsync policy \"" + std::string(name) + "\": expected always, everysec or no");
}

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

void put_fixed32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
void put_fixed64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
std::uint64_t get_fixed(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<std::uint8_t>(p[i])} << (8 * i);
  return v;
}
void put_bytes(std::string& out, std::string_view b) {
  put_fixed32(out, static_cast<std::uint32_t>(b.size()));
  out.append(b);
}

// Appends header + payload.
void frame_record(std::string& out, std::string_view payload) {
  std::string length;
  put_fixed32(length, static_cast<std::uint32_t>(payload.size()));
  std::uint32_t crc = lf::crc32c(length.data(), length.size());
  crc = lf::crc32c(payload.data(), payload.size(), crc);
  put_fixed32(out, crc);
  out += length;
  out.append(payload);
}

// A record's payload, read operation by operation. Throws on overrun.
class Cursor {
 public:
  explicit Cursor(std::string_view p) : p_(p) {}
  bool done() const { return at_ == p_.size(); }
  std::uint64_t fixed(int bytes) {
    need(static_cast<std::size_t>(bytes));
    auto v = get_fixed(p_.data() + at_, bytes);
    at_ += static_cast<std::size_t>(bytes);
    return v;
  }
  std::string_view bytes() {
    auto n = static_cast<std::size_t>(fixed(4));
    need(n);
    auto v = p_.substr(at_, n);
    at_ += n;
    return v;
  }

 private:
  void need(std::size_t n) const {
    if (p_.size() - at_ < n)
      throw std::runtime_error("operation at payload byte " + std::to_string(at_) +
                               " runs past the record's end");
  }
  std::string_view p_;
  std::size_t at_ = 0;
};

void write_all(int fd, std::string_view data, const std::string& path, std::uint64_t offset) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error(path + ": write at offset " + std::to_string(offset) +
                               " failed: " + errno_text());
    data.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

void sync_fd(int fd, const std::string& path) {
  if (::fdatasync(fd) != 0) throw std::runtime_error(path + ": fdatasync failed: " + errno_text());
}

void sync_dir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(dir + ": cannot open the directory to sync it: " + errno_text());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw std::runtime_error(dir + ": fsync of the directory failed: " + errno_text());
}

int open_log(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot open: " + errno_text());
  return fd;
}

std::int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The live tuples while replaying: seq -> (space, canonical bytes).
using LiveTuples = std::map<std::uint64_t, std::pair<std::string, std::string>>;

struct Replay {
  LiveTuples live;
  std::uint64_t max_seq = 0;
  std::uint64_t boot = 0;

  void apply(std::string_view payload) {
    Cursor c(payload);
    while (!c.done()) {
      auto op = static_cast<lf::OpCode>(c.fixed(1));
      switch (op) {
        case lf::OpCode::Boot: boot = std::max(boot, c.fixed(8)); break;
        case lf::OpCode::Put: {
          std::uint64_t seq = c.fixed(8);
          std::string space(c.bytes());
          std::string tuple(c.bytes());
          max_seq = std::max(max_seq, seq);
          live[seq] = {std::move(space), std::move(tuple)};
          break;
        }
        case lf::OpCode::Erase: live.erase(c.fixed(8)); break;
        case lf::OpCode::Renumber: {
          std::uint64_t from = c.fixed(8), to = c.fixed(8);
          max_seq = std::max(max_seq, to);
          if (auto node = live.extract(from)) {
            node.key() = to;
            live.insert(std::move(node));
          }
          break;
        }
        case lf::OpCode::Drop: {
          std::string_view space = c.bytes();
          std::erase_if(live, [&](const auto& e) { return e.second.first == space; });
          break;
        }
        default: throw std::runtime_error("unknown operation code " + std::to_string(static_cast<int>(op)));
      }
    }
  }
};

bool all_zero(std::string_view s) {
  return s.find_first_not_of('\0') == std::string_view::npos;
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
  std::string data;
  {
    struct stat st {};
    if (::fstat(file_->fd, &st) != 0) throw std::runtime_error(path_ + ": cannot stat: " + errno_text());
    data.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < data.size()) {
      ssize_t n = ::pread(file_->fd, data.data() + got, data.size() - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0)
        throw std::runtime_error(path_ + ": read at offset " + std::to_string(got) +
                                 " failed: " + errno_text());
      got += static_cast<std::size_t>(n);
    }
  }
  auto cut_at = [&](std::uint64_t offset) {
    if (::ftruncate(file_->fd, static_cast<off_t>(offset)) != 0)
      throw std::runtime_error(path_ + ": cannot cut the file at offset " + std::to_string(offset) + ": " +
                               errno_text());
    sync_fd(file_->fd, path_);
  };

  Replay replay;
  std::size_t off = lf::kMagic.size();
  if (data.size() < lf::kMagic.size() && lf::kMagic.starts_with(data)) {
    // New, or a crash while it was being created: start it afresh.
    cut_at(0);
    write_all(file_->fd, lf::kMagic, path_, 0);
    sync_fd(file_->fd, path_);
    sync_dir(opt_.dir);
    data.assign(lf::kMagic);
  } else if (!std::string_view(data).starts_with(lf::kMagic)) {
    throw std::runtime_error(path_ + ": offset 0: not a piranha tuple-space log (bad magic)");
  }
  while (off < data.size()) {
    std::string_view rest = std::string_view(data).substr(off);
    std::string problem;
    bool last = false;  // the damage is in the last record: a torn write
    if (rest.size() < lf::kHeaderSize) {
      problem = "a record header cut short (" + std::to_string(rest.size()) + " bytes)";
      last = true;
    } else {
      auto crc = static_cast<std::uint32_t>(get_fixed(rest.data(), 4));
      auto len = static_cast<std::size_t>(get_fixed(rest.data() + 4, 4));
      if (len > lf::kMaxPayload || len > rest.size() - lf::kHeaderSize) {
        problem = "a record of " + std::to_string(len) + " bytes with only " +
                  std::to_string(rest.size() - lf::kHeaderSize) + " left in the file";
        last = true;
      } else if (crc != lf::crc32c(rest.data() + 4, 4 + len)) {
        problem = "a checksum mismatch in a record of " + std::to_string(len) + " bytes";
        last = len + lf::kHeaderSize == rest.size();
      } else {
        try {
          replay.apply(rest.substr(lf::kHeaderSize, len));
        } catch (const std::exception& e) {
          // The checksum holds, so this is not a torn write: refuse, whatever the flags.
          throw std::runtime_error(path_ + ": offset " + std::to_string(off) + ": " + e.what());
        }
        ++report_.records;
        off += lf::kHeaderSize + len;
        continue;
      }
    }
    if (all_zero(rest)) last = true;
    std::string where = path_ + ": offset " + std::to_string(off) + ": " + problem;
    std::string kept = std::to_string(report_.records) + " records before it";
    if (!last && !opt_.salvage)
      throw std::runtime_error(where + ", followed by " + std::to_string(rest.size()) +
                               " more bytes: the log is damaged in the middle; refusing to start. "
                               "Start with --salvage to keep the " +
                               kept + " and move the rest aside");
    if (!last) {
      std::string aside = path_ + ".dropped-" + std::to_string(off);
      int fd = ::open(aside.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) throw std::runtime_error(aside + ": cannot create: " + errno_text());
      try {
        write_all(fd, rest, aside, 0);
        sync_fd(fd, aside);
      } catch (...) {
        ::close(fd);
        throw;
      }
      ::close(fd);
      if (opt_.log)
        opt_.log(where + ": salvaged: kept the " + kept + ", moved " + std::to_string(rest.size()) +
                 " bytes to " + aside);
    } else if (opt_.log) {
      opt_.log(where + " (a torn last write): dropped its " + std::to_string(rest.size()) +
               " bytes, recovered the " + kept);
    }
    report_.dropped_bytes = rest.size();
    cut_at(off);
    break;
  }
  size_ = off;
  report_.bytes = off;

  for (auto& [seq, entry] : replay.live) {
    TupleImage img;
    try {
      img = describe_tuple(entry.second);
    } catch (const std::exception& e) {
      throw std::runtime_error(path_ + ": tuple " + std::to_string(seq) + " in space \"" + entry.first +
                               "\": " + e.what());
    }
    store_.restore(entry.first, seq, std::move(img));
  }
  report_.tuples = replay.live.size();
  report_.boot = replay.boot + 1;
  store_.resume_numbering(replay.max_seq + 1, first_lease());

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
  frame_record(record, buffer_);
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
    frame_record(out, payload);
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
