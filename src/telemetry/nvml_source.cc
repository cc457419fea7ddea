#include "telemetry/nvml_source.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cctype>
#include <climits>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>

#include "core/error.h"
#include "telemetry/nvml_api.h"

namespace gpuplan {

using namespace nvml;  // NOLINT

namespace nvml {
const char* ReturnName(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "NVML_SUCCESS";
    case NVML_ERROR_UNINITIALIZED: return "NVML_ERROR_UNINITIALIZED";
    case NVML_ERROR_INVALID_ARGUMENT: return "NVML_ERROR_INVALID_ARGUMENT";
    case NVML_ERROR_NOT_SUPPORTED: return "NVML_ERROR_NOT_SUPPORTED";
    case NVML_ERROR_NO_PERMISSION: return "NVML_ERROR_NO_PERMISSION";
    case NVML_ERROR_ALREADY_INITIALIZED: return "NVML_ERROR_ALREADY_INITIALIZED";
    case NVML_ERROR_NOT_FOUND: return "NVML_ERROR_NOT_FOUND";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "NVML_ERROR_INSUFFICIENT_SIZE";
    case NVML_ERROR_INSUFFICIENT_POWER: return "NVML_ERROR_INSUFFICIENT_POWER";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "NVML_ERROR_DRIVER_NOT_LOADED";
    case NVML_ERROR_TIMEOUT: return "NVML_ERROR_TIMEOUT";
    case NVML_ERROR_IRQ_ISSUE: return "NVML_ERROR_IRQ_ISSUE";
    case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML_ERROR_LIBRARY_NOT_FOUND";
    case NVML_ERROR_FUNCTION_NOT_FOUND: return "NVML_ERROR_FUNCTION_NOT_FOUND";
    case NVML_ERROR_CORRUPTED_INFOROM: return "NVML_ERROR_CORRUPTED_INFOROM";
    case NVML_ERROR_GPU_IS_LOST: return "NVML_ERROR_GPU_IS_LOST";
    case NVML_ERROR_RESET_REQUIRED: return "NVML_ERROR_RESET_REQUIRED";
    case NVML_ERROR_OPERATING_SYSTEM: return "NVML_ERROR_OPERATING_SYSTEM";
    case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "NVML_ERROR_LIB_RM_VERSION_MISMATCH";
    case NVML_ERROR_IN_USE: return "NVML_ERROR_IN_USE";
    case NVML_ERROR_MEMORY: return "NVML_ERROR_MEMORY";
    case NVML_ERROR_NO_DATA: return "NVML_ERROR_NO_DATA";
    case NVML_ERROR_VGPU_ECC_NOT_SUPPORTED: return "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED";
    case NVML_ERROR_INSUFFICIENT_RESOURCES: return "NVML_ERROR_INSUFFICIENT_RESOURCES";
    case NVML_ERROR_FREQ_NOT_SUPPORTED: return "NVML_ERROR_FREQ_NOT_SUPPORTED";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH: return "NVML_ERROR_ARGUMENT_VERSION_MISMATCH";
    default: return "NVML_ERROR_UNKNOWN";
  }
}
}  // namespace nvml

// X(member, symbol, type)
#define GPUPLAN_NVML_SYMBOLS(X)                                                        \
  X(init, "nvmlInit_v2", PFN_nvmlInit)                                                 \
  X(shutdown, "nvmlShutdown", PFN_nvmlShutdown)                                        \
  X(error_string, "nvmlErrorString", PFN_nvmlErrorString)                              \
  X(driver_version, "nvmlSystemGetDriverVersion", PFN_nvmlSystemGetString)             \
  X(nvml_version, "nvmlSystemGetNVMLVersion", PFN_nvmlSystemGetString)                 \
  X(cuda_version, "nvmlSystemGetCudaDriverVersion_v2", PFN_nvmlSystemGetCudaDriverVersion) \
  X(count, "nvmlDeviceGetCount_v2", PFN_nvmlDeviceGetCount)                            \
  X(handle, "nvmlDeviceGetHandleByIndex_v2", PFN_nvmlDeviceGetHandleByIndex)           \
  X(name, "nvmlDeviceGetName", PFN_nvmlDeviceGetString)                                \
  X(uuid, "nvmlDeviceGetUUID", PFN_nvmlDeviceGetString)                                \
  X(serial, "nvmlDeviceGetSerial", PFN_nvmlDeviceGetString)                            \
  X(board_part, "nvmlDeviceGetBoardPartNumber", PFN_nvmlDeviceGetString)               \
  X(vbios, "nvmlDeviceGetVbiosVersion", PFN_nvmlDeviceGetString)                       \
  X(pci, "nvmlDeviceGetPciInfo_v3", PFN_nvmlDeviceGetPciInfo)                          \
  X(cc, "nvmlDeviceGetCudaComputeCapability", PFN_nvmlDeviceGetIntPair)                \
  X(mem_v2, "nvmlDeviceGetMemoryInfo_v2", PFN_nvmlDeviceGetMemoryInfo_v2)              \
  X(mem_v1, "nvmlDeviceGetMemoryInfo", PFN_nvmlDeviceGetMemoryInfo)                    \
  X(gen_cur, "nvmlDeviceGetCurrPcieLinkGeneration", PFN_nvmlDeviceGetUint)             \
  X(gen_max, "nvmlDeviceGetMaxPcieLinkGeneration", PFN_nvmlDeviceGetUint)              \
  X(gen_gpu_max, "nvmlDeviceGetGpuMaxPcieLinkGeneration", PFN_nvmlDeviceGetUint)       \
  X(width_cur, "nvmlDeviceGetCurrPcieLinkWidth", PFN_nvmlDeviceGetUint)                \
  X(width_max, "nvmlDeviceGetMaxPcieLinkWidth", PFN_nvmlDeviceGetUint)                 \
  X(replays, "nvmlDeviceGetPcieReplayCounter", PFN_nvmlDeviceGetUint)                  \
  X(nvlink_state, "nvmlDeviceGetNvLinkState", PFN_nvmlDeviceGetNvLinkState)            \
  X(mig, "nvmlDeviceGetMigMode", PFN_nvmlDeviceGetUintPair)                            \
  X(persistence, "nvmlDeviceGetPersistenceMode", PFN_nvmlDeviceGetEnable)              \
  X(power_usage, "nvmlDeviceGetPowerUsage", PFN_nvmlDeviceGetUint)                     \
  X(power_limit, "nvmlDeviceGetEnforcedPowerLimit", PFN_nvmlDeviceGetUint)             \
  X(power_default, "nvmlDeviceGetPowerManagementDefaultLimit", PFN_nvmlDeviceGetUint)  \
  X(power_constraints, "nvmlDeviceGetPowerManagementLimitConstraints", PFN_nvmlDeviceGetUintPair) \
  X(energy, "nvmlDeviceGetTotalEnergyConsumption", PFN_nvmlDeviceGetULL)               \
  X(ecc_mode, "nvmlDeviceGetEccMode", PFN_nvmlDeviceGetEnablePair)                     \
  X(ecc_total, "nvmlDeviceGetTotalEccErrors", PFN_nvmlDeviceGetTotalEccErrors)         \
  X(retired, "nvmlDeviceGetRetiredPages", PFN_nvmlDeviceGetRetiredPages)               \
  X(retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus", PFN_nvmlDeviceGetEnable) \
  X(remapped, "nvmlDeviceGetRemappedRows", PFN_nvmlDeviceGetRemappedRows)              \
  X(temperature, "nvmlDeviceGetTemperature", PFN_nvmlDeviceGetTemperature)             \
  X(temp_threshold, "nvmlDeviceGetTemperatureThreshold", PFN_nvmlDeviceGetTemperatureThreshold) \
  X(clock, "nvmlDeviceGetClockInfo", PFN_nvmlDeviceGetClockInfo)                       \
  X(max_clock, "nvmlDeviceGetMaxClockInfo", PFN_nvmlDeviceGetClockInfo)                \
  X(event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", PFN_nvmlDeviceGetULL)     \
  X(throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons", PFN_nvmlDeviceGetULL) \
  X(utilization, "nvmlDeviceGetUtilizationRates", PFN_nvmlDeviceGetUtilizationRates)   \
  X(numa, "nvmlDeviceGetNumaNodeId", PFN_nvmlDeviceGetUint)                            \
  X(processes, "nvmlDeviceGetComputeRunningProcesses_v3", PFN_nvmlDeviceGetComputeRunningProcesses) \
  X(cpu_affinity, "nvmlDeviceGetCpuAffinity", PFN_nvmlDeviceGetCpuAffinity)            \
  X(pcie_throughput, "nvmlDeviceGetPcieThroughput", PFN_nvmlDeviceGetPcieThroughput) \
  X(field_values, "nvmlDeviceGetFieldValues", PFN_nvmlDeviceGetFieldValues)          \
  X(set_create, "nvmlEventSetCreate", PFN_nvmlEventSetCreate)                          \
  X(register_events, "nvmlDeviceRegisterEvents", PFN_nvmlDeviceRegisterEvents)         \
  X(supported_events, "nvmlDeviceGetSupportedEventTypes", PFN_nvmlDeviceGetULL)        \
  X(set_wait, "nvmlEventSetWait_v2", PFN_nvmlEventSetWait)                             \
  X(set_free, "nvmlEventSetFree", PFN_nvmlEventSetFree)

struct NvmlSource::Api {
  void* lib = nullptr;
  bool initialized = false;
  nvmlEventSet_t events = nullptr;
  std::vector<nvmlDevice_t> devices;
  std::map<std::string, std::string> missing;  // member -> symbol
#define GPUPLAN_MEMBER(m, sym, type) type m = nullptr;
  GPUPLAN_NVML_SYMBOLS(GPUPLAN_MEMBER)
#undef GPUPLAN_MEMBER

  std::string Error(nvmlReturn_t r, const char* fn) const {
    std::string text = ReturnName(r);
    if (r != NVML_SUCCESS && error_string != nullptr && text == "NVML_ERROR_UNKNOWN") {
      if (const char* s = error_string(r)) text += std::string(" ") + s;
    }
    return text + " (" + fn + ")";
  }
};

namespace {

std::string NotInDriver(const char* sym) { return std::string("symbol ") + sym + " not in this driver's NVML"; }

std::string Trim(const char* buf) {
  std::string s(buf);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

std::vector<GpuProcess> ProcessesFromNvmlBuffer(const unsigned char* data, std::size_t bytes, unsigned count) {
  // nvmlProcessInfo_t is 24 bytes in the NVML headers before and after R535-R545, 32 bytes in
  // theirs (usedGpuCcProtectedMemory appended); the driver fills entries of its own size. The
  // first entry reads the same either way (pid at 0, memory at 8). With two or more, the stride
  // is the one whose every entry has a pid > 0 and a GPU instance id that is either "not MIG"
  // (0xFFFFFFFF) or a small index; with 32-byte entries, reading at 24 would put the CC memory
  // field (0 off confidential computing) where the second pid is.
  constexpr std::size_t kStrides[] = {kNvmlProcessInfoBytes, kNvmlProcessInfoCcBytes};
  constexpr unsigned kMaxGpuInstance = 64;
  constexpr unsigned kNoGpuInstance = 0xFFFFFFFFu;
  constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
  const auto read = [&](std::size_t stride) {
    std::vector<GpuProcess> out;
    for (unsigned i = 0; i < count; ++i) {
      const std::size_t at = i * stride;
      if (at + sizeof(nvmlProcessInfo_t) > bytes) return std::optional<std::vector<GpuProcess>>();
      nvmlProcessInfo_t e{};
      std::memcpy(&e, data + at, sizeof e);
      if (e.pid == 0 || e.pid > static_cast<unsigned>(INT_MAX) ||
          (e.gpuInstanceId != kNoGpuInstance && e.gpuInstanceId > kMaxGpuInstance)) {
        return std::optional<std::vector<GpuProcess>>();
      }
      GpuProcess p;
      p.pid = static_cast<int>(e.pid);
      if (e.usedGpuMemory != kValueNotAvailable) p.used_memory_bytes = e.usedGpuMemory;
      out.push_back(p);
    }
    return std::optional<std::vector<GpuProcess>>(std::move(out));
  };
  for (const std::size_t stride : kStrides) {
    if (auto r = read(stride)) return *r;
  }
  return {};
}

std::string CpuListFromMask(const std::vector<unsigned long>& words) {
  std::string out;
  const int bits = static_cast<int>(sizeof(unsigned long) * CHAR_BIT);
  const int n = static_cast<int>(words.size()) * bits;
  const auto set = [&](int cpu) {
    return ((words[static_cast<size_t>(cpu / bits)] >> (cpu % bits)) & 1UL) != 0;
  };
  for (int cpu = 0; cpu < n;) {
    if (!set(cpu)) {
      ++cpu;
      continue;
    }
    int end = cpu;
    while (end + 1 < n && set(end + 1)) ++end;
    if (!out.empty()) out += ",";
    out += std::to_string(cpu);
    if (end > cpu) out += "-" + std::to_string(end);
    cpu = end + 1;
  }
  return out;
}

NvmlSource::NvmlSource() : api_(std::make_unique<Api>()), opened_(std::chrono::steady_clock::now()) {}

NvmlSource::~NvmlSource() {
  if (api_->events != nullptr && api_->set_free != nullptr) api_->set_free(api_->events);
  if (api_->initialized && api_->shutdown != nullptr) api_->shutdown();
  if (api_->lib != nullptr) dlclose(api_->lib);
}

std::unique_ptr<NvmlSource> NvmlSource::Open(const std::string& library) {
  std::unique_ptr<NvmlSource> src(new NvmlSource());
  Api& a = *src->api_;
  a.lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (a.lib == nullptr) {
    const char* why = dlerror();
    std::string line = std::string("no NVIDIA driver: ") + library + " not found (dlopen: " + (why ? why : "?") + ")";
    for (char& c : line) {
      if (c == '\n') c = ' ';
    }
    throw EnvironmentError(line);
  }
#define GPUPLAN_LOAD(m, sym, type)                                   \
  a.m = reinterpret_cast<type>(dlsym(a.lib, sym));                   \
  if (a.m == nullptr) a.missing[#m] = sym;
  GPUPLAN_NVML_SYMBOLS(GPUPLAN_LOAD)
#undef GPUPLAN_LOAD
  if (a.init == nullptr) throw EnvironmentError("no NVIDIA driver: " + library + " has no nvmlInit_v2");
  if (const nvmlReturn_t r = a.init(); r != NVML_SUCCESS) {
    throw EnvironmentError("no NVIDIA driver: nvmlInit_v2 failed: " + a.Error(r, "nvmlInit_v2"));
  }
  a.initialized = true;
  unsigned count = 0;
  if (a.count == nullptr || a.handle == nullptr) {
    throw EnvironmentError("NVML in " + library + " lacks nvmlDeviceGetCount_v2/nvmlDeviceGetHandleByIndex_v2");
  }
  if (const nvmlReturn_t r = a.count(&count); r != NVML_SUCCESS) {
    throw EnvironmentError("NVML: " + a.Error(r, "nvmlDeviceGetCount_v2"));
  }
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if (a.handle(i, &d) != NVML_SUCCESS) d = nullptr;
    a.devices.push_back(d);
  }
  if (a.set_create != nullptr && a.register_events != nullptr && a.set_wait != nullptr &&
      a.set_create(&a.events) == NVML_SUCCESS) {
    for (nvmlDevice_t d : a.devices) {
      if (d == nullptr) continue;
      unsigned long long want = nvmlEventTypeXidCriticalError;
      unsigned long long supported = 0;
      if (a.supported_events != nullptr && a.supported_events(d, &supported) == NVML_SUCCESS) {
        want = (nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError) &
               supported;
      }
      if (want != 0) a.register_events(d, want, a.events);
    }
  } else {
    a.events = nullptr;
  }
  return src;
}

std::string NvmlSource::Describe() const {
  char nv[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
  char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
  if (api_->nvml_version == nullptr || api_->nvml_version(nv, sizeof nv) != NVML_SUCCESS) nv[0] = '?';
  if (api_->driver_version == nullptr || api_->driver_version(drv, sizeof drv) != NVML_SUCCESS) drv[0] = '?';
  return std::string("NVML ") + Trim(nv) + ", driver " + Trim(drv);
}

SystemSnapshot NvmlSource::Snapshot() {
  const Api& a = *api_;
  SystemSnapshot s;
  s.at_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count();

  // Calls fn when the symbol `m` exists; on failure records the reason for every field in `fields`.
  const auto call = [&](std::map<std::string, std::string>& nm, auto fn, const char* sym,
                        std::initializer_list<const char*> fields, auto&& body) -> bool {
    if (fn == nullptr) {
      for (const char* f : fields) nm[f] = NotInDriver(sym);
      return false;
    }
    const nvmlReturn_t r = body(fn);
    if (r != NVML_SUCCESS) {
      for (const char* f : fields) nm[f] = a.Error(r, sym);
      return false;
    }
    return true;
  };

  {
    char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE] = {};
    if (call(s.not_measured, a.driver_version, "nvmlSystemGetDriverVersion", {"driver_version"},
             [&](auto f) { return f(buf, sizeof buf); })) {
      s.driver_version = Trim(buf);
    }
    char nbuf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE] = {};
    if (call(s.not_measured, a.nvml_version, "nvmlSystemGetNVMLVersion", {"nvml_version"},
             [&](auto f) { return f(nbuf, sizeof nbuf); })) {
      s.nvml_version = Trim(nbuf);
    }
    int cv = 0;
    if (call(s.not_measured, a.cuda_version, "nvmlSystemGetCudaDriverVersion_v2", {"cuda_driver_version"},
             [&](auto f) { return f(&cv); })) {
      s.cuda_driver_version = std::to_string(cv / 1000) + "." + std::to_string((cv % 1000) / 10);
    }
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) == 0) {
      s.hostname = std::string(host);
    } else {
      s.not_measured["hostname"] = "gethostname failed";
    }
  }

  for (size_t i = 0; i < a.devices.size(); ++i) {
    GpuSnapshot g;
    g.index = static_cast<int>(i);
    auto& nm = g.not_measured;
    nvmlDevice_t d = a.devices[i];
    if (d == nullptr) {
      nm["name"] = "nvmlDeviceGetHandleByIndex_v2 failed";
      s.gpus.push_back(std::move(g));
      continue;
    }
    const auto str = [&](auto fn, const char* sym, const char* field, unsigned size, std::optional<std::string>& out) {
      std::vector<char> buf(size, '\0');
      if (call(nm, fn, sym, {field}, [&](auto f) { return f(d, buf.data(), size); })) out = Trim(buf.data());
    };
    str(a.name, "nvmlDeviceGetName", "name", NVML_DEVICE_NAME_V2_BUFFER_SIZE, g.name);
    str(a.uuid, "nvmlDeviceGetUUID", "uuid", NVML_DEVICE_UUID_V2_BUFFER_SIZE, g.uuid);
    str(a.serial, "nvmlDeviceGetSerial", "serial", NVML_DEVICE_SERIAL_BUFFER_SIZE, g.serial);
    str(a.board_part, "nvmlDeviceGetBoardPartNumber", "board_part_number", NVML_DEVICE_PART_NUMBER_BUFFER_SIZE,
        g.board_part_number);
    str(a.vbios, "nvmlDeviceGetVbiosVersion", "vbios", NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE, g.vbios);

    nvmlPciInfo_t pci{};
    if (call(nm, a.pci, "nvmlDeviceGetPciInfo_v3", {"pci_bus_id", "pci_device_id", "pci_subsystem_id"},
             [&](auto f) { return f(d, &pci); })) {
      g.pci_bus_id = Trim(pci.busId);
      g.pci_device_id = pci.pciDeviceId;
      g.pci_subsystem_id = pci.pciSubSystemId;
    }
    int major = 0, minor = 0;
    if (call(nm, a.cc, "nvmlDeviceGetCudaComputeCapability", {"compute_capability"},
             [&](auto f) { return f(d, &major, &minor); })) {
      g.compute_capability = std::to_string(major) + "." + std::to_string(minor);
    }
    // Memory: v2 (with reserved), else v1.
    {
      nvmlMemory_v2_t m2{};
      m2.version = nvmlMemory_v2;
      std::map<std::string, std::string> nm2;
      if (call(nm2, a.mem_v2, "nvmlDeviceGetMemoryInfo_v2", {"memory_total", "memory_reserved", "memory_used"},
               [&](auto f) { return f(d, &m2); })) {
        g.memory_total = m2.total;
        g.memory_reserved = m2.reserved;
        g.memory_used = m2.used;
      } else {
        nvmlMemory_t m1{};
        if (call(nm, a.mem_v1, "nvmlDeviceGetMemoryInfo", {"memory_total", "memory_used"},
                 [&](auto f) { return f(d, &m1); })) {
          g.memory_total = m1.total;
          g.memory_used = m1.used;
        }
        nm["memory_reserved"] = nm2["memory_reserved"];
      }
    }
    // A value outside [lo, hi] (a PCIe generation 0 from a link that is down) is left absent, so
    // a snapshot holds only what its readers accept (snapshot_json.cc, nvidia_smi.cc).
    const auto uint_field = [&](auto fn, const char* sym, const char* field, auto& out, unsigned lo = 0,
                                unsigned hi = std::numeric_limits<unsigned>::max()) {
      unsigned v = 0;
      if (call(nm, fn, sym, {field}, [&](auto f) { return f(d, &v); })) {
        if (v < lo || v > hi) {
          nm[field] = std::string(sym) + " returned " + std::to_string(v) + ", outside " + std::to_string(lo) +
                      " to " + std::to_string(hi);
        } else {
          out = static_cast<typename std::decay_t<decltype(out)>::value_type>(v);
        }
      }
    };
    uint_field(a.gen_cur, "nvmlDeviceGetCurrPcieLinkGeneration", "pcie_gen_current", g.pcie_gen_current, 1, 6);
    uint_field(a.gen_max, "nvmlDeviceGetMaxPcieLinkGeneration", "pcie_gen_max", g.pcie_gen_max, 1, 6);
    uint_field(a.gen_gpu_max, "nvmlDeviceGetGpuMaxPcieLinkGeneration", "pcie_gen_gpu_max", g.pcie_gen_gpu_max, 1,
               6);
    nm["pcie_gen_host_max"] = "not exposed by NVML";
    uint_field(a.width_cur, "nvmlDeviceGetCurrPcieLinkWidth", "pcie_width_current", g.pcie_width_current, 1, 32);
    uint_field(a.width_max, "nvmlDeviceGetMaxPcieLinkWidth", "pcie_width_max", g.pcie_width_max, 1, 32);
    uint_field(a.replays, "nvmlDeviceGetPcieReplayCounter", "pcie_replays", g.pcie_replays);

    // NVLink: links 0.. until INVALID_ARGUMENT / NOT_SUPPORTED.
    if (a.nvlink_state == nullptr) {
      nm["nvlink_links"] = nm["nvlink_up"] = NotInDriver("nvmlDeviceGetNvLinkState");
    } else {
      int links = 0, up = 0;
      nvmlReturn_t last = NVML_SUCCESS;
      for (unsigned l = 0; l < NVML_NVLINK_MAX_LINKS; ++l) {
        nvmlEnableState_t st = 0;
        last = a.nvlink_state(d, l, &st);
        if (last != NVML_SUCCESS) break;
        ++links;
        if (st == NVML_FEATURE_ENABLED) ++up;
      }
      if (links == 0 && last != NVML_SUCCESS && last != NVML_ERROR_INVALID_ARGUMENT &&
          last != NVML_ERROR_NOT_SUPPORTED) {
        nm["nvlink_links"] = nm["nvlink_up"] = a.Error(last, "nvmlDeviceGetNvLinkState");
      } else {
        g.nvlink_links = links;
        g.nvlink_up = up;
      }
    }
    unsigned mig_cur = 0, mig_pend = 0;
    if (call(nm, a.mig, "nvmlDeviceGetMigMode", {"mig_enabled", "mig_pending"},
             [&](auto f) { return f(d, &mig_cur, &mig_pend); })) {
      g.mig_enabled = mig_cur == 1;
      g.mig_pending = mig_pend == 1;
    }
    nvmlEnableState_t pm = 0;
    if (call(nm, a.persistence, "nvmlDeviceGetPersistenceMode", {"persistence_mode"},
             [&](auto f) { return f(d, &pm); })) {
      g.persistence_mode = pm == NVML_FEATURE_ENABLED;
    }
    const auto watts = [&](auto fn, const char* sym, const char* field, std::optional<double>& out) {
      unsigned mw = 0;
      if (call(nm, fn, sym, {field}, [&](auto f) { return f(d, &mw); })) out = mw / 1000.0;
    };
    watts(a.power_usage, "nvmlDeviceGetPowerUsage", "power_draw", g.power_draw);
    watts(a.power_limit, "nvmlDeviceGetEnforcedPowerLimit", "power_limit", g.power_limit);
    watts(a.power_default, "nvmlDeviceGetPowerManagementDefaultLimit", "power_default_limit",
          g.power_default_limit);
    unsigned pmin = 0, pmax = 0;
    if (call(nm, a.power_constraints, "nvmlDeviceGetPowerManagementLimitConstraints", {"power_max_limit"},
             [&](auto f) { return f(d, &pmin, &pmax); })) {
      g.power_max_limit = pmax / 1000.0;
    }
    unsigned long long energy = 0;
    if (call(nm, a.energy, "nvmlDeviceGetTotalEnergyConsumption", {"energy_mj"},
             [&](auto f) { return f(d, &energy); })) {
      g.energy_mj = energy;
    }
    nvmlEnableState_t ecc_cur = 0, ecc_pend = 0;
    if (call(nm, a.ecc_mode, "nvmlDeviceGetEccMode", {"ecc_enabled", "ecc_pending"},
             [&](auto f) { return f(d, &ecc_cur, &ecc_pend); })) {
      g.ecc_enabled = ecc_cur == NVML_FEATURE_ENABLED;
      g.ecc_pending = ecc_pend == NVML_FEATURE_ENABLED;
    }
    const auto ecc = [&](int type, int counter, const char* field, std::optional<uint64_t>& out) {
      unsigned long long v = 0;
      if (call(nm, a.ecc_total, "nvmlDeviceGetTotalEccErrors", {field},
               [&](auto f) { return f(d, type, counter, &v); })) {
        out = v;
      }
    };
    ecc(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_VOLATILE_ECC, "ecc_volatile_corrected", g.ecc_volatile_corrected);
    ecc(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, "ecc_volatile_uncorrected",
        g.ecc_volatile_uncorrected);
    ecc(NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_AGGREGATE_ECC, "ecc_aggregate_corrected", g.ecc_aggregate_corrected);
    ecc(NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_AGGREGATE_ECC, "ecc_aggregate_uncorrected",
        g.ecc_aggregate_uncorrected);
    const auto retired = [&](int cause, const char* field, std::optional<uint64_t>& out) {
      unsigned n = 0;  // count query: addresses == NULL with count 0
      if (call(nm, a.retired, "nvmlDeviceGetRetiredPages", {field}, [&](auto f) {
            const nvmlReturn_t r = f(d, cause, &n, nullptr);
            return r == NVML_ERROR_INSUFFICIENT_SIZE ? NVML_SUCCESS : r;
          })) {
        out = n;
      }
    };
    retired(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS, "retired_pages_sbe", g.retired_pages_sbe);
    retired(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, "retired_pages_dbe", g.retired_pages_dbe);
    nvmlEnableState_t rp = 0;
    if (call(nm, a.retired_pending, "nvmlDeviceGetRetiredPagesPendingStatus", {"retired_pages_pending"},
             [&](auto f) { return f(d, &rp); })) {
      g.retired_pages_pending = rp == NVML_FEATURE_ENABLED;
    }
    unsigned corr = 0, unc = 0, pend = 0, fail = 0;
    if (call(nm, a.remapped, "nvmlDeviceGetRemappedRows",
             {"remapped_rows_correctable", "remapped_rows_uncorrectable", "remapped_rows_pending",
              "remapped_rows_failure"},
             [&](auto f) { return f(d, &corr, &unc, &pend, &fail); })) {
      g.remapped_rows_correctable = corr;
      g.remapped_rows_uncorrectable = unc;
      g.remapped_rows_pending = pend != 0;
      g.remapped_rows_failure = fail != 0;
    }
    unsigned t = 0;
    if (call(nm, a.temperature, "nvmlDeviceGetTemperature", {"temperature_c"},
             [&](auto f) { return f(d, NVML_TEMPERATURE_GPU, &t); })) {
      g.temperature_c = static_cast<int>(t);
    }
    unsigned ts = 0;
    if (call(nm, a.temp_threshold, "nvmlDeviceGetTemperatureThreshold", {"temperature_slowdown_c"},
             [&](auto f) { return f(d, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &ts); })) {
      g.temperature_slowdown_c = static_cast<int>(ts);
    }
    const auto clock = [&](auto fn, const char* sym, int type, const char* field, std::optional<int>& out) {
      unsigned mhz = 0;
      if (call(nm, fn, sym, {field}, [&](auto f) { return f(d, type, &mhz); })) out = static_cast<int>(mhz);
    };
    clock(a.clock, "nvmlDeviceGetClockInfo", NVML_CLOCK_SM, "sm_clock_mhz", g.sm_clock_mhz);
    clock(a.max_clock, "nvmlDeviceGetMaxClockInfo", NVML_CLOCK_SM, "sm_clock_max_mhz", g.sm_clock_max_mhz);
    clock(a.clock, "nvmlDeviceGetClockInfo", NVML_CLOCK_MEM, "mem_clock_mhz", g.mem_clock_mhz);
    {
      unsigned long long reasons = 0;
      if (a.event_reasons != nullptr) {
        if (call(nm, a.event_reasons, "nvmlDeviceGetCurrentClocksEventReasons", {"clock_event_reasons"},
                 [&](auto f) { return f(d, &reasons); })) {
          g.clock_event_reasons = reasons;
        }
      } else if (call(nm, a.throttle_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons", {"clock_event_reasons"},
                      [&](auto f) { return f(d, &reasons); })) {
        g.clock_event_reasons = reasons;
      }
    }
    nvmlUtilization_t u{};
    if (call(nm, a.utilization, "nvmlDeviceGetUtilizationRates", {"utilization_gpu", "utilization_memory"},
             [&](auto f) { return f(d, &u); })) {
      g.utilization_gpu = static_cast<int>(u.gpu);
      g.utilization_memory = static_cast<int>(u.memory);
    }
    // Compute processes: the count first (INSUFFICIENT_SIZE), then the entries; a process may
    // start between the two calls, so retry a few times with room to spare.
    if (a.processes == nullptr) {
      nm["processes"] = NotInDriver("nvmlDeviceGetComputeRunningProcesses_v3");
    } else {
      constexpr int kAttempts = 4;
      constexpr unsigned kSpare = 8;
      unsigned n = 0;
      nvmlReturn_t r = a.processes(d, &n, nullptr);
      for (int attempt = 0; attempt < kAttempts && r == NVML_ERROR_INSUFFICIENT_SIZE; ++attempt) {
        const unsigned room = n + kSpare;
        // Room for entries of either size (nvml_api.h: nvmlProcessInfo_t).
        std::vector<unsigned char> buf(static_cast<std::size_t>(room) * kNvmlProcessInfoCcBytes, 0);
        n = room;
        r = a.processes(d, &n, reinterpret_cast<nvmlProcessInfo_t*>(buf.data()));
        if (r == NVML_SUCCESS) {
          g.processes = ProcessesFromNvmlBuffer(buf.data(), buf.size(), n);
        }
      }
      if (r == NVML_SUCCESS && !g.processes) {
        g.processes.emplace();  // the count query found none
      } else if (r != NVML_SUCCESS) {
        nm["processes"] = a.Error(r, "nvmlDeviceGetComputeRunningProcesses_v3");
      }
    }
    // NUMA node: NVML when it has the call, else sysfs.
    {
      unsigned node = 0;
      std::map<std::string, std::string> nm_numa;
      if (call(nm_numa, a.numa, "nvmlDeviceGetNumaNodeId", {"numa_node"}, [&](auto f) { return f(d, &node); })) {
        g.numa_node = static_cast<int>(node);
      } else if (g.pci_bus_id) {
        // "00000000:18:00.0" -> "0000:18:00.0"
        std::string id = *g.pci_bus_id;
        for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (const auto colon = id.find(':'); colon != std::string::npos && colon > 4) id = id.substr(colon - 4);
        std::ifstream f("/sys/bus/pci/devices/" + id + "/numa_node");
        int v = -1;
        if (f >> v) {
          g.numa_node = v;
        } else {
          nm["numa_node"] = nm_numa["numa_node"] + "; /sys/bus/pci/devices/" + id + "/numa_node unreadable";
        }
      } else {
        nm["numa_node"] = nm_numa["numa_node"];
      }
    }
    {
      std::vector<unsigned long> words(16, 0);  // 1024 CPUs
      if (call(nm, a.cpu_affinity, "nvmlDeviceGetCpuAffinity", {"cpu_affinity"},
               [&](auto f) { return f(d, static_cast<unsigned>(words.size()), words.data()); })) {
        g.cpu_affinity = CpuListFromMask(words);
      }
    }
    s.gpus.push_back(std::move(g));
  }
  return s;
}

std::optional<PcieThroughput> NvmlSource::ReadPcieThroughput(int index) {
  const Api& a = *api_;
  if (a.pcie_throughput == nullptr || index < 0 || static_cast<std::size_t>(index) >= a.devices.size() ||
      a.devices[static_cast<std::size_t>(index)] == nullptr) {
    return std::nullopt;
  }
  nvmlDevice_t d = a.devices[static_cast<std::size_t>(index)];
  unsigned tx = 0, rx = 0;
  if (a.pcie_throughput(d, NVML_PCIE_UTIL_TX_BYTES, &tx) != NVML_SUCCESS ||
      a.pcie_throughput(d, NVML_PCIE_UTIL_RX_BYTES, &rx) != NVML_SUCCESS) {
    return std::nullopt;
  }
  return PcieThroughput{static_cast<double>(tx) * kNvmlPcieKilobyte, static_cast<double>(rx) * kNvmlPcieKilobyte};
}

std::optional<NvLinkCounters> NvmlSource::ReadNvLinkCounters(int index) {
  const Api& a = *api_;
  if (a.field_values == nullptr || index < 0 || static_cast<std::size_t>(index) >= a.devices.size() ||
      a.devices[static_cast<std::size_t>(index)] == nullptr) {
    return std::nullopt;
  }
  nvmlFieldValue_t v[2] = {};
  v[0].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
  v[1].fieldId = NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
  v[0].scopeId = v[1].scopeId = std::numeric_limits<unsigned int>::max();  // all links
  if (a.field_values(a.devices[static_cast<std::size_t>(index)], 2, v) != NVML_SUCCESS) {
    return std::nullopt;
  }
  const auto value = [](const nvmlFieldValue_t& f) -> std::optional<uint64_t> {
    if (f.nvmlReturn != NVML_SUCCESS) return std::nullopt;
    switch (f.valueType) {
      case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return f.value.ullVal;
      case NVML_VALUE_TYPE_UNSIGNED_LONG: return f.value.ulVal;
      case NVML_VALUE_TYPE_UNSIGNED_INT: return f.value.uiVal;
      default: return std::nullopt;
    }
  };
  const auto tx = value(v[0]), rx = value(v[1]);
  if (!tx || !rx) {
    return std::nullopt;
  }
  return NvLinkCounters{*tx * 1024, *rx * 1024};
}

std::vector<GpuEvent> NvmlSource::Events(unsigned timeout_ms) {
  std::vector<GpuEvent> out;
  const Api& a = *api_;
  if (a.events == nullptr) return out;
  unsigned wait = timeout_ms;
  for (int guard = 0; guard < 10000; ++guard) {
    nvmlEventData_t data{};
    const nvmlReturn_t r = a.set_wait(a.events, &data, wait);
    if (r != NVML_SUCCESS) break;  // NVML_ERROR_TIMEOUT: no more
    wait = 0;
    GpuEvent e;
    for (size_t i = 0; i < a.devices.size(); ++i) {
      if (a.devices[i] == data.device) e.gpu = static_cast<int>(i);
    }
    e.type = data.eventType;
    e.data = data.eventData;
    e.at_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_).count();
    out.push_back(e);
  }
  return out;
}

}  // namespace gpuplan
