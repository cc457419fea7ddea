#include "fit/attention_table.h"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {

AttentionTable AttentionTable::Parse(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlText(text, file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with gpu, architecture, peak_tflops_bf16 and causal_bf16", file,
                     YamlLine(root));
  }
  const YamlMap top(root, "", file);
  top.Only({"kernel", "gpu", "architecture", "peak_tflops_bf16", "cudnn", "measured", "source", "shape",
            "causal_bf16"});
  AttentionTable t;
  t.file = file;
  t.kernel = top.Str("kernel", true);
  if (t.kernel != "cudnn") {
    top.Fail("kernel", "expected cudnn (the fused attention the table times), got " + t.kernel);
  }
  t.gpu = top.Str("gpu", true);
  t.architecture = NormalizeName(top.Str("architecture", true));
  t.peak_tflops_bf16 = *top.Number("peak_tflops_bf16", true, 1, 100000);
  t.cudnn = top.Str("cudnn", false);
  t.measured = top.Str("measured", false);
  t.source = top.Str("source", true);
  top.Str("shape", false);
  const YAML::Node list = root["causal_bf16"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    top.Fail("causal_bf16", "expected a list of [seq, forward TFLOP/s, backward TFLOP/s] rows");
  }
  // A row a sequence length (cuDNN's benchmark times five): a bound, so that a file of millions
  // of rows is refused rather than searched on every estimate.
  constexpr std::size_t kMaxRows = 1000;
  if (list.size() > kMaxRows) {
    top.Fail("causal_bf16", fmt::format("{} rows, more than {} sequence lengths", list.size(), kMaxRows));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node row = list[i];
    const std::string field = fmt::format("causal_bf16[{}]", i);
    const auto r = YamlNumberRow<3>(row, "expected [seq, forward TFLOP/s, backward TFLOP/s]", file, field);
    for (std::size_t j = 0; j < 3; ++j) {
      // A sequence of at most 10^7 tokens; no kernel runs above its card's dense peak.
      const double most = j == 0 ? 1e7 : t.peak_tflops_bf16;
      if (!(r[j] > 0) || !(r[j] <= most)) {
        throw InputError(j == 0 ? fmt::format("expected a sequence length in (0, 1e7], got {}", r[j])
                                : fmt::format("expected a rate in (0, {:g}] (peak_tflops_bf16: no kernel runs "
                                              "faster than its peak), got {}",
                                              most, r[j]),
                         file, YamlLine(row[j]), field);
      }
    }
    if (!t.causal.empty() && !(r[0] > t.causal.back()[0])) {
      throw InputError(fmt::format("sequence lengths must ascend: {} after {}", r[0], t.causal.back()[0]), file,
                       YamlLine(row[0]), field);
    }
    t.causal.push_back(r);
  }
  return t;
}

AttentionTable AttentionTable::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

std::pair<double, double> AttentionTable::Tflops(double seq) const {
  const auto& c = causal;
  if (c.empty()) {
    return {0, 0};
  }
  if (!(seq > c.front()[0])) {
    return {c.front()[1], c.front()[2]};
  }
  if (seq >= c.back()[0]) {
    return {c.back()[1], c.back()[2]};
  }
  std::size_t i = 1;
  while (c[i][0] < seq) {
    ++i;
  }
  const double w = std::log2(seq / c[i - 1][0]) / std::log2(c[i][0] / c[i - 1][0]);
  return {c[i - 1][1] + w * (c[i][1] - c[i - 1][1]), c[i - 1][2] + w * (c[i][2] - c[i - 1][2])};
}

std::string AttentionTable::Basis() const {
  return fmt::format("published, data/attention/{} (cuDNN {} on {}; the same fraction of this card's peak)",
                     std::filesystem::path(file).filename().string(),
                     cudnn.empty() ? std::string("version not stated") : cudnn, gpu);
}

}  // namespace gpuplan
