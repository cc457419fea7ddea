// Host tests of `gpuplan check` (docs/check.md §4): what the machine is (CPU, cores, RAM, OS,
// virtual or not), CPU steal over the run, and a short CPU throughput test. The readers take
// the text of /proc files so that tests feed recorded copies (tests/fixtures/host).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/expect.h"
#include "check/report.h"
#include "check/thresholds.h"
#include "telemetry/proc.h"  // CpuTimes, ReadCpuTimes, StealFraction

namespace gpuplan {

// The text of the files ReadHostInfo reads; empty when a file could not be read.
struct HostTexts {
  std::string cpuinfo;     // /proc/cpuinfo
  std::string meminfo;     // /proc/meminfo
  std::string os_release;  // /etc/os-release
  std::string hostname;    // /proc/sys/kernel/hostname
  std::string kernel;      // /proc/sys/kernel/osrelease
};

// Parses the texts: physical cores are distinct (physical id, core id) pairs, logical threads
// the `processor` entries, sockets the distinct physical ids; a virtual machine is the
// `hypervisor` CPU flag. A field that cannot be read lands in not_measured with the reason.
HostInfo ParseHostInfo(const HostTexts& texts);
// Reads this machine's files (proc_root "/proc", os_release "/etc/os-release").
HostInfo ReadHostInfo(const std::string& proc_root = "/proc", const std::string& os_release = "/etc/os-release");

// The CPU throughput test: the same integer work loop on one thread, then on `threads`
// threads at once; the speed-up is the ratio of the total rates.
struct CpuThroughput {
  int threads = 0;
  double single_rate = 0;    // work units per second on one thread
  double parallel_rate = 0;  // all threads together
  double seconds = 0;
  double SpeedUp() const { return single_rate > 0 ? parallel_rate / single_rate : 0; }
};
// `progress` (optional) is called about every 0.1 s with the fraction done.
CpuThroughput MeasureCpuThroughput(int threads, double seconds, const std::function<void(double)>& progress = {});

// Judges the host: cpu_cores_per_gpu, ram_per_gpu, cpu_steal, cpu_throughput (plus cpu_model
// as an informational PASS). `gpu_count` 0 skips the per-GPU ratios with the reason.
// `promised_cores` is the offer's core count (vCPUs); without it the cores present are used.
std::vector<CheckResult> JudgeHost(const HostInfo& info, int gpu_count, uint64_t gpu_memory_total,
                                   std::optional<int> promised_cores, std::optional<double> steal,
                                   const CpuThroughput& throughput, const CheckThresholds& th);

}  // namespace gpuplan
