#include "telemetry/pcie.h"

namespace gpuplan {

std::optional<double> PcieTheoryGBs(int gen, int lanes) {
  double gts = 0;
  double code = 0;
  switch (gen) {
    case 1: gts = 2.5; code = 8.0 / 10.0; break;
    case 2: gts = 5; code = 8.0 / 10.0; break;
    case 3: gts = 8; code = 128.0 / 130.0; break;
    case 4: gts = 16; code = 128.0 / 130.0; break;
    case 5: gts = 32; code = 128.0 / 130.0; break;
    case 6: gts = 64; code = 242.0 / 256.0; break;
    default: return std::nullopt;
  }
  if (lanes <= 0) {
    return std::nullopt;
  }
  return gts * code * lanes / 8.0;
}

}  // namespace gpuplan
