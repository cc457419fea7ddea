// Resolves what the user named as --model: a preset in data/models, a config.json file, or a
// checkpoint folder (config.json + *.safetensors headers).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/model.h"
#include "catalog/safetensors.h"

namespace gpuplan {

struct ModelPreset {
  std::string name;  // file stem, e.g. "Llama-3.1-8B"
  std::string path;
  std::string source;  // provenance, from data/models/SOURCES.md table (may be empty)
};

struct LoadedModel {
  ModelSpec spec;
  std::optional<CheckpointSummary> checkpoint;  // when a folder with safetensors was given
};

std::vector<ModelPreset> ListPresets(const std::string& data_dir);
LoadedModel LoadModel(const std::string& what, const std::string& data_dir);

}  // namespace gpuplan
