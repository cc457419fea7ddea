#include "catalog/model_loader.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {

namespace fs = std::filesystem;

namespace {

// Released variants whose name reduces to a preset's ModelStem but whose tensor shapes are not
// known to equal that preset's: they must not resolve silently (NormalizeName of the name
// without the organisation prefix, and why).
struct NotTheSameShapes {
  const char* normalized;
  const char* why;
};
constexpr NotTheSameShapes kNotTheSameShapes[] = {
    {"mixtral8x22binstructv01",
     "Mixtral-8x22B-Instruct-v0.1 ships a newer tokenizer than the base Mixtral-8x22B-v0.1 preset (vocabulary "
     "32000), so its embedding shapes are not known to be the same"},
};

// Released models without a preset of their own whose tensor shapes are known to equal a preset's
// (matched on ModelStem, so the -chat / -Instruct and org/ forms resolve too), with the evidence.
struct SameShapes {
  const char* name;
  const char* preset;
};
constexpr SameShapes kSameShapes[] = {
    // InternLM2.5-7B(-chat): hidden 4096, 32 layers, 32 heads, 8 KV heads, FFN 14336, vocabulary 92544, untied,
    // as internlm2-chat-7b; its published count 7,737,708,544 (data/models/SOURCES.md) is that preset's count.
    {"internlm2_5-7b", "internlm2-chat-7b"},
};

std::string WithoutOrg(const std::string& name) {
  const auto slash = name.rfind('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

bool Meaningless(const std::string& n) {
  const std::string k = NormalizeName(n);
  return k.empty() || k == "config" || k == "configjson";
}

}  // namespace

std::string NameForConfigFile(const std::string& name_or_path, const fs::path& file) {
  // 1. The config's _name_or_path: "org/name" as is; a filesystem path by its last component.
  std::string n = name_or_path;
  const bool fs_path = !n.empty() && (n[0] == '/' || n[0] == '.' || n[0] == '~' ||
                                      n.find('\\') != std::string::npos || n.find(':') != std::string::npos);
  if (fs_path) {
    std::string trimmed = n;
    while (!trimmed.empty() && (trimmed.back() == '/' || trimmed.back() == '\\')) {
      trimmed.pop_back();
    }
    n = fs::path(trimmed).filename().string();
  }
  if (!Meaningless(n) && n != "." && n != "..") {
    return n;
  }
  // 2. The file's own name when it is not config.json ("Qwen2.5-7B.json").
  const std::string stem = file.stem().string();
  if (!Meaningless(stem)) {
    return stem;
  }
  // 3. The folder holding it.
  const fs::path abs = fs::absolute(file).lexically_normal();
  const std::string folder = abs.parent_path().filename().string();
  if (!Meaningless(folder) && folder != "." && folder != ".." && !folder.empty()) {
    return folder;
  }
  return file.string();
}

const ModelPreset& ResolvePreset(const std::string& what, const std::vector<ModelPreset>& presets) {
  const std::string want = NormalizeName(what);
  for (const auto& preset : presets) {
    if (NormalizeName(preset.name) == want) {
      return preset;
    }
  }
  const std::string bare = NormalizeName(WithoutOrg(what));
  for (const auto& preset : presets) {
    if (NormalizeName(preset.name) == bare) {
      return preset;
    }
  }
  const std::string stem = ModelStem(what);
  for (const auto& alias : kSameShapes) {
    if (!stem.empty() && ModelStem(alias.name) == stem) {
      for (const auto& preset : presets) {
        if (preset.name == alias.preset) {
          return preset;
        }
      }
    }
  }
  std::vector<const ModelPreset*> same;
  for (const auto& preset : presets) {
    if (!stem.empty() && ModelStem(preset.name) == stem) {
      same.push_back(&preset);
    }
  }
  if (!same.empty()) {
    for (const auto& x : kNotTheSameShapes) {
      if (bare == x.normalized) {
        throw InputError::Option("model", "model '" + what + "' is not resolved to preset " + same.front()->name + ": " + x.why +
                             "; give its config.json (`model` /path/to/config.json)");
      }
    }
    // Prefer the preset named without a variant suffix (the base model); the rest share its shapes.
    for (const ModelPreset* p : same) {
      if (!HasModelVariant(p->name)) {
        return *p;
      }
    }
    return *same.front();
  }
  std::vector<std::string> names;
  for (const auto& preset : presets) {
    names.push_back(preset.name);
  }
  const std::vector<std::string> closest = ClosestNames(WithoutOrg(what), names, 3);
  throw InputError::Option("model", "unknown model '" + what + "' (not a preset, file or folder); did you mean " + JoinOr(closest) +
                       "? (gpuplan models lists presets)", closest);
}

std::vector<ModelPreset> ListPresets(const std::string& data_dir) {
  std::vector<ModelPreset> out;
  std::error_code ec;
  const fs::path dir = fs::path(data_dir) / "models";
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".json") {
      out.push_back({e.path().stem().string(), e.path().string(), {}});
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

LoadedModel LoadModel(const std::string& what, const std::string& data_dir) {
  if (what.empty()) {
    throw InputError::Option("model", "no model given");
  }
  std::error_code ec;
  const fs::path p(what);
  LoadedModel out;
  if (fs::is_directory(p, ec)) {
    const fs::path cfg = p / "config.json";
    if (!fs::exists(cfg, ec)) {
      throw InputError::Option("model", "checkpoint folder has no config.json", {}, what, 0);
    }
    out.spec = LoadHfConfig(cfg.string());
    out.spec.name = p.filename().empty() ? p.parent_path().filename().string() : p.filename().string();
    CheckpointSummary s = SummarizeCheckpoint(p.string());
    if (s.files > 0) {
      out.checkpoint = std::move(s);
    }
    return out;
  }
  if (fs::is_regular_file(p, ec)) {
    out.spec = LoadHfConfig(p.string());
    out.spec.name = NameForConfigFile(out.spec.name_or_path, p);
    return out;
  }
  return LoadPresetModel(what, data_dir);
}

LoadedModel LoadPresetModel(const std::string& what, const std::string& data_dir) {
  if (what.empty()) {
    throw InputError::Option("model", "no model given");
  }
  LoadedModel out;
  const auto presets = ListPresets(data_dir);
  const ModelPreset& preset = ResolvePreset(what, presets);
  out.spec = LoadHfConfig(preset.path);
  out.spec.name = NormalizeName(what) == NormalizeName(preset.name)
                      ? preset.name
                      : what + " (architecture of preset " + preset.name + ")";
  return out;
}

LoadedModel LoadModelFromConfigText(const std::string& text, const std::string& file, const std::string& name) {
  LoadedModel out;
  out.spec = ParseHfConfig(text, file);
  const std::string fallback = name.empty() ? "pasted config.json" : name;
  if (out.spec.name_or_path.empty()) {
    out.spec.name = fallback;
  } else {
    // A meaningless _name_or_path (".", "config") falls back to the stem of this made-up file.
    const std::string from_config = NameForConfigFile(out.spec.name_or_path, fs::path("pasted.json"));
    out.spec.name = from_config == "pasted" ? fallback : from_config;
  }
  return out;
}

}  // namespace gpuplan
