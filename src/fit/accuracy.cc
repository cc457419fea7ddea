#include "fit/accuracy.h"

#include <cmath>
#include <filesystem>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

// The most setups a card may list (src/fit/accuracy.h SetupErrors).
constexpr std::size_t kMaxSetups = 256;

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

// A card's setups: [{precision, framework, rows, median_abs_error, median_error, lowest_error,
// highest_error, worst_error}], each of kSetupMinRows runs or more, no pair twice.
std::vector<SetupErrors> Setups(const YamlMap& card, const CardErrors& e) {
  std::vector<SetupErrors> out;
  const YAML::Node list = card.Node("by_setup");
  if (!list) {
    return out;
  }
  if (!list.IsSequence()) {
    card.Fail("by_setup", "expected a list of {precision, framework, rows, median_abs_error, median_error, "
                          "lowest_error, highest_error, worst_error}");
  }
  // Two precision classes times the framework families and `any`: a few dozen at most.
  if (list.size() > kMaxSetups) {
    card.Fail("by_setup", std::to_string(list.size()) + " entries; at most " + std::to_string(kMaxSetups));
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = card.path() + "by_setup[" + std::to_string(i) + "].";
    if (!list[i].IsMap()) {
      throw InputError("expected a mapping", card.file(), YamlLine(list[i]), path);
    }
    const YamlMap m(list[i], path, card.file());
    m.Only({"precision", "framework", "rows", "median_abs_error", "median_error", "lowest_error", "highest_error",
            "worst_error"});
    SetupErrors s;
    s.precision = m.Str("precision", true);
    if (s.precision != "fp8" && s.precision != "16-bit") {
      m.Fail("precision", "expected fp8 or 16-bit, got '" + s.precision + "'");
    }
    s.framework = m.Str("framework", true);
    s.errors = Figures(m);
    if (s.errors.rows < kSetupMinRows) {
      m.Fail("rows", "a setup is quoted over " + std::to_string(kSetupMinRows) + " runs or more");
    }
    if (s.errors.rows > e.errors.rows) {
      m.Fail("rows", "more than the card's " + std::to_string(e.errors.rows));
    }
    s.median_error = *m.Number("median_error", true, -1, 100);
    s.lowest_error = *m.Number("lowest_error", true, -1, 100);
    s.highest_error = *m.Number("highest_error", true, -1, 100);
    if (s.lowest_error > s.median_error + 1e-9 || s.median_error > s.highest_error + 1e-9) {
      m.Fail("median_error", "not between lowest_error and highest_error");
    }
    const double worst = std::abs(s.lowest_error) >= std::abs(s.highest_error) ? s.lowest_error : s.highest_error;
    if (std::abs(worst - s.errors.worst_error) > 1e-9) {
      m.Fail("worst_error", "not the larger in magnitude of lowest_error and highest_error");
    }
    if (!seen.insert({s.precision, NormalizeName(s.framework)}).second) {
      m.Fail("framework", "a second entry for " + s.precision + " with " + s.framework);
    }
    out.push_back(std::move(s));
  }
  return out;
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
    c.Only({"gpu", "rows", "median_abs_error", "worst_error", "by_setup"});
    CardErrors e{c.Str("gpu", true), Figures(c), {}};
    e.by_setup = Setups(c, e);
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

std::optional<AccuracyNote> AccuracyFor(const TimeAccuracy* accuracy, bool training, const Gpu& gpu, bool moe,
                                        const AccuracySetup* setup) {
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
    if (NormalizeName(c.gpu) != NormalizeName(gpu.name)) {
      continue;
    }
    n.card = c.errors;
    if (setup == nullptr) {
      continue;
    }
    // The request's family where runs of it were checked, else any framework of its precision.
    const std::string precision = PrecisionClass(setup->fp8);
    const bool named = !setup->family.empty() && NormalizeName(setup->family) != "generic";
    const SetupErrors* any = nullptr;
    for (const auto& s : c.by_setup) {
      if (s.precision != precision) {
        continue;
      }
      if (named && NormalizeName(s.framework) == NormalizeName(setup->family)) {
        n.setup = s;
      } else if (s.framework == "any") {
        any = &s;
      }
    }
    if (!n.setup && any != nullptr) {
      n.setup = *any;
    }
    // A setup that is every checked run of the card, on both sides of the model, says nothing the
    // card's figures do not (the same median and worst): fit printed both sentences, one under the
    // other, for a 16-bit inference on an A100. One that leans one way still says which way.
    if (n.setup && n.setup->errors.rows == c.errors.rows && n.setup->lowest_error <= 0 && n.setup->highest_error >= 0) {
      n.setup.reset();
    }
  }
  const double worst = n.card ? n.card->worst_error : n.all.worst_error;
  if ((n.card || n.all.rows > 0) && std::abs(worst) >= kUnplannableError) {
    n.worst_run_time_ratio = 1 + worst;
  }
  return n;
}

const char* PrecisionClass(bool fp8) { return fp8 ? "fp8" : "16-bit"; }

bool IsMoe(const ModelSpec& m) { return m.moe && m.moe->experts > 0; }

const char* AccuracyKind(const AccuracyNote& a) {
  return a.moe ? "training_moe" : a.training ? "training" : "inference";
}

}  // namespace gpuplan
