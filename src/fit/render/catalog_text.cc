#include "fit/render/catalog_text.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "core/units.h"
#include "format/numbers.h"
#include "format/table.h"
#include "format/text_lang.h"

namespace gpuplan {
namespace {

// A card's optional figure, "989.5" ("{:g}"), or "-".
std::string Opt(const std::optional<double>& v) {
  return OptionalText(v, [](double x) { return fmt::format("{:g}", x); });
}

}  // namespace

void GpusToText(std::ostream& os, const GpuCatalog& cat) {
  const Align r = Align::kRight;
  const Table table({{"GPU", 22},
                     {Say("cli.catalog.col.memory", "mem GiB"), 8, r},
                     {"GB/s", 7, r},
                     {"bf16", 7, r},
                     {"fp8", 7, r},
                     {"int8", 7, r},
                     {Say("cli.catalog.col.link", "GPU-GPU link"), 22},
                     {"PCIe", 6, r},
                     {"TDP", 5, r},
                     {Say("cli.catalog.col.datatypes", "datatypes"), 44},
                     {Say("cli.catalog.col.pci_ids", "PCI ids")}});
  table.PrintHeader(os);
  for (const auto& gpu : cat.gpus()) {
    std::string ids;
    for (const auto& id : gpu.pci_device_ids) {
      ids += (ids.empty() ? "" : ",") + id;
    }
    std::string types;
    for (const auto& d : gpu.datatypes) {
      types += (types.empty() ? "" : ",") + d;
    }
    const std::string link = gpu.interconnect.kind == "none" || gpu.interconnect.kind.empty()
                                 ? Say("cli.catalog.link.none", "none")
                                 : fmt::format("{} {:g} GB/s", gpu.interconnect.kind, gpu.interconnect.bandwidth_gb_s);
    table.PrintRow(
        os, {gpu.name, fmt::format("{:.1f}", Bytes(static_cast<double>(gpu.memory_bytes)).gib()),
             fmt::format("{:g}", gpu.memory_bandwidth_gb_s), Opt(gpu.tflops.bf16 ? gpu.tflops.bf16 : gpu.tflops.fp16),
             Opt(gpu.tflops.fp8), Opt(gpu.tflops.int8), link, fmt::format("{}x{}", gpu.pcie_gen, gpu.pcie_lanes),
             fmt::format("{:g}", gpu.tdp_watts), types.empty() ? "-" : types, ids});
  }
  os << Say("cli.catalog.gpus.footer_tflops",
             "TFLOPS are dense (no sparsity); bf16 column shows fp16 where the card has no bf16.")
     << "\n"
     << Say("cli.catalog.gpus.footer_datatypes",
            "datatypes: the formats the card computes in hardware (tensor cores or vector units).")
     << "\n";
}

void ModelsToText(std::ostream& os, const std::vector<ModelListing>& models) {
  const Align r = Align::kRight;
  const Table table({{Say("cli.catalog.col.preset", "preset"), 28},
                     {"model_type", 12},
                     {Say("cli.catalog.col.params_total", "params total"), 18, r},
                     {Say("cli.catalog.col.params_active", "params active"), 18, r},
                     {Say("cli.catalog.col.layers", "layers"), 7, r},
                     {Say("cli.catalog.col.hidden", "hidden"), 7, r}});
  table.PrintHeader(os);
  for (const auto& l : models) {
    const ModelSpec& m = l.spec;
    table.PrintRow(os, {l.name, m.model_type, fmt::format("{}", m.ParamsTotal()), fmt::format("{}", m.ParamsActive()),
                        fmt::format("{}", m.layers), fmt::format("{}", m.hidden)});
  }
}

}  // namespace gpuplan
