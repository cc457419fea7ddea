// safetensors headers, read without touching the weights.
//
// Format (huggingface/safetensors README, "Format"): 8 bytes little-endian u64 N, then N bytes
// of UTF-8 JSON mapping tensor name -> {dtype, shape, data_offsets:[begin,end]} (offsets
// relative to the end of the header) plus an optional "__metadata__" string map; then the
// data. The spec caps the header at 100 MB.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
  int64_t Elements() const;
};

struct SafetensorsHeader {
  uint64_t header_size = 0;
  std::vector<SafetensorsTensor> tensors;
  std::map<std::string, std::string> metadata;
};

inline constexpr uint64_t kSafetensorsMaxHeader = 100'000'000;

// Bits per element of a safetensors dtype, 0 when unknown.
int SafetensorsDtypeBits(std::string_view dtype);

// `prefix` holds at least the first 8 + N bytes of the file; `file_size` is the whole file's
// size (so data offsets can be checked). Throws InputError naming `file` and the tensor.
SafetensorsHeader ParseSafetensorsHeader(std::string_view prefix, uint64_t file_size, const std::string& file);

// Reads only the header of the file at `path`.
SafetensorsHeader ReadSafetensorsHeader(const std::string& path);

// Parameter counts of a checkpoint folder (every *.safetensors in it).
struct CheckpointSummary {
  int files = 0;
  int64_t params = 0;                          // tensors that are parameters
  int64_t bytes = 0;                           // data bytes of those tensors
  std::map<std::string, int64_t> params_by_dtype;
  std::vector<std::string> buffers;            // tensors skipped as non-parameter buffers
};

// True for tensors some checkpoints carry that are buffers, not parameters
// (e.g. Llama-2's "rotary_emb.inv_freq", GPT-2's "attn.bias" causal mask).
bool IsNonParameterBuffer(std::string_view name);

CheckpointSummary SummarizeCheckpoint(const std::string& dir);

}  // namespace gpuplan
