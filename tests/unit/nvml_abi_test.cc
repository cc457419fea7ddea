// Our NVML declarations (src/telemetry/nvml_api.h) against the real nvml.h, when CMake found one
// (tests/fake_nvml/CMakeLists.txt). Without it the checks below are only self-consistency.
#include <gtest/gtest.h>

#include <cstddef>

#include "telemetry/nvml_api.h"

#if defined(GPUPLAN_HAVE_REAL_NVML_H) && __has_include(<nvml.h>)
#include <nvml.h>
#define GPUPLAN_REAL_NVML 1
#endif

namespace n = gpuplan::nvml;

// The documented layout, independent of any header.
static_assert(sizeof(n::nvmlPciInfo_t) == 68);
static_assert(offsetof(n::nvmlPciInfo_t, pciDeviceId) == 28);
static_assert(offsetof(n::nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(n::nvmlMemory_t) == 24);
static_assert(sizeof(n::nvmlMemory_v2_t) == 40);
static_assert(n::nvmlMemory_v2 == (40u | (2u << 24)));
static_assert(sizeof(n::nvmlEventData_t) == 32);
static_assert(sizeof(n::nvmlProcessInfo_t) == 24);  // the 11.8-12.x layout; R535-R545 drivers fill 32

#ifdef GPUPLAN_REAL_NVML
#define SAME_STRUCT(ours, theirs) static_assert(sizeof(n::ours) == sizeof(theirs), #ours)
#define SAME_OFFSET(ours, theirs, f) static_assert(offsetof(n::ours, f) == offsetof(theirs, f), #ours "." #f)
#define SAME_VALUE(name) static_assert(static_cast<long long>(n::name) == static_cast<long long>(::name), #name)
SAME_STRUCT(nvmlPciInfo_t, ::nvmlPciInfo_t);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, busIdLegacy);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, domain);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, bus);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, device);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, pciDeviceId);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, pciSubSystemId);
SAME_OFFSET(nvmlPciInfo_t, ::nvmlPciInfo_t, busId);
SAME_STRUCT(nvmlMemory_t, ::nvmlMemory_t);
SAME_OFFSET(nvmlMemory_t, ::nvmlMemory_t, total);
SAME_OFFSET(nvmlMemory_t, ::nvmlMemory_t, free);
SAME_OFFSET(nvmlMemory_t, ::nvmlMemory_t, used);
SAME_STRUCT(nvmlMemory_v2_t, ::nvmlMemory_v2_t);
SAME_OFFSET(nvmlMemory_v2_t, ::nvmlMemory_v2_t, version);
SAME_OFFSET(nvmlMemory_v2_t, ::nvmlMemory_v2_t, total);
SAME_OFFSET(nvmlMemory_v2_t, ::nvmlMemory_v2_t, reserved);
SAME_OFFSET(nvmlMemory_v2_t, ::nvmlMemory_v2_t, free);
SAME_OFFSET(nvmlMemory_v2_t, ::nvmlMemory_v2_t, used);
SAME_VALUE(nvmlMemory_v2);
SAME_STRUCT(nvmlUtilization_t, ::nvmlUtilization_t);
SAME_OFFSET(nvmlUtilization_t, ::nvmlUtilization_t, memory);
SAME_STRUCT(nvmlEventData_t, ::nvmlEventData_t);
SAME_OFFSET(nvmlEventData_t, ::nvmlEventData_t, eventType);
SAME_OFFSET(nvmlEventData_t, ::nvmlEventData_t, eventData);
SAME_OFFSET(nvmlEventData_t, ::nvmlEventData_t, gpuInstanceId);
SAME_OFFSET(nvmlEventData_t, ::nvmlEventData_t, computeInstanceId);
static_assert(sizeof(::nvmlEnableState_t) == sizeof(int));
SAME_VALUE(NVML_SUCCESS);
SAME_VALUE(NVML_ERROR_UNINITIALIZED);
SAME_VALUE(NVML_ERROR_INVALID_ARGUMENT);
SAME_VALUE(NVML_ERROR_NOT_SUPPORTED);
SAME_VALUE(NVML_ERROR_NO_PERMISSION);
SAME_VALUE(NVML_ERROR_NOT_FOUND);
SAME_VALUE(NVML_ERROR_INSUFFICIENT_SIZE);
SAME_VALUE(NVML_ERROR_DRIVER_NOT_LOADED);
SAME_VALUE(NVML_ERROR_TIMEOUT);
SAME_VALUE(NVML_ERROR_FUNCTION_NOT_FOUND);
SAME_VALUE(NVML_ERROR_GPU_IS_LOST);
SAME_VALUE(NVML_ERROR_UNKNOWN);
SAME_VALUE(NVML_FEATURE_ENABLED);
SAME_VALUE(NVML_CLOCK_SM);
SAME_VALUE(NVML_CLOCK_MEM);
SAME_VALUE(NVML_TEMPERATURE_GPU);
SAME_VALUE(NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
SAME_VALUE(NVML_MEMORY_ERROR_TYPE_CORRECTED);
SAME_VALUE(NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
SAME_VALUE(NVML_VOLATILE_ECC);
SAME_VALUE(NVML_AGGREGATE_ECC);
SAME_VALUE(NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
SAME_VALUE(nvmlEventTypeXidCriticalError);
SAME_VALUE(nvmlEventTypeDoubleBitEccError);
SAME_VALUE(nvmlEventTypeSingleBitEccError);
SAME_VALUE(NVML_NVLINK_MAX_LINKS);
SAME_VALUE(NVML_DEVICE_NAME_V2_BUFFER_SIZE);
SAME_VALUE(NVML_DEVICE_UUID_V2_BUFFER_SIZE);
SAME_VALUE(NVML_DEVICE_SERIAL_BUFFER_SIZE);
SAME_VALUE(NVML_DEVICE_PART_NUMBER_BUFFER_SIZE);
SAME_VALUE(NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
SAME_VALUE(NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
SAME_VALUE(NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
#endif

TEST(NvmlAbi, ReportsWhetherCheckedAgainstRealHeader) {
#ifdef GPUPLAN_REAL_NVML
  SUCCEED() << "checked against the installed nvml.h";
#else
  GTEST_SKIP() << "no nvml.h found by CMake: only the documented layout was checked";
#endif
}
