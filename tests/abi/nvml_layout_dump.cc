// Prints, one JSON object per line, what src/telemetry/nvml_api.h declares of the NVML ABI:
// struct sizes and field offsets, typedefs, constant values, and every NVML symbol that
// nvml_source.cc looks up with dlsym together with its parameter types. nvml_bindings_check.py
// holds that against bindgen's translation of the real nvml.h (see README.md next to this file).
//
// The lists below are written by hand from nvml_api.h (structs, typedefs, constants) and from the
// GPUPLAN_NVML_SYMBOLS table in nvml_source.cc (functions). nvml_bindings_check.py --header/--source
// re-reads both files and fails if something declared there is missing here, so the lists cannot
// silently fall behind.
//
// Type descriptions use a small grammar the checker parses:
//   int uint long ulong llong ullong char schar uchar short ushort float double void bool
//   const T | ptr(T) | array(T,N) | struct NAME
#include <cstddef>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "telemetry/nvml_api.h"

namespace {

using namespace gpuplan::nvml;  // NOLINT

// ---- type descriptions ---------------------------------------------------------------------
template <class T>
struct Desc;  // no definition: a type nobody described is a compile error, not a silent "?"

#define GPUPLAN_SCALAR(T, text) \
  template <>                   \
  struct Desc<T> {              \
    static std::string s() { return text; } \
  };
GPUPLAN_SCALAR(void, "void")
GPUPLAN_SCALAR(bool, "bool")
GPUPLAN_SCALAR(char, "char")
GPUPLAN_SCALAR(signed char, "schar")
GPUPLAN_SCALAR(unsigned char, "uchar")
GPUPLAN_SCALAR(short, "short")
GPUPLAN_SCALAR(unsigned short, "ushort")
GPUPLAN_SCALAR(int, "int")
GPUPLAN_SCALAR(unsigned int, "uint")
GPUPLAN_SCALAR(long, "long")
GPUPLAN_SCALAR(unsigned long, "ulong")
GPUPLAN_SCALAR(long long, "llong")
GPUPLAN_SCALAR(unsigned long long, "ullong")
GPUPLAN_SCALAR(float, "float")
GPUPLAN_SCALAR(double, "double")
#undef GPUPLAN_SCALAR

// Structs: named as nvml_api.h names them (the checker follows bindgen's typedefs to match).
#define GPUPLAN_STRUCT_NAME(T) \
  template <>                  \
  struct Desc<T> {             \
    static std::string s() { return "struct " #T; } \
  };
GPUPLAN_STRUCT_NAME(nvmlDevice_st)    // opaque
GPUPLAN_STRUCT_NAME(nvmlEventSet_st)  // opaque
GPUPLAN_STRUCT_NAME(nvmlPciInfo_t)
GPUPLAN_STRUCT_NAME(nvmlMemory_t)
GPUPLAN_STRUCT_NAME(nvmlMemory_v2_t)
GPUPLAN_STRUCT_NAME(nvmlUtilization_t)
GPUPLAN_STRUCT_NAME(nvmlEventData_t)
GPUPLAN_STRUCT_NAME(nvmlValue_t)  // a union
GPUPLAN_STRUCT_NAME(nvmlFieldValue_t)
GPUPLAN_STRUCT_NAME(nvmlProcessInfo_t)
#undef GPUPLAN_STRUCT_NAME

template <class T>
struct Desc<const T> {
  static std::string s() { return "const " + Desc<T>::s(); }
};
template <class T>
struct Desc<T*> {
  static std::string s() { return "ptr(" + Desc<T>::s() + ")"; }
};
template <class T, std::size_t N>
struct Desc<T[N]> {
  static std::string s() { return "array(" + Desc<T>::s() + "," + std::to_string(N) + ")"; }
};

template <class F>
struct Sig;
template <class R, class... A>
struct Sig<R (*)(A...)> {
  static std::string ret() { return Desc<R>::s(); }
  static std::vector<std::string> params() { return {Desc<A>::s()...}; }
};

// ---- JSON output ---------------------------------------------------------------------------
std::string Q(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

std::string List(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? "," : "") + Q(v[i]);
  return out + "]";
}

// "(nvmlDevice_t, char*, unsigned int)" -> {"nvmlDevice_t", "char*", "unsigned int"}. Our parameter
// types contain no commas of their own (no templates, no function-pointer parameters).
std::vector<std::string> SplitParams(std::string text) {
  std::vector<std::string> out;
  if (!text.empty() && text.front() == '(') text.erase(0, 1);
  if (!text.empty() && text.back() == ')') text.pop_back();
  std::string cur;
  const auto flush = [&] {
    const auto b = cur.find_first_not_of(' ');
    const auto e = cur.find_last_not_of(' ');
    if (b != std::string::npos) out.push_back(cur.substr(b, e - b + 1));
    cur.clear();
  };
  for (char c : text) {
    if (c == ',') {
      flush();
    } else {
      cur += c;
    }
  }
  flush();
  if (out.size() == 1 && out[0] == "void") out.clear();
  return out;
}

void Line(const std::string& s) { std::printf("%s\n", s.c_str()); }

template <class T>
void Typedef(const char* name) {
  Line(std::string("{\"kind\":\"typedef\",\"name\":") + Q(name) + ",\"type\":" + Q(Desc<T>::s()) +
       ",\"size\":" + std::to_string(sizeof(T)) + "}");
}

template <class S>
void Struct(const char* name) {
  Line(std::string("{\"kind\":\"struct\",\"name\":") + Q(name) + ",\"size\":" + std::to_string(sizeof(S)) +
       ",\"align\":" + std::to_string(alignof(S)) + "}");
}

template <class F>
void Field(const char* st, const char* name, std::size_t offset) {
  Line(std::string("{\"kind\":\"field\",\"struct\":") + Q(st) + ",\"name\":" + Q(name) +
       ",\"offset\":" + std::to_string(offset) + ",\"size\":" + std::to_string(sizeof(F)) +
       ",\"type\":" + Q(Desc<F>::s()) + "}");
}

template <class T>
void Const(const char* name, T value) {
  static_assert(std::is_integral_v<T>);
  const std::string v = std::is_signed_v<T> ? std::to_string(static_cast<long long>(value))
                                            : std::to_string(static_cast<unsigned long long>(value));
  Line(std::string("{\"kind\":\"const\",\"name\":") + Q(name) + ",\"value\":" + v + ",\"type\":" +
       Q(Desc<T>::s()) + "}");
}

template <class F>
void Function(const char* symbol, const char* pfn, const char* ret_text, const char* params_text) {
  Line(std::string("{\"kind\":\"function\",\"symbol\":") + Q(symbol) + ",\"pfn\":" + Q(pfn) +
       ",\"ret\":" + Q(Sig<F>::ret()) + ",\"ret_text\":" + Q(ret_text) + ",\"params\":" +
       List(Sig<F>::params()) + ",\"params_text\":" + List(SplitParams(params_text)) + "}");
}

}  // namespace

#define TYPEDEF(T) Typedef<T>(#T)
#define STRUCT(S) Struct<S>(#S)
#define FIELD(S, f) Field<decltype(S::f)>(#S, #f, offsetof(S, f))
#define CONST(c) Const(#c, c)
// FN(symbol, PFN type, return type as NVML spells it, (parameter types as NVML spells them)).
// The spelled-out signature must be the PFN type exactly (static_assert), so the text the checker
// reads (which keeps enum typedef names such as nvmlEnableState_t) cannot drift from the code.
#define FN(sym, pfn, ret, params)                                                     \
  do {                                                                                \
    static_assert(std::is_same_v<pfn, ret(*) params>, sym ": FN() text is not " #pfn); \
    Function<pfn>(sym, #pfn, #ret, #params);                                          \
  } while (0)

int main() {
  Line("{\"kind\":\"meta\",\"source\":\"src/telemetry/nvml_api.h\",\"pointer_size\":" +
       std::to_string(sizeof(void*)) + ",\"long_size\":" + std::to_string(sizeof(long)) + "}");

  // ---- typedefs ----
  TYPEDEF(nvmlReturn_t);
  TYPEDEF(nvmlDevice_t);
  TYPEDEF(nvmlEventSet_t);
  TYPEDEF(nvmlEnableState_t);
  TYPEDEF(nvmlClockType_t);
  TYPEDEF(nvmlTemperatureSensors_t);
  TYPEDEF(nvmlTemperatureThresholds_t);
  TYPEDEF(nvmlMemoryErrorType_t);
  TYPEDEF(nvmlEccCounterType_t);
  TYPEDEF(nvmlPcieUtilCounter_t);
  TYPEDEF(nvmlValueType_t);
  TYPEDEF(nvmlPageRetirementCause_t);

  // ---- structs, every field in declaration order ----
  STRUCT(nvmlPciInfo_t);
  FIELD(nvmlPciInfo_t, busIdLegacy);
  FIELD(nvmlPciInfo_t, domain);
  FIELD(nvmlPciInfo_t, bus);
  FIELD(nvmlPciInfo_t, device);
  FIELD(nvmlPciInfo_t, pciDeviceId);
  FIELD(nvmlPciInfo_t, pciSubSystemId);
  FIELD(nvmlPciInfo_t, busId);

  STRUCT(nvmlMemory_t);
  FIELD(nvmlMemory_t, total);
  FIELD(nvmlMemory_t, free);
  FIELD(nvmlMemory_t, used);

  STRUCT(nvmlMemory_v2_t);
  FIELD(nvmlMemory_v2_t, version);
  FIELD(nvmlMemory_v2_t, total);
  FIELD(nvmlMemory_v2_t, reserved);
  FIELD(nvmlMemory_v2_t, free);
  FIELD(nvmlMemory_v2_t, used);

  STRUCT(nvmlUtilization_t);
  FIELD(nvmlUtilization_t, gpu);
  FIELD(nvmlUtilization_t, memory);

  STRUCT(nvmlEventData_t);
  FIELD(nvmlEventData_t, device);
  FIELD(nvmlEventData_t, eventType);
  FIELD(nvmlEventData_t, eventData);
  FIELD(nvmlEventData_t, gpuInstanceId);
  FIELD(nvmlEventData_t, computeInstanceId);
  STRUCT(nvmlProcessInfo_t);
  FIELD(nvmlProcessInfo_t, pid);
  FIELD(nvmlProcessInfo_t, usedGpuMemory);
  FIELD(nvmlProcessInfo_t, gpuInstanceId);
  FIELD(nvmlProcessInfo_t, computeInstanceId);

  STRUCT(nvmlValue_t);  // a union: every member at offset 0
  FIELD(nvmlValue_t, dVal);
  FIELD(nvmlValue_t, uiVal);
  FIELD(nvmlValue_t, ulVal);
  FIELD(nvmlValue_t, ullVal);
  FIELD(nvmlValue_t, sllVal);

  STRUCT(nvmlFieldValue_t);
  FIELD(nvmlFieldValue_t, fieldId);
  FIELD(nvmlFieldValue_t, scopeId);
  FIELD(nvmlFieldValue_t, timestamp);
  FIELD(nvmlFieldValue_t, latencyUsec);
  FIELD(nvmlFieldValue_t, valueType);
  FIELD(nvmlFieldValue_t, nvmlReturn);
  FIELD(nvmlFieldValue_t, value);

  // ---- constants ----
  CONST(NVML_SUCCESS);
  CONST(NVML_ERROR_UNINITIALIZED);
  CONST(NVML_ERROR_INVALID_ARGUMENT);
  CONST(NVML_ERROR_NOT_SUPPORTED);
  CONST(NVML_ERROR_NO_PERMISSION);
  CONST(NVML_ERROR_ALREADY_INITIALIZED);
  CONST(NVML_ERROR_NOT_FOUND);
  CONST(NVML_ERROR_INSUFFICIENT_SIZE);
  CONST(NVML_ERROR_INSUFFICIENT_POWER);
  CONST(NVML_ERROR_DRIVER_NOT_LOADED);
  CONST(NVML_ERROR_TIMEOUT);
  CONST(NVML_ERROR_IRQ_ISSUE);
  CONST(NVML_ERROR_LIBRARY_NOT_FOUND);
  CONST(NVML_ERROR_FUNCTION_NOT_FOUND);
  CONST(NVML_ERROR_CORRUPTED_INFOROM);
  CONST(NVML_ERROR_GPU_IS_LOST);
  CONST(NVML_ERROR_RESET_REQUIRED);
  CONST(NVML_ERROR_OPERATING_SYSTEM);
  CONST(NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  CONST(NVML_ERROR_IN_USE);
  CONST(NVML_ERROR_MEMORY);
  CONST(NVML_ERROR_NO_DATA);
  CONST(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED);
  CONST(NVML_ERROR_INSUFFICIENT_RESOURCES);
  CONST(NVML_ERROR_FREQ_NOT_SUPPORTED);
  CONST(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  CONST(NVML_ERROR_UNKNOWN);
  CONST(NVML_FEATURE_DISABLED);
  CONST(NVML_FEATURE_ENABLED);
  CONST(NVML_CLOCK_GRAPHICS);
  CONST(NVML_CLOCK_SM);
  CONST(NVML_CLOCK_MEM);
  CONST(NVML_CLOCK_VIDEO);
  CONST(NVML_TEMPERATURE_GPU);
  CONST(NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
  CONST(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
  CONST(NVML_MEMORY_ERROR_TYPE_CORRECTED);
  CONST(NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
  CONST(NVML_VOLATILE_ECC);
  CONST(NVML_AGGREGATE_ECC);
  CONST(NVML_PCIE_UTIL_TX_BYTES);
  CONST(NVML_PCIE_UTIL_RX_BYTES);
  CONST(NVML_VALUE_TYPE_UNSIGNED_INT);
  CONST(NVML_VALUE_TYPE_UNSIGNED_LONG);
  CONST(NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
  CONST(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX);
  CONST(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX);
  CONST(NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
  CONST(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
  CONST(nvmlEventTypeSingleBitEccError);
  CONST(nvmlEventTypeDoubleBitEccError);
  CONST(nvmlEventTypeXidCriticalError);
  CONST(NVML_NVLINK_MAX_LINKS);
  CONST(NVML_DEVICE_NAME_V2_BUFFER_SIZE);
  CONST(NVML_DEVICE_UUID_V2_BUFFER_SIZE);
  CONST(NVML_DEVICE_SERIAL_BUFFER_SIZE);
  CONST(NVML_DEVICE_PART_NUMBER_BUFFER_SIZE);
  CONST(NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
  CONST(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
  CONST(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
  CONST(NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
  CONST(NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
  CONST(nvmlMemory_v2);

  // ---- functions: the GPUPLAN_NVML_SYMBOLS table of nvml_source.cc, in its order ----
  FN("nvmlInit_v2", PFN_nvmlInit, nvmlReturn_t, ());
  FN("nvmlShutdown", PFN_nvmlShutdown, nvmlReturn_t, ());
  FN("nvmlErrorString", PFN_nvmlErrorString, const char*, (nvmlReturn_t));
  FN("nvmlSystemGetDriverVersion", PFN_nvmlSystemGetString, nvmlReturn_t, (char*, unsigned int));
  FN("nvmlSystemGetNVMLVersion", PFN_nvmlSystemGetString, nvmlReturn_t, (char*, unsigned int));
  FN("nvmlSystemGetCudaDriverVersion_v2", PFN_nvmlSystemGetCudaDriverVersion, nvmlReturn_t, (int*));
  FN("nvmlDeviceGetCount_v2", PFN_nvmlDeviceGetCount, nvmlReturn_t, (unsigned int*));
  FN("nvmlDeviceGetHandleByIndex_v2", PFN_nvmlDeviceGetHandleByIndex, nvmlReturn_t,
     (unsigned int, nvmlDevice_t*));
  FN("nvmlDeviceGetName", PFN_nvmlDeviceGetString, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int));
  FN("nvmlDeviceGetUUID", PFN_nvmlDeviceGetString, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int));
  FN("nvmlDeviceGetSerial", PFN_nvmlDeviceGetString, nvmlReturn_t, (nvmlDevice_t, char*, unsigned int));
  FN("nvmlDeviceGetBoardPartNumber", PFN_nvmlDeviceGetString, nvmlReturn_t,
     (nvmlDevice_t, char*, unsigned int));
  FN("nvmlDeviceGetVbiosVersion", PFN_nvmlDeviceGetString, nvmlReturn_t,
     (nvmlDevice_t, char*, unsigned int));
  FN("nvmlDeviceGetPciInfo_v3", PFN_nvmlDeviceGetPciInfo, nvmlReturn_t, (nvmlDevice_t, nvmlPciInfo_t*));
  FN("nvmlDeviceGetCudaComputeCapability", PFN_nvmlDeviceGetIntPair, nvmlReturn_t,
     (nvmlDevice_t, int*, int*));
  FN("nvmlDeviceGetMemoryInfo_v2", PFN_nvmlDeviceGetMemoryInfo_v2, nvmlReturn_t,
     (nvmlDevice_t, nvmlMemory_v2_t*));
  FN("nvmlDeviceGetMemoryInfo", PFN_nvmlDeviceGetMemoryInfo, nvmlReturn_t, (nvmlDevice_t, nvmlMemory_t*));
  FN("nvmlDeviceGetCurrPcieLinkGeneration", PFN_nvmlDeviceGetUint, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetMaxPcieLinkGeneration", PFN_nvmlDeviceGetUint, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetGpuMaxPcieLinkGeneration", PFN_nvmlDeviceGetUint, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetCurrPcieLinkWidth", PFN_nvmlDeviceGetUint, nvmlReturn_t, (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetMaxPcieLinkWidth", PFN_nvmlDeviceGetUint, nvmlReturn_t, (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetPcieReplayCounter", PFN_nvmlDeviceGetUint, nvmlReturn_t, (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetPcieThroughput", PFN_nvmlDeviceGetPcieThroughput, nvmlReturn_t,
     (nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int*));
  FN("nvmlDeviceGetFieldValues", PFN_nvmlDeviceGetFieldValues, nvmlReturn_t, (nvmlDevice_t, int, nvmlFieldValue_t*));
  FN("nvmlDeviceGetNvLinkState", PFN_nvmlDeviceGetNvLinkState, nvmlReturn_t,
     (nvmlDevice_t, unsigned int, nvmlEnableState_t*));
  FN("nvmlDeviceGetMigMode", PFN_nvmlDeviceGetUintPair, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*, unsigned int*));
  FN("nvmlDeviceGetPersistenceMode", PFN_nvmlDeviceGetEnable, nvmlReturn_t,
     (nvmlDevice_t, nvmlEnableState_t*));
  FN("nvmlDeviceGetPowerUsage", PFN_nvmlDeviceGetUint, nvmlReturn_t, (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetEnforcedPowerLimit", PFN_nvmlDeviceGetUint, nvmlReturn_t, (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetPowerManagementDefaultLimit", PFN_nvmlDeviceGetUint, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetPowerManagementLimitConstraints", PFN_nvmlDeviceGetUintPair, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*, unsigned int*));
  FN("nvmlDeviceGetTotalEnergyConsumption", PFN_nvmlDeviceGetULL, nvmlReturn_t,
     (nvmlDevice_t, unsigned long long*));
  FN("nvmlDeviceGetEccMode", PFN_nvmlDeviceGetEnablePair, nvmlReturn_t,
     (nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*));
  FN("nvmlDeviceGetTotalEccErrors", PFN_nvmlDeviceGetTotalEccErrors, nvmlReturn_t,
     (nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, unsigned long long*));
  FN("nvmlDeviceGetRetiredPages", PFN_nvmlDeviceGetRetiredPages, nvmlReturn_t,
     (nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int*, unsigned long long*));
  FN("nvmlDeviceGetRetiredPagesPendingStatus", PFN_nvmlDeviceGetEnable, nvmlReturn_t,
     (nvmlDevice_t, nvmlEnableState_t*));
  FN("nvmlDeviceGetRemappedRows", PFN_nvmlDeviceGetRemappedRows, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*));
  FN("nvmlDeviceGetTemperature", PFN_nvmlDeviceGetTemperature, nvmlReturn_t,
     (nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*));
  FN("nvmlDeviceGetTemperatureThreshold", PFN_nvmlDeviceGetTemperatureThreshold, nvmlReturn_t,
     (nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned int*));
  FN("nvmlDeviceGetClockInfo", PFN_nvmlDeviceGetClockInfo, nvmlReturn_t,
     (nvmlDevice_t, nvmlClockType_t, unsigned int*));
  FN("nvmlDeviceGetMaxClockInfo", PFN_nvmlDeviceGetClockInfo, nvmlReturn_t,
     (nvmlDevice_t, nvmlClockType_t, unsigned int*));
  FN("nvmlDeviceGetCurrentClocksEventReasons", PFN_nvmlDeviceGetULL, nvmlReturn_t,
     (nvmlDevice_t, unsigned long long*));
  FN("nvmlDeviceGetCurrentClocksThrottleReasons", PFN_nvmlDeviceGetULL, nvmlReturn_t,
     (nvmlDevice_t, unsigned long long*));
  FN("nvmlDeviceGetUtilizationRates", PFN_nvmlDeviceGetUtilizationRates, nvmlReturn_t,
     (nvmlDevice_t, nvmlUtilization_t*));
  FN("nvmlDeviceGetNumaNodeId", PFN_nvmlDeviceGetUint, nvmlReturn_t, (nvmlDevice_t, unsigned int*));
  FN("nvmlDeviceGetCpuAffinity", PFN_nvmlDeviceGetCpuAffinity, nvmlReturn_t,
     (nvmlDevice_t, unsigned int, unsigned long*));
  FN("nvmlDeviceGetComputeRunningProcesses_v3", PFN_nvmlDeviceGetComputeRunningProcesses, nvmlReturn_t,
     (nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*));
  FN("nvmlEventSetCreate", PFN_nvmlEventSetCreate, nvmlReturn_t, (nvmlEventSet_t*));
  FN("nvmlDeviceRegisterEvents", PFN_nvmlDeviceRegisterEvents, nvmlReturn_t,
     (nvmlDevice_t, unsigned long long, nvmlEventSet_t));
  FN("nvmlDeviceGetSupportedEventTypes", PFN_nvmlDeviceGetULL, nvmlReturn_t,
     (nvmlDevice_t, unsigned long long*));
  FN("nvmlEventSetWait_v2", PFN_nvmlEventSetWait, nvmlReturn_t, (nvmlEventSet_t, nvmlEventData_t*, unsigned int));
  FN("nvmlEventSetFree", PFN_nvmlEventSetFree, nvmlReturn_t, (nvmlEventSet_t));
  return 0;
}
