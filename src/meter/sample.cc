#include "meter/sample.h"

#include <cmath>

namespace gpuplan {

UtcMillis TimeFromSeconds(double seconds) {
  return FromUnixMillis(static_cast<int64_t>(std::llround(seconds * static_cast<double>(kMillisecondsPerSecond))));
}

std::vector<GpuSample> GpuSamplesFromSnapshot(const SystemSnapshot& snapshot, double time_seconds) {
  const UtcMillis time = TimeFromSeconds(time_seconds);
  std::vector<GpuSample> samples;
  samples.reserve(snapshot.gpus.size());
  for (const GpuSnapshot& g : snapshot.gpus) {
    GpuSample s;
    s.time = time;
    s.gpu = g.index;
    s.uuid = g.uuid;
    s.utilization_gpu = g.utilization_gpu;
    s.utilization_memory = g.utilization_memory;
    s.memory_used = g.memory_used;
    s.memory_total = g.memory_total;
    s.power = g.power_draw;
    s.energy_mj = g.energy_mj;
    s.temperature = g.temperature_c;
    s.sm_clock = g.sm_clock_mhz;
    s.clock_event_reasons = g.clock_event_reasons;
    samples.push_back(std::move(s));
  }
  return samples;
}

}  // namespace gpuplan
