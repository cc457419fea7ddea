// The inventory verdicts of `gpuplan check` (sold_as.h): one function per verdict, run from a table.
#include "check/sold_as.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

#include "check/verdict.h"
#include "format/numbers.h"

namespace gpuplan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string WhyAbsent(const std::map<std::string, std::string>& not_measured, const std::string& field) {
  auto it = not_measured.find(field);
  return it != not_measured.end() ? it->second : "not in the data";
}

// SKIP because `field` was not measured, with the source's reason.
CheckResult Skipped(CheckResult r, const GpuSnapshot& g, const std::string& field, const std::string& origin) {
  Skip(r, fmt::format("{} not measured ({}: {})", field, origin, WhyAbsent(g.not_measured, field)));
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

// The GDDR cards whose catalog memory_bytes is the ECC-on total: the nvidia-smi outputs it was
// read from (data/GPUS-SOURCES.md, "PCI ids, nvidia-smi names and memory totals") show ECC on
// (L40S, A10: fixtures with "ECC Mode: Current: Enabled"; L40, L4, T4: S23 outputs with
// "Volatile Uncorr. ECC" 0, not "Off"; L20: "46068 (ECC on)"). Data-center GDDR cards ship with
// ECC on. The others (RTX A6000, RTX 6000 Ada: "49140 (ECC off)"; GeForce cards) are ECC-off
// totals. With ECC off a card of this list shows more (L20: 49140), so its figure stays the floor.
bool CatalogTotalIsEccOn(const Gpu& ref) {
  static constexpr std::string_view kEccOnTotals[] = {"L40S", "L40", "L20", "L4", "T4", "A10"};
  return std::find(std::begin(kEccOnTotals), std::end(kEccOnTotals), ref.name) != std::end(kEccOnTotals);
}

// What a card with GDDR memory reports with ECC on: a sixteenth of the memory holds the check
// bits (RTX A6000: 49140 MiB with ECC off, 46068 MiB with it on; data/gpus.yaml). Scaled only
// where the catalog's total is the ECC-off one (scaling an ECC-on total again let an L40S with
// 41900 MiB pass against 0.97 x 43188).
double ExpectedMemoryBytes(const Gpu& ref, const GpuSnapshot& g, std::string* note) {
  double bytes = static_cast<double>(ref.memory_bytes);
  if (StartsWith(ref.memory_type, "GDDR") && CatalogTotalIsEccOn(ref)) {
    *note = " (the catalog's total is with ECC on)";
  } else if (StartsWith(ref.memory_type, "GDDR") && g.ecc_enabled.value_or(false)) {
    bytes = bytes * 15.0 / 16.0;
    *note = " (GDDR with ECC on: 15/16 of the memory is usable)";
  }
  return bytes;
}

// A reported name as the evidence quotes it: at most kMaxEchoedName bytes (cut at a character
// boundary), so a capture with a 200 MB product name does not put it in every result. Real names
// are under 40 bytes ("NVIDIA RTX 6000 Ada Generation").
constexpr size_t kMaxEchoedName = 200;
std::string EchoedName(const std::string& name) {
  if (name.size() <= kMaxEchoedName) {
    return name;
  }
  size_t keep = kMaxEchoedName;
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0) == 0x80) {
    --keep;
  }
  return fmt::format("{}... ({} bytes)", name.substr(0, keep), name.size());
}

std::string CatalogSource(const Gpu& ref, bool ordered) {
  return (ordered ? "ordered: " : "catalog (own device id): ") + ref.name + " (data/gpus.yaml)";
}

// What the inventory verdicts of one GPU see: the node, the GPU, what was ordered and the card to
// judge against (`ref`: the card ordered, else the GPU's own catalog card; nullptr when neither).
struct GpuView {
  const SystemSnapshot& sys;
  const GpuSnapshot& g;
  const Expectation& exp;
  const GpuCatalog& catalog;
  const CheckThresholds& th;
  const std::string& origin;
  bool idle;
  const Gpu* own;
  const Gpu* ref;
  bool ordered;
  std::string name;  // the name the board reports
  std::string id;    // its PCI device id, "0x2330"
};

// How many GPUs.
CheckResult JudgeGpuCount(const SystemSnapshot& sys, const Expectation& exp, const std::string& origin,
                          const std::string& node) {
  CheckResult r = Make("gpu_count", -1, node);
  r.measured = static_cast<double>(sys.gpus.size());
  r.unit = "GPUs";
  if (!exp.count) {
    Skip(r, fmt::format("{} lists {} GPU(s); no count ordered (--expect \"8x CARD\")", origin, sys.gpus.size()));
    return r;
  }
  r.expected = *exp.count;
  r.expectation_source = exp.source;
  const auto n = static_cast<int>(sys.gpus.size());
  r.evidence = fmt::format("{} lists {} GPU(s); {} ordered{}", origin, n, *exp.count,
                           n > *exp.count ? " (more than ordered)" : "");
  AtLeast(r, n, *exp.count, CheckStatus::kFail,
          "fewer GPUs than paid for: ask the provider before signing, or for a price cut");
  return r;
}

// Identity with a name but no PCI device id: the name is a string the board (or whoever edited
// the capture) reports, so it never confirms the card (docs/check.md §3: SKIP, never PASS); it
// refutes it when it names another catalog card than the one ordered.
CheckResult JudgeIdentityByNameOnly(const GpuView& v, CheckResult r, const Gpu* by_name) {
  const std::string why = WhyAbsent(v.g.not_measured, "pci_device_id");
  const Gpu* want = v.exp.gpu;
  r.measured_text = v.id;  // "(id not read)": the name's card is not the silicon's
  if (v.ordered) {
    r.expected_text = want->name + " (" + CardIds(*want) + ")";
    r.expectation_source = v.exp.source;
  }
  if (v.ordered && by_name != nullptr && by_name != want) {
    r.evidence = fmt::format("{}: PCI device id not read ({}); the name '{}' is the {}, not the {} ordered",
                             v.origin, why, v.name, by_name->name, want->name);
    Fail(r, "the board names a different card than the one paid for: refuse the machine or renegotiate the price");
    return r;
  }
  Skip(r, fmt::format("pci_device_id not measured ({}: {}); the name '{}' alone does not prove the card "
                      "(the device id is the silicon)",
                      v.origin, why, v.name));
  return r;
}

// Identity: the PCI device id names the silicon; the name is a string the board reports.
CheckResult JudgeIdentity(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  r.measured_text = v.id + (v.own != nullptr ? " (" + v.own->name + ")" : " (not in the catalog)");
  if (!g.pci_device_id && !g.name) {
    return Skipped(r, g, "pci_device_id", v.origin);
  }
  const Gpu* by_name = g.name ? CardByName(*g.name, v.catalog) : nullptr;
  const Gpu* by_id = g.pci_device_id ? v.catalog.FindByPciId(v.id) : nullptr;
  const Gpu* want = v.exp.gpu;
  if (!g.pci_device_id) {
    return JudgeIdentityByNameOnly(v, r, by_name);
  }
  if (v.ordered) {
    r.expected_text = want->name + " (" + CardIds(*want) + ")";
    r.expectation_source = v.exp.source;
    if (by_id == want) {
      Pass(r, fmt::format("{}: '{}', PCI device id {} is the {} ordered", v.origin, v.name, v.id, want->name));
    } else if (by_id != nullptr) {
      r.evidence = fmt::format("{}: '{}' has PCI device id {}, which is the {}, not the {} ordered ({})", v.origin,
                               v.name, v.id, by_id->name, want->name, CardIds(*want));
      Fail(r, "a different card than the one paid for: refuse the machine or renegotiate the price");
    } else {
      r.evidence = fmt::format("{}: '{}' has PCI device id {}, not an id the catalog lists for {} ({}), and "
                               "not any other catalog card",
                               v.origin, v.name, v.id, want->name, CardIds(*want));
      Warn(r, "an unknown variant: ask the provider what the card is (pci.ids names every device id)");
    }
  } else if (by_id != nullptr) {
    r.expectation_source = "catalog: PCI device id";
    r.expected_text = by_id->name;
    if (by_name != nullptr && by_name != by_id) {
      r.evidence = fmt::format("{}: the name '{}' says {}, the PCI device id {} says {}", v.origin, v.name,
                               by_name->name, v.id, by_id->name);
      Fail(r, "mislabelled card: the device id is the silicon; judge the offer by the id");
    } else {
      Pass(r, fmt::format("{}: '{}', PCI device id {} is the catalog's {}", v.origin, v.name, v.id, by_id->name));
    }
  } else {
    Skip(r, fmt::format("{}: '{}' ({}) is not in the catalog and no card was ordered (--expect): nothing to "
                        "judge against",
                        v.origin, v.name, v.id));
  }
  return r;
}

// Memory size: a cut-down or mislabelled card shows less.
CheckResult JudgeMemoryTotal(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  const CheckThresholds& th = v.th;
  r.unit = "MiB";
  r.expectation_source = CatalogSource(*v.ref, v.ordered);
  if (!g.memory_total) {
    return Skipped(r, g, "memory_total", v.origin);
  }
  std::string note;
  const double want = ExpectedMemoryBytes(*v.ref, g, &note);
  r.measured = static_cast<double>(*g.memory_total) / kMiB;
  r.expected = want / kMiB;
  r.expected_text = fmt::format(">= {} x {:.0f} MiB", FormatNumber(th.memory_total_fail_fraction), want / kMiB);
  r.evidence = fmt::format("{}: memory total {:.0f} MiB; {} has {:.0f} MiB{}", v.origin, *r.measured, v.ref->name,
                           want / kMiB, note);
  AtLeast(r, static_cast<double>(*g.memory_total), th.memory_total_fail_fraction * want, CheckStatus::kFail,
          "less memory than the card ordered: a cut-down or different card");
  return r;
}

// Power limit against the datasheet TDP.
CheckResult JudgePowerLimit(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  const CheckThresholds& th = v.th;
  const Gpu& ref = *v.ref;
  r.unit = "W";
  r.expectation_source = CatalogSource(ref, v.ordered) + ", TDP";
  if (!g.power_limit) {
    return Skipped(r, g, "power_limit", v.origin);
  }
  r.measured = *g.power_limit;
  if (ref.tdp_watts <= 0) {
    Skip(r, "the catalog has no TDP for " + ref.name);
    return r;
  }
  r.expected = ref.tdp_watts;
  const double f = *g.power_limit / ref.tdp_watts;
  r.expected_text = fmt::format(">= {:.0f}% of {:.0f} W", th.power_limit_fail_fraction * 100, ref.tdp_watts);
  std::string limits;
  if (g.power_default_limit) {
    limits += fmt::format(", default {:.0f} W", *g.power_default_limit);
  }
  if (g.power_max_limit) {
    limits += fmt::format(", max {:.0f} W", *g.power_max_limit);
  }
  r.evidence = fmt::format("{}: enforced power limit {:.0f} W ({:.0f}% of the {:.0f} W TDP{})", v.origin,
                           *g.power_limit, f * 100, ref.tdp_watts, limits);
  Fraction(r, *g.power_limit, ref.tdp_watts, th.power_limit_warn_fraction, th.power_limit_fail_fraction,
           g.power_max_limit && *g.power_max_limit >= ref.tdp_watts * th.power_limit_warn_fraction
               ? "the limit was lowered in software (nvidia-smi -pl): ask the provider to restore it"
               : "the board cannot draw its TDP: a power-limited variant, slower than the card ordered");
  return r;
}

// PCIe generation: the card's maximum, the host slot's, and (under load) the current.
CheckResult JudgePcieGen(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  const Gpu& ref = *v.ref;
  r.unit = "gen";
  r.expectation_source = CatalogSource(ref, v.ordered);
  const std::optional<int> max = g.pcie_gen_max ? g.pcie_gen_max
                                 : (g.pcie_gen_gpu_max && g.pcie_gen_host_max)
                                     ? std::optional<int>(std::min(*g.pcie_gen_gpu_max, *g.pcie_gen_host_max))
                                     : std::nullopt;
  if (!max || ref.pcie_gen <= 0) {
    return Skipped(r, g, "pcie_gen_max", v.origin);
  }
  r.measured = *max;
  r.expected = ref.pcie_gen;
  r.expected_text = fmt::format("Gen {}", ref.pcie_gen);
  std::string ev = fmt::format("{}: link maximum Gen {}", v.origin, *max);
  if (g.pcie_gen_gpu_max) {
    ev += fmt::format(", card maximum Gen {}", *g.pcie_gen_gpu_max);
  }
  if (g.pcie_gen_host_max) {
    ev += fmt::format(", host slot maximum Gen {}", *g.pcie_gen_host_max);
  }
  if (g.pcie_gen_current) {
    ev += fmt::format(", current Gen {}", *g.pcie_gen_current);
  }
  ev += fmt::format("; {} is a Gen {} card", ref.name, ref.pcie_gen);
  const bool below_max = g.pcie_gen_current && *g.pcie_gen_current < *max;
  if (g.pcie_gen_host_max && g.pcie_gen_gpu_max && *g.pcie_gen_host_max < *g.pcie_gen_gpu_max) {
    ev += fmt::format(": the host slot (Gen {}) halves the card's host bandwidth per generation lost",
                      *g.pcie_gen_host_max);
    Fail(r, "the server's slot or riser is older than the card: data loading and host copies run slower");
  } else if (*max < ref.pcie_gen) {
    Fail(r, "the link cannot reach the card's generation: a slot, riser or BIOS setting limits it");
  } else if (!v.idle && below_max) {
    ev += ": below the maximum while the GPU was busy";
    Warn(r, "a link that stays below its maximum under load points to a bad slot or riser");
  } else {
    if (v.idle && below_max) {
      ev += " (read idle: links train down to save power, so the current generation is not judged)";
    }
    Pass(r);
  }
  r.evidence = ev;
  return r;
}

// PCIe width.
CheckResult JudgePcieWidth(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  const Gpu& ref = *v.ref;
  r.unit = "lanes";
  r.expectation_source = CatalogSource(ref, v.ordered);
  if (!g.pcie_width_max || ref.pcie_lanes <= 0) {
    return Skipped(r, g, "pcie_width_max", v.origin);
  }
  const int current = g.pcie_width_current.value_or(*g.pcie_width_max);
  r.measured = current;
  r.expected = ref.pcie_lanes;
  r.measured_text = fmt::format("x{} (max x{})", current, *g.pcie_width_max);
  r.expected_text = fmt::format("x{}", ref.pcie_lanes);
  r.evidence = fmt::format("{}: link width current x{}, max x{}; {} is a x{} card", v.origin, current,
                           *g.pcie_width_max, ref.name, ref.pcie_lanes);
  if (*g.pcie_width_max < ref.pcie_lanes) {
    Fail(r, "the slot is narrower than the card (x8 halves host-to-GPU bandwidth): ask for a x16 slot");
  } else if (g.pcie_width_current && *g.pcie_width_current < *g.pcie_width_max) {
    Warn(r, "the link trained narrower than it can: reseat the card or check the riser; read it again under load");
  } else {
    Pass(r);
  }
  return r;
}

// NVLink on SXM boards (bridges are optional accessories and not judged).
CheckResult JudgeNvlink(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  const Gpu& ref = *v.ref;
  r.unit = "links";
  r.expectation_source = CatalogSource(ref, v.ordered);
  const std::string& kind = ref.interconnect.kind;
  const bool board = StartsWith(kind, "nvlink") && kind != "nvlink_bridge";
  if (!board) {
    if (g.nvlink_up) {
      r.measured = *g.nvlink_up;
    }
    Skip(r, fmt::format("{} links by {}: optional, not judged{}", ref.name,
                        kind.empty() || kind == "none" ? "PCIe only" : kind,
                        g.nvlink_up ? fmt::format(" ({} links up)", *g.nvlink_up) : ""));
    return r;
  }
  if (!g.nvlink_up) {
    return Skipped(r, g, "nvlink_up", v.origin);
  }
  r.measured = *g.nvlink_up;
  r.expected = ref.interconnect.links;
  r.evidence = fmt::format("{}: {} of {} NVLinks up{}; {} has {}", v.origin, *g.nvlink_up,
                           g.nvlink_links.value_or(ref.interconnect.links),
                           g.nvlink_links ? "" : " (links reported: not read)", ref.name, ref.interconnect.links);
  if (*g.nvlink_up >= ref.interconnect.links) {
    Pass(r);
  } else if (v.sys.gpus.size() == 1) {
    // One GPU of a board passed to a VM talks to no other GPU: the links do not matter here.
    r.evidence += " (one GPU on this machine: NVLink carries no traffic)";
    Warn(r, "fine for single-GPU work; for more GPUs of this board ask why links are down");
  } else {
    Fail(r, "NVLinks down: all-reduce falls back to PCIe; ask the provider to fix the board or fabric manager "
            "(DCGM passes this unless told the link count)");
  }
  return r;
}

// MIG: a sliced card is not the whole card.
CheckResult JudgeMig(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  r.expected_text = v.exp.mig_allowed ? "any (--allow-mig)" : "disabled";
  r.expectation_source = v.exp.mig_allowed ? "--allow-mig" : "default: whole cards (docs/check.md §3)";
  if (!g.mig_enabled) {
    return Skipped(r, g, "mig_enabled", v.origin);
  }
  const bool pending = g.mig_pending && *g.mig_pending != *g.mig_enabled;
  r.measured_text = *g.mig_enabled ? "enabled" : "disabled";
  r.evidence = fmt::format("{}: MIG mode {}{}", v.origin, r.measured_text,
                           pending ? fmt::format(" (pending: {})", *g.mig_pending ? "enabled" : "disabled") : "");
  if (*g.mig_enabled && !v.exp.mig_allowed) {
    Fail(r, "the card is split into MIG slices: ask for it whole (nvidia-smi -mig 0) or pass --allow-mig");
  } else if (pending) {
    Warn(r, "a MIG change waits for a GPU reset");
  } else {
    Pass(r);
  }
  return r;
}

// ECC mode: on by default on HBM cards.
CheckResult JudgeEccMode(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  r.expectation_source = "default (docs/check.md §3)";
  if (!g.ecc_enabled) {
    return Skipped(r, g, "ecc_enabled", v.origin);
  }
  const bool hbm = v.ref != nullptr && StartsWith(v.ref->memory_type, "HBM");
  r.measured_text = *g.ecc_enabled ? "enabled" : "disabled";
  r.expected_text = hbm ? "enabled" : "either";
  r.evidence = fmt::format("{}: ECC {}", v.origin, r.measured_text);
  if (!*g.ecc_enabled && hbm) {
    Warn(r, "ECC is off on an HBM card (on by default): memory errors would go undetected");
  } else {
    Pass(r);
  }
  return r;
}

// ECC error counts.
CheckResult JudgeEccErrors(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  r.unit = "errors";
  r.expectation_source = "default (docs/check.md §3)";
  if (!g.ecc_volatile_uncorrected && !g.ecc_aggregate_uncorrected) {
    return Skipped(r, g, "ecc_aggregate_uncorrected", v.origin);
  }
  const uint64_t unc = std::max(g.ecc_volatile_uncorrected.value_or(0), g.ecc_aggregate_uncorrected.value_or(0));
  const uint64_t cor = std::max(g.ecc_volatile_corrected.value_or(0), g.ecc_aggregate_corrected.value_or(0));
  auto count = [](const std::optional<uint64_t>& n) { return n ? std::to_string(*n) : std::string("n/a"); };
  r.measured = static_cast<double>(unc);
  r.expected = 0;
  r.expected_text = fmt::format("0 uncorrectable, corrected < {:.0f}", v.th.ecc_corrected_warn);
  r.evidence = fmt::format("{}: uncorrectable volatile {} aggregate {}, corrected volatile {} aggregate {}", v.origin,
                           count(g.ecc_volatile_uncorrected), count(g.ecc_aggregate_uncorrected),
                           count(g.ecc_volatile_corrected), count(g.ecc_aggregate_corrected));
  if (unc > 0) {
    Fail(r, "uncorrectable memory errors: the card corrupts data; ask for another card");
  } else if (static_cast<double>(cor) >= v.th.ecc_corrected_warn) {
    Warn(r, "many corrected errors: memory wearing out; watch the count during burn-in");
  } else {
    Pass(r);
  }
  return r;
}

// Remapped rows (Ampere and later) or retired pages (before).
CheckResult JudgeRemapping(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  r.expectation_source = "NVIDIA GPU memory error management (docs/check.md §3)";
  const bool rows = g.remapped_rows_pending || g.remapped_rows_failure || g.remapped_rows_uncorrectable;
  const bool pages = g.retired_pages_pending || g.retired_pages_dbe || g.retired_pages_sbe;
  if (!rows && !pages) {
    return Skipped(r, g, "remapped_rows_pending", v.origin);
  }
  Pass(r);
  std::string ev = v.origin + ":";
  if (rows) {
    ev += fmt::format(" remapped rows correctable {}, uncorrectable {}, pending {}, failure {}",
                      g.remapped_rows_correctable.value_or(0), g.remapped_rows_uncorrectable.value_or(0),
                      g.remapped_rows_pending.value_or(false) ? "yes" : "no",
                      g.remapped_rows_failure.value_or(false) ? "yes" : "no");
    if (g.remapped_rows_failure.value_or(false)) {
      Fail(r, "a row remapping failed: NVIDIA's guidance is to replace the card");
    } else if (g.remapped_rows_pending.value_or(false)) {
      Fail(r, "a remapping is pending: the GPU needs a reset before it can be trusted");
    } else if (g.remapped_rows_uncorrectable.value_or(0) > 0) {
      Warn(r, "rows were remapped after uncorrectable errors: the card has had faults");
    }
  }
  if (pages) {
    ev += fmt::format(" retired pages single-bit {}, double-bit {}, pending {}", g.retired_pages_sbe.value_or(0),
                      g.retired_pages_dbe.value_or(0), g.retired_pages_pending.value_or(false) ? "yes" : "no");
    if (g.retired_pages_pending.value_or(false)) {
      Fail(r, "a page retirement is pending: the GPU needs a reset");
    } else if (g.retired_pages_dbe.value_or(0) > 0 && r.status == CheckStatus::kPass) {
      Warn(r, "pages were retired after double-bit errors: the card has had faults");
    }
  }
  r.measured_text = r.status == CheckStatus::kPass   ? "nothing pending"
                    : r.status == CheckStatus::kFail ? "reset pending"
                                                     : "faults remapped";
  r.evidence = ev;
  return r;
}

// Clock-event (throttle) reasons.
CheckResult JudgeClockEvents(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  r.expectation_source = "NVML clock-event reasons (docs/check.md §3)";
  r.expected_text = "no hardware slowdown, no thermal slowdown";
  if (!g.clock_event_reasons) {
    return Skipped(r, g, "clock_event_reasons", v.origin);
  }
  const uint64_t m = *g.clock_event_reasons;
  std::string names;
  for (const auto& n : ClockEventNames(m)) {
    names += (names.empty() ? "" : ", ") + n;
  }
  r.measured_text = names.empty() ? "none" : names;
  r.evidence = fmt::format("{}: clock-event reasons active: {}", v.origin, r.measured_text);
  if ((m & (kClockEventHwSlowdown | kClockEventHwThermal | kClockEventHwPowerBrake)) != 0) {
    Fail(r, "hardware slowdown: overheating, a power-brake signal or a failing power supply; ask the provider to "
            "inspect cooling and power");
  } else if ((m & kClockEventSwThermal) != 0) {
    Warn(r, "the driver lowers clocks for temperature: cooling is marginal");
  } else {
    Pass(r);
  }
  return r;
}

// Temperature at the start.
CheckResult JudgeTemperature(const GpuView& v, CheckResult r) {
  const GpuSnapshot& g = v.g;
  const CheckThresholds& th = v.th;
  r.unit = "C";
  r.expectation_source = "default (docs/check.md §3)";
  if (!g.temperature_c) {
    return Skipped(r, g, "temperature_c", v.origin);
  }
  r.measured = *g.temperature_c;
  r.expected = th.temperature_warn_c;
  r.expected_text = fmt::format("<= {} C", th.temperature_warn_c);
  r.evidence = fmt::format("{}: {} C{}", v.origin, *g.temperature_c,
                           g.temperature_slowdown_c ? fmt::format(" (slowdown at {} C)", *g.temperature_slowdown_c)
                                                    : "");
  AtMost(r, *g.temperature_c, th.temperature_warn_c, CheckStatus::kWarn,
         "hot before any load: cooling or airflow problem");
  return r;
}

// Driver against the CUDA the software needs.
CheckResult JudgeDriverCuda(const SystemSnapshot& sys, const Expectation& exp, const std::string& origin,
                            const std::string& node) {
  CheckResult r = Make("driver_cuda", -1, node);
  r.measured_text =
      fmt::format("driver {}, CUDA {}", sys.driver_version.value_or("n/a"), sys.cuda_driver_version.value_or("n/a"));
  if (!exp.cuda) {
    Skip(r, "no CUDA version required (--cuda, or a PyTorch with CUDA on this machine)");
    return r;
  }
  if (!sys.driver_version && !sys.cuda_driver_version) {
    Skip(r, "driver version not read: " + WhyAbsent(sys.not_measured, "driver_version"));
    return r;
  }
  const auto min_driver = MinimumDriverForCuda(*exp.cuda);
  r.expected_text = fmt::format("CUDA >= {}{}", *exp.cuda, min_driver ? ", driver >= " + *min_driver : "");
  r.expectation_source = exp.cuda_source + (min_driver ? "; CUDA release notes (docs/check.md §3.6)" : "");
  const bool old = (min_driver && sys.driver_version && CompareVersions(*sys.driver_version, *min_driver) < 0) ||
                   (sys.cuda_driver_version && CompareVersions(*sys.cuda_driver_version, *exp.cuda) < 0);
  r.evidence = fmt::format("{}: driver {} supports CUDA up to {}; {} needs CUDA {}{}", origin,
                           sys.driver_version.value_or("n/a"), sys.cuda_driver_version.value_or("n/a"),
                           exp.cuda_source, *exp.cuda,
                           min_driver ? ", which needs driver " + *min_driver + " or newer on Linux" : "");
  if (old) {
    Fail(r, min_driver ? "ask for driver " + *min_driver + " or newer, or use a build of the framework for an older CUDA"
                       : "ask for a newer driver, or use a build of the framework for an older CUDA");
  } else {
    Pass(r);
  }
  return r;
}

// The verdicts of each GPU, in the order of the report (sold_as.h). `needs_card`: without a card
// to judge against (none ordered, the GPU's own not in the catalog) the verdict is a SKIP saying
// so. `last_if_unnamed`: a GPU whose PCI device id and name were both unread is judged no further.
struct GpuVerdict {
  const char* name;
  CheckResult (*judge)(const GpuView&, CheckResult);
  bool needs_card = false;
  bool last_if_unnamed = false;
};

const std::vector<GpuVerdict>& GpuVerdicts() {
  static const std::vector<GpuVerdict> verdicts = {
      {"gpu_identity", JudgeIdentity, false, true},
      {"gpu_memory_total", JudgeMemoryTotal, true},
      {"gpu_power_limit", JudgePowerLimit, true},
      {"pcie_link_gen", JudgePcieGen, true},
      {"pcie_link_width", JudgePcieWidth, true},
      {"nvlink_links_up", JudgeNvlink, true},
      {"mig_mode", JudgeMig},
      {"ecc_mode", JudgeEccMode},
      {"ecc_errors", JudgeEccErrors},
      {"memory_remapping", JudgeRemapping},
      {"clock_events", JudgeClockEvents},
      {"gpu_temperature", JudgeTemperature},
  };
  return verdicts;
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
  out.push_back(JudgeGpuCount(sys, exp, origin, node));
  for (const GpuSnapshot& g : sys.gpus) {
    const Gpu* own = CatalogCardOf(g, catalog);
    const GpuView v{sys,
                    g,
                    exp,
                    catalog,
                    th,
                    origin,
                    idle,
                    own,
                    exp.gpu != nullptr ? exp.gpu : own,
                    exp.gpu != nullptr,
                    EchoedName(g.name.value_or("(name not read)")),
                    g.pci_device_id ? PciDeviceHex(*g.pci_device_id) : std::string("(id not read)")};
    for (const GpuVerdict& verdict : GpuVerdicts()) {
      CheckResult r = Make(verdict.name, g.index, node);
      if (verdict.needs_card && v.ref == nullptr) {
        Skip(r, "no catalog card to judge against (the card is unknown and none was ordered)");
        out.push_back(r);
        continue;
      }
      out.push_back(verdict.judge(v, std::move(r)));
      if (verdict.last_if_unnamed && !g.pci_device_id && !g.name) {
        break;
      }
    }
  }
  out.push_back(JudgeDriverCuda(sys, exp, origin, node));
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
      Skip(r, "no reading before " + during);
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
      Fail(r, "the card raised errors under test: give it back");
    } else if (cor.value_or(0) > 0) {
      Warn(r, "corrected memory errors appeared under test");
    } else if (!unc && xids.empty()) {
      SetStatus(r, CheckStatus::kSkip);  // nothing read to compare; the evidence says what was
    } else {
      Pass(r);
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuplan
