// The GPU catalog (data/gpus.yaml): datasheet figures per card, with sources.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

// Dense (non-sparse) peak throughput in TFLOPS (int8: TOPS); empty when unsupported.
struct Tflops {
  std::optional<double> fp64, fp64_tensor, fp32, tf32, bf16, fp16, fp8, int8, fp4;
};

struct Interconnect {
  std::string kind;          // nvlink3, nvlink4, nvlink_bridge, hccs, none
  double bandwidth_gb_s = 0;  // total bidirectional GB/s per GPU
  int links = 0;
};

struct Gpu {
  std::string name;
  std::vector<std::string> aliases;
  std::string vendor;
  std::string architecture;
  std::string compute_capability;
  std::string form_factor;
  int64_t memory_bytes = 0;    // as the card reports it (nvidia-smi memory.total)
  std::string memory_type;
  double memory_bandwidth_gb_s = 0;
  Tflops tflops;
  // Datatypes the card computes in hardware (tensor cores or vector units), lower case, from
  // kGpuDatatypes: fp64, fp32, tf32, bf16, fp16, fp8, fp6, fp4, int8, int4. Every precision with a
  // figure in `tflops` is listed; a type may be listed without a figure (e.g. int4 on Turing and
  // Ampere, fp64 on L40/L4 where no rate is published).
  std::vector<std::string> datatypes;
  Interconnect interconnect;
  int pcie_gen = 0;
  int pcie_lanes = 0;
  double tdp_watts = 0;
  int mig_max_instances = 0;
  std::vector<std::string> mig_profiles;
  std::vector<std::string> pci_device_ids;  // "0x20B2"
  double price_cny_per_card_hour = 0;       // illustrative only
  std::string confidence;
  std::vector<std::string> sources;         // resolved source texts
  std::string notes;

  // True when `dtype` (case-insensitive: "fp8", "BF16") is in `datatypes`.
  bool Supports(std::string_view dtype) const;
};

// The datatype names `datatypes` may use, widest first.
inline constexpr std::string_view kGpuDatatypes[] = {"fp64", "fp32", "tf32", "bf16", "fp16",
                                                      "fp8",  "fp6",  "fp4",  "int8", "int4"};

class GpuCatalog {
 public:
  static GpuCatalog Load(const std::string& path);
  static GpuCatalog Parse(const std::string& yaml_text, const std::string& file);

  const std::vector<Gpu>& gpus() const { return gpus_; }
  // Case- and punctuation-insensitive lookup by name or alias; nullptr when absent.
  const Gpu* TryFind(const std::string& name) const;
  // As TryFind, but throws InputError suggesting the closest names.
  const Gpu& Find(const std::string& name) const;
  // By PCI device id ("0x20b2", "20B2", or "0x20B210DE" as nvidia-smi prints pci.device_id).
  const Gpu* FindByPciId(const std::string& id) const;
  std::vector<std::string> AllNames() const;

 private:
  std::vector<Gpu> gpus_;
  std::map<std::string, std::size_t> index_;  // normalized name/alias -> position
};

}  // namespace gpuplan
