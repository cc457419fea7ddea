// When a workload does not fit: the smallest changes that make it fit, each one checked by
// running the memory model again.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/memory_model.h"

namespace gpuplan {

struct Suggestion {
  std::string change;  // e.g. "--recompute full", "ZeRO-3 over 8 GPUs (--gpus 8 --zero 3)", "--tp 2"
  std::string result;  // the resulting layout, e.g. "2 x A100 80GB SXM (tp=2 pp=1 dp=1 zero=0), full, ..."
  int disruption = 0;  // lower = smaller change for the team
  Workload workload;
  Layout layout;
  const Gpu* gpu = nullptr;
  MemoryEstimate estimate;
};

bool Fits(const MemoryEstimate& e, const Gpu& gpu);
std::string DescribeLayout(const Workload& w, const Layout& l, const Gpu& gpu);

// Up to `limit` fitting alternatives, smallest change first. Single changes are tried first;
// pairs of changes only when no single change fits.
std::vector<Suggestion> SuggestFixes(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                     const GpuCatalog& catalog, const OverheadConfig& o, std::size_t limit = 5);

}  // namespace gpuplan
