#include "telemetry/snapshot_json.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "core/error.h"

namespace gpuplan {
namespace {

using nlohmann::json;

// Every optional field of GpuSnapshot with its key; one list for writing, reading and comparing.
template <class G, class F>
void ForEachField(G& g, F&& f) {
  f("name", g.name); f("uuid", g.uuid); f("serial", g.serial);
  f("board_part_number", g.board_part_number); f("vbios", g.vbios); f("pci_bus_id", g.pci_bus_id);
  f("pci_device_id", g.pci_device_id); f("pci_subsystem_id", g.pci_subsystem_id);
  f("compute_capability", g.compute_capability);
  f("memory_total", g.memory_total); f("memory_reserved", g.memory_reserved);
  f("memory_used", g.memory_used);
  f("pcie_gen_current", g.pcie_gen_current); f("pcie_gen_max", g.pcie_gen_max);
  f("pcie_gen_gpu_max", g.pcie_gen_gpu_max); f("pcie_gen_host_max", g.pcie_gen_host_max);
  f("pcie_width_current", g.pcie_width_current); f("pcie_width_max", g.pcie_width_max);
  f("pcie_replays", g.pcie_replays);
  f("nvlink_links", g.nvlink_links); f("nvlink_up", g.nvlink_up);
  f("mig_enabled", g.mig_enabled); f("mig_pending", g.mig_pending);
  f("persistence_mode", g.persistence_mode);
  f("power_draw", g.power_draw); f("power_limit", g.power_limit);
  f("power_default_limit", g.power_default_limit); f("power_max_limit", g.power_max_limit);
  f("energy_mj", g.energy_mj);
  f("ecc_enabled", g.ecc_enabled); f("ecc_pending", g.ecc_pending);
  f("ecc_volatile_corrected", g.ecc_volatile_corrected);
  f("ecc_volatile_uncorrected", g.ecc_volatile_uncorrected);
  f("ecc_aggregate_corrected", g.ecc_aggregate_corrected);
  f("ecc_aggregate_uncorrected", g.ecc_aggregate_uncorrected);
  f("retired_pages_sbe", g.retired_pages_sbe); f("retired_pages_dbe", g.retired_pages_dbe);
  f("retired_pages_pending", g.retired_pages_pending);
  f("remapped_rows_correctable", g.remapped_rows_correctable);
  f("remapped_rows_uncorrectable", g.remapped_rows_uncorrectable);
  f("remapped_rows_pending", g.remapped_rows_pending);
  f("remapped_rows_failure", g.remapped_rows_failure);
  f("temperature_c", g.temperature_c); f("temperature_slowdown_c", g.temperature_slowdown_c);
  f("sm_clock_mhz", g.sm_clock_mhz); f("sm_clock_max_mhz", g.sm_clock_max_mhz);
  f("mem_clock_mhz", g.mem_clock_mhz); f("clock_event_reasons", g.clock_event_reasons);
  f("utilization_gpu", g.utilization_gpu); f("utilization_memory", g.utilization_memory);
  f("numa_node", g.numa_node); f("cpu_affinity", g.cpu_affinity);
}

template <class S, class F>
void ForEachSystemField(S& s, F&& f) {
  f("driver_version", s.driver_version); f("cuda_driver_version", s.cuda_driver_version);
  f("nvml_version", s.nvml_version); f("hostname", s.hostname);
}

[[noreturn]] void Bad(const std::string& file, const std::string& field, const std::string& what) {
  throw InputError(what, file, 0, field);
}

std::string Path(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

template <class T>
T Read(const json& v, const std::string& file, const std::string& field) {
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string()) Bad(file, field, "expected a string");
    return v.get<std::string>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!v.is_boolean()) Bad(file, field, "expected true or false");
    return v.get<bool>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (!v.is_number()) Bad(file, field, "expected a number");
    return v.get<double>();
  } else if constexpr (std::is_signed_v<T>) {
    if (!v.is_number_integer()) Bad(file, field, "expected an integer");
    const auto x = v.get<int64_t>();
    if (x < std::numeric_limits<T>::min() || x > std::numeric_limits<T>::max()) {
      Bad(file, field, "integer out of range");
    }
    return static_cast<T>(x);
  } else {
    if (!v.is_number_unsigned()) Bad(file, field, "expected a non-negative integer");
    const auto x = v.get<uint64_t>();
    if (x > std::numeric_limits<T>::max()) Bad(file, field, "integer out of range");
    return static_cast<T>(x);
  }
}

std::map<std::string, std::string> ReadReasons(const json& j, const std::string& file,
                                               const std::string& where) {
  std::map<std::string, std::string> out;
  const auto it = j.find("not_measured");
  if (it == j.end()) return out;
  const std::string field = Path(where, "not_measured");
  if (!it->is_object()) Bad(file, field, "expected an object of field -> reason");
  for (const auto& [k, v] : it->items()) out[k] = Read<std::string>(v, file, field + "." + k);
  return out;
}

// The range of each numeric field of a snapshot (the same bounds as an nvidia-smi capture,
// docs/nvidia-smi-capture.md "Bounds"): memory at most 16 TiB (2^44 bytes, so no sum wraps),
// PCIe generation 1-6 and width 1-32, counters at most 2^53.
struct Range {
  std::string_view key;
  double min;
  double max;
};
constexpr double kMaxBytes = 17592186044416.0;    // 2^44: 16 TiB
constexpr double kMaxCount = 9007199254740992.0;  // 2^53
constexpr Range kRanges[] = {
    {"memory_total", 0, kMaxBytes},
    {"memory_reserved", 0, kMaxBytes},
    {"memory_used", 0, kMaxBytes},
    {"pcie_gen_current", 1, 6},
    {"pcie_gen_max", 1, 6},
    {"pcie_gen_gpu_max", 1, 6},
    {"pcie_gen_host_max", 1, 6},
    {"pcie_width_current", 1, 32},
    {"pcie_width_max", 1, 32},
    {"pcie_replays", 0, kMaxCount},
    {"nvlink_links", 0, 64},
    {"nvlink_up", 0, 64},
    {"power_draw", 0, 100000},
    {"power_limit", 0, 100000},
    {"power_default_limit", 0, 100000},
    {"power_max_limit", 0, 100000},
    {"energy_mj", 0, 4611686018427387904.0},  // 2^62
    {"ecc_volatile_corrected", 0, kMaxCount},
    {"ecc_volatile_uncorrected", 0, kMaxCount},
    {"ecc_aggregate_corrected", 0, kMaxCount},
    {"ecc_aggregate_uncorrected", 0, kMaxCount},
    {"retired_pages_sbe", 0, kMaxCount},
    {"retired_pages_dbe", 0, kMaxCount},
    {"remapped_rows_correctable", 0, kMaxCount},
    {"remapped_rows_uncorrectable", 0, kMaxCount},
    {"temperature_c", -100, 300},
    {"temperature_slowdown_c", -100, 300},
    {"sm_clock_mhz", 0, 100000},
    {"sm_clock_max_mhz", 0, 100000},
    {"mem_clock_mhz", 0, 100000},
    {"utilization_gpu", 0, 100},
    {"utilization_memory", 0, 100},
    {"numa_node", -1, 1023},  // -1: no NUMA affinity, as Linux writes it
};

std::string Num(double v) {
  const json j = v;
  return v == std::floor(v) && std::fabs(v) < 1e18 ? std::to_string(static_cast<int64_t>(v)) : j.dump();
}

void CheckRange(std::string_view key, double v, const std::string& file, const std::string& field) {
  for (const Range& r : kRanges) {
    if (r.key == key && (!std::isfinite(v) || v < r.min || v > r.max)) {
      Bad(file, field, "out of range: expected " + Num(r.min) + " to " + Num(r.max) + ", got " + Num(v));
    }
  }
}

void CheckObject(const json& j, const std::string& file, const std::string& where) {
  if (!j.is_object()) Bad(file, where.empty() ? "(top level)" : where, "expected an object");
}

}  // namespace

json ToJson(const GpuSnapshot& g) {
  json j = json::object();
  j["index"] = g.index;
  ForEachField(g, [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  });
  if (g.processes) {
    j["processes"] = json::array();
    for (const GpuProcess& p : *g.processes) {
      json o{{"pid", p.pid}};
      if (p.used_memory_bytes) o["used_memory"] = *p.used_memory_bytes;
      j["processes"].push_back(std::move(o));
    }
  }
  j["not_measured"] = g.not_measured;
  return j;
}

json ToJson(const GpuEvent& e) {
  return json{{"gpu", e.gpu}, {"type", e.type}, {"data", e.data}, {"at_seconds", e.at_seconds}};
}

json ToJson(const SystemSnapshot& s) {
  json j = json::object();
  j["at_seconds"] = s.at_seconds;
  ForEachSystemField(s, [&](const char* key, const auto& v) {
    if (v) j[key] = *v;
  });
  j["gpus"] = json::array();
  for (const auto& g : s.gpus) j["gpus"].push_back(ToJson(g));
  j["not_measured"] = s.not_measured;
  return j;
}

GpuSnapshot GpuSnapshotFromJson(const json& j, const std::string& file, const std::string& where) {
  CheckObject(j, file, where);
  GpuSnapshot g;
  if (const auto it = j.find("index"); it != j.end()) {
    g.index = Read<int>(*it, file, Path(where, "index"));
    if (g.index < 0 || g.index > 65535) {
      Bad(file, Path(where, "index"), "out of range: expected 0 to 65535, got " + std::to_string(g.index));
    }
  }
  ForEachField(g, [&](const char* key, auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) {
      v = Read<T>(*it, file, Path(where, key));
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        CheckRange(key, static_cast<double>(*v), file, Path(where, key));
      }
    }
  });
  if (const auto it = j.find("processes"); it != j.end() && !it->is_null()) {
    const std::string field = Path(where, "processes");
    if (!it->is_array()) Bad(file, field, "expected an array of {pid, used_memory}");
    g.processes.emplace();
    for (size_t i = 0; i < it->size(); ++i) {
      const json& o = (*it)[i];
      const std::string at = field + "[" + std::to_string(i) + "]";
      CheckObject(o, file, at);
      GpuProcess p;
      const auto pid = o.find("pid");
      if (pid == o.end()) Bad(file, at + ".pid", "missing: the process id");
      p.pid = Read<int>(*pid, file, at + ".pid");
      if (p.pid < 1) Bad(file, at + ".pid", "out of range: a process id is at least 1, got " + std::to_string(p.pid));
      if (const auto m = o.find("used_memory"); m != o.end() && !m->is_null()) {
        p.used_memory_bytes = Read<uint64_t>(*m, file, at + ".used_memory");
        CheckRange("memory_used", static_cast<double>(*p.used_memory_bytes), file, at + ".used_memory");
      }
      g.processes->push_back(p);
    }
  }
  g.not_measured = ReadReasons(j, file, where);
  return g;
}

GpuEvent EventFromJson(const json& j, const std::string& file, const std::string& where) {
  CheckObject(j, file, where);
  GpuEvent e;
  if (const auto it = j.find("gpu"); it != j.end()) {
    e.gpu = Read<int>(*it, file, Path(where, "gpu"));
    // -1: an event whose device could not be matched (snapshot.h).
    if (e.gpu < -1 || e.gpu > 65535) {
      Bad(file, Path(where, "gpu"), "out of range: expected -1 to 65535, got " + std::to_string(e.gpu));
    }
  }
  if (const auto it = j.find("type"); it != j.end()) e.type = Read<uint64_t>(*it, file, Path(where, "type"));
  if (const auto it = j.find("data"); it != j.end()) e.data = Read<uint64_t>(*it, file, Path(where, "data"));
  if (const auto it = j.find("at_seconds"); it != j.end()) {
    e.at_seconds = Read<double>(*it, file, Path(where, "at_seconds"));
    if (!std::isfinite(e.at_seconds) || e.at_seconds < 0) {
      Bad(file, Path(where, "at_seconds"), "out of range: expected seconds from 0");
    }
  }
  return e;
}

SystemSnapshot SnapshotFromJson(const json& j, const std::string& file, const std::string& where) {
  CheckObject(j, file, where);
  SystemSnapshot s;
  if (const auto it = j.find("at_seconds"); it != j.end()) {
    s.at_seconds = Read<double>(*it, file, Path(where, "at_seconds"));
    if (!std::isfinite(s.at_seconds) || s.at_seconds < 0) {
      Bad(file, Path(where, "at_seconds"), "out of range: expected seconds from 0");
    }
  }
  ForEachSystemField(s, [&](const char* key, auto& v) {
    if (const auto it = j.find(key); it != j.end() && !it->is_null()) {
      v = Read<std::string>(*it, file, Path(where, key));
    }
  });
  if (const auto it = j.find("gpus"); it != j.end()) {
    const std::string field = Path(where, "gpus");
    if (!it->is_array()) Bad(file, field, "expected an array");
    for (size_t i = 0; i < it->size(); ++i) {
      s.gpus.push_back(GpuSnapshotFromJson((*it)[i], file, field + "[" + std::to_string(i) + "]"));
    }
  }
  s.not_measured = ReadReasons(j, file, where);
  return s;
}

bool operator==(const GpuSnapshot& a, const GpuSnapshot& b) { return ToJson(a) == ToJson(b); }
bool operator==(const GpuEvent& a, const GpuEvent& b) {
  return std::tie(a.gpu, a.type, a.data, a.at_seconds) == std::tie(b.gpu, b.type, b.data, b.at_seconds);
}
bool operator==(const SystemSnapshot& a, const SystemSnapshot& b) { return ToJson(a) == ToJson(b); }

}  // namespace gpuplan
