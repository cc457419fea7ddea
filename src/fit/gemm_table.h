// Measured GEMM rates over matrix shapes (data/gemm/<card>.yaml, written by
// scripts/device/gemm_table.py from `gpu-worker --test gemm-sweep`). Where a card has a table,
// the time model's GEMMs take its rate at their shape instead of the published large-GEMM
// fraction and the roofline (docs/time-model.md §3.1).
#pragma once

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"

namespace gpuplan {

struct GemmTable {
  std::string file;
  std::string gpu;       // the device name the sweep ran on ("NVIDIA H200")
  std::string measured;  // date
  // Rows [m, n, k, TFLOP/s]: m tokens, n output features, k input features.
  std::vector<std::array<double, 4>> bf16, fp8;

  // Throws InputError naming the file, line and field.
  static GemmTable Parse(const std::string& text, const std::string& file);
  static GemmTable Load(const std::string& path);

  // TFLOP/s at (m, n, k), interpolated linearly in log2(m), log2(n), log2(k) between the measured
  // grid points (trilinear over the 8 corners; the nearest measured point where a corner is
  // missing); nullopt when the datatype has no rows or m, n or k lies outside the measured range
  // (the caller falls back to the roofline).
  std::optional<double> Tflops(bool fp8_rows, double m, double n, double k) const;

  // The grid of each datatype (0 bf16, 1 fp8), built by Index() (Parse calls it).
  struct Grid {
    std::set<double> m, n, k;
    std::map<std::array<double, 3>, double> at;
  };
  Grid grid[2];
  void Index();
};

// Every data/gemm/*.yaml (none: an empty set), keyed by the normalised device name.
struct GemmTables {
  std::map<std::string, GemmTable> by_name;
  // The table measured on this card: its name or one of its aliases equals the table's device.
  const GemmTable* For(const Gpu& gpu) const;
};
GemmTables LoadGemmTables(const std::string& data_dir);

}  // namespace gpuplan
