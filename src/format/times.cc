#include "format/times.h"

#include <fmt/format.h>

namespace gpuplan {

std::string FormatMinutes(double minutes) {
  return minutes < 120 ? fmt::format("{:.0f} min", minutes) : fmt::format("{:.1f} h", minutes / 60.0);
}

}  // namespace gpuplan
