// A format-1 record, as servers before format 2 wrote them (log_format.h):
// for the tests that read and migrate such logs. The server never writes one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "log_format.h"

namespace piranha::ts::log_format {

// crc: u32 (of the length and the payload) | length: u32 | payload.
inline std::string v1_record(std::string_view payload) {
  std::string length;
  put_fixed32(length, static_cast<std::uint32_t>(payload.size()));
  std::string out;
  put_fixed32(out, crc32c(payload.data(), payload.size(), crc32c(length.data(), 4)));
  return out + length + std::string(payload);
}

}  // namespace piranha::ts::log_format
