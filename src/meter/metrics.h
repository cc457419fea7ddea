// What the meter agent exposes to Prometheus (docs/meter-metrics.md): the latest sample of each
// GPU and counters derived from the samples the agent has seen since it started (billed, idle
// and busy seconds, idle money), the month's cost and projection, and the agent's own health.
// MeterMetrics accumulates them tick by tick (the agent calls Observe); the /metrics handler
// takes a copy (Snapshot) under the lock and renders it (src/meter/render/meter_prometheus.h). Prometheus
// scrapes the latest state; the agent never replays samples with timestamps (the exporter
// guidelines: a daemon with its own timer exposes state and counters).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/money.h"
#include "meter/alerts.h"
#include "meter/sample.h"

namespace gpuplan {

struct GpuMetrics {
  int gpu = 0;
  std::string uuid;
  std::string model;        // "NVIDIA H100 80GB HBM3"
  std::string pci_bus_id;   // "00000000:18:00.0"
  GpuSample latest;         // the last sample (fields absent when not measured)
  int processes = 0;        // processes on the GPU at the last sample
  double billed_seconds = 0;       // since the agent started, while the instance was billed
  double idle_billed_seconds = 0;  // of those, with no process on the GPU
  double busy_seconds = 0;         // utilisation-weighted: sum of utilisation x interval
  std::optional<UtcMillis> last_active;  // last sample with a process and utilisation > 0
  std::optional<Money> hourly_price;      // one billed GPU-hour, at the last sample's time
  double idle_cost = 0;                   // idle_billed_seconds x hourly price / 3600
  int last_xid = 0;                       // the last XID the driver reported (0: none since the start)
  std::optional<uint64_t> ecc_uncorrected;  // the last uncorrected ECC count read (volatile, else aggregate)
};

struct MeterMetricsSnapshot {
  std::string hostname;
  std::vector<GpuMetrics> gpus;
  std::optional<Money> month_spent;
  std::optional<Money> month_projected;
  std::optional<Money> monthly_budget;
  std::map<std::string, uint64_t> alerts_total;  // by AlertKind name
  uint64_t samples_total = 0;                    // GPU samples taken by the agent
  uint64_t store_pending = 0;                    // samples waiting for the store
  bool store_ok = true;                          // the last flush succeeded
  std::optional<UtcMillis> last_sample;
};

// Thread-safe accumulator: the agent's thread calls the Observe* functions, the HTTP thread
// calls Snapshot.
class MeterMetrics {
 public:
  void SetHost(const std::string& hostname);
  void SetGpuIdentity(int gpu, const std::string& uuid, const std::string& model, const std::string& pci_bus_id);
  // The GPU-hour price of the alert rules (AlertRules::GpuHourPriceAt: the night window applied
  // at each sample's time); no price: no money families.
  void SetPricing(const AlertRules& rules);
  void SetBudget(const std::optional<Money>& monthly_budget);

  // One tick of one GPU, covering `interval_seconds` (the sampling interval) before the sample.
  void ObserveGpu(const GpuSample& s, int processes, bool billed, double interval_seconds);
  // The GPU's ECC count and XID events at a tick (meter/sample.h).
  void ObserveHealth(const GpuHealthSample& h);
  void ObserveMonth(const Money& spent, const Money& projected);
  void ObserveAlert(const Alert& a);
  void ObserveStore(uint64_t pending, bool ok);

  MeterMetricsSnapshot Snapshot() const;

 private:
  GpuMetrics& Gpu(int gpu);
  mutable std::mutex mu_;
  MeterMetricsSnapshot s_;
  AlertRules pricing_;
};

}  // namespace gpuplan
