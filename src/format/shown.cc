#include "format/shown.h"

#include <fmt/format.h>

namespace gpuplan {

std::string Shown(std::string_view s, std::size_t max_bytes) {
  std::size_t keep = s.size();
  if (keep > max_bytes) {
    keep = max_bytes;
    while (keep > 0 && (static_cast<unsigned char>(s[keep]) & 0xC0) == 0x80) {
      --keep;
    }
  }
  std::string out;
  out.reserve(keep + 16);
  for (std::size_t i = 0; i < keep; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xC2 && i + 1 < keep && static_cast<unsigned char>(s[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(s[i + 1]));
      ++i;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (keep < s.size()) {
    out += fmt::format("... ({} bytes in all)", s.size());
  }
  return out;
}

}  // namespace gpuplan
