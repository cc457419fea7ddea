// What was ordered, against which `gpuplan check` holds the machine: the card (a catalog entry),
// how many per node, whether MIG was asked for, the CUDA version the software needs, the CPU
// cores an offer promises. From `--expect "8x H100 SXM"`, from an offers file + offer id (the
// card that was paid for), or nothing (each GPU is then judged against the catalog entry of its
// own PCI device id, which still catches a mislabelled card, a cut-down one or a slow link).
#pragma once

#include <optional>
#include <string>

#include "catalog/gpu_catalog.h"
#include "catalog/offer.h"

namespace gpuplan {

struct Expectation {
  std::string text;                 // as the user gave it ("8x H100 SXM", "offer nj-a100-monthly")
  const Gpu* gpu = nullptr;         // the card ordered; nullptr: no card named
  std::optional<int> count;         // GPUs ordered per node
  bool mig_allowed = false;         // MIG enabled is a FAIL unless asked for (--allow-mig)
  std::optional<std::string> cuda;  // the CUDA version the software needs ("12.4")
  std::string cuda_source;          // "--cuda", "PyTorch 2.5.1 at /usr/lib/python3/..."
  std::optional<int> cpu_cores;     // cores the offer promises (offers `cpu_cores:`), for the CPU test
  std::string source;               // where the expectation came from, for the report's evidence
};

// "8x H100 SXM", "8 x H100 SXM 80GB", "H100 SXM x8", "H100 SXM" (count not checked), "8" (count
// only). The card must resolve in the catalog (TryFind, then the longest known name the text
// starts with); otherwise InputError on field "--expect" with the closest names.
Expectation ParseExpect(const std::string& text, const GpuCatalog& catalog);

// The card and count of an offer: gpus_per_instance of the offer's GPU.
Expectation ExpectFromOffer(const OfferSet& offers, const std::string& offer_id);

// The Linux driver a CUDA toolkit version needs at least (CUDA Toolkit Release Notes, table
// "CUDA Toolkit and Corresponding Driver Versions", GA releases; docs/check.md §3.6), e.g.
// "12.4" -> "550.54.14"; nullopt for versions not in the table.
std::optional<std::string> MinimumDriverForCuda(const std::string& cuda);

// Compares dotted versions numerically: "12.10" > "12.4"; -1, 0, 1.
int CompareVersions(const std::string& a, const std::string& b);

// The CUDA version of the PyTorch installed on this machine (`python3 -c "import torch; ..."`),
// with where it was found; nullopt when there is no python3 or no torch (or it has no CUDA).
std::optional<std::pair<std::string, std::string>> DetectTorchCuda();

}  // namespace gpuplan
