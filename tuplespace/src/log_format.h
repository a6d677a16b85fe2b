// The constants and the framing of DIR/tuples.log, the durable server's log.
// docs/durability.md is the prose description of this format; keep the two
// in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace piranha::ts::log_format {

// Format 2 (written): the file starts with a file header,
//   magic "PIRTSLG\x02" (8) | synced_end: u64 | crc: u32 | zero: u32
// where crc is the CRC-32C of the 16 bytes before it. synced_end is an offset
// below which every byte was already on the device (fdatasync had returned)
// when the header was written: a log shorter than it, or with anything wrong
// below it, lost or damaged data that may have been acknowledged.
inline constexpr std::string_view kMagic{"PIRTSLG\x02", 8};
inline constexpr std::size_t kFileHeaderSize = 24;
// Format 1 (read, to migrate): the bare magic, no synced_end.
inline constexpr std::string_view kMagicV1{"PIRTSLG\x01", 8};

// A format-2 record:
//   header_crc: u32 | length: u32 | payload_crc: u32 | payload: length bytes
// header_crc is the CRC-32C of the length and payload_crc fields, so a header
// is checked on its own before its length is trusted; payload_crc is the
// CRC-32C of the payload. Integers are little-endian.
inline constexpr std::size_t kHeaderSize = 12;
// Format 1's record: crc: u32 (of length and payload) | length: u32 | payload.
inline constexpr std::size_t kHeaderSizeV1 = 8;
// No record is longer; a checked header with a longer length is damage.
inline constexpr std::uint32_t kMaxPayload = 1u << 30;

// A payload is a sequence of operations, each starting with its code.
enum class OpCode : std::uint8_t {
  Boot = 'B',      // u64 boot: a server run started (lease ids of run b are >= b << 32)
  Put = 'P',       // u64 seq, u32 n, space[n], u32 m, tuple[m]: canonical tuple bytes
  Erase = 'E',     // u64 seq: the tuple is gone for good
  Renumber = 'R',  // u64 from, u64 to: a tuple back from a lease, newly numbered
  Drop = 'D',      // u32 n, space[n]: the space and all its tuples were removed
};

// Lease ids of boot b start here, so that every id of an earlier run is lower.
inline constexpr int kLeaseBootShift = 32;

// CRC-32C (Castagnoli), as iSCSI and LevelDB use; `crc` continues a previous value.
std::uint32_t crc32c(const char* data, std::size_t n, std::uint32_t crc = 0);

// The format-2 file header for `synced_end`.
std::string file_header(std::uint64_t synced_end);
// synced_end from a format-2 file header (kFileHeaderSize bytes starting
// with kMagic); nullopt when its checksum does not hold.
std::optional<std::uint64_t> parse_file_header(std::string_view header);

// Appends one format-2 record, header and payload, to `out`. The payload must
// not be longer than kMaxPayload.
void append_record(std::string& out, std::string_view payload);

// Little-endian fixed-width integers, as the header and the operations hold them.
inline void put_fixed32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
inline void put_fixed64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(v >> (8 * i)));
}
// Reads `bytes` (at most 8) bytes at `p`.
inline std::uint64_t get_fixed(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= std::uint64_t{static_cast<std::uint8_t>(p[i])} << (8 * i);
  return v;
}

}  // namespace piranha::ts::log_format
