// Our own declarations of the part of the NVML ABI that NvmlSource uses (nvml_source.cc loads
// libnvidia-ml.so.1 with dlopen, so there is no link-time dependency and no nvml.h is needed to
// build). Names, values and layouts follow nvml.h (CUDA 12/13); tests/unit/nvml_abi_test.cc checks
// them against the real header where one is installed.
#pragma once

#include <cstddef>

namespace gpuplan::nvml {

using nvmlReturn_t = int;
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_ALREADY_INITIALIZED = 5;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_POWER = 8;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_IRQ_ISSUE = 11;
inline constexpr nvmlReturn_t NVML_ERROR_LIBRARY_NOT_FOUND = 12;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_CORRUPTED_INFOROM = 14;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_RESET_REQUIRED = 16;
inline constexpr nvmlReturn_t NVML_ERROR_OPERATING_SYSTEM = 17;
inline constexpr nvmlReturn_t NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18;
inline constexpr nvmlReturn_t NVML_ERROR_IN_USE = 19;
inline constexpr nvmlReturn_t NVML_ERROR_MEMORY = 20;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_RESOURCES = 23;
inline constexpr nvmlReturn_t NVML_ERROR_FREQ_NOT_SUPPORTED = 24;
inline constexpr nvmlReturn_t NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// Symbolic name of a return code ("NVML_ERROR_NOT_SUPPORTED"), for codes we know.
const char* ReturnName(nvmlReturn_t r);

struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;

// enums are int-sized in the C ABI; we pass them as int.
using nvmlEnableState_t = int;
inline constexpr int NVML_FEATURE_DISABLED = 0;
inline constexpr int NVML_FEATURE_ENABLED = 1;

using nvmlClockType_t = int;
inline constexpr int NVML_CLOCK_GRAPHICS = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_CLOCK_MEM = 2;
inline constexpr int NVML_CLOCK_VIDEO = 3;

using nvmlTemperatureSensors_t = int;
inline constexpr int NVML_TEMPERATURE_GPU = 0;
using nvmlTemperatureThresholds_t = int;
inline constexpr int NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0;
inline constexpr int NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1;

using nvmlMemoryErrorType_t = int;
inline constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;
inline constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;
using nvmlEccCounterType_t = int;
inline constexpr int NVML_VOLATILE_ECC = 0;
inline constexpr int NVML_AGGREGATE_ECC = 1;

using nvmlPageRetirementCause_t = int;
inline constexpr int NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0;
inline constexpr int NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1;

inline constexpr unsigned long long nvmlEventTypeSingleBitEccError = 0x1ULL;
inline constexpr unsigned long long nvmlEventTypeDoubleBitEccError = 0x2ULL;
inline constexpr unsigned long long nvmlEventTypeXidCriticalError = 0x8ULL;

inline constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;

using nvmlPcieUtilCounter_t = int;
inline constexpr int NVML_PCIE_UTIL_TX_BYTES = 0;
inline constexpr int NVML_PCIE_UTIL_RX_BYTES = 1;
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_SERIAL_BUFFER_SIZE = 30;
inline constexpr unsigned NVML_DEVICE_PART_NUMBER_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE = 32;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32;
inline constexpr unsigned NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16;

struct nvmlPciInfo_t {
  char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;     // (device << 16) | vendor
  unsigned int pciSubSystemId;
  char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlMemory_v2_t {
  unsigned int version;  // nvmlMemory_v2
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
inline constexpr unsigned int nvmlMemory_v2 =
    static_cast<unsigned int>(sizeof(nvmlMemory_v2_t)) | (2u << 24);

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlProcessInfo_t as NVML 11.x-12.x declare it for nvmlDeviceGetComputeRunningProcesses_v3
// (24 bytes). Drivers of the R535-R545 series fill 32-byte entries (an extra
// usedGpuCcProtectedMemory); nvml_source.cc reads the array with the stride the driver used.
struct nvmlProcessInfo_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;  // bytes; NVML_VALUE_NOT_AVAILABLE when unknown
  unsigned int gpuInstanceId;        // 0xFFFFFFFF when not MIG
  unsigned int computeInstanceId;
};

struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

// nvmlDeviceGetFieldValues: one request and its answer per entry.
union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
};
using nvmlValueType_t = int;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_INT = 1;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;      // the NVLink for per-link fields; UINT_MAX: summed over all links
  long long timestamp;       // us since the epoch
  long long latencyUsec;
  nvmlValueType_t valueType;
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};
// Cumulative NVLink data payload, KiB (nvml.h: "NVLink TX/RX Data throughput in KiB"; what
// `nvidia-smi nvlink -gt d` prints).
inline constexpr unsigned int NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138;
inline constexpr unsigned int NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139;

// Function-pointer types, one per symbol (the symbol name is in the comment when versioned).
using PFN_nvmlInit = nvmlReturn_t (*)();                                   // nvmlInit_v2
using PFN_nvmlShutdown = nvmlReturn_t (*)();
using PFN_nvmlErrorString = const char* (*)(nvmlReturn_t);
using PFN_nvmlSystemGetString = nvmlReturn_t (*)(char*, unsigned int);    // driver / NVML version
using PFN_nvmlSystemGetCudaDriverVersion = nvmlReturn_t (*)(int*);        // _v2
using PFN_nvmlDeviceGetCount = nvmlReturn_t (*)(unsigned int*);           // _v2
using PFN_nvmlDeviceGetHandleByIndex = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);  // _v2
using PFN_nvmlDeviceGetString = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using PFN_nvmlDeviceGetPciInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);  // _v3
using PFN_nvmlDeviceGetIntPair = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);  // compute capability
using PFN_nvmlDeviceGetMemoryInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using PFN_nvmlDeviceGetMemoryInfo_v2 = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using PFN_nvmlDeviceGetUint = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using PFN_nvmlDeviceGetUintPair = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using PFN_nvmlDeviceGetEnable = nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*);
using PFN_nvmlDeviceGetEnablePair = nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*);
using PFN_nvmlDeviceGetULL = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using PFN_nvmlDeviceGetFieldValues = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);
// nvmlDeviceGetPcieThroughput: KB/s of one direction, counted over a 20 ms window.
using PFN_nvmlDeviceGetPcieThroughput = nvmlReturn_t (*)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int*);
using PFN_nvmlDeviceGetNvLinkState = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
using PFN_nvmlDeviceGetTotalEccErrors =
    nvmlReturn_t (*)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t, unsigned long long*);
using PFN_nvmlDeviceGetRetiredPages =
    nvmlReturn_t (*)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int*, unsigned long long*);
using PFN_nvmlDeviceGetRemappedRows =
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*, unsigned int*);
using PFN_nvmlDeviceGetTemperature = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*);
using PFN_nvmlDeviceGetTemperatureThreshold =
    nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned int*);
using PFN_nvmlDeviceGetClockInfo = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
using PFN_nvmlDeviceGetUtilizationRates = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using PFN_nvmlDeviceGetCpuAffinity = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned long*);
using PFN_nvmlDeviceGetComputeRunningProcesses =
    nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*);  // _v3
using PFN_nvmlEventSetCreate = nvmlReturn_t (*)(nvmlEventSet_t*);
using PFN_nvmlDeviceRegisterEvents = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using PFN_nvmlEventSetWait = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);  // _v2
using PFN_nvmlEventSetFree = nvmlReturn_t (*)(nvmlEventSet_t);

}  // namespace gpuplan::nvml
