#include "log_format.h"

#include <array>

namespace piranha::ts::log_format {

namespace {

// Slicing-by-8 tables: recovery checks every byte of the log, and one table
// lookup per byte made the checksum a large part of its time.
using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

Tables make_tables() {
  Tables t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (std::size_t s = 1; s < 8; ++s)
    for (std::uint32_t i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  return t;
}

}  // namespace

std::uint32_t crc32c(const char* data, std::size_t n, std::uint32_t crc) {
  static const Tables t = make_tables();
  const auto* p = reinterpret_cast<const std::uint8_t*>(data);
  crc = ~crc;
  while (n >= 8) {
    std::uint32_t lo = crc ^ (std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
                              std::uint32_t{p[3]} << 24);
    crc = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^ t[3][p[4]] ^
          t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
    p += 8;
    n -= 8;
  }
  while (n-- > 0) crc = t[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

std::string file_header(std::uint64_t synced_end) {
  std::string h(kMagic);
  put_fixed64(h, synced_end);
  put_fixed32(h, crc32c(h.data(), h.size()));
  put_fixed32(h, 0);
  return h;
}

std::optional<std::uint64_t> parse_file_header(std::string_view header) {
  if (header.size() < kFileHeaderSize) return std::nullopt;
  auto crc = static_cast<std::uint32_t>(get_fixed(header.data() + 16, 4));
  if (crc != crc32c(header.data(), 16) || get_fixed(header.data() + 20, 4) != 0) return std::nullopt;
  return get_fixed(header.data() + 8, 8);
}

void append_record(std::string& out, std::string_view payload) {
  std::string fields;
  put_fixed32(fields, static_cast<std::uint32_t>(payload.size()));
  put_fixed32(fields, crc32c(payload.data(), payload.size()));
  put_fixed32(out, crc32c(fields.data(), fields.size()));
  out += fields;
  out.append(payload);
}

}  // namespace piranha::ts::log_format
