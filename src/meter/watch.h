// `gpuplan meter watch -- CMD ARGS...` (docs/meter-watch.md): run the user's own training or
// inference command, sample the GPUs (NVML), the command's process tree (CPU, bytes read and
// written, processes waiting in uninterruptible I/O) and the machine (CPU busy, iowait, steal,
// disk and network bytes) every interval while it runs, and say what held it back: the GPU's
// arithmetic (compute-bound), its memory (memory-bound), the data (data-loading-bound), the other
// GPUs (communication-bound), or on a machine without a GPU the host side alone (CPU-bound,
// I/O-bound, waiting), with the evidence.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

struct WatchRequest {
  std::vector<std::string> command;  // argv; the first is looked up in PATH
  double interval_seconds = 1;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string proc_root = "/proc";
  std::string json_file;  // the front end writes the result there as JSON (empty: no file)
};

// One interval, ending `t` seconds after the command started. Rates are over the interval.
struct WatchSample {
  double t = 0;
  std::optional<double> gpu_util;         // %: mean over the GPUs the command used (all GPUs)
  std::optional<double> gpu_memory_util;  // %: NVML utilization.memory, same mean
  std::optional<double> gpu_memory_used;  // bytes, summed over the GPUs
  std::optional<double> pcie_bytes_per_s;  // PCIe traffic per GPU, both directions (NVML), mean over the GPUs
  std::optional<double> nvlink_bytes_per_s;  // NVLink data per GPU, both directions, all links (NVML counters)
  double cpu_cores = 0;           // CPU seconds of the command's process tree per second
  double read_bytes_per_s = 0;    // bytes the tree read with read() and friends (rchar)
  double write_bytes_per_s = 0;   // wchar
  int processes = 0;              // in the tree at the sample
  int waiting_io = 0;             // of those, in uninterruptible sleep (state D)
  int running = 0;                // of those, running or ready to run (state R)
  std::optional<double> system_busy;    // share of all CPUs' time not idle or iowait
  std::optional<double> system_iowait;  // share in iowait
  std::optional<double> system_steal;   // share stolen by the hypervisor
  double disk_read_bytes_per_s = 0;     // /proc/diskstats, whole disks
  double disk_write_bytes_per_s = 0;
  double net_rx_bytes_per_s = 0;        // /proc/net/dev, all interfaces but lo
  double net_tx_bytes_per_s = 0;
};

enum class WatchBound {
  kCompute,        // the GPU's arithmetic
  kMemory,         // the GPU's memory bandwidth
  kDataLoading,    // GPU idle while the command waits on I/O or a saturated CPU
  kCommunication,  // several GPUs, low utilisation, links busy
  kCpu,            // no GPU measured: the command kept its CPUs busy
  kIo,             // no GPU measured: the command waited on data
  kWaiting,        // neither CPU nor I/O nor GPU: sleeping, locks, the network, a remote peer
  kTooShort,       // fewer than 2 samples
};
const char* ToString(WatchBound b);  // "compute-bound", "memory-bound", "data-loading-bound", ...

struct WatchDiagnosis {
  WatchBound bound = WatchBound::kTooShort;
  std::string gpu_part;               // "measured on N GPUs" or "SKIP: not measured: <reason>"
  std::vector<std::string> evidence;  // the figures that decided, one per line
};

struct WatchSummary {
  std::optional<double> gpu_util_mean;
  std::optional<double> gpu_memory_util_mean;
  std::optional<double> gpu_memory_used_peak;
  double cpu_cores_mean = 0;
  double cpu_cores_peak = 0;
  double read_bytes_per_s_mean = 0;
  double waiting_io_share = 0;  // share of samples with a process of the tree in state D
  double running_share = 0;     // share of samples with a process of the tree in state R
  std::optional<double> system_iowait_mean;
  std::optional<double> system_steal_mean;
  int cpus = 0;  // logical CPUs of the machine
  std::optional<double> pcie_bytes_per_s_mean;  // per GPU, both directions
  // One direction of the slowest GPU's PCIe link at its maximum generation and width (set from the
  // NVML inventory, not from the series); absent when NVML does not say.
  std::optional<double> pcie_link_bytes_per_s;
  std::optional<double> nvlink_bytes_per_s_mean;  // per GPU, both directions; absent: not measured
  int nvlinks_up = 0;  // NVLinks up over all GPUs
};

struct WatchResult {
  std::vector<std::string> command;
  std::string hostname;
  std::string started;  // ISO 8601 UTC
  double duration_seconds = 0;
  int exit_code = 0;  // the command's; 128 + signal when killed; 127 when it could not start
  double interval_seconds = 1;
  int gpus = 0;  // GPUs sampled
  std::vector<WatchSample> series;
  WatchSummary summary;
  WatchDiagnosis diagnosis;
};

// Runs and samples the command; never throws for the command's own failure (its exit code is in
// the result). InputError for an empty command or a bad interval.
WatchResult RunWatch(const WatchRequest& request);

// The diagnosis from a series (thresholds and their reasons: docs/meter-watch.md). `gpu_skip`
// is the reason the GPU part was not measured (empty when it was).
WatchSummary SummarizeWatch(const std::vector<WatchSample>& series, int cpus);
WatchDiagnosis DiagnoseWatch(const WatchSummary& summary, int gpus, std::size_t samples, const std::string& gpu_skip);

// One direction of a PCIe link in bytes per second: telemetry's PcieTheoryGBs (the PCI-SIG lane rates
// after line coding, times the lanes) in bytes; nullopt for a generation it does not know.
std::optional<double> PcieLinkBytesPerSecond(int generation, int lanes);
// One direction of one NVLink, bytes per second: 25 GB/s for NVLink 2, 3 and 4 (V100, A100, H100/H200:
// 150, 300 and 450 GB/s a direction over 6, 12 and 18 links). NVLink 5 (B200) links carry 50; counted
// at 25, a busy Blackwell link is judged busy early rather than late.
inline constexpr double kNvLinkBytesPerSecond = 25e9;

// Readers of /proc, exposed for tests with fixture trees.
struct ProcCounters {
  uint64_t cpu_ticks = 0;  // utime + stime + cutime + cstime
  uint64_t rchar = 0, wchar = 0;
  char state = '?';
  int ppid = 0;
  bool io_readable = false;  // /proc/PID/io needs the same user or root
};
std::optional<ProcCounters> ReadProcCounters(const std::string& proc_root, int pid);
// The pid and its descendants alive now (from every /proc/PID/stat's ppid).
std::vector<int> ProcessTree(const std::string& proc_root, int pid);

}  // namespace gpuplan
