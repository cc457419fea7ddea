#include "meter/render/meter_prometheus.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpuplan {

bool ValidMetricName(const std::string& n) {
  if (n.empty()) {
    return false;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

bool ValidLabelName(const std::string& n) {
  if (n.empty() || n.rfind("__", 0) == 0) {
    return false;
  }
  for (std::size_t i = 0; i < n.size(); ++i) {
    const char c = n[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string EscapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

std::string Number(double v) {
  if (std::isnan(v)) {
    return "NaN";
  }
  if (std::isinf(v)) {
    return v > 0 ? "+Inf" : "-Inf";
  }
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", v);
    return buf;
  }
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);  // the shortest text that reads back as v
  return std::string(buf, r.ptr);
}

// One family: HELP and TYPE, then its samples, all lines of the family together.
class Family {
 public:
  Family(std::string& out, const std::string& name, const char* type, const std::string& help)
      : out_(out), name_(name) {
    if (!ValidMetricName(name)) {
      throw std::logic_error("invalid metric name " + name);
    }
    out_ += "# HELP " + name + " " + EscapeHelp(help) + "\n# TYPE " + name + " " + type + "\n";
  }
  void Add(const Labels& labels, double value) {
    out_ += name_;
    if (!labels.empty()) {
      out_ += '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (!ValidLabelName(labels[i].first)) {
          throw std::logic_error("invalid label name " + labels[i].first);
        }
        out_ += (i ? "," : "") + labels[i].first + "=\"" + EscapeLabelValue(labels[i].second) + '"';
      }
      out_ += '}';
    }
    out_ += ' ' + Number(value) + '\n';
  }

 private:
  std::string& out_;
  std::string name_;
};

// dcgm-exporter's labels of a GPU series (its rendermetrics template).
Labels DcgmLabels(const MeterMetricsSnapshot& s, const GpuMetrics& g) {
  return {{"gpu", std::to_string(g.gpu)},         {"UUID", g.uuid},
          {"pci_bus_id", g.pci_bus_id},           {"device", "nvidia" + std::to_string(g.gpu)},
          {"modelName", g.model},                 {"Hostname", s.hostname}};
}

Labels OurLabels(const GpuMetrics& g) { return {{"gpu", std::to_string(g.gpu)}, {"uuid", g.uuid}}; }

constexpr double kMiB = 1048576.0;

}  // namespace

std::string RenderPrometheusText(const MeterMetricsSnapshot& s) {
  std::string out;
  // dcgm-exporter families: a GPU whose field NVML did not give has no sample in that family
  // (as the exporters skip N/A rather than export 0).
  struct Dcgm {
    const char* name;
    const char* type;
    const char* help;
    std::function<std::optional<double>(const GpuSample&)> value;
  };
  const std::vector<Dcgm> dcgm = {
      {"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.utilization_gpu) return *x.utilization_gpu;
         return std::nullopt;
       }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "gauge", "Memory utilization (in %).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.utilization_memory) return *x.utilization_memory;
         return std::nullopt;
       }},
      {"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.memory_used) return std::floor(static_cast<double>(*x.memory_used) / kMiB);
         return std::nullopt;
       }},
      {"DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.memory_used && x.memory_total && *x.memory_total >= *x.memory_used)
           return std::floor(static_cast<double>(*x.memory_total - *x.memory_used) / kMiB);
         return std::nullopt;
       }},
      {"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).",
       [](const GpuSample& x) { return x.power; }},
      {"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.energy_mj) return static_cast<double>(*x.energy_mj);
         return std::nullopt;
       }},
      {"DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.temperature) return *x.temperature;
         return std::nullopt;
       }},
      {"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).",
       [](const GpuSample& x) -> std::optional<double> {
         if (x.sm_clock) return *x.sm_clock;
         return std::nullopt;
       }},
  };
  for (const Dcgm& d : dcgm) {
    Family f(out, d.name, d.type, d.help);
    for (const auto& g : s.gpus) {
      if (const auto v = d.value(g.latest)) {
        f.Add(DcgmLabels(s, g), *v);
      }
    }
  }

  {
    // dcgm-exporter's default counters carry the last XID as a gauge (0 when none); the agent
    // registers for XID events when NVML opens, so 0 here means none since the agent started.
    Family f(out, "DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.");
    for (const auto& g : s.gpus) {
      f.Add(DcgmLabels(s, g), g.last_xid);
    }
  }

  // gpuplan's own families.
  {
    Family f(out, "gpuplan_gpu_ecc_uncorrected_errors_total", "counter",
             "Uncorrected ECC errors NVML counts on the GPU (volatile count, else aggregate); a rise is an alert.");
    for (const auto& g : s.gpus) {
      if (g.ecc_uncorrected) {
        f.Add(OurLabels(g), static_cast<double>(*g.ecc_uncorrected));
      }
    }
  }
  {
    Family f(out, "gpuplan_gpu_info", "gauge", "Identity of each GPU the agent samples (value 1).");
    for (const auto& g : s.gpus) {
      f.Add({{"gpu", std::to_string(g.gpu)}, {"uuid", g.uuid}, {"model", g.model}, {"pci_bus_id", g.pci_bus_id}}, 1);
    }
  }
  {
    Family f(out, "gpuplan_gpu_processes", "gauge", "Processes NVML lists on the GPU at the last sample.");
    for (const auto& g : s.gpus) {
      f.Add(OurLabels(g), g.processes);
    }
  }
  {
    Family f(out, "gpuplan_gpu_billed_seconds_total", "counter",
             "Seconds the GPU was billed since the agent started (sampling interval per billed sample).");
    for (const auto& g : s.gpus) {
      f.Add(OurLabels(g), g.billed_seconds);
    }
  }
  {
    Family f(out, "gpuplan_gpu_idle_billed_seconds_total", "counter",
             "Seconds the GPU was billed with no process on it since the agent started.");
    for (const auto& g : s.gpus) {
      f.Add(OurLabels(g), g.idle_billed_seconds);
    }
  }
  {
    Family f(out, "gpuplan_gpu_busy_seconds_total", "counter",
             "Utilisation-weighted seconds: the sum of NVML utilisation (0-1) x sampling interval.");
    for (const auto& g : s.gpus) {
      f.Add(OurLabels(g), g.busy_seconds);
    }
  }
  {
    Family f(out, "gpuplan_gpu_last_active_timestamp_seconds", "gauge",
             "Unix time of the last sample with a process and non-zero utilisation.");
    for (const auto& g : s.gpus) {
      if (g.last_active) {
        f.Add(OurLabels(g), static_cast<double>(UnixMillis(*g.last_active)) / 1000);
      }
    }
  }
  {
    Family f(out, "gpuplan_gpu_hourly_cost", "gauge", "Price of one billed GPU-hour under the offer, in `currency`.");
    for (const auto& g : s.gpus) {
      if (g.hourly_price) {
        auto l = OurLabels(g);
        l.emplace_back("currency", g.hourly_price->currency);
        f.Add(l, g.hourly_price->amount);
      }
    }
  }
  {
    Family f(out, "gpuplan_gpu_idle_cost_total", "counter",
             "Money billed for the GPU while no process was on it, since the agent started, in `currency`.");
    for (const auto& g : s.gpus) {
      if (g.hourly_price) {
        auto l = OurLabels(g);
        l.emplace_back("currency", g.hourly_price->currency);
        f.Add(l, g.idle_cost);
      }
    }
  }
  auto money = [&out](const char* name, const char* help, const std::optional<Money>& m) {
    Family f(out, name, "gauge", help);
    if (m) {
      f.Add({{"currency", m->currency}}, m->amount);
    }
  };
  money("gpuplan_month_cost", "The calendar month's cost so far under the offer.", s.month_spent);
  money("gpuplan_month_projected_cost", "The calendar month's cost projected to its end.", s.month_projected);
  money("gpuplan_month_budget", "The month's budget from the alerts file.", s.monthly_budget);
  {
    Family f(out, "gpuplan_alerts_total", "counter", "Alerts raised since the agent started, by kind.");
    for (const char* kind : {"idle_no_process", "low_utilization", "throttling", "ecc", "xid", "budget"}) {
      const auto it = s.alerts_total.find(kind);
      f.Add({{"kind", kind}}, it == s.alerts_total.end() ? 0 : static_cast<double>(it->second));
    }
  }
  {
    Family f(out, "gpuplan_agent_samples_total", "counter", "GPU samples taken since the agent started.");
    f.Add({}, static_cast<double>(s.samples_total));
  }
  {
    Family f(out, "gpuplan_agent_store_pending_samples", "gauge", "Samples held in memory waiting for the store.");
    f.Add({}, static_cast<double>(s.store_pending));
  }
  {
    Family f(out, "gpuplan_agent_store_ok", "gauge", "1 when the last write to the store succeeded.");
    f.Add({}, s.store_ok ? 1 : 0);
  }
  {
    Family f(out, "gpuplan_agent_last_sample_timestamp_seconds", "gauge", "Unix time of the last sample.");
    if (s.last_sample) {
      f.Add({}, static_cast<double>(UnixMillis(*s.last_sample)) / 1000);
    }
  }
  return out;
}

}  // namespace gpuplan
