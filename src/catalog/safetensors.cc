#include "catalog/safetensors.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "read/json_fields.h"

namespace gpuplan {

int64_t SafetensorsTensor::Elements() const {
  int64_t n = 1;
  for (int64_t d : shape) {
    n *= d;
  }
  return n;
}

int SafetensorsDtypeBits(std::string_view dtype) {
  static const std::map<std::string_view, int> bits = {
      {"BOOL", 8},    {"U8", 8},      {"I8", 8},        {"F8_E4M3", 8}, {"F8_E5M2", 8}, {"F8_E8M0", 8},
      {"I16", 16},    {"U16", 16},    {"F16", 16},      {"BF16", 16},   {"I32", 32},    {"U32", 32},
      {"F32", 32},    {"I64", 64},    {"U64", 64},      {"F64", 64},    {"F4", 4},      {"F6_E2M3", 6},
      {"F6_E3M2", 6}, {"C64", 64},
  };
  auto it = bits.find(dtype);
  return it == bits.end() ? 0 : it->second;
}

bool IsNonParameterBuffer(std::string_view name) {
  auto ends_with = [&](std::string_view s) { return name.size() >= s.size() && name.substr(name.size() - s.size()) == s; };
  return ends_with("rotary_emb.inv_freq") || ends_with("attn.bias") || ends_with("attn.masked_bias");
}

SafetensorsHeader ParseSafetensorsHeader(std::string_view prefix, uint64_t file_size, const std::string& file) {
  if (prefix.size() < 8 || file_size < 8) {
    throw InputError("truncated safetensors file: shorter than the 8-byte header length", file);
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
  }
  if (n > kSafetensorsMaxHeader) {
    throw InputError("safetensors header length " + std::to_string(n) + " exceeds the format's 100 MB limit", file);
  }
  if (n > file_size - 8 || prefix.size() - 8 < n) {
    throw InputError("truncated safetensors file: header says " + std::to_string(n) + " bytes of JSON, file has " +
                         std::to_string(file_size - 8),
                     file);
  }
  const std::string text(prefix.substr(8, n));
  const nlohmann::json j = ParseJsonText(text, file);
  if (!j.is_object()) {
    throw InputError("safetensors header is not a JSON object", file, 1);
  }
  SafetensorsHeader h;
  h.header_size = n;
  const uint64_t data_size = file_size - 8 - n;
  for (const auto& [name, v] : j.items()) {
    if (name == "__metadata__") {
      if (!v.is_object()) {
        throw InputError("__metadata__ must be an object of strings", file, 0, name);
      }
      for (const auto& [k, s] : v.items()) {
        if (!s.is_string()) {
          throw InputError("__metadata__ values must be strings", file, 0, "__metadata__." + k);
        }
        h.metadata[k] = s.get<std::string>();
      }
      continue;
    }
    if (!v.is_object()) {
      throw InputError("tensor entry must be an object", file, 0, name);
    }
    SafetensorsTensor t;
    t.name = name;
    auto dtype = v.find("dtype");
    auto shape = v.find("shape");
    auto offsets = v.find("data_offsets");
    if (dtype == v.end() || !dtype->is_string()) {
      throw InputError("missing or non-string dtype", file, 0, name + ".dtype");
    }
    t.dtype = dtype->get<std::string>();
    const int bits = SafetensorsDtypeBits(t.dtype);
    if (bits == 0) {
      throw InputError("unknown dtype '" + t.dtype + "'", file, 0, name + ".dtype");
    }
    if (shape == v.end() || !shape->is_array()) {
      throw InputError("missing or non-list shape", file, 0, name + ".shape");
    }
    uint64_t elements = 1;
    for (const auto& d : *shape) {
      if (!d.is_number_unsigned()) {
        throw InputError("shape entries must be non-negative integers", file, 0, name + ".shape");
      }
      const uint64_t dim = d.get<uint64_t>();
      if (dim > 0 && elements > (uint64_t{1} << 62) / dim) {
        throw InputError("shape is implausibly large", file, 0, name + ".shape");
      }
      elements *= dim;
      t.shape.push_back(static_cast<int64_t>(dim));
    }
    if (offsets == v.end() || !offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned()) {
      throw InputError("data_offsets must be [begin, end]", file, 0, name + ".data_offsets");
    }
    t.begin = (*offsets)[0].get<uint64_t>();
    t.end = (*offsets)[1].get<uint64_t>();
    if (t.begin > t.end || t.end > data_size) {
      throw InputError("data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                           "] fall outside the " + std::to_string(data_size) + " data bytes (truncated file?)",
                       file, 0, name + ".data_offsets");
    }
    const uint64_t expected = (elements * static_cast<uint64_t>(bits) + 7) / 8;
    if (t.end - t.begin != expected) {
      throw InputError("data_offsets span " + std::to_string(t.end - t.begin) + " bytes but " + t.dtype + " " +
                           std::to_string(elements) + " elements need " + std::to_string(expected),
                       file, 0, name + ".data_offsets");
    }
    h.tensors.push_back(std::move(t));
  }
  return h;
}

SafetensorsHeader ReadSafetensorsHeader(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw InputError("cannot open file", path);
  }
  in.seekg(0, std::ios::end);
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  std::string prefix(8, '\0');
  if (size < 8 || !in.read(prefix.data(), 8)) {
    throw InputError("truncated safetensors file: shorter than the 8-byte header length", path);
  }
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) {
    n = (n << 8) | static_cast<unsigned char>(prefix[static_cast<std::size_t>(i)]);
  }
  if (n <= kSafetensorsMaxHeader && n <= size - 8) {
    prefix.resize(8 + n);
    in.read(prefix.data() + 8, static_cast<std::streamsize>(n));
  }
  return ParseSafetensorsHeader(prefix, size, path);
}

CheckpointSummary SummarizeCheckpoint(const std::string& dir) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".safetensors") {
      files.push_back(e.path());
    }
  }
  if (ec) {
    throw InputError("cannot list directory: " + ec.message(), dir);
  }
  std::sort(files.begin(), files.end());
  CheckpointSummary s;
  for (const auto& p : files) {
    const SafetensorsHeader h = ReadSafetensorsHeader(p.string());
    ++s.files;
    for (const auto& t : h.tensors) {
      if (IsNonParameterBuffer(t.name)) {
        s.buffers.push_back(t.name);
        continue;
      }
      s.params += t.Elements();
      s.bytes += static_cast<int64_t>(t.end - t.begin);
      s.params_by_dtype[t.dtype] += t.Elements();
    }
  }
  return s;
}

}  // namespace gpuplan
