#include "fit/gemm_table.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

std::vector<std::array<double, 4>> Rows(const YAML::Node& root, const std::string& key, const std::string& file) {
  std::vector<std::array<double, 4>> rows;
  const YAML::Node list = root[key];
  if (!list) {
    return rows;
  }
  if (!list.IsSequence()) {
    throw InputError("expected a list of [m, n, k, tflops] rows", file, YamlLine(list), key);
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node row = list[i];
    const std::string field = key + "[" + std::to_string(i) + "]";
    if (!row.IsSequence() || row.size() != 4) {
      throw InputError("expected [m, n, k, tflops]", file, YamlLine(row), field);
    }
    std::array<double, 4> r{};
    for (std::size_t j = 0; j < 4; ++j) {
      try {
        r[j] = row[j].as<double>();
      } catch (const YAML::Exception&) {
        throw InputError("expected a number", file, YamlLine(row[j]), field);
      }
      if (!(r[j] > 0) || !std::isfinite(r[j])) {
        throw InputError("expected a positive number", file, YamlLine(row[j]), field);
      }
    }
    rows.push_back(r);
  }
  return rows;
}

// The grid value at or below x and the one above (equal at the ends); nullopt outside.
struct Bracket {
  double lo = 0, hi = 0, w = 0;  // x = lo^(1-w) hi^w
};
std::optional<Bracket> Around(const std::set<double>& axis, double x) {
  if (axis.empty() || x < *axis.begin() || x > *axis.rbegin()) {
    return std::nullopt;
  }
  auto hi = axis.lower_bound(x);
  if (*hi == x) {
    return Bracket{x, x, 0};
  }
  auto lo = std::prev(hi);
  return Bracket{*lo, *hi, std::log2(x / *lo) / std::log2(*hi / *lo)};
}

}  // namespace

GemmTable GemmTable::Parse(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlText(text, file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with gpu, bf16 and fp8", file, YamlLine(root));
  }
  const YamlMap top(root, "", file);
  // scripts/device/gemm_table.py writes these keys; a precision the time model has no use for
  // (fp16, tf32) would be an unknown key rather than a silently unread section.
  top.Only({"gpu", "sm_count", "cublaslt_version", "measured", "bf16", "fp8"});
  top.Number("sm_count", false, 1, 100000);
  top.Number("cublaslt_version", false, 1, 1e9);
  GemmTable t;
  t.file = file;
  t.gpu = top.Str("gpu", true);
  t.measured = top.Str("measured", false);
  t.bf16 = Rows(root, "bf16", file);
  t.fp8 = Rows(root, "fp8", file);
  if (t.bf16.empty() && t.fp8.empty()) {
    top.Fail("bf16", "no rows (neither bf16 nor fp8)");
  }
  t.Index();
  return t;
}

GemmTable GemmTable::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

void GemmTable::Index() {
  for (int d = 0; d < 2; ++d) {
    Grid& g = grid[d];
    g = Grid{};
    for (const auto& r : d == 0 ? bf16 : fp8) {
      g.m.insert(r[0]);
      g.n.insert(r[1]);
      g.k.insert(r[2]);
      g.at[{r[0], r[1], r[2]}] = r[3];
    }
  }
}

std::optional<double> GemmTable::Tflops(bool fp8_rows, double m, double n, double k) const {
  const auto& rows = fp8_rows ? fp8 : bf16;
  if (rows.empty()) {
    return std::nullopt;
  }
  const Grid& g = grid[fp8_rows ? 1 : 0];
  const auto& at = g.at;
  const auto bm = Around(g.m, m), bn = Around(g.n, n), bk = Around(g.k, k);
  if (!bm || !bn || !bk) {
    return std::nullopt;
  }
  double sum = 0;
  for (int c = 0; c < 8; ++c) {
    const double cm = (c & 1) ? bm->hi : bm->lo, wm = (c & 1) ? bm->w : 1 - bm->w;
    const double cn = (c & 2) ? bn->hi : bn->lo, wn = (c & 2) ? bn->w : 1 - bn->w;
    const double ck = (c & 4) ? bk->hi : bk->lo, wk = (c & 4) ? bk->w : 1 - bk->w;
    const double weight = wm * wn * wk;
    if (weight == 0) {
      continue;
    }
    auto it = at.find({cm, cn, ck});
    if (it == at.end()) {
      // A corner the sweep skipped: the nearest measured point in log space.
      double best = 0, best_d = 1e300;
      for (const auto& r : rows) {
        const double d = std::pow(std::log2(r[0] / m), 2) + std::pow(std::log2(r[1] / n), 2) +
                         std::pow(std::log2(r[2] / k), 2);
        if (d < best_d) {
          best_d = d;
          best = r[3];
        }
      }
      return best;
    }
    sum += weight * it->second;
  }
  return sum;
}

const GemmTable* GemmTables::For(const Gpu& gpu) const {
  auto find = [&](const std::string& name) -> const GemmTable* {
    auto it = by_name.find(NormalizeName(name));
    return it == by_name.end() ? nullptr : &it->second;
  };
  if (const GemmTable* t = find(gpu.name)) {
    return t;
  }
  for (const auto& a : gpu.aliases) {
    if (const GemmTable* t = find(a)) {
      return t;
    }
  }
  return nullptr;
}

GemmTables LoadGemmTables(const std::string& data_dir) {
  GemmTables tables;
  const std::filesystem::path dir = std::filesystem::path(data_dir) / "gemm";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return tables;
  }
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    GemmTable t = GemmTable::Load(f.string());
    const std::string key = NormalizeName(t.gpu);
    if (tables.by_name.count(key)) {
      throw InputError("a second table for " + t.gpu + " (first: " + tables.by_name[key].file + ")", f.string(), 0,
                       "gpu");
    }
    tables.by_name.emplace(key, std::move(t));
  }
  return tables;
}

}  // namespace gpuplan
