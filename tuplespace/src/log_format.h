// The constants and the record framing of DIR/tuples.log, the durable server's
// log. docs/durability.md is the prose description of this format; keep the
// two in step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace piranha::ts::log_format {

// The file starts with these 8 bytes: a name and a format version (1).
inline constexpr std::string_view kMagic{"PIRTSLG\x01", 8};

// A record: checksum (4 bytes) | length (4 bytes) | payload (length bytes).
// Integers are little-endian. The checksum is the CRC-32C of the length field
// and the payload.
inline constexpr std::size_t kHeaderSize = 8;
// A length above this is taken as damage, not as a record.
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

// Appends one record, header and payload, to `out`. The payload must not be
// longer than kMaxPayload.
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
