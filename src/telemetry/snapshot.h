// What one look at the GPUs of a machine sees: the inventory and health of each GPU, as read
// from NVML (nvml_source.h), from a recording of such reads (recorded_source.h), or from an
// `nvidia-smi -q -x` capture (nvidia_smi_xml.h). One model for all three, so the verdicts of
// `gpuplan check` (src/check) and the samples of `gpuplan meter` do not care where it came from.
//
// Every field is optional: absent means "not measured", and `not_measured[field]` says why
// (NVML_ERROR_NOT_SUPPORTED, no permission, not in the capture, ...). A check on an absent
// field is SKIP with that reason, never PASS. Field names below are the keys used in the
// recording format and the check report (docs/check.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

// NVML clock-event (throttle) reason bits (nvml.h nvmlClocksEventReason*; several may be set).
inline constexpr uint64_t kClockEventGpuIdle = 0x1;
inline constexpr uint64_t kClockEventApplicationsClocks = 0x2;
inline constexpr uint64_t kClockEventSwPowerCap = 0x4;
inline constexpr uint64_t kClockEventHwSlowdown = 0x8;
inline constexpr uint64_t kClockEventSyncBoost = 0x10;
inline constexpr uint64_t kClockEventSwThermal = 0x20;
inline constexpr uint64_t kClockEventHwThermal = 0x40;
inline constexpr uint64_t kClockEventHwPowerBrake = 0x80;
inline constexpr uint64_t kClockEventDisplayClock = 0x100;

// The reason bits set in `mask`, by name ("sw_power_cap", "hw_slowdown", ...), lowest bit first.
std::vector<std::string> ClockEventNames(uint64_t mask);

// A compute process on a GPU (nvmlDeviceGetComputeRunningProcesses_v3): its pid in the host's
// PID namespace and the GPU memory it holds (absent when NVML cannot tell: under MIG without
// permission, or on Windows WDDM).
struct GpuProcess {
  int pid = 0;
  std::optional<uint64_t> used_memory_bytes;
  bool operator==(const GpuProcess&) const = default;
};

struct GpuSnapshot {
  int index = 0;  // NVML / nvidia-smi order
  // Identity
  std::optional<std::string> name;               // "NVIDIA H100 80GB HBM3"
  std::optional<std::string> uuid;
  std::optional<std::string> serial;
  std::optional<std::string> board_part_number;
  std::optional<std::string> vbios;
  std::optional<std::string> pci_bus_id;         // "00000000:18:00.0"
  std::optional<uint32_t> pci_device_id;         // (device << 16) | vendor, e.g. 0x233010DE
  std::optional<uint32_t> pci_subsystem_id;
  std::optional<std::string> compute_capability;  // "9.0"
  // Memory (bytes)
  std::optional<uint64_t> memory_total;
  std::optional<uint64_t> memory_reserved;  // nvmlMemory_v2 reserved (driver/firmware)
  std::optional<uint64_t> memory_used;
  // PCIe
  std::optional<int> pcie_gen_current;
  std::optional<int> pcie_gen_max;      // max possible with this device and system (slot-limited)
  std::optional<int> pcie_gen_gpu_max;  // the GPU's own maximum
  std::optional<int> pcie_gen_host_max;  // the host slot's maximum (nvidia-smi -q -x: host_max_link_gen)
  std::optional<int> pcie_width_current;
  std::optional<int> pcie_width_max;
  std::optional<uint64_t> pcie_replays;
  // NVLink
  std::optional<int> nvlink_links;  // links the GPU reports (state readable)
  std::optional<int> nvlink_up;     // of those, active
  // Modes
  std::optional<bool> mig_enabled;
  std::optional<bool> mig_pending;
  std::optional<bool> persistence_mode;
  // Power (W)
  std::optional<double> power_draw;
  std::optional<double> power_limit;          // enforced
  std::optional<double> power_default_limit;
  std::optional<double> power_max_limit;
  std::optional<uint64_t> energy_mj;          // since driver load
  // ECC
  std::optional<bool> ecc_enabled;
  std::optional<bool> ecc_pending;
  std::optional<uint64_t> ecc_volatile_corrected;
  std::optional<uint64_t> ecc_volatile_uncorrected;
  std::optional<uint64_t> ecc_aggregate_corrected;
  std::optional<uint64_t> ecc_aggregate_uncorrected;
  // Retired pages (before Ampere) / remapped rows (Ampere and later)
  std::optional<uint64_t> retired_pages_sbe;
  std::optional<uint64_t> retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<uint64_t> remapped_rows_correctable;
  std::optional<uint64_t> remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending;
  std::optional<bool> remapped_rows_failure;
  // Thermal, clocks, utilisation
  std::optional<int> temperature_c;
  std::optional<int> temperature_slowdown_c;
  std::optional<int> sm_clock_mhz;
  std::optional<int> sm_clock_max_mhz;
  std::optional<int> mem_clock_mhz;
  std::optional<uint64_t> clock_event_reasons;  // bit mask, kClockEvent*
  std::optional<int> utilization_gpu;           // %
  std::optional<int> utilization_memory;        // %
  // Affinity
  std::optional<int> numa_node;
  std::optional<std::string> cpu_affinity;  // CPU list as in /sys, "0-27,56-83"
  // Compute processes on the GPU; absent when not measured (not_measured["processes"]), empty
  // when none runs.
  std::optional<std::vector<GpuProcess>> processes;

  std::map<std::string, std::string> not_measured;  // field -> why it is absent
};

// nvmlEventType bits of GpuEvent::type (nvml.h): an XID critical error carries the XID number.
inline constexpr uint64_t kGpuEventXid = 0x8;

// An XID (or other critical) event NVML delivered during a run.
struct GpuEvent {
  int gpu = -1;          // index; -1 when the device could not be matched
  uint64_t type = 0;     // nvmlEventType bits (0x8 = XID critical error)
  uint64_t data = 0;     // XID number for XID events
  double at_seconds = 0;  // since the source was opened
};

struct SystemSnapshot {
  double at_seconds = 0;  // since the source was opened (recordings keep their own times)
  std::optional<std::string> driver_version;      // "550.54.15"
  std::optional<std::string> cuda_driver_version;  // the CUDA version the driver supports, "12.4"
  std::optional<std::string> nvml_version;
  std::optional<std::string> hostname;  // from a capture or the machine
  std::vector<GpuSnapshot> gpus;
  std::map<std::string, std::string> not_measured;  // system fields
};

// Where snapshots come from. Open() failing with "no driver" is an EnvironmentError (exit 3);
// a source may also report zero GPUs.
class GpuSource {
 public:
  virtual ~GpuSource() = default;
  virtual std::string Describe() const = 0;  // "NVML 12.550.54.15", "recording r.json", ...
  virtual SystemSnapshot Snapshot() = 0;
  // Events since the last call, waiting at most `timeout_ms` for the first (0: do not wait).
  virtual std::vector<GpuEvent> Events(unsigned timeout_ms) = 0;
};

}  // namespace gpuplan
