#include "meter/metrics.h"

#include <algorithm>

namespace gpuplan {

GpuMetrics& MeterMetrics::Gpu(int gpu) {
  auto it = std::find_if(s_.gpus.begin(), s_.gpus.end(), [gpu](const GpuMetrics& g) { return g.gpu == gpu; });
  if (it != s_.gpus.end()) {
    return *it;
  }
  GpuMetrics g;
  g.gpu = gpu;
  g.hourly_price = pricing_.gpu_hour_price;
  s_.gpus.push_back(g);
  std::sort(s_.gpus.begin(), s_.gpus.end(), [](const GpuMetrics& a, const GpuMetrics& b) { return a.gpu < b.gpu; });
  return *std::find_if(s_.gpus.begin(), s_.gpus.end(), [gpu](const GpuMetrics& x) { return x.gpu == gpu; });
}

void MeterMetrics::SetHost(const std::string& hostname) {
  std::lock_guard<std::mutex> lock(mu_);
  s_.hostname = hostname;
}

void MeterMetrics::SetGpuIdentity(int gpu, const std::string& uuid, const std::string& model,
                                  const std::string& pci_bus_id) {
  std::lock_guard<std::mutex> lock(mu_);
  GpuMetrics& g = Gpu(gpu);
  g.uuid = uuid;
  g.model = model;
  g.pci_bus_id = pci_bus_id;
}

void MeterMetrics::SetPricing(const AlertRules& rules) {
  std::lock_guard<std::mutex> lock(mu_);
  pricing_ = rules;
  for (auto& g : s_.gpus) {
    g.hourly_price = pricing_.gpu_hour_price;
  }
}

void MeterMetrics::SetBudget(const std::optional<Money>& monthly_budget) {
  std::lock_guard<std::mutex> lock(mu_);
  s_.monthly_budget = monthly_budget;
}

void MeterMetrics::ObserveGpu(const GpuSample& s, int processes, bool billed, double interval_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  GpuMetrics& g = Gpu(s.gpu);
  if (g.uuid.empty() && s.uuid) {
    g.uuid = *s.uuid;
  }
  g.latest = s;
  g.processes = processes;
  g.hourly_price = pricing_.GpuHourPriceAt(s.time);
  ++s_.samples_total;
  s_.last_sample = s.time;
  if (billed) {
    g.billed_seconds += interval_seconds;
    if (processes == 0) {
      g.idle_billed_seconds += interval_seconds;
      if (g.hourly_price) {
        g.idle_cost += g.hourly_price->amount * interval_seconds / 3600;
      }
    }
  }
  if (s.utilization_gpu) {
    g.busy_seconds += interval_seconds * *s.utilization_gpu / 100.0;
    if (*s.utilization_gpu > 0 && processes > 0) {
      g.last_active = s.time;
    }
  }
}

void MeterMetrics::ObserveHealth(const GpuHealthSample& h) {
  std::lock_guard<std::mutex> lock(mu_);
  GpuMetrics& g = Gpu(h.gpu);
  if (h.ecc_uncorrected) {
    g.ecc_uncorrected = h.ecc_uncorrected;
  }
  if (!h.xids.empty()) {
    g.last_xid = h.xids.back();
  }
}

void MeterMetrics::ObserveMonth(const Money& spent, const Money& projected) {
  std::lock_guard<std::mutex> lock(mu_);
  s_.month_spent = spent;
  s_.month_projected = projected;
}

void MeterMetrics::ObserveAlert(const Alert& a) {
  std::lock_guard<std::mutex> lock(mu_);
  ++s_.alerts_total[ToString(a.kind)];
}

void MeterMetrics::ObserveStore(uint64_t pending, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  s_.store_pending = pending;
  s_.store_ok = ok;
}

MeterMetricsSnapshot MeterMetrics::Snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return s_;
}

}  // namespace gpuplan
