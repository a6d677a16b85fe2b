#include "log_recovery.h"

#include <map>
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

// Keeps what the reader reports; it reports at most once.
struct FirstDamage final : LogReader::Reporter {
  std::optional<LogDamage> found;
  void damage(const LogDamage& d) override { found = d; }
};

// True for the damage a crash in the middle of the last write(2) leaves.
bool torn_last_write(const LogDamage& d) {
  // A file system may extend the file before the data lands: zeros, never written.
  if (d.only_zeros) return true;
  switch (d.kind) {
    case LogDamageKind::BadMagic: return false;
    case LogDamageKind::HeaderCutShort: return true;
    case LogDamageKind::BadLength: return true;
    case LogDamageKind::BadChecksum: return d.reaches_end;
  }
  return false;
}

// Acts on `remedy` for `damage` in the log `data` open on `fd`; throws when it refuses.
void deal_with(DamageRemedy remedy, const LogDamage& damage, std::uint64_t records_before,
               std::string_view data, int fd, const std::string& path, const DurableLogOptions& options) {
  std::string where = path + ": offset " + std::to_string(damage.offset) + ": " + damage.reason;
  std::string kept = std::to_string(records_before) + " records before it";
  switch (remedy) {
    case DamageRemedy::NotALog: throw std::runtime_error(where);
    case DamageRemedy::Refuse:
      throw std::runtime_error(where + ", followed by " + std::to_string(damage.bytes) +
                               " more bytes: the log is damaged in the middle; refusing to start. "
                               "Start with --salvage to keep the " +
                               kept + " and move the rest aside");
    case DamageRemedy::MoveAside: {
      std::string aside = path + ".dropped-" + std::to_string(damage.offset);
      log_file::write_file(aside, data.substr(damage.offset));
      if (options.log)
        options.log(where + ": salvaged: kept the " + kept + ", moved " + std::to_string(damage.bytes) +
                    " bytes to " + aside);
      break;
    }
    case DamageRemedy::CutTornWrite:
      if (options.log)
        options.log(where + " (a torn last write): dropped its " + std::to_string(damage.bytes) +
                    " bytes, recovered the " + kept);
      break;
  }
  log_file::cut(fd, path, damage.offset);
}

}  // namespace

DamageRemedy remedy_for(const LogDamage& damage, bool salvage) {
  if (damage.kind == LogDamageKind::BadMagic) return DamageRemedy::NotALog;
  if (torn_last_write(damage)) return DamageRemedy::CutTornWrite;
  return salvage ? DamageRemedy::MoveAside : DamageRemedy::Refuse;
}

RecoveredLog recover_log(int fd, const std::string& path, const DurableLogOptions& options, Store& store) {
  std::string data = log_file::read_all(fd, path);
  if (data.size() < lf::kMagic.size() && lf::kMagic.starts_with(data)) {
    // New, or a crash while it was being created: start it afresh.
    log_file::cut(fd, path, 0);
    log_file::write_all(fd, lf::kMagic, path, 0);
    log_file::sync_fd(fd, path);
    log_file::sync_dir(options.dir);
    data.assign(lf::kMagic);
  }

  RecoveredLog out;
  RecoveryReport& report = out.report;
  FirstDamage damage;
  LogReader reader(data, damage);
  Replay replay;
  while (auto payload = reader.next()) {
    try {
      replay.apply(*payload);
    } catch (const std::exception& e) {
      // The checksum holds, so this is not a torn write: refuse, whatever the flags.
      throw std::runtime_error(path + ": offset " + std::to_string(reader.record_offset()) + ": " + e.what());
    }
    ++report.records;
  }
  if (damage.found) {
    deal_with(remedy_for(*damage.found, options.salvage), *damage.found, report.records, data, fd, path,
              options);
    report.dropped_bytes = damage.found->bytes;
  }
  report.bytes = reader.end();

  for (auto& [seq, entry] : replay.live) {
    TupleImage img;
    try {
      img = describe_tuple(entry.second);
    } catch (const std::exception& e) {
      throw std::runtime_error(path + ": tuple " + std::to_string(seq) + " in space \"" + entry.first +
                               "\": " + e.what());
    }
    store.restore(entry.first, seq, std::move(img));
  }
  report.tuples = replay.live.size();
  report.boot = replay.boot + 1;
  out.next_seq = replay.max_seq + 1;
  return out;
}

}  // namespace piranha::ts
