// GpuSource over NVML, loaded at run time with dlopen (no link-time dependency on the driver).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/snapshot.h"

namespace gpuplan {

struct PcieThroughput {
  double tx_bytes_per_s = 0;  // from the GPU to the host
  double rx_bytes_per_s = 0;  // from the host to the GPU
};
struct NvLinkCounters {
  uint64_t tx_bytes = 0;
  uint64_t rx_bytes = 0;
};
// NVML documents the throughput in "KB/s"; NVIDIA's own samples divide it by 1024 x 1024 for GB/s,
// so a KB is taken as 1,024 bytes (docs/meter-watch.md).
inline constexpr double kNvmlPcieKilobyte = 1024;

class NvmlSource : public GpuSource {
 public:
  // dlopen failure or nvmlInit_v2 failure -> EnvironmentError (one line).
  static std::unique_ptr<NvmlSource> Open(const std::string& library = "libnvidia-ml.so.1");
  ~NvmlSource() override;
  NvmlSource(const NvmlSource&) = delete;
  NvmlSource& operator=(const NvmlSource&) = delete;

  std::string Describe() const override;  // "NVML <nvml version>, driver <driver version>"
  SystemSnapshot Snapshot() override;
  std::vector<GpuEvent> Events(unsigned timeout_ms) override;
  // PCIe traffic of GPU `index` (NVML index) in bytes per second, each direction, as
  // nvmlDeviceGetPcieThroughput counts it over a 20 ms window; nullopt when the driver does not give
  // it (vGPU guests, old cards). Two calls of about 20 ms each: not part of Snapshot().
  std::optional<PcieThroughput> ReadPcieThroughput(int index);
  // NVLink data payload GPU `index` has sent and received over all its links since the driver
  // loaded, in bytes (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX, KiB, scope all links); the rate is
  // the difference of two readings. nullopt when the driver does not give them (no NVLink).
  std::optional<NvLinkCounters> ReadNvLinkCounters(int index);

  struct Api;  // the loaded symbols (nvml_source.cc)

 private:
  NvmlSource();
  std::unique_ptr<Api> api_;
  std::chrono::steady_clock::time_point opened_;
};

// nvmlProcessInfo_t entry sizes: 24 bytes (nvml.h of NVML 11.x and 12.4+), 32 bytes (R535-R545
// headers, with usedGpuCcProtectedMemory).
inline constexpr std::size_t kNvmlProcessInfoBytes = 24;
inline constexpr std::size_t kNvmlProcessInfoCcBytes = 32;

// The `count` entries nvmlDeviceGetComputeRunningProcesses_v3 wrote into `data` (`bytes` long),
// read with the entry size the driver used (see nvml_source.cc); empty when neither size gives
// plausible entries.
std::vector<GpuProcess> ProcessesFromNvmlBuffer(const unsigned char* data, std::size_t bytes, unsigned count);

// "0-27,56-83" from a CPU bit mask given as 64-bit words (bit i of word w = CPU 64*w+i).
std::string CpuListFromMask(const std::vector<unsigned long>& words);

}  // namespace gpuplan
