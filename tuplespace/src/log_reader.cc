#include "log_reader.h"

#include <utility>

#include "log_format.h"

namespace piranha::ts {

namespace lf = log_format;

LogReader::LogReader(std::string_view file, Reporter& reporter) : file_(file), reporter_(reporter) {}

std::optional<std::string_view> LogReader::next() {
  if (stopped_) return std::nullopt;
  if (!started_) {
    started_ = true;
    if (!file_.starts_with(lf::kMagic))
      return report(LogDamageKind::BadMagic, "not a piranha tuple-space log (bad magic)", false);
    end_ = lf::kMagic.size();
  }
  std::string_view rest = file_.substr(end_);
  if (rest.empty()) {
    stopped_ = true;
    return std::nullopt;
  }
  if (rest.size() < lf::kHeaderSize)
    return report(LogDamageKind::HeaderCutShort,
                  "a record header cut short (" + std::to_string(rest.size()) + " bytes)", true);
  auto crc = static_cast<std::uint32_t>(lf::get_fixed(rest.data(), 4));
  auto len = static_cast<std::size_t>(lf::get_fixed(rest.data() + 4, 4));
  std::size_t left = rest.size() - lf::kHeaderSize;
  if (len > lf::kMaxPayload || len > left)
    return report(LogDamageKind::BadLength,
                  "a record of " + std::to_string(len) + " bytes with only " + std::to_string(left) +
                      " left in the file",
                  len >= left);
  if (crc != lf::crc32c(rest.data() + 4, 4 + len))
    return report(LogDamageKind::BadChecksum,
                  "a checksum mismatch in a record of " + std::to_string(len) + " bytes", len == left);
  record_offset_ = end_;
  end_ += lf::kHeaderSize + len;
  return rest.substr(lf::kHeaderSize, len);
}

std::nullopt_t LogReader::report(LogDamageKind kind, std::string reason, bool reaches_end) {
  stopped_ = true;
  std::string_view rest = file_.substr(end_);
  LogDamage d;
  d.kind = kind;
  d.offset = end_;
  d.bytes = rest.size();
  d.reason = std::move(reason);
  d.reaches_end = reaches_end;
  d.only_zeros = rest.find_first_not_of('\0') == std::string_view::npos;
  reporter_.damage(d);
  return std::nullopt;
}

}  // namespace piranha::ts
