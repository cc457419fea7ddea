#include "format/numbers.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuplan {

std::string FormatNumber(double v, int digits) {
  std::string s = fmt::format("{:.{}g}", v, digits);
  if (std::isfinite(v) && std::fabs(v) < 1e15 && s.find("e+") != std::string::npos) {
    s = fmt::format("{:.0f}", v);
  }
  return s;
}

std::string FormatHours(double h) {
  return h >= 9.95 || h == 0 ? fmt::format("{:.0f}", h) : fmt::format("{:.1f}", h);
}

std::string GroupThousands(int64_t n) {
  // The magnitude as unsigned, so that INT64_MIN has one too.
  const uint64_t magnitude = n < 0 ? 0 - static_cast<uint64_t>(n) : static_cast<uint64_t>(n);
  const std::string digits = std::to_string(magnitude);
  std::string out = n < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

std::string OptionalText(const std::optional<std::string>& v) { return v && !v->empty() ? *v : kNoValue; }

}  // namespace gpuplan
