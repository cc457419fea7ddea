#include "fit/accuracy.h"

#include <cmath>
#include <filesystem>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

// Bounds: a few hundred published runs at most; an error of -100% (nothing measured) to +10,000%.
ErrorFigures Figures(const YamlMap& m) {
  ErrorFigures f;
  f.rows = m.Count("rows", true, 0, 1, 100000);
  f.median_abs_error = *m.Number("median_abs_error", true, 0, 100);
  f.worst_error = *m.Number("worst_error", true, -1, 100);
  if (f.median_abs_error > std::abs(f.worst_error) + 1e-9) {
    m.Fail("median_abs_error", "larger than |worst_error|: a median cannot exceed the largest error");
  }
  return f;
}

KindErrors Kind(const YamlMap& top, const std::string& key) {
  KindErrors k;
  const std::optional<YamlMap> m = top.Map(key, "a mapping of rows, median_abs_error, worst_error, by_gpu");
  if (!m) {
    top.Fail(key, "missing");
  }
  m->Only({"rows", "median_abs_error", "worst_error", "by_gpu"});
  k.all = Figures(*m);
  const YAML::Node list = m->Node("by_gpu");
  if (!list) {
    return k;
  }
  if (!list.IsSequence()) {
    m->Fail("by_gpu", "expected a list of {gpu, rows, median_abs_error, worst_error}");
  }
  int64_t rows = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = m->path() + "by_gpu[" + std::to_string(i) + "].";
    if (!list[i].IsMap()) {
      throw InputError("expected a mapping", top.file(), YamlLine(list[i]), path);
    }
    const YamlMap c(list[i], path, top.file());
    c.Only({"gpu", "rows", "median_abs_error", "worst_error"});
    CardErrors e{c.Str("gpu", true), Figures(c)};
    for (const auto& seen : k.by_gpu) {
      if (NormalizeName(seen.gpu) == NormalizeName(e.gpu)) {
        c.Fail("gpu", "a second entry for " + e.gpu);
      }
    }
    rows += e.errors.rows;
    k.by_gpu.push_back(std::move(e));
  }
  if (rows != k.all.rows) {
    m->Fail("rows", "the cards' rows add up to " + std::to_string(rows) + ", not " + std::to_string(k.all.rows));
  }
  return k;
}

}  // namespace

TimeAccuracy LoadTimeAccuracy(const std::string& path) { return ParseTimeAccuracy(ReadFileText(path), path); }

TimeAccuracy ParseTimeAccuracy(const std::string& text, const std::string& path) {
  const YAML::Node root = ParseYamlText(text, path);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with source, training and inference", path, YamlLine(root));
  }
  const YamlMap top(root, "", path);
  top.Only({"source", "training", "training_moe", "inference"});
  TimeAccuracy a;
  a.file = path;
  a.source = top.Str("source", true);
  a.training = Kind(top, "training");
  if (top.Has("training_moe")) {
    a.training_moe = Kind(top, "training_moe");
  }
  a.inference = Kind(top, "inference");
  return a;
}

std::shared_ptr<const TimeAccuracy> LoadTimeAccuracyIn(const std::string& data_dir) {
  const std::filesystem::path p = std::filesystem::path(data_dir) / "accuracy.yaml";
  std::error_code ec;
  if (!std::filesystem::exists(p, ec)) {
    return nullptr;
  }
  return std::make_shared<const TimeAccuracy>(LoadTimeAccuracy(p.string()));
}

std::optional<AccuracyNote> AccuracyFor(const TimeAccuracy* accuracy, bool training, const Gpu& gpu, bool moe) {
  if (accuracy == nullptr) {
    return std::nullopt;
  }
  moe = moe && training;
  if (moe && accuracy->training_moe.all.rows == 0) {
    return std::nullopt;
  }
  const KindErrors& k = moe ? accuracy->training_moe : training ? accuracy->training : accuracy->inference;
  AccuracyNote n;
  n.training = training;
  n.moe = moe;
  n.gpu = gpu.name;
  n.all = k.all;
  n.source = accuracy->source;
  for (const auto& c : k.by_gpu) {
    n.cards.push_back(c.gpu);
    if (NormalizeName(c.gpu) == NormalizeName(gpu.name)) {
      n.card = c.errors;
    }
  }
  return n;
}

bool IsMoe(const ModelSpec& m) { return m.moe && m.moe->experts > 0; }

const char* AccuracyKind(const AccuracyNote& a) {
  return a.moe ? "training_moe" : a.training ? "training" : "inference";
}

}  // namespace gpuplan
