// gpuplan gpus / gpuplan models: the library lists the catalogs (catalog/listings.h), this file
// renders them (JSON through io/catalog_json.h).
#include <fmt/format.h>

#include <iostream>

#include "catalog/gpu_catalog.h"
#include "catalog/listings.h"
#include "commands.h"
#include "core/units.h"
#include "io/catalog_json.h"

namespace gpuplan::cli {
namespace {

std::string Opt(const std::optional<double>& v) { return v ? fmt::format("{:g}", *v) : "-"; }

}  // namespace

Runner RegisterGpus(CLI::App& app, GlobalOptions& g) {
  CLI::App* c = app.add_subcommand("gpus", "list the GPU catalog (data/gpus.yaml)");
  c->add_flag("--json", g.json, "print JSON");
  return [&g]() -> int {
    const GpuCatalog cat = LoadGpuCatalog(DataDir(g));
    if (g.json) {
      std::cout << GpusToJson(cat).dump(2) << "\n";
      return kExitOk;
    }
    std::cout << fmt::format("{:<22} {:>8} {:>7} {:>7} {:>7} {:>7} {:<22} {:>6} {:>5} {:<44} {}\n", "GPU", "mem GiB",
                             "GB/s", "bf16", "fp8", "int8", "GPU-GPU link", "PCIe", "TDP", "datatypes", "PCI ids");
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
                                   ? "none"
                                   : fmt::format("{} {:g} GB/s", gpu.interconnect.kind, gpu.interconnect.bandwidth_gb_s);
      std::cout << fmt::format("{:<22} {:>8.1f} {:>7g} {:>7} {:>7} {:>7} {:<22} {:>6} {:>5g} {:<44} {}\n", gpu.name,
                               Bytes(static_cast<double>(gpu.memory_bytes)).gib(), gpu.memory_bandwidth_gb_s,
                               Opt(gpu.tflops.bf16 ? gpu.tflops.bf16 : gpu.tflops.fp16), Opt(gpu.tflops.fp8),
                               Opt(gpu.tflops.int8), link, fmt::format("{}x{}", gpu.pcie_gen, gpu.pcie_lanes),
                               gpu.tdp_watts, types.empty() ? "-" : types, ids);
    }
    std::cout << "TFLOPS are dense (no sparsity); bf16 column shows fp16 where the card has no bf16.\n"
                 "datatypes: the formats the card computes in hardware (tensor cores or vector units).\n";
    return kExitOk;
  };
}

Runner RegisterModels(CLI::App& app, GlobalOptions& g) {
  CLI::App* c = app.add_subcommand("models", "list the model presets (data/models/*.json)");
  c->add_flag("--json", g.json, "print JSON");
  return [&g]() -> int {
    const std::vector<ModelListing> models = ListModels(DataDir(g));
    if (g.json) {
      std::cout << ModelsToJson(models).dump(2) << "\n";
      return kExitOk;
    }
    std::cout << fmt::format("{:<28} {:<12} {:>18} {:>18} {:>7} {:>7}\n", "preset", "model_type", "params total",
                             "params active", "layers", "hidden");
    for (const auto& l : models) {
      const ModelSpec& m = l.spec;
      std::cout << fmt::format("{:<28} {:<12} {:>18} {:>18} {:>7} {:>7}\n", l.name, m.model_type, m.ParamsTotal(),
                               m.ParamsActive(), m.layers, m.hidden);
    }
    return kExitOk;
  };
}

}  // namespace gpuplan::cli
