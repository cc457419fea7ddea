// `gpuplan meter run` as a service (docs/meter.md §8, docs/meter-metrics.md,
// docs/meter-alerts.md): the agent (meter/agent.h) with the alerts and Prometheus state of
// meter/monitor.h on every tick, and, with --listen, /metrics served by the HttpServer of this
// layer (its safety rules: a bearer token off loopback, a loopback Host otherwise).
#pragma once

#include <functional>
#include <string>

#include "catalog/gpu_catalog.h"
#include "meter/agent.h"

namespace gpuplan {

struct MeterServiceHooks {
  std::function<void(const std::string&)> log;   // alert and webhook lines
  std::function<void(int port)> on_listen;       // /metrics is up on this port
};

// Throws as RunMeter does, and InputError naming --listen, --token-file or --alerts.
MeterRunSummary RunMeterService(const MeterAgentRequest& request, MeterClock& clock, MeterObserver* front,
                                const GpuCatalog* catalog, const MeterServiceHooks& hooks);

}  // namespace gpuplan
