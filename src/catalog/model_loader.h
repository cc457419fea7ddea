// Resolves what the user named as --model: a preset in data/models, a config.json file, or a
// checkpoint folder (config.json + *.safetensors headers).
#pragma once

#include <filesystem>
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

// What the user named as --model, resolved to a preset: the exact name (case- and
// punctuation-insensitive), the name without an "org/" prefix, or the same ModelStem
// (core/names.h: -Instruct, -Chat, -chat-hf, -hf, -Base, -it, "Meta-" dropped), which names a
// release with the preset's tensor shapes. Variants known or suspected to differ in shapes are
// refused, as are unknown names (with suggestions). InputError on field --model.
const ModelPreset& ResolvePreset(const std::string& what, const std::vector<ModelPreset>& presets);

// The name of a model read from a config file: the config's `_name_or_path` ("org/name" as is, a
// filesystem path by its last component), else the file's stem unless it is "config", else its
// folder; never "config" or ".".
std::string NameForConfigFile(const std::string& name_or_path, const std::filesystem::path& file);

// Presets resolved by ResolvePreset are named as the user typed them, with
// " (architecture of preset X)" appended when the name differs from the preset's.
LoadedModel LoadModel(const std::string& what, const std::string& data_dir);

// A preset only, never a file or a folder (ResolvePreset): what a network front end (the serve
// API) accepts as a model name, so a request cannot make the server read a path it names.
LoadedModel LoadPresetModel(const std::string& what, const std::string& data_dir);

// A config.json given as text (the serve API's pasted "config"); `file` names it in errors.
// The model is named from the config's `_name_or_path`, else `name` when not empty, else
// "pasted config.json".
LoadedModel LoadModelFromConfigText(const std::string& text, const std::string& file, const std::string& name);

}  // namespace gpuplan
