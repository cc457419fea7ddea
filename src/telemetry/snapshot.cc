#include "telemetry/snapshot.h"

#include <utility>

namespace gpuplan {

std::vector<std::string> ClockEventNames(uint64_t mask) {
  static const std::pair<uint64_t, const char*> kNames[] = {
      {kClockEventGpuIdle, "gpu_idle"},         {kClockEventApplicationsClocks, "applications_clocks_setting"},
      {kClockEventSwPowerCap, "sw_power_cap"},  {kClockEventHwSlowdown, "hw_slowdown"},
      {kClockEventSyncBoost, "sync_boost"},     {kClockEventSwThermal, "sw_thermal_slowdown"},
      {kClockEventHwThermal, "hw_thermal_slowdown"}, {kClockEventHwPowerBrake, "hw_power_brake_slowdown"},
      {kClockEventDisplayClock, "display_clock_setting"}};
  std::vector<std::string> out;
  uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if ((mask & bit) != 0) {
      out.emplace_back(name);
    }
  }
  if ((mask & ~known) != 0) {
    out.emplace_back("other");
  }
  return out;
}

}  // namespace gpuplan
