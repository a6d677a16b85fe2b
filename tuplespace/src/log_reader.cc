#include "log_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "log_file.h"
#include "log_format.h"

namespace piranha::ts {

namespace lf = log_format;

namespace {

// Read ahead this much at a time: large enough for few system calls, small
// enough that recovery's memory is the live set's, not the file's.
constexpr std::size_t kChunk = 1u << 20;

}  // namespace

LogReader::LogReader(int fd, std::string path, Reporter& reporter, std::uint64_t limit)
    : fd_(fd), path_(std::move(path)), reporter_(reporter) {
  file_size_ = std::min(log_file::size_of(fd_, path_), limit);
  check_synced_end_ = limit == std::numeric_limits<std::uint64_t>::max();
}

std::size_t LogReader::load(std::uint64_t offset, std::size_t n) {
  std::uint64_t want_end = std::min(file_size_, offset + n);
  if (offset >= buffer_start_ && want_end <= buffer_start_ + buffered_)
    return static_cast<std::size_t>(want_end - offset);
  // Keep what is already read from `offset` on, then read the rest.
  std::size_t keep = 0;
  if (offset >= buffer_start_ && offset < buffer_start_ + buffered_) {
    keep = static_cast<std::size_t>(buffer_start_ + buffered_ - offset);
    std::memmove(buffer_.data(), buffer_.data() + (offset - buffer_start_), keep);
  }
  std::size_t size = std::max({n, kChunk, keep});
  if (buffer_.size() < size || buffer_.size() > 4 * size) buffer_.resize(size);
  buffer_start_ = offset;
  std::uint64_t read_end = std::min<std::uint64_t>(file_size_, offset + buffer_.size());
  buffered_ =
      keep + log_file::read_at(fd_, buffer_.data() + keep, static_cast<std::size_t>(read_end - offset - keep),
                               offset + keep, path_);
  return static_cast<std::size_t>(std::min<std::uint64_t>(buffered_, want_end - offset));
}

std::string_view LogReader::view(std::uint64_t offset, std::size_t n) const {
  return std::string_view(buffer_).substr(static_cast<std::size_t>(offset - buffer_start_), n);
}

std::optional<std::string_view> LogReader::start() {
  started_ = true;
  std::size_t got = load(0, lf::kFileHeaderSize);
  std::string_view head = view(0, got);
  if (head.starts_with(lf::kMagicV1)) {
    version_ = 1;
    end_ = lf::kMagicV1.size();
    return std::nullopt;
  }
  // Shorter than a magic and a prefix of one: a file header cut short (a
  // format-1 server's crash while it created the file, or damage), not another file.
  bool cut_magic =
      head.size() < lf::kMagic.size() && (lf::kMagic.starts_with(head) || lf::kMagicV1.starts_with(head));
  if (!head.starts_with(lf::kMagic) && !cut_magic)
    return report(LogDamageKind::BadMagic, "not a piranha tuple-space log (bad magic)");
  version_ = 2;
  if (got < lf::kFileHeaderSize)
    return report(LogDamageKind::BadFileHeader,
                  "the file header cut short (" + std::to_string(got) + " bytes)");
  // With a limit the header is not this reader's to judge: the log's writer
  // may be rewriting it while a compaction reads the records.
  auto synced = check_synced_end_ ? lf::parse_file_header(head) : std::optional<std::uint64_t>(0);
  if (!synced) return report(LogDamageKind::BadFileHeader, "a file header whose checksum does not hold");
  synced_end_ = *synced;
  end_ = lf::kFileHeaderSize;
  return std::nullopt;
}

std::optional<std::string_view> LogReader::next() {
  if (stopped_) return std::nullopt;
  if (!started_) {
    start();
    if (stopped_) return std::nullopt;
  }
  std::uint64_t rest = file_size_ - end_;
  if (rest == 0) {
    if (check_synced_end_ && synced_end_ > file_size_)
      return report(LogDamageKind::Truncated,
                    "the file ends at offset " + std::to_string(file_size_) + ", before offset " +
                        std::to_string(synced_end_) + " up to which its header says it was synced: " +
                        std::to_string(synced_end_ - file_size_) + " bytes of synced records are missing");
    stopped_ = true;
    return std::nullopt;
  }
  const std::size_t header = version_ == 1 ? lf::kHeaderSizeV1 : lf::kHeaderSize;
  if (rest < header)
    return report(LogDamageKind::HeaderCutShort,
                  "a record header cut short (" + std::to_string(rest) + " bytes)");
  load(end_, header);
  std::string_view h = view(end_, header);
  std::uint32_t crc = 0;
  std::size_t len = 0;
  std::uint64_t left = rest - header;
  if (version_ == 1) {
    crc = static_cast<std::uint32_t>(lf::get_fixed(h.data(), 4));
    len = static_cast<std::size_t>(lf::get_fixed(h.data() + 4, 4));
    if (len > lf::kMaxPayload || len > left)
      return report(LogDamageKind::BadLength, "a record of " + std::to_string(len) + " bytes with only " +
                                                  std::to_string(left) + " left in the file");
    load(end_, header + len);
    std::string_view r = view(end_, header + len);
    if (crc != lf::crc32c(r.data() + 4, 4 + len))
      return report(LogDamageKind::BadChecksum,
                    "a checksum mismatch in a record of " + std::to_string(len) + " bytes");
  } else {
    if (static_cast<std::uint32_t>(lf::get_fixed(h.data(), 4)) != lf::crc32c(h.data() + 4, 8))
      return report(LogDamageKind::BadHeader, "a record header whose checksum does not hold");
    len = static_cast<std::size_t>(lf::get_fixed(h.data() + 4, 4));
    crc = static_cast<std::uint32_t>(lf::get_fixed(h.data() + 8, 4));
    std::uint64_t record_end = end_ + header + len;
    if (len > lf::kMaxPayload)
      return report(LogDamageKind::BadLength, "a checked record header with a length of " +
                                                  std::to_string(len) +
                                                  " bytes, above the most a record holds");
    if (len > left)
      return report(LogDamageKind::PayloadCutShort,
                    "a record of " + std::to_string(len) + " bytes with only " + std::to_string(left) +
                        " left in the file",
                    record_end);
    load(end_, header + len);
    if (crc != lf::crc32c(view(end_ + header, len).data(), len))
      return report(LogDamageKind::BadChecksum,
                    "a checksum mismatch in the payload of a record of " + std::to_string(len) + " bytes",
                    record_end);
  }
  record_offset_ = end_;
  end_ += header + len;
  return view(record_offset_ + header, len);
}

std::uint64_t LogReader::zeros_from(std::uint64_t offset) {
  // Backwards from the end of the file, a chunk at a time, to the first non-zero byte.
  std::uint64_t at = file_size_;
  std::string chunk;
  while (at > offset) {
    std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(at - offset, 64u << 10));
    chunk.resize(n);
    std::size_t got = log_file::read_at(fd_, chunk.data(), n, at - n, path_);
    if (got < n) return at;  // the file shrank: nothing more to judge
    auto last = chunk.find_last_not_of('\0');
    if (last != std::string::npos) return at - n + last + 1;
    at -= n;
  }
  return offset;
}

std::nullopt_t LogReader::report(LogDamageKind kind, std::string reason, std::uint64_t record_end) {
  stopped_ = true;
  LogDamage d;
  d.kind = kind;
  d.version = version_;
  d.offset = kind == LogDamageKind::BadMagic || kind == LogDamageKind::BadFileHeader ? 0 : end_;
  d.bytes = file_size_ - d.offset;
  d.file_size = file_size_;
  d.synced_end = synced_end_;
  d.record_end = record_end;
  d.zeros_from = zeros_from(d.offset);
  d.reason = std::move(reason);
  reporter_.damage(d);
  return std::nullopt;
}

}  // namespace piranha::ts
