#include "check/sold_as.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace gpuplan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

CheckResult Make(const std::string& name, int gpu, const std::string& node) {
  CheckResult r;
  r.name = name;
  r.gpu = gpu;
  r.node = node;
  return r;
}

std::string WhyAbsent(const std::map<std::string, std::string>& not_measured, const std::string& field) {
  auto it = not_measured.find(field);
  return it != not_measured.end() ? it->second : "not in the data";
}

// SKIP because `field` was not measured, with the source's reason.
CheckResult Skipped(CheckResult r, const GpuSnapshot& g, const std::string& field, const std::string& origin) {
  r.status = CheckStatus::kSkip;
  r.evidence = fmt::format("{} not measured ({}: {})", field, origin, WhyAbsent(g.not_measured, field));
  return r;
}

bool StartsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The catalog card a reported name names: "NVIDIA GeForce RTX 4090 D" -> "RTX 4090 D".
const Gpu* CardByName(const std::string& reported, const GpuCatalog& catalog) {
  if (const Gpu* g = catalog.TryFind(reported)) {
    return g;
  }
  std::string n = reported;
  for (const char* prefix : {"NVIDIA ", "GeForce ", "Tesla ", "Quadro "}) {
    if (StartsWith(n, prefix)) {
      n = n.substr(std::string(prefix).size());
    }
  }
  return catalog.TryFind(n);
}

std::string CardIds(const Gpu& g) {
  std::string out;
  for (const auto& id : g.pci_device_ids) {
    out += (out.empty() ? "" : ", ") + id;
  }
  return out;
}

// What a card with GDDR memory reports with ECC on: a sixteenth of the memory holds the check
// bits (RTX A6000: 49140 MiB with ECC off, 46068 MiB with it on; data/gpus.yaml).
double ExpectedMemoryBytes(const Gpu& ref, const GpuSnapshot& g, std::string* note) {
  double bytes = static_cast<double>(ref.memory_bytes);
  if (StartsWith(ref.memory_type, "GDDR") && g.ecc_enabled.value_or(false)) {
    bytes = bytes * 15.0 / 16.0;
    *note = " (GDDR with ECC on: 15/16 of the memory is usable)";
  }
  return bytes;
}

std::string CatalogSource(const Gpu& ref, bool ordered) {
  return (ordered ? "ordered: " : "catalog (own device id): ") + ref.name + " (data/gpus.yaml)";
}

}  // namespace

std::string PciDeviceHex(uint32_t pci_device_id) { return fmt::format("0x{:04X}", pci_device_id >> 16); }

const Gpu* CatalogCardOf(const GpuSnapshot& g, const GpuCatalog& catalog) {
  if (g.pci_device_id) {
    if (const Gpu* c = catalog.FindByPciId(PciDeviceHex(*g.pci_device_id))) {
      return c;
    }
  }
  return g.name ? CardByName(*g.name, catalog) : nullptr;
}

std::vector<CheckResult> JudgeInventory(const SystemSnapshot& sys, const Expectation& exp, const GpuCatalog& catalog,
                                        const CheckThresholds& th, const std::string& origin, bool idle,
                                        const std::string& node) {
  std::vector<CheckResult> out;
  // How many GPUs.
  {
    CheckResult r = Make("gpu_count", -1, node);
    r.measured = static_cast<double>(sys.gpus.size());
    r.unit = "GPUs";
    if (exp.count) {
      r.expected = *exp.count;
      r.expectation_source = exp.source;
      const auto n = static_cast<int>(sys.gpus.size());
      r.status = n < *exp.count ? CheckStatus::kFail : CheckStatus::kPass;
      r.evidence = fmt::format("{} lists {} GPU(s); {} ordered{}", origin, n, *exp.count,
                               n > *exp.count ? " (more than ordered)" : "");
      if (n < *exp.count) {
        r.advice = "fewer GPUs than paid for: ask the provider before signing, or for a price cut";
      }
    } else {
      r.status = CheckStatus::kSkip;
      r.evidence = fmt::format("{} lists {} GPU(s); no count ordered (--expect \"8x CARD\")", origin, sys.gpus.size());
    }
    out.push_back(r);
  }

  for (const GpuSnapshot& g : sys.gpus) {
    const int i = g.index;
    const Gpu* own = CatalogCardOf(g, catalog);
    const Gpu* ref = exp.gpu != nullptr ? exp.gpu : own;
    const bool ordered = exp.gpu != nullptr;
    const std::string name = g.name.value_or("(name not read)");
    const std::string id = g.pci_device_id ? PciDeviceHex(*g.pci_device_id) : std::string("(id not read)");

    // Identity: the PCI device id names the silicon; the name is a string the board reports.
    {
      CheckResult r = Make("gpu_identity", i, node);
      r.measured_text = id + (own != nullptr ? " (" + own->name + ")" : " (not in the catalog)");
      if (!g.pci_device_id && !g.name) {
        out.push_back(Skipped(r, g, "pci_device_id", origin));
        continue;
      }
      const Gpu* by_name = g.name ? CardByName(*g.name, catalog) : nullptr;
      const Gpu* by_id = g.pci_device_id ? catalog.FindByPciId(id) : nullptr;
      if (ordered) {
        r.expected_text = exp.gpu->name + " (" + CardIds(*exp.gpu) + ")";
        r.expectation_source = exp.source;
        if (by_id == exp.gpu) {
          r.status = CheckStatus::kPass;
          r.evidence = fmt::format("{}: '{}', PCI device id {} is the {} ordered", origin, name, id, exp.gpu->name);
        } else if (by_id != nullptr) {
          r.status = CheckStatus::kFail;
          r.evidence = fmt::format("{}: '{}' has PCI device id {}, which is the {}, not the {} ordered ({})", origin,
                                   name, id, by_id->name, exp.gpu->name, CardIds(*exp.gpu));
          r.advice = "a different card than the one paid for: refuse the machine or renegotiate the price";
        } else if (!g.pci_device_id) {
          r.status = by_name == exp.gpu ? CheckStatus::kPass : CheckStatus::kFail;
          r.evidence = fmt::format("{}: PCI device id not read ({}); the name '{}' {}", origin,
                                   WhyAbsent(g.not_measured, "pci_device_id"), name,
                                   by_name == exp.gpu ? "names the card ordered" : "does not name the card ordered");
        } else {
          r.status = CheckStatus::kWarn;
          r.evidence = fmt::format("{}: '{}' has PCI device id {}, not an id the catalog lists for {} ({}), and "
                                   "not any other catalog card",
                                   origin, name, id, exp.gpu->name, CardIds(*exp.gpu));
          r.advice = "an unknown variant: ask the provider what the card is (pci.ids names every device id)";
        }
      } else if (by_id != nullptr) {
        r.expectation_source = "catalog: PCI device id";
        r.expected_text = by_id->name;
        if (by_name != nullptr && by_name != by_id) {
          r.status = CheckStatus::kFail;
          r.evidence = fmt::format("{}: the name '{}' says {}, the PCI device id {} says {}", origin, name,
                                   by_name->name, id, by_id->name);
          r.advice = "mislabelled card: the device id is the silicon; judge the offer by the id";
        } else {
          r.status = CheckStatus::kPass;
          r.evidence = fmt::format("{}: '{}', PCI device id {} is the catalog's {}", origin, name, id, by_id->name);
        }
      } else {
        r.status = CheckStatus::kSkip;
        r.evidence = fmt::format("{}: '{}' ({}) is not in the catalog and no card was ordered (--expect): nothing to "
                                 "judge against",
                                 origin, name, id);
      }
      out.push_back(r);
    }

    if (ref == nullptr) {
      for (const char* n : {"gpu_memory_total", "gpu_power_limit", "pcie_link_gen", "pcie_link_width",
                            "nvlink_links_up"}) {
        CheckResult r = Make(n, i, node);
        r.status = CheckStatus::kSkip;
        r.evidence = "no catalog card to judge against (the card is unknown and none was ordered)";
        out.push_back(r);
      }
    } else {
      const std::string src = CatalogSource(*ref, ordered);
      // Memory size: a cut-down or mislabelled card shows less.
      {
        CheckResult r = Make("gpu_memory_total", i, node);
        r.unit = "MiB";
        r.expectation_source = src;
        if (!g.memory_total) {
          out.push_back(Skipped(r, g, "memory_total", origin));
        } else {
          std::string note;
          const double want = ExpectedMemoryBytes(*ref, g, &note);
          r.measured = static_cast<double>(*g.memory_total) / kMiB;
          r.expected = want / kMiB;
          r.expected_text = fmt::format(">= {:.0f} x {:.0f} MiB", th.memory_total_fail_fraction, want / kMiB);
          const bool low = static_cast<double>(*g.memory_total) < th.memory_total_fail_fraction * want;
          r.status = low ? CheckStatus::kFail : CheckStatus::kPass;
          r.evidence = fmt::format("{}: memory total {:.0f} MiB; {} has {:.0f} MiB{}", origin, *r.measured, ref->name,
                                   want / kMiB, note);
          if (low) {
            r.advice = "less memory than the card ordered: a cut-down or different card";
          }
          out.push_back(r);
        }
      }
      // Power limit against the datasheet TDP.
      {
        CheckResult r = Make("gpu_power_limit", i, node);
        r.unit = "W";
        r.expectation_source = src + ", TDP";
        if (!g.power_limit) {
          out.push_back(Skipped(r, g, "power_limit", origin));
        } else if (ref->tdp_watts <= 0) {
          r.status = CheckStatus::kSkip;
          r.measured = *g.power_limit;
          r.evidence = "the catalog has no TDP for " + ref->name;
          out.push_back(r);
        } else {
          r.measured = *g.power_limit;
          r.expected = ref->tdp_watts;
          const double f = *g.power_limit / ref->tdp_watts;
          r.status = f < th.power_limit_fail_fraction   ? CheckStatus::kFail
                     : f < th.power_limit_warn_fraction ? CheckStatus::kWarn
                                                        : CheckStatus::kPass;
          r.expected_text = fmt::format(">= {:.0f}% of {:.0f} W", th.power_limit_fail_fraction * 100, ref->tdp_watts);
          std::string limits;
          if (g.power_default_limit) {
            limits += fmt::format(", default {:.0f} W", *g.power_default_limit);
          }
          if (g.power_max_limit) {
            limits += fmt::format(", max {:.0f} W", *g.power_max_limit);
          }
          r.evidence = fmt::format("{}: enforced power limit {:.0f} W ({:.0f}% of the {:.0f} W TDP{})", origin,
                                   *g.power_limit, f * 100, ref->tdp_watts, limits);
          if (r.status != CheckStatus::kPass) {
            r.advice = g.power_max_limit && *g.power_max_limit >= ref->tdp_watts * th.power_limit_warn_fraction
                           ? "the limit was lowered in software (nvidia-smi -pl): ask the provider to restore it"
                           : "the board cannot draw its TDP: a power-limited variant, slower than the card ordered";
          }
          out.push_back(r);
        }
      }
      // PCIe generation: the card's maximum, the host slot's, and (under load) the current.
      {
        CheckResult r = Make("pcie_link_gen", i, node);
        r.unit = "gen";
        r.expectation_source = src;
        const std::optional<int> max = g.pcie_gen_max ? g.pcie_gen_max
                                       : (g.pcie_gen_gpu_max && g.pcie_gen_host_max)
                                           ? std::optional<int>(std::min(*g.pcie_gen_gpu_max, *g.pcie_gen_host_max))
                                           : std::nullopt;
        if (!max || ref->pcie_gen <= 0) {
          out.push_back(Skipped(r, g, "pcie_gen_max", origin));
        } else {
          r.measured = *max;
          r.expected = ref->pcie_gen;
          r.expected_text = fmt::format("Gen {}", ref->pcie_gen);
          r.status = CheckStatus::kPass;
          std::string ev = fmt::format("{}: link maximum Gen {}", origin, *max);
          if (g.pcie_gen_gpu_max) {
            ev += fmt::format(", card maximum Gen {}", *g.pcie_gen_gpu_max);
          }
          if (g.pcie_gen_host_max) {
            ev += fmt::format(", host slot maximum Gen {}", *g.pcie_gen_host_max);
          }
          if (g.pcie_gen_current) {
            ev += fmt::format(", current Gen {}", *g.pcie_gen_current);
          }
          ev += fmt::format("; {} is a Gen {} card", ref->name, ref->pcie_gen);
          if (g.pcie_gen_host_max && g.pcie_gen_gpu_max && *g.pcie_gen_host_max < *g.pcie_gen_gpu_max) {
            r.status = CheckStatus::kFail;
            ev += fmt::format(": the host slot (Gen {}) halves the card's host bandwidth per generation lost",
                              *g.pcie_gen_host_max);
            r.advice = "the server's slot or riser is older than the card: data loading and host copies run slower";
          } else if (*max < ref->pcie_gen) {
            r.status = CheckStatus::kFail;
            r.advice = "the link cannot reach the card's generation: a slot, riser or BIOS setting limits it";
          } else if (!idle && g.pcie_gen_current && *g.pcie_gen_current < *max) {
            r.status = CheckStatus::kWarn;
            ev += ": below the maximum while the GPU was busy";
            r.advice = "a link that stays below its maximum under load points to a bad slot or riser";
          } else if (idle && g.pcie_gen_current && *g.pcie_gen_current < *max) {
            ev += " (read idle: links train down to save power, so the current generation is not judged)";
          }
          r.evidence = ev;
          out.push_back(r);
        }
      }
      // PCIe width.
      {
        CheckResult r = Make("pcie_link_width", i, node);
        r.unit = "lanes";
        r.expectation_source = src;
        if (!g.pcie_width_max || ref->pcie_lanes <= 0) {
          out.push_back(Skipped(r, g, "pcie_width_max", origin));
        } else {
          r.measured = g.pcie_width_current.value_or(*g.pcie_width_max);
          r.expected = ref->pcie_lanes;
          r.measured_text = fmt::format("x{} (max x{})", g.pcie_width_current.value_or(*g.pcie_width_max),
                                        *g.pcie_width_max);
          r.expected_text = fmt::format("x{}", ref->pcie_lanes);
          r.evidence = fmt::format("{}: link width current x{}, max x{}; {} is a x{} card", origin,
                                   g.pcie_width_current.value_or(*g.pcie_width_max), *g.pcie_width_max, ref->name,
                                   ref->pcie_lanes);
          if (*g.pcie_width_max < ref->pcie_lanes) {
            r.status = CheckStatus::kFail;
            r.advice = "the slot is narrower than the card (x8 halves host-to-GPU bandwidth): ask for a x16 slot";
          } else if (g.pcie_width_current && *g.pcie_width_current < *g.pcie_width_max) {
            r.status = CheckStatus::kWarn;
            r.advice = "the link trained narrower than it can: reseat the card or check the riser; read it again "
                       "under load";
          } else {
            r.status = CheckStatus::kPass;
          }
          out.push_back(r);
        }
      }
      // NVLink on SXM boards (bridges are optional accessories and not judged).
      {
        CheckResult r = Make("nvlink_links_up", i, node);
        r.unit = "links";
        r.expectation_source = src;
        const std::string& kind = ref->interconnect.kind;
        const bool board = StartsWith(kind, "nvlink") && kind != "nvlink_bridge";
        if (!board) {
          r.status = CheckStatus::kSkip;
          if (g.nvlink_up) {
            r.measured = *g.nvlink_up;
          }
          r.evidence = fmt::format("{} links by {}: optional, not judged{}", ref->name,
                                   kind.empty() || kind == "none" ? "PCIe only" : kind,
                                   g.nvlink_up ? fmt::format(" ({} links up)", *g.nvlink_up) : "");
          out.push_back(r);
        } else if (!g.nvlink_up) {
          out.push_back(Skipped(r, g, "nvlink_up", origin));
        } else {
          r.measured = *g.nvlink_up;
          r.expected = ref->interconnect.links;
          r.evidence = fmt::format("{}: {} of {} NVLinks up{}; {} has {}", origin, *g.nvlink_up,
                                   g.nvlink_links.value_or(ref->interconnect.links),
                                   g.nvlink_links ? "" : " (links reported: not read)", ref->name,
                                   ref->interconnect.links);
          if (*g.nvlink_up >= ref->interconnect.links) {
            r.status = CheckStatus::kPass;
          } else if (sys.gpus.size() == 1) {
            // One GPU of a board passed to a VM talks to no other GPU: the links do not matter here.
            r.status = CheckStatus::kWarn;
            r.evidence += " (one GPU on this machine: NVLink carries no traffic)";
            r.advice = "fine for single-GPU work; for more GPUs of this board ask why links are down";
          } else {
            r.status = CheckStatus::kFail;
            r.advice = "NVLinks down: all-reduce falls back to PCIe; ask the provider to fix the board or fabric "
                       "manager (DCGM passes this unless told the link count)";
          }
          out.push_back(r);
        }
      }
    }

    // MIG: a sliced card is not the whole card.
    {
      CheckResult r = Make("mig_mode", i, node);
      r.expected_text = exp.mig_allowed ? "any (--allow-mig)" : "disabled";
      r.expectation_source = exp.mig_allowed ? "--allow-mig" : "default: whole cards (docs/check.md §3)";
      if (!g.mig_enabled) {
        out.push_back(Skipped(r, g, "mig_enabled", origin));
      } else {
        r.measured_text = *g.mig_enabled ? "enabled" : "disabled";
        r.evidence = fmt::format("{}: MIG mode {}{}", origin, r.measured_text,
                                 g.mig_pending && *g.mig_pending != *g.mig_enabled
                                     ? fmt::format(" (pending: {})", *g.mig_pending ? "enabled" : "disabled")
                                     : "");
        if (*g.mig_enabled && !exp.mig_allowed) {
          r.status = CheckStatus::kFail;
          r.advice = "the card is split into MIG slices: ask for it whole (nvidia-smi -mig 0) or pass --allow-mig";
        } else if (g.mig_pending && *g.mig_pending != *g.mig_enabled) {
          r.status = CheckStatus::kWarn;
          r.advice = "a MIG change waits for a GPU reset";
        } else {
          r.status = CheckStatus::kPass;
        }
        out.push_back(r);
      }
    }
    // ECC mode and counts.
    {
      CheckResult r = Make("ecc_mode", i, node);
      r.expectation_source = "default (docs/check.md §3)";
      if (!g.ecc_enabled) {
        out.push_back(Skipped(r, g, "ecc_enabled", origin));
      } else {
        const bool hbm = ref != nullptr && StartsWith(ref->memory_type, "HBM");
        r.measured_text = *g.ecc_enabled ? "enabled" : "disabled";
        r.expected_text = hbm ? "enabled" : "either";
        r.evidence = fmt::format("{}: ECC {}", origin, r.measured_text);
        if (!*g.ecc_enabled && hbm) {
          r.status = CheckStatus::kWarn;
          r.advice = "ECC is off on an HBM card (on by default): memory errors would go undetected";
        } else {
          r.status = CheckStatus::kPass;
        }
        out.push_back(r);
      }
    }
    {
      CheckResult r = Make("ecc_errors", i, node);
      r.unit = "errors";
      r.expectation_source = "default (docs/check.md §3)";
      if (!g.ecc_volatile_uncorrected && !g.ecc_aggregate_uncorrected) {
        out.push_back(Skipped(r, g, "ecc_aggregate_uncorrected", origin));
      } else {
        const uint64_t unc = std::max(g.ecc_volatile_uncorrected.value_or(0), g.ecc_aggregate_uncorrected.value_or(0));
        const uint64_t cor = std::max(g.ecc_volatile_corrected.value_or(0), g.ecc_aggregate_corrected.value_or(0));
        r.measured = static_cast<double>(unc);
        r.expected = 0;
        r.expected_text = fmt::format("0 uncorrectable, corrected < {:.0f}", th.ecc_corrected_warn);
        r.evidence = fmt::format(
            "{}: uncorrectable volatile {} aggregate {}, corrected volatile {} aggregate {}", origin,
            g.ecc_volatile_uncorrected ? std::to_string(*g.ecc_volatile_uncorrected) : "n/a",
            g.ecc_aggregate_uncorrected ? std::to_string(*g.ecc_aggregate_uncorrected) : "n/a",
            g.ecc_volatile_corrected ? std::to_string(*g.ecc_volatile_corrected) : "n/a",
            g.ecc_aggregate_corrected ? std::to_string(*g.ecc_aggregate_corrected) : "n/a");
        if (unc > 0) {
          r.status = CheckStatus::kFail;
          r.advice = "uncorrectable memory errors: the card corrupts data; ask for another card";
        } else if (static_cast<double>(cor) >= th.ecc_corrected_warn) {
          r.status = CheckStatus::kWarn;
          r.advice = "many corrected errors: memory wearing out; watch the count during burn-in";
        } else {
          r.status = CheckStatus::kPass;
        }
        out.push_back(r);
      }
    }
    // Remapped rows (Ampere and later) or retired pages (before).
    {
      CheckResult r = Make("memory_remapping", i, node);
      r.expectation_source = "NVIDIA GPU memory error management (docs/check.md §3)";
      const bool rows = g.remapped_rows_pending || g.remapped_rows_failure || g.remapped_rows_uncorrectable;
      const bool pages = g.retired_pages_pending || g.retired_pages_dbe || g.retired_pages_sbe;
      if (!rows && !pages) {
        out.push_back(Skipped(r, g, "remapped_rows_pending", origin));
      } else {
        r.status = CheckStatus::kPass;
        std::string ev = origin + ":";
        if (rows) {
          ev += fmt::format(" remapped rows correctable {}, uncorrectable {}, pending {}, failure {}",
                            g.remapped_rows_correctable.value_or(0), g.remapped_rows_uncorrectable.value_or(0),
                            g.remapped_rows_pending.value_or(false) ? "yes" : "no",
                            g.remapped_rows_failure.value_or(false) ? "yes" : "no");
          if (g.remapped_rows_failure.value_or(false)) {
            r.status = CheckStatus::kFail;
            r.advice = "a row remapping failed: NVIDIA's guidance is to replace the card";
          } else if (g.remapped_rows_pending.value_or(false)) {
            r.status = CheckStatus::kFail;
            r.advice = "a remapping is pending: the GPU needs a reset before it can be trusted";
          } else if (g.remapped_rows_uncorrectable.value_or(0) > 0) {
            r.status = CheckStatus::kWarn;
            r.advice = "rows were remapped after uncorrectable errors: the card has had faults";
          }
        }
        if (pages) {
          ev += fmt::format(" retired pages single-bit {}, double-bit {}, pending {}",
                            g.retired_pages_sbe.value_or(0), g.retired_pages_dbe.value_or(0),
                            g.retired_pages_pending.value_or(false) ? "yes" : "no");
          if (g.retired_pages_pending.value_or(false)) {
            r.status = CheckStatus::kFail;
            r.advice = "a page retirement is pending: the GPU needs a reset";
          } else if (g.retired_pages_dbe.value_or(0) > 0 && r.status == CheckStatus::kPass) {
            r.status = CheckStatus::kWarn;
            r.advice = "pages were retired after double-bit errors: the card has had faults";
          }
        }
        r.measured_text = r.status == CheckStatus::kPass   ? "nothing pending"
                          : r.status == CheckStatus::kFail ? "reset pending"
                                                           : "faults remapped";
        r.evidence = ev;
        out.push_back(r);
      }
    }
    // Clock-event (throttle) reasons.
    {
      CheckResult r = Make("clock_events", i, node);
      r.expectation_source = "NVML clock-event reasons (docs/check.md §3)";
      r.expected_text = "no hardware slowdown, no thermal slowdown";
      if (!g.clock_event_reasons) {
        out.push_back(Skipped(r, g, "clock_event_reasons", origin));
      } else {
        const uint64_t m = *g.clock_event_reasons;
        std::string names;
        for (const auto& n : ClockEventNames(m)) {
          names += (names.empty() ? "" : ", ") + n;
        }
        r.measured_text = names.empty() ? "none" : names;
        r.evidence = fmt::format("{}: clock-event reasons active: {}", origin, r.measured_text);
        if ((m & (kClockEventHwSlowdown | kClockEventHwThermal | kClockEventHwPowerBrake)) != 0) {
          r.status = CheckStatus::kFail;
          r.advice = "hardware slowdown: overheating, a power-brake signal or a failing power supply; ask the "
                     "provider to inspect cooling and power";
        } else if ((m & kClockEventSwThermal) != 0) {
          r.status = CheckStatus::kWarn;
          r.advice = "the driver lowers clocks for temperature: cooling is marginal";
        } else {
          r.status = CheckStatus::kPass;
        }
        out.push_back(r);
      }
    }
    // Temperature.
    {
      CheckResult r = Make("gpu_temperature", i, node);
      r.unit = "C";
      r.expectation_source = "default (docs/check.md §3)";
      if (!g.temperature_c) {
        out.push_back(Skipped(r, g, "temperature_c", origin));
      } else {
        r.measured = *g.temperature_c;
        r.expected = th.temperature_warn_c;
        r.expected_text = fmt::format("<= {} C", th.temperature_warn_c);
        r.evidence = fmt::format("{}: {} C{}", origin, *g.temperature_c,
                                 g.temperature_slowdown_c ? fmt::format(" (slowdown at {} C)", *g.temperature_slowdown_c)
                                                          : "");
        r.status = *g.temperature_c > th.temperature_warn_c ? CheckStatus::kWarn : CheckStatus::kPass;
        if (r.status == CheckStatus::kWarn) {
          r.advice = "hot before any load: cooling or airflow problem";
        }
        out.push_back(r);
      }
    }
  }

  // Driver against the CUDA the software needs.
  {
    CheckResult r = Make("driver_cuda", -1, node);
    r.measured_text = fmt::format("driver {}, CUDA {}", sys.driver_version.value_or("n/a"),
                                  sys.cuda_driver_version.value_or("n/a"));
    if (!exp.cuda) {
      r.status = CheckStatus::kSkip;
      r.evidence = "no CUDA version required (--cuda, or a PyTorch with CUDA on this machine)";
    } else if (!sys.driver_version && !sys.cuda_driver_version) {
      r.status = CheckStatus::kSkip;
      r.evidence = "driver version not read: " + WhyAbsent(sys.not_measured, "driver_version");
    } else {
      const auto min_driver = MinimumDriverForCuda(*exp.cuda);
      r.expected_text = fmt::format("CUDA >= {}{}", *exp.cuda, min_driver ? ", driver >= " + *min_driver : "");
      r.expectation_source = exp.cuda_source + (min_driver ? "; CUDA release notes (docs/check.md §3.6)" : "");
      bool old = false;
      if (min_driver && sys.driver_version && CompareVersions(*sys.driver_version, *min_driver) < 0) {
        old = true;
      }
      if (sys.cuda_driver_version && CompareVersions(*sys.cuda_driver_version, *exp.cuda) < 0) {
        old = true;
      }
      r.status = old ? CheckStatus::kFail : CheckStatus::kPass;
      r.evidence = fmt::format("{}: driver {} supports CUDA up to {}; {} needs CUDA {}{}", origin,
                               sys.driver_version.value_or("n/a"), sys.cuda_driver_version.value_or("n/a"),
                               exp.cuda_source, *exp.cuda,
                               min_driver ? ", which needs driver " + *min_driver + " or newer on Linux" : "");
      if (old) {
        r.advice = min_driver ? "ask for driver " + *min_driver + " or newer, or use a build of the framework for an "
                                                                  "older CUDA"
                              : "ask for a newer driver, or use a build of the framework for an older CUDA";
      }
    }
    out.push_back(r);
  }
  return out;
}

std::vector<CheckResult> JudgeHealthDelta(const SystemSnapshot& before, const SystemSnapshot& after,
                                          const std::vector<GpuEvent>& events, const std::string& during,
                                          const std::string& node) {
  std::vector<CheckResult> out;
  auto delta = [](const std::optional<uint64_t>& a, const std::optional<uint64_t>& b) -> std::optional<uint64_t> {
    if (!a || !b) {
      return std::nullopt;
    }
    return *b >= *a ? *b - *a : 0;
  };
  for (const GpuSnapshot& a : after.gpus) {
    const GpuSnapshot* b = nullptr;
    for (const GpuSnapshot& x : before.gpus) {
      if (x.index == a.index) {
        b = &x;
      }
    }
    CheckResult r = Make("health_delta", a.index, node);
    r.expectation_source = "default (docs/check.md §3.5)";
    r.expected_text = "no new uncorrectable error, pending remap or XID";
    std::vector<std::string> xids;
    for (const GpuEvent& e : events) {
      if (e.gpu == a.index && (e.type & 0x8) != 0) {
        xids.push_back(fmt::format("XID {} at {:.0f} s", e.data, e.at_seconds));
      }
    }
    if (b == nullptr) {
      r.status = CheckStatus::kSkip;
      r.evidence = "no reading before " + during;
      out.push_back(r);
      continue;
    }
    const auto unc = delta(b->ecc_volatile_uncorrected, a.ecc_volatile_uncorrected);
    const auto cor = delta(b->ecc_volatile_corrected, a.ecc_volatile_corrected);
    const auto rows = delta(b->remapped_rows_uncorrectable, a.remapped_rows_uncorrectable);
    const auto dbe = delta(b->retired_pages_dbe, a.retired_pages_dbe);
    // A remap or retirement that became pending during the run (one pending before is the
    // inventory's memory_remapping result).
    const bool pending = (a.remapped_rows_pending.value_or(false) && !b->remapped_rows_pending.value_or(false)) ||
                         (a.retired_pages_pending.value_or(false) && !b->retired_pages_pending.value_or(false));
    std::string ev = "during " + during + ":";
    ev += unc ? fmt::format(" uncorrectable ECC +{}", *unc) : " uncorrectable ECC not read";
    ev += cor ? fmt::format(", corrected ECC +{}", *cor) : "";
    ev += rows ? fmt::format(", remapped rows (uncorrectable) +{}", *rows) : "";
    ev += dbe ? fmt::format(", retired pages (double-bit) +{}", *dbe) : "";
    ev += pending ? ", a remap/retirement is pending" : "";
    std::string xid_text;
    for (const auto& x : xids) {
      xid_text += (xid_text.empty() ? "" : ", ") + x;
    }
    ev += xids.empty() ? ", no XID" : ", " + xid_text;
    r.evidence = ev;
    r.measured = static_cast<double>(unc.value_or(0) + rows.value_or(0) + dbe.value_or(0) + xids.size());
    r.expected = 0;
    r.unit = "new errors";
    if (unc.value_or(0) > 0 || rows.value_or(0) > 0 || dbe.value_or(0) > 0 || pending || !xids.empty()) {
      r.status = CheckStatus::kFail;
      r.advice = "the card raised errors under test: give it back";
    } else if (cor.value_or(0) > 0) {
      r.status = CheckStatus::kWarn;
      r.advice = "corrected memory errors appeared under test";
    } else if (!unc && xids.empty()) {
      r.status = CheckStatus::kSkip;
    } else {
      r.status = CheckStatus::kPass;
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuplan
