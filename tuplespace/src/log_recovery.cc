#include "log_recovery.h"

#include <unistd.h>

#include <optional>
#include <stdexcept>
#include <utility>

#include "log_file.h"
#include "log_format.h"
#include "piranha/tuplespace/codec.h"

namespace piranha::ts {

namespace lf = log_format;

namespace {

// A record's payload, read operation by operation. Throws on overrun.
class Cursor {
 public:
  explicit Cursor(std::string_view p) : p_(p) {}
  bool done() const { return at_ == p_.size(); }
  std::uint64_t fixed(int bytes) {
    need(static_cast<std::size_t>(bytes));
    auto v = lf::get_fixed(p_.data() + at_, bytes);
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

// Keeps what the reader reports; it reports at most once.
struct FirstDamage final : LogReader::Reporter {
  std::optional<LogDamage> found;
  void damage(const LogDamage& d) override { found = d; }
};

// A device writes whole sectors: a write cut short by a power loss leaves the
// sectors it did not reach unwritten, which a file system that had already
// extended the file reads back as zeros.
constexpr std::uint64_t kSector = 512;

// The first offset from which the file is zero to its end, starting at the
// damage or at a sector boundary after it; the file's size when there is none.
std::uint64_t zero_run(const LogDamage& d) {
  if (d.zeros_from <= d.offset) return d.offset;
  std::uint64_t aligned = (d.zeros_from + kSector - 1) / kSector * kSector;
  return std::min(aligned, d.file_size);
}

std::string dropped_path(const std::string& path, std::uint64_t offset) {
  return path + ".dropped-" + std::to_string(offset);
}

// Copies [offset, end of file) to PATH.dropped-OFFSET, synced, and returns its name.
std::string keep_aside(int fd, const std::string& path, const LogDamage& damage, const std::string& dir) {
  std::string aside = dropped_path(path, damage.offset);
  int out = log_file::create(aside);
  try {
    log_file::copy_range(fd, path, damage.offset, damage.file_size, out, aside, 0);
    log_file::sync_fd(out, aside);
  } catch (...) {
    ::close(out);
    throw;
  }
  ::close(out);
  log_file::sync_dir(dir);
  return aside;
}

// Acts on `remedy` for `damage` in the log open on `fd`; throws when it refuses.
void deal_with(DamageRemedy remedy, const LogDamage& damage, std::uint64_t records_before, int fd,
               const std::string& path, const DurableLogOptions& options) {
  std::string where = path + ": offset " + std::to_string(damage.offset) + ": " + damage.reason;
  std::string kept = std::to_string(records_before) + " records before it";
  std::string why;
  if (damage.version == 1)
    why = "a format-1 log cannot tell a torn write from damage";
  else if (damage.kind == LogDamageKind::Truncated || damage.offset < damage.synced_end)
    why = "the file header says everything up to offset " + std::to_string(damage.synced_end) +
          " was synced, so it may have been acknowledged";
  else
    why = "not what a write cut short leaves (" + std::to_string(damage.bytes) + " bytes from the damage on)";
  switch (remedy) {
    case DamageRemedy::NotALog: throw std::runtime_error(where);
    case DamageRemedy::Refuse:
      throw std::runtime_error(
          where + ": the log is damaged (" + why + "); refusing to start. Start with --salvage to keep the " +
          kept + (damage.bytes ? " and move the rest to " + dropped_path(path, damage.offset) : "") +
          ", or restore " + options.dir + " from a copy");
    case DamageRemedy::MoveAside: {
      std::string moved;
      if (damage.bytes)
        moved = ", moved " + std::to_string(damage.bytes) + " bytes to " +
                keep_aside(fd, path, damage, options.dir);
      if (options.log) options.log(where + " (" + why + "): salvaged: kept the " + kept + moved);
      break;
    }
    case DamageRemedy::CutTornWrite: {
      std::string aside = keep_aside(fd, path, damage, options.dir);
      if (options.log)
        options.log(where + " (a torn last write, past the synced end " + std::to_string(damage.synced_end) +
                    "): moved its " + std::to_string(damage.bytes) + " bytes to " + aside +
                    ", recovered the " + kept);
      break;
    }
  }
  if (damage.bytes) log_file::cut(fd, path, damage.offset);
}

}  // namespace

bool torn_last_write(const LogDamage& d) {
  if (d.version != 2 || d.offset < d.synced_end) return false;
  switch (d.kind) {
    case LogDamageKind::HeaderCutShort:
    case LogDamageKind::PayloadCutShort: return true;
    case LogDamageKind::BadHeader: {
      std::uint64_t z = zero_run(d);
      return z < d.file_size && z < d.offset + lf::kHeaderSize;
    }
    case LogDamageKind::BadChecksum: return d.record_end == d.file_size && zero_run(d) < d.file_size;
    case LogDamageKind::BadMagic:
    case LogDamageKind::BadFileHeader:
    case LogDamageKind::BadLength:
    case LogDamageKind::Truncated: return false;
  }
  return false;
}

DamageRemedy remedy_for(const LogDamage& damage, bool salvage) {
  if (damage.kind == LogDamageKind::BadMagic) return DamageRemedy::NotALog;
  if (torn_last_write(damage)) return DamageRemedy::CutTornWrite;
  return salvage ? DamageRemedy::MoveAside : DamageRemedy::Refuse;
}

void LogReplay::apply(std::string_view payload) {
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

RecoveredLog recover_log(int fd, const std::string& path, const DurableLogOptions& options, Store& store) {
  RecoveredLog out;
  RecoveryReport& report = out.report;
  FirstDamage damage;
  LogReader reader(fd, path, damage);
  LogReplay replay;
  while (auto payload = reader.next()) {
    try {
      replay.apply(*payload);
    } catch (const std::exception& e) {
      // The checksum holds, so this is not a torn write: refuse, whatever the flags.
      throw std::runtime_error(path + ": offset " + std::to_string(reader.record_offset()) + ": " + e.what());
    }
    ++report.records;
  }
  out.version = reader.version();
  report.bytes = reader.end();
  if (damage.found) {
    deal_with(remedy_for(*damage.found, options.salvage), *damage.found, report.records, fd, path, options);
    report.dropped_bytes = damage.found->bytes;
    if (damage.found->kind == LogDamageKind::BadFileHeader) {
      // Moved aside whole: start afresh.
      std::string header = lf::file_header(lf::kFileHeaderSize);
      log_file::write_at(fd, header, 0, path);
      log_file::sync_fd(fd, path);
      report.bytes = header.size();
      out.version = 2;
    }
  }

  // Each tuple leaves the replay's map as it enters the store, so that the
  // two together hold about one copy of the live set.
  report.tuples = replay.live.size();
  while (!replay.live.empty()) {
    auto node = replay.live.extract(replay.live.begin());
    auto& [space, bytes] = node.mapped();
    TupleImage img;
    try {
      img = describe_tuple(bytes);
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": tuple " + std::to_string(node.key()) + " in space \"" + space +
                               "\": " + e.what());
    }
    store.restore(space, node.key(), std::move(img));
  }
  report.boot = replay.boot + 1;
  out.next_seq = replay.max_seq + 1;
  return out;
}

}  // namespace piranha::ts
