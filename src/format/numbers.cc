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

}  // namespace gpuplan
