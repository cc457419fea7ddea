#include "check/benchmark_formulas.h"

#include <cmath>

#include "telemetry/snapshot.h"

namespace gpuplan {

std::optional<StreamKernel> ParseStreamKernel(const std::string& name) {
  if (name == "copy") return StreamKernel::kCopy;
  if (name == "scale") return StreamKernel::kScale;
  if (name == "add") return StreamKernel::kAdd;
  if (name == "triad") return StreamKernel::kTriad;
  return std::nullopt;
}

double StreamBytes(StreamKernel k, uint64_t elements, uint64_t element_bytes) {
  const double words = (k == StreamKernel::kCopy || k == StreamKernel::kScale) ? 2.0 : 3.0;
  return words * static_cast<double>(elements) * static_cast<double>(element_bytes);
}

std::optional<Collective> ParseCollective(const std::string& name) {
  if (name == "all_reduce") return Collective::kAllReduce;
  if (name == "all_gather") return Collective::kAllGather;
  if (name == "reduce_scatter") return Collective::kReduceScatter;
  return std::nullopt;
}

const char* ToString(Collective c) {
  switch (c) {
    case Collective::kAllReduce: return "all_reduce";
    case Collective::kAllGather: return "all_gather";
    case Collective::kReduceScatter: return "reduce_scatter";
  }
  return "all_reduce";
}

double BusBandwidthFactor(Collective c, int ranks) {
  if (ranks <= 0) {
    return 0;
  }
  const double n = ranks;
  return c == Collective::kAllReduce ? 2.0 * (n - 1) / n : (n - 1) / n;
}

double GBs(double bytes, double seconds) { return seconds > 0 ? bytes / seconds / 1e9 : 0; }

double AlgorithmBandwidthGBs(double bytes, double seconds) { return GBs(bytes, seconds); }

double BusBandwidthGBs(Collective c, int ranks, double bytes, double seconds) {
  return AlgorithmBandwidthGBs(bytes, seconds) * BusBandwidthFactor(c, ranks);
}

double GemmTflops(uint64_t m, uint64_t n, uint64_t k, double seconds) {
  if (!(seconds > 0)) {
    return 0;
  }
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) / seconds / 1e12;
}


std::map<std::string, double> ClockEventSeconds(const std::vector<double>& t,
                                                const std::vector<std::optional<uint64_t>>& masks, double interval_s,
                                                double from_s) {
  std::map<std::string, double> out;
  const std::size_t n = std::min(t.size(), masks.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (t[i] < from_s || !masks[i]) {
      continue;
    }
    const double dt = i + 1 < n ? t[i + 1] - t[i] : interval_s;
    for (const std::string& name : ClockEventNames(*masks[i])) {
      out[name] += dt;
    }
  }
  return out;
}

}  // namespace gpuplan
