// Measured GEMM rates over matrix shapes (data/gemm/<card>.yaml, written by
// scripts/device/gemm_table.py from `gpu-worker --test gemm-sweep`, or from a published sweep by
// scripts/gemm/mamf_table.py, which names it in `source`). Where a card has a table, the time
// model's GEMMs take its rate at their shape instead of the published large-GEMM fraction
// (docs/time-model.md §3.1).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "fit/attention_table.h"

namespace gpuplan {

struct GemmTable {
  std::string file;
  std::string gpu;       // the device name the sweep ran on ("NVIDIA H200")
  std::string measured;  // date
  std::string source;    // where a published table comes from; empty: measured by our own sweep
  std::string basis;     // what an answer says of it: "published sweep, data/gemm/h100-sxm.yaml"
  std::string basis_scaled;  // the same for another card of its architecture ("..., scaled to ...")
  // A table may stand for every card of its architecture that has none of its own (`architecture:`
  // in the file, with the dense peaks of the card it was measured on): such a card takes the
  // table's rates scaled by its own peak over the table's (docs/time-model.md §3.1).
  std::string architecture;  // normalised ("hopper"); empty: this card only
  double peak_tflops_bf16 = 0, peak_tflops_fp8 = 0;
  // Rows [m, n, k, TFLOP/s]: m tokens, n output features, k input features. `fp8_fast` (the file's
  // `fp8_fast_accum`): fp8 with cuBLASLt's fast accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM), the
  // mode Transformer Engine and torchao run the forward fp8 GEMM in and inference engines' fp8
  // kernels use; `fp8` is the default, more exact mode of the two gradient GEMMs (docs/time-model.md §3.1).
  // A table may give the fast mode as `fp8_fast_accum_scale:` instead of rows (a published sweep
  // that timed only the exact mode): fp8_fast is then the fp8 rows times it, capped at the fp8 peak.
  std::vector<std::array<double, 4>> bf16, fp8, fp8_fast;
  double fp8_fast_scale = 0;  // the file's fp8_fast_accum_scale; 0: none (rows as measured, or no fast mode)

  // Throws InputError naming the file, line and field.
  static GemmTable Parse(const std::string& text, const std::string& file);
  static GemmTable Load(const std::string& path);

  // Which rows a lookup reads: kBf16, kFp8, kFp8FastAccum (a table without fast-accumulation rows
  // answers kFp8FastAccum from its fp8 rows: the slower mode, never a rate it did not measure).
  static constexpr int kBf16 = 0, kFp8 = 1, kFp8FastAccum = 2;
  // TFLOP/s at (m, n, k), interpolated linearly in log2(m), log2(n), log2(k) between the measured
  // grid points (trilinear over the 8 corners; the nearest measured point where a corner is
  // missing). A dimension outside the measured range is held at the range's end (the rate of the
  // largest measured size beyond it; below the smallest, the smallest's rate, which the caller's
  // memory roofline then bounds). Nullopt when the datatype has no rows.
  std::optional<double> Tflops(int rows, double m, double n, double k) const;
  double Lookup(int rows, double m, double n, double k) const;  // Tflops without its memo; rows present
  // The rows `rows` reads (kFp8FastAccum falls back to fp8 where the table has none).
  int RowsFor(int rows) const { return rows == kFp8FastAccum && fp8_fast.empty() ? kFp8 : rows; }
  const std::vector<std::array<double, 4>>& RowsOf(int rows) const {
    return rows == kBf16 ? bf16 : rows == kFp8 ? fp8 : fp8_fast;
  }

  // The grid of each datatype (kBf16, kFp8, kFp8FastAccum), built by Index() (Parse calls it): each axis's
  // sizes ascending with their log2, and the rates in a dense m-major array (NaN: not measured).
  struct Grid {
    std::array<std::vector<double>, 3> axis, log_axis;
    std::vector<double> at;
  };
  Grid grid[3];
  uint64_t id = 0;  // unique per Index() call: the key of the per-thread memo of Tflops
  void Index();
};

// Every data/gemm/*.yaml (none: an empty set), keyed by the normalised device name, and every
// data/attention/*.yaml, keyed by the architecture it stands for.
struct GemmTables {
  std::map<std::string, GemmTable> by_name;
  std::map<std::string, std::string> by_architecture;  // architecture -> the by_name key standing for it
  std::map<std::string, AttentionTable> attention;     // architecture -> its fused-attention rates
  // The attention table of the card's architecture, or nullptr.
  const AttentionTable* AttentionFor(const Gpu& gpu) const;
  // The table measured on this card: its name or one of its aliases equals the table's device.
  // For remembers its last answer per thread (keyed by this set's generation and the card's
  // name); Find looks it up.
  // `own`: set to whether the table is the card's own (else it stands for its architecture).
  const GemmTable* For(const Gpu& gpu, bool* own = nullptr) const;
  const GemmTable* Find(const Gpu& gpu, bool* own) const;
  // Set by LoadGemmTables; a set built by hand keeps 0 (then For = Find). A copy or move of a
  // loaded set takes a fresh one (a moved-from set 0), so For's memo never answers with a pointer
  // into another set. A loaded set is not changed after it is loaded.
  uint64_t generation = 0;
  static uint64_t NextGeneration();

  GemmTables() = default;
  GemmTables(const GemmTables& o)
      : by_name(o.by_name),
        by_architecture(o.by_architecture),
        attention(o.attention),
        generation(o.generation ? NextGeneration() : 0) {}
  GemmTables(GemmTables&& o) noexcept
      : by_name(std::move(o.by_name)),
        by_architecture(std::move(o.by_architecture)),
        attention(std::move(o.attention)),
        generation(o.generation ? NextGeneration() : 0) {
    o.generation = 0;
  }
  GemmTables& operator=(const GemmTables& o) {
    by_name = o.by_name;
    by_architecture = o.by_architecture;
    attention = o.attention;
    generation = o.generation ? NextGeneration() : 0;
    return *this;
  }
  GemmTables& operator=(GemmTables&& o) noexcept {
    by_name = std::move(o.by_name);
    by_architecture = std::move(o.by_architecture);
    attention = std::move(o.attention);
    generation = o.generation ? NextGeneration() : 0;
    o.generation = 0;
    return *this;
  }
  ~GemmTables() = default;
};
GemmTables LoadGemmTables(const std::string& data_dir);
// The same, read once per process for a data folder and shared: read again only when a file of
// data/gemm or data/attention was added, removed or changed (name, size, time). Every fit, plan job and API request
// prepares a fit; the H100 table alone (bf16 and fp8 rows, 6,750 of them) takes about 0.2 s to parse.
std::shared_ptr<const GemmTables> SharedGemmTables(const std::string& data_dir);

}  // namespace gpuplan
