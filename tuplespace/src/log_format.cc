#include "log_format.h"

#include <array>

namespace piranha::ts::log_format {

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

void append_record(std::string& out, std::string_view payload) {
  std::string length;
  put_fixed32(length, static_cast<std::uint32_t>(payload.size()));
  std::uint32_t crc = crc32c(length.data(), length.size());
  crc = crc32c(payload.data(), payload.size(), crc);
  put_fixed32(out, crc);
  out += length;
  out.append(payload);
}

}  // namespace piranha::ts::log_format
