#include "read/file_text.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace gpuplan {

std::optional<std::string> TryReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::nullopt;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ReadFileText(const std::string& path) {
  std::optional<std::string> text = TryReadFileText(path);
  if (!text) {
    throw InputError("cannot open file", path);
  }
  return std::move(*text);
}

std::optional<std::size_t> FirstNonUtf8(std::string_view text) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  std::size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    // The length of the sequence and the range of its second byte (RFC 3629 section 4).
    std::size_t n = 1;
    unsigned char lo = 0x80;
    unsigned char hi = 0xBF;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 3;
      lo = c == 0xE0 ? 0xA0 : 0x80;  // 0xE0 0x80-0x9F: overlong
      hi = c == 0xED ? 0x9F : 0xBF;  // 0xED 0xA0-0xBF: surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 4;
      lo = c == 0xF0 ? 0x90 : 0x80;  // 0xF0 0x80-0x8F: overlong
      hi = c == 0xF4 ? 0x8F : 0xBF;  // 0xF4 0x90-: past U+10FFFF
    } else {
      return i;  // a continuation byte first, 0xC0, 0xC1 or 0xF5-0xFF
    }
    if (i + n > text.size() || byte(i + 1) < lo || byte(i + 1) > hi) {
      return i;
    }
    for (std::size_t k = 2; k < n; ++k) {
      if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) {
        return i;
      }
    }
    i += n;
  }
  return std::nullopt;
}

}  // namespace gpuplan
