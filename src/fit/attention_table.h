// Published fused-attention rates by sequence length (data/attention/<name>.yaml, converted by
// scripts/attention/cudnn_sdpa_table.py from cuDNN's SDPA training benchmark). A table stands for
// every card of its architecture at the same fraction of the card's bf16 peak; the time model
// takes it for the Hopper- and Blackwell-tuned kernels (`--attention fa3`: FlashAttention-3,
// cuDNN through Transformer Engine) instead of one flat fraction (docs/time-model.md §3.2).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace gpuplan {

struct AttentionTable {
  std::string file;
  std::string gpu;           // the device it ran on ("NVIDIA H200")
  std::string architecture;  // normalised ("hopper")
  std::string kernel;        // "cudnn"
  std::string cudnn;         // the library version ("9.19.1")
  std::string measured, source;
  double peak_tflops_bf16 = 0;  // the measured card's dense bf16 peak
  // [seq, forward TFLOP/s, backward TFLOP/s], causal mask, seq strictly ascending.
  std::vector<std::array<double, 3>> causal;

  // Throws InputError naming the file, line and field.
  static AttentionTable Parse(const std::string& text, const std::string& file);
  static AttentionTable Load(const std::string& path);

  // Forward and backward TFLOP/s at a sequence length: linear in log2(seq) between the rows, held
  // at the first and last row's rates outside them.
  std::pair<double, double> Tflops(double seq) const;
  // What an answer says of it ("published, data/attention/hopper-cudnn.yaml (cuDNN 9.19.1 on NVIDIA H200; ...)").
  std::string Basis() const;
};

}  // namespace gpuplan
