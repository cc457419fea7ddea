// The CPU counters of /proc/stat, read by check (CPU steal over a run) and by meter watch
// (the job's CPU share beside the GPU's): proc(5). The parser takes the file's text so that
// tests feed recorded copies.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuplan {

// The aggregate `cpu` line of /proc/stat, in USER_HZ ticks (proc(5)).
struct CpuTimes {
  bool valid = false;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  uint64_t Total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
};
CpuTimes ParseCpuTimes(const std::string& proc_stat);
CpuTimes ReadCpuTimes(const std::string& proc_root = "/proc");
// Steal ticks over all ticks between two readings; nullopt when either reading is invalid or
// no time passed.
std::optional<double> StealFraction(const CpuTimes& before, const CpuTimes& after);

}  // namespace gpuplan
