// The constants of DIR/tuples.log, the durable server's log. docs/durability.md
// is the prose description of this format; keep the two in step.
#pragma once

#include <cstddef>
#include <cstdint>
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

}  // namespace piranha::ts::log_format
