// When a workload does not fit: the smallest changes that make it fit, each one checked by
// running the memory model again.
#pragma once

#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/memory_model.h"
#include "fit/workload.h"

namespace gpuplan {

struct Suggestion {
  // The flags to add to the user's command, e.g. "--recompute full", "--tp 2 + --gpus 2",
  // "--zero 3 (sharded over 8 data-parallel ranks) + --gpus 8": applied to it, they give `layout`.
  std::string change;
  std::string result;  // the resulting layout, e.g. "2 x A100 80GB SXM (tp=2 pp=1 dp=1 zero=0), full, ..."
  int disruption = 0;  // lower = smaller change for the team
  Workload workload;
  Layout layout;
  const Gpu* gpu = nullptr;
  MemoryEstimate estimate;
};

// The one fit test of gpuplan (single estimates, the advisor, the search): the per-GPU total
// within the card's memory less a safety margin (a fraction; 0 for the verdict of one estimate).
double UsableBytes(const Gpu& gpu, double margin = 0);
bool Fits(const MemoryEstimate& e, const Gpu& gpu, double margin = 0);

// Datatypes a card runs (docs/memory-model.md §7), from the catalog's `datatypes` list: bf16 from
// Ampere, fp16 on every tensor-core card (Volta, Turing), fp8 from Ada and Hopper. int8 and int4
// weight-only quantisation dequantise to the card's 16-bit type in the matmul kernel, so every
// card runs them.
bool CardRuns(const Gpu& gpu, WeightDtype d);
bool CardRuns(const Gpu& gpu, KvDtype d);
bool CardRuns(const Gpu& gpu, Precision p);
// The card's 16-bit float for mixed precision and half-precision weights: "bf16", else "fp16".
const char* HalfDtype(const Gpu& gpu);
// The workload as the card runs it: bf16 weights, KV cache and mixed precision become fp16 on a
// card without bf16 (same bytes). Appends a note for each change and for anything the card
// still cannot run to `notes` when given.
Workload ForCard(const Workload& w, const Gpu& gpu, std::vector<std::string>* notes = nullptr);
// The framework profile's values on this card and layout (FrameworkOnCard: vLLM's batch defaults,
// SGLang's fraction, TGI's KV block) into the overheads, and the server's forward-pass tokens
// into the workload unless --batched-tokens was given. The note says what was chosen.
void FrameworkForCard(const Gpu& gpu, const ModelSpec& m, const Layout& l, Workload& w, OverheadConfig& o,
                      std::vector<std::string>* notes = nullptr);
// Whether the card runs every datatype of the workload (after ForCard).
bool CardRuns(const Gpu& gpu, const Workload& w);
std::string DescribeLayout(const Workload& w, const Layout& l, const Gpu& gpu);

// Up to `limit` fitting alternatives, smallest change first. Single changes are tried first;
// pairs of changes only when no single change fits.
std::vector<Suggestion> SuggestFixes(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                     const GpuCatalog& catalog, const OverheadConfig& o, std::size_t limit = 5);

}  // namespace gpuplan
