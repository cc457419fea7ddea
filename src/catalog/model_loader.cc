#include "catalog/model_loader.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {

namespace fs = std::filesystem;

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
    throw InputError("no model given", "", 0, "--model");
  }
  std::error_code ec;
  const fs::path p(what);
  LoadedModel out;
  if (fs::is_directory(p, ec)) {
    const fs::path cfg = p / "config.json";
    if (!fs::exists(cfg, ec)) {
      throw InputError("checkpoint folder has no config.json", what, 0, "--model");
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
    out.spec.name = p.parent_path().filename().string();
    if (out.spec.name.empty()) {
      out.spec.name = p.stem().string();
    }
    return out;
  }
  const auto presets = ListPresets(data_dir);
  const std::string want = NormalizeName(what);
  for (const auto& preset : presets) {
    if (NormalizeName(preset.name) == want) {
      out.spec = LoadHfConfig(preset.path);
      out.spec.name = preset.name;
      return out;
    }
  }
  std::vector<std::string> names;
  for (const auto& preset : presets) {
    names.push_back(preset.name);
  }
  throw InputError("unknown model '" + what + "' (not a preset, file or folder); did you mean " +
                       JoinOr(ClosestNames(what, names, 3)) + "? (gpuplan models lists presets)",
                   "", 0, "--model");
}

}  // namespace gpuplan
