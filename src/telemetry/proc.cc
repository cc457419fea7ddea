#include "telemetry/proc.h"

#include <sstream>

#include "read/file_text.h"

namespace gpuplan {

CpuTimes ParseCpuTimes(const std::string& proc_stat) {
  CpuTimes c;
  std::istringstream in(proc_stat);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag != "cpu") {
      continue;
    }
    uint64_t v[8] = {};
    int n = 0;
    while (n < 8 && ls >> v[n]) {
      ++n;
    }
    if (n >= 4) {  // steal appeared in Linux 2.6.11; older kernels give fewer fields
      c = {true, v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]};
    }
    break;
  }
  return c;
}

CpuTimes ReadCpuTimes(const std::string& proc_root) { return ParseCpuTimes(TryReadFileText(proc_root + "/stat").value_or("")); }

std::optional<double> StealFraction(const CpuTimes& a, const CpuTimes& b) {
  if (!a.valid || !b.valid || b.Total() <= a.Total() || b.steal < a.steal) {
    return std::nullopt;
  }
  return static_cast<double>(b.steal - a.steal) / static_cast<double>(b.Total() - a.Total());
}

}  // namespace gpuplan
