// "Is this what I was sold": each GPU's inventory and health (telemetry/snapshot.h) held against
// the catalog entry of the card that was ordered (check/expect.h), or, when nothing was ordered,
// against the entry of the card's own PCI device id. The same verdicts judge a live machine
// (NVML) and a provider's `nvidia-smi -q -x` capture. Thresholds and the reason for each:
// docs/check.md §3.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "check/expect.h"
#include "check/report.h"
#include "check/thresholds.h"
#include "telemetry/snapshot.h"

namespace gpuplan {

// The catalog card a GPU reports by PCI device id (then by name); nullptr when unknown.
const Gpu* CatalogCardOf(const GpuSnapshot& g, const GpuCatalog& catalog);

// "0x2330" from NVML's (device << 16) | vendor.
std::string PciDeviceHex(uint32_t pci_device_id);

// The inventory verdicts of one node: gpu_count, then per GPU gpu_identity, gpu_memory_total,
// gpu_power_limit, pcie_link_gen, pcie_link_width, nvlink_links_up, mig_mode, ecc_mode,
// ecc_errors, memory_remapping, clock_events, gpu_temperature; then driver_cuda for the node.
// `origin` says where the values were read ("NVML", "nvidia-smi -q -x capture a.xml") for the
// evidence; `idle` says the GPUs were idle when read (links train down: the current PCIe
// generation is then not judged). `node` is copied into every result.
std::vector<CheckResult> JudgeInventory(const SystemSnapshot& sys, const Expectation& exp, const GpuCatalog& catalog,
                                        const CheckThresholds& th, const std::string& origin, bool idle,
                                        const std::string& node = {});

// ECC, remapped rows, retired pages and XIDs before and after `during` (a test or the whole run),
// one `health_delta` result per GPU: FAIL on a new uncorrectable error, a new remapped or
// retired page pending, or an XID; WARN on new corrected errors; PASS when nothing moved.
std::vector<CheckResult> JudgeHealthDelta(const SystemSnapshot& before, const SystemSnapshot& after,
                                          const std::vector<GpuEvent>& events, const std::string& during,
                                          const std::string& node = {});

}  // namespace gpuplan
