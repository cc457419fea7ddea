// A stand-in libnvidia-ml.so.1 (see README.md): the NVML calls NvmlSource makes, answered from a
// recording (docs/recording-format.md) named by $GPUPLAN_FAKE_NVML. Values come from the first
// snapshot; a field absent there makes its call return NVML_ERROR_NOT_SUPPORTED; the recording's
// events are delivered once each by nvmlEventSetWait_v2.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/nvml_api.h"

using namespace gpuplan::nvml;  // NOLINT
using nlohmann::json;

struct gpuplan::nvml::nvmlDevice_st {
  unsigned index;
};
struct gpuplan::nvml::nvmlEventSet_st {
  size_t next = 0;
  unsigned long long registered = 0;
};

namespace {

struct State {
  bool loaded = false;
  json system;
  std::vector<json> gpus;
  std::vector<nvmlDevice_st> devices;
  json events = json::array();
  std::chrono::steady_clock::time_point init_at = std::chrono::steady_clock::now();
};

State& St() {
  static State s;
  return s;
}

const json* Gpu(nvmlDevice_t d) {
  if (d == nullptr || d->index >= St().gpus.size()) return nullptr;
  return &St().gpus[d->index];
}

const json* Field(nvmlDevice_t d, const char* key) {
  const json* g = Gpu(d);
  if (g == nullptr) return nullptr;
  const auto it = g->find(key);
  return it == g->end() || it->is_null() ? nullptr : &*it;
}

nvmlReturn_t CopyString(const std::string& s, char* buf, unsigned size) {
  if (buf == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (s.size() + 1 > size) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return NVML_SUCCESS;
}

nvmlReturn_t DevString(nvmlDevice_t d, const char* key, char* buf, unsigned size) {
  if (Gpu(d) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* v = Field(d, key);
  return v == nullptr ? NVML_ERROR_NOT_SUPPORTED : CopyString(v->get<std::string>(), buf, size);
}

template <class T>
nvmlReturn_t DevNumber(nvmlDevice_t d, const char* key, T* out) {
  if (Gpu(d) == nullptr || out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* v = Field(d, key);
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *out = v->get<T>();
  return NVML_SUCCESS;
}

nvmlReturn_t DevBool(nvmlDevice_t d, const char* key, int* out) {
  if (Gpu(d) == nullptr || out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* v = Field(d, key);
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *out = v->get<bool>() ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

nvmlReturn_t DevMilliwatts(nvmlDevice_t d, const char* key, unsigned* out) {
  if (Gpu(d) == nullptr || out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* v = Field(d, key);
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<unsigned>(std::lround(v->get<double>() * 1000.0));
  return NVML_SUCCESS;
}

const json* Sys(const char* key) {
  const auto it = St().system.find(key);
  return it == St().system.end() || it->is_null() ? nullptr : &*it;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) nvmlReturn_t nvmlInit_v2() {
  State& s = St();
  const char* path = std::getenv("GPUPLAN_FAKE_NVML");
  if (path == nullptr) return NVML_ERROR_DRIVER_NOT_LOADED;
  std::ifstream in(path);
  if (!in) return NVML_ERROR_DRIVER_NOT_LOADED;
  std::stringstream ss;
  ss << in.rdbuf();
  const json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.contains("snapshots") || j["snapshots"].empty()) return NVML_ERROR_UNKNOWN;
  s = State{};
  s.system = j["snapshots"][0];
  for (const auto& g : s.system.value("gpus", json::array())) s.gpus.push_back(g);
  s.devices.resize(s.gpus.size());
  for (size_t i = 0; i < s.devices.size(); ++i) s.devices[i].index = static_cast<unsigned>(i);
  s.events = j.value("events", json::array());
  s.loaded = true;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlShutdown() {
  St().loaded = false;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    default: return "Unknown Error";
  }
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlSystemGetDriverVersion(char* buf, unsigned size) {
  const json* v = Sys("driver_version");
  return v == nullptr ? NVML_ERROR_NOT_SUPPORTED : CopyString(v->get<std::string>(), buf, size);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlSystemGetNVMLVersion(char* buf, unsigned size) {
  const json* v = Sys("nvml_version");
  return v == nullptr ? NVML_ERROR_NOT_SUPPORTED : CopyString(v->get<std::string>(), buf, size);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* out) {
  const json* v = Sys("cuda_driver_version");
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  const std::string s = v->get<std::string>();  // "13.1" -> 13010
  const auto dot = s.find('.');
  *out = std::stoi(s.substr(0, dot)) * 1000 + (dot == std::string::npos ? 0 : std::stoi(s.substr(dot + 1)) * 10);
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* n) {
  if (!St().loaded) return NVML_ERROR_UNINITIALIZED;
  *n = static_cast<unsigned>(St().devices.size());
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t* d) {
  if (i >= St().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  *d = &St().devices[i];
  return NVML_SUCCESS;
}

#define FAKE_STRING(fn, key)                                                                   \
  __attribute__((visibility("default"))) nvmlReturn_t fn(nvmlDevice_t d, char* b, unsigned n) { \
    return DevString(d, key, b, n);                                                            \
  }
FAKE_STRING(nvmlDeviceGetName, "name")
FAKE_STRING(nvmlDeviceGetUUID, "uuid")
FAKE_STRING(nvmlDeviceGetSerial, "serial")
FAKE_STRING(nvmlDeviceGetBoardPartNumber, "board_part_number")
FAKE_STRING(nvmlDeviceGetVbiosVersion, "vbios")

#define FAKE_UINT(fn, key)                                                                     \
  __attribute__((visibility("default"))) nvmlReturn_t fn(nvmlDevice_t d, unsigned* out) {      \
    return DevNumber(d, key, out);                                                             \
  }
FAKE_UINT(nvmlDeviceGetCurrPcieLinkGeneration, "pcie_gen_current")
FAKE_UINT(nvmlDeviceGetMaxPcieLinkGeneration, "pcie_gen_max")
FAKE_UINT(nvmlDeviceGetGpuMaxPcieLinkGeneration, "pcie_gen_gpu_max")
FAKE_UINT(nvmlDeviceGetCurrPcieLinkWidth, "pcie_width_current")
FAKE_UINT(nvmlDeviceGetMaxPcieLinkWidth, "pcie_width_max")
FAKE_UINT(nvmlDeviceGetPcieReplayCounter, "pcie_replays")
FAKE_UINT(nvmlDeviceGetNumaNodeId, "numa_node")

// Not snapshot fields either: "nvlink_tx_kib_per_s" / "nvlink_rx_kib_per_s" make the NVLink data counters
// (NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX/RX, KiB, all links) grow at that rate from nvmlInit_v2, so two
// readings give it back; absent, each entry answers NVML_ERROR_NOT_SUPPORTED (a card without NVLink).
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count,
                                                                            nvmlFieldValue_t* values) {
  if (Gpu(d) == nullptr || count < 0 || (count > 0 && values == nullptr)) return NVML_ERROR_INVALID_ARGUMENT;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - St().init_at).count();
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    const char* key = v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX   ? "nvlink_tx_kib_per_s"
                      : v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX ? "nvlink_rx_kib_per_s"
                                                                           : nullptr;
    const json* rate = key != nullptr ? Field(d, key) : nullptr;
    if (rate == nullptr) {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    v.nvmlReturn = NVML_SUCCESS;
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.value.ullVal = static_cast<unsigned long long>(rate->get<double>() * seconds);
  }
  return NVML_SUCCESS;
}

// Not a snapshot field: the recording's GPU may carry "pcie_tx_kb_per_s" / "pcie_rx_kb_per_s" (what the
// driver would return, KB/s); absent, the call is not supported (as on a vGPU guest).
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, int counter,
                                                                               unsigned* out) {
  if (counter == NVML_PCIE_UTIL_TX_BYTES) return DevNumber(d, "pcie_tx_kb_per_s", out);
  if (counter == NVML_PCIE_UTIL_RX_BYTES) return DevNumber(d, "pcie_rx_kb_per_s", out);
  return NVML_ERROR_INVALID_ARGUMENT;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t* p) {
  const json* bus = Field(d, "pci_bus_id");
  if (Gpu(d) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (bus == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *p = nvmlPciInfo_t{};
  const std::string id = bus->get<std::string>();
  CopyString(id, p->busId, sizeof p->busId);
  unsigned dom = 0, b = 0, dev = 0, fn = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x.%x", &dom, &b, &dev, &fn) == 4) {
    p->domain = dom;
    p->bus = b;
    p->device = dev;
  }
  if (const json* v = Field(d, "pci_device_id")) p->pciDeviceId = v->get<unsigned>();
  if (const json* v = Field(d, "pci_subsystem_id")) p->pciSubSystemId = v->get<unsigned>();
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t d, int* major,
                                                                                       int* minor) {
  const json* v = Field(d, "compute_capability");
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  const std::string s = v->get<std::string>();
  const auto dot = s.find('.');
  *major = std::stoi(s.substr(0, dot));
  *minor = dot == std::string::npos ? 0 : std::stoi(s.substr(dot + 1));
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t* m) {
  if (m == nullptr || m->version != nvmlMemory_v2) return NVML_ERROR_INVALID_ARGUMENT;
  const json* total = Field(d, "memory_total");
  const json* reserved = Field(d, "memory_reserved");
  const json* used = Field(d, "memory_used");
  if (total == nullptr || reserved == nullptr || used == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  m->total = total->get<unsigned long long>();
  m->reserved = reserved->get<unsigned long long>();
  m->used = used->get<unsigned long long>();
  m->free = m->total - m->reserved - m->used;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t* m) {
  const json* total = Field(d, "memory_total");
  const json* used = Field(d, "memory_used");
  if (total == nullptr || used == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  m->total = total->get<unsigned long long>();
  m->used = used->get<unsigned long long>();
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link,
                                                                             int* state) {
  const json* links = Field(d, "nvlink_links");
  const json* up = Field(d, "nvlink_up");
  if (links == nullptr || up == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= links->get<unsigned>()) return NVML_ERROR_INVALID_ARGUMENT;
  *state = link < up->get<unsigned>() ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned* cur,
                                                                         unsigned* pend) {
  const json* c = Field(d, "mig_enabled");
  const json* p = Field(d, "mig_pending");
  if (c == nullptr || p == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *cur = c->get<bool>() ? 1 : 0;
  *pend = p->get<bool>() ? 1 : 0;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int* out) {
  return DevBool(d, "persistence_mode", out);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned* mw) {
  return DevMilliwatts(d, "power_draw", mw);
}
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned* mw) {
  return DevMilliwatts(d, "power_limit", mw);
}
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d,
                                                                                             unsigned* mw) {
  return DevMilliwatts(d, "power_default_limit", mw);
}
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(
    nvmlDevice_t d, unsigned* min_mw, unsigned* max_mw) {
  *min_mw = 0;
  return DevMilliwatts(d, "power_max_limit", max_mw);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d,
                                                                                        unsigned long long* mj) {
  return DevNumber(d, "energy_mj", mj);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* cur, int* pend) {
  const nvmlReturn_t r = DevBool(d, "ecc_enabled", cur);
  return r != NVML_SUCCESS ? r : DevBool(d, "ecc_pending", pend);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter,
                                                                                unsigned long long* out) {
  const char* key = counter == NVML_VOLATILE_ECC
                        ? (type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "ecc_volatile_corrected"
                                                                    : "ecc_volatile_uncorrected")
                        : (type == NVML_MEMORY_ERROR_TYPE_CORRECTED ? "ecc_aggregate_corrected"
                                                                    : "ecc_aggregate_uncorrected");
  return DevNumber(d, key, out);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause,
                                                                              unsigned* count,
                                                                              unsigned long long* addresses) {
  unsigned n = 0;
  const nvmlReturn_t r = DevNumber(
      d, cause == NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR ? "retired_pages_dbe" : "retired_pages_sbe", &n);
  if (r != NVML_SUCCESS) return r;
  const bool fits = addresses != nullptr && *count >= n;
  if (fits) {
    for (unsigned i = 0; i < n; ++i) addresses[i] = 0x1000ULL * (i + 1);
  }
  *count = n;
  return fits || n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* out) {
  return DevBool(d, "retired_pages_pending", out);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned* corr,
                                                                              unsigned* unc, unsigned* pend,
                                                                              unsigned* fail) {
  const json* c = Field(d, "remapped_rows_correctable");
  const json* u = Field(d, "remapped_rows_uncorrectable");
  const json* p = Field(d, "remapped_rows_pending");
  const json* f = Field(d, "remapped_rows_failure");
  if (c == nullptr || u == nullptr || p == nullptr || f == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  *corr = c->get<unsigned>();
  *unc = u->get<unsigned>();
  *pend = p->get<bool>() ? 1 : 0;
  *fail = f->get<bool>() ? 1 : 0;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor,
                                                                             unsigned* out) {
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return DevNumber(d, "temperature_c", out);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, int which,
                                                                                      unsigned* out) {
  if (which != NVML_TEMPERATURE_THRESHOLD_SLOWDOWN) return NVML_ERROR_NOT_SUPPORTED;
  return DevNumber(d, "temperature_slowdown_c", out);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned* out) {
  if (type == NVML_CLOCK_SM) return DevNumber(d, "sm_clock_mhz", out);
  if (type == NVML_CLOCK_MEM) return DevNumber(d, "mem_clock_mhz", out);
  return NVML_ERROR_NOT_SUPPORTED;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned* out) {
  if (type == NVML_CLOCK_SM) return DevNumber(d, "sm_clock_max_mhz", out);
  return NVML_ERROR_NOT_SUPPORTED;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d,
                                                                                           unsigned long long* out) {
  return DevNumber(d, "clock_event_reasons", out);
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d,
                                                                                  nvmlUtilization_t* u) {
  const nvmlReturn_t r = DevNumber(d, "utilization_gpu", &u->gpu);
  return r != NVML_SUCCESS ? r : DevNumber(d, "utilization_memory", &u->memory);
}

// The GPU's "processes" ([{pid, used_memory}]) of the recording; absent: NOT_SUPPORTED. Entries
// are 24 bytes (nvmlProcessInfo_t), or 32 when GPUPLAN_FAKE_NVML_PROCESS_STRIDE=32 (the R535-R545
// drivers' layout), so both strides of nvml_source.cc's reader run.
__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvmlDevice_t d, unsigned* count, nvmlProcessInfo_t* infos) {
  if (Gpu(d) == nullptr || count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const json* v = Field(d, "processes");
  if (v == nullptr || !v->is_array()) return NVML_ERROR_NOT_SUPPORTED;
  const auto n = static_cast<unsigned>(v->size());
  if (infos == nullptr || *count < n) {
    *count = n;
    return n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE;
  }
  const char* stride_env = std::getenv("GPUPLAN_FAKE_NVML_PROCESS_STRIDE");
  const std::size_t stride = stride_env != nullptr && std::string(stride_env) == "32" ? 32 : sizeof(nvmlProcessInfo_t);
  auto* bytes = reinterpret_cast<unsigned char*>(infos);
  for (unsigned i = 0; i < n; ++i) {
    const json& p = (*v)[i];
    nvmlProcessInfo_t e{};
    e.pid = p.value("pid", 0u);
    e.usedGpuMemory = p.contains("used_memory") ? p["used_memory"].get<unsigned long long>() : ~0ULL;
    e.gpuInstanceId = 0xFFFFFFFFu;
    e.computeInstanceId = 0xFFFFFFFFu;
    std::memset(bytes + i * stride, 0, stride);
    std::memcpy(bytes + i * stride, &e, sizeof e);
  }
  *count = n;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t d, unsigned n,
                                                                             unsigned long* set) {
  const json* v = Field(d, "cpu_affinity");
  if (v == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  for (unsigned i = 0; i < n; ++i) set[i] = 0;
  std::stringstream ss(v->get<std::string>());
  std::string part;
  const unsigned bits = static_cast<unsigned>(sizeof(unsigned long) * 8);
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    const unsigned lo = static_cast<unsigned>(std::stoul(part.substr(0, dash)));
    const unsigned hi = dash == std::string::npos ? lo : static_cast<unsigned>(std::stoul(part.substr(dash + 1)));
    for (unsigned c = lo; c <= hi && c / bits < n; ++c) set[c / bits] |= 1UL << (c % bits);
  }
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = new nvmlEventSet_st();
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d,
                                                                                     unsigned long long* types) {
  if (Gpu(d) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *types = nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types,
                                                                             nvmlEventSet_t set) {
  if (Gpu(d) == nullptr || set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  set->registered |= types;
  return NVML_SUCCESS;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                                                        unsigned /*timeout_ms*/) {
  const json& ev = St().events;
  while (set->next < ev.size()) {
    const json& e = ev[set->next++];
    const unsigned long long type = e.value("type", 0ULL);
    if ((type & set->registered) == 0) continue;
    const int gpu = e.value("gpu", -1);
    *data = nvmlEventData_t{};
    data->device = gpu >= 0 && static_cast<size_t>(gpu) < St().devices.size()
                       ? &St().devices[static_cast<size_t>(gpu)]
                       : nullptr;
    data->eventType = type;
    data->eventData = e.value("data", 0ULL);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}

__attribute__((visibility("default"))) nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  delete set;
  return NVML_SUCCESS;
}

}  // extern "C"
