// The PCIe link's theoretical bandwidth per direction, from the generation and width a GPU
// reports (NVML, nvidia-smi) or the GPU catalog lists: used by check (host-device copy
// verdicts), meter watch and fit (the asynchronous checkpoint copy to host memory,
// fit/data_movement.h).
#pragma once

#include <optional>

namespace gpuplan {

// PCI Express payload rate per direction, GB/s, of a link of `gen` and `lanes`: transfer rate per
// lane (2.5, 5, 8, 16, 32, 64 GT/s for gen 1..6) x line-code efficiency (8b/10b for gen 1-2,
// 128b/130b for gen 3-5, 242/256 FLIT for gen 6) x lanes / 8 bits. Gen 5 x16: 63.0 GB/s.
// nullopt for an unknown generation.
std::optional<double> PcieTheoryGBs(int gen, int lanes);

}  // namespace gpuplan
