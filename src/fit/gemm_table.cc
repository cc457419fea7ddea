#include "fit/gemm_table.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <filesystem>
#include <mutex>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

constexpr int64_t kMaxGridCells = 4'000'000;  // 32 MB of rates a datatype

// `peak`: the card's dense peak for this datatype where the file gives it (0: not given); no GEMM
// runs above it, so a rate that does is a timing of the wrong kernel, refused.
std::vector<std::array<double, 4>> Rows(const YAML::Node& root, const std::string& key, const std::string& file,
                                        double peak) {
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
    const auto r = YamlNumberRow<4>(row, "expected [m, n, k, tflops]", file, field);
    for (std::size_t j = 0; j < 4; ++j) {
      // Sizes up to 10^7 (a matrix side), rates up to 100,000 TFLOP/s (the bound of a peak).
      const double most = j < 3 ? 1e7 : 100000;
      if (!(r[j] > 0) || !(r[j] <= most)) {
        throw InputError(fmt::format("expected a positive number of at most {:g}, got {}", most, r[j]), file,
                         YamlLine(row[j]), field);
      }
      if (j == 3 && peak > 0 && r[j] > peak) {
        throw InputError(fmt::format("{} TFLOP/s is above the card's dense peak ({:g}, peak_tflops_{}): no GEMM runs "
                                     "faster than its peak",
                                     r[j], peak, key == "bf16" ? "bf16" : "fp8"),
                         file, YamlLine(row[j]), field);
      }
    }
    rows.push_back(r);
  }
  return rows;
}

// The distinct m, n and k sizes of the rows, each ascending.
std::array<std::vector<double>, 3> Axes(const std::vector<std::array<double, 4>>& rows) {
  std::array<std::vector<double>, 3> axis;
  for (std::size_t a = 0; a < 3; ++a) {
    for (const auto& r : rows) {
      axis[a].push_back(r[a]);
    }
    std::sort(axis[a].begin(), axis[a].end());
    axis[a].erase(std::unique(axis[a].begin(), axis[a].end()), axis[a].end());
  }
  return axis;
}

// Where x falls on an ascending axis: the index below (or at) it and the log2 weight of the one
// above; held at the ends.
struct Bracket {
  std::size_t lo = 0;
  double w = 0;  // x = axis[lo]^(1-w) axis[lo+1]^w
};
Bracket Around(const std::vector<double>& axis, const std::vector<double>& log_axis, double x) {
  if (axis.size() < 2 || x <= axis.front()) {
    return {0, 0};
  }
  if (x >= axis.back()) {
    return {axis.size() - 1, 0};
  }
  const std::size_t hi = static_cast<std::size_t>(std::upper_bound(axis.begin(), axis.end(), x) - axis.begin());
  const std::size_t lo = hi - 1;
  return {lo, (std::log2(x) - log_axis[lo]) / (log_axis[hi] - log_axis[lo])};
}

// The *.yaml files of a folder, sorted (none when it does not exist).
std::vector<std::filesystem::path> YamlFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return files;
  }
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".yaml") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
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
  top.Only({"gpu", "sm_count", "cublaslt_version", "measured", "source", "architecture", "peak_tflops_bf16",
            "peak_tflops_fp8", "bf16", "fp8", "fp8_fast_accum", "fp8_fast_accum_scale"});
  top.Number("sm_count", false, 1, 100000);
  top.Number("cublaslt_version", false, 1, 1e9);
  GemmTable t;
  t.file = file;
  t.gpu = top.Str("gpu", true);
  t.measured = top.Str("measured", false);
  t.source = top.Str("source", false);
  t.architecture = NormalizeName(top.Str("architecture", false));
  const bool stands_for_architecture = !t.architecture.empty();
  t.peak_tflops_bf16 = top.Number("peak_tflops_bf16", stands_for_architecture, 1, 100000).value_or(0);
  t.peak_tflops_fp8 = top.Number("peak_tflops_fp8", false, 1, 100000).value_or(0);
  const std::string name = "data/gemm/" + std::filesystem::path(file).filename().string();
  t.basis = t.source.empty() ? "measured here, " + name : "published sweep, " + name;
  t.basis_scaled = t.basis + " (" + t.gpu + "; the same fraction of this card's peak)";
  t.bf16 = Rows(root, "bf16", file, t.peak_tflops_bf16);
  t.fp8 = Rows(root, "fp8", file, t.peak_tflops_fp8);
  t.fp8_fast = Rows(root, "fp8_fast_accum", file, t.peak_tflops_fp8);
  if (t.bf16.empty() && t.fp8.empty()) {
    top.Fail("bf16", "no rows (neither bf16 nor fp8)");
  }
  if (!t.fp8_fast.empty() && t.fp8.empty()) {
    // The gradient GEMMs run the exact mode: a table of the fast mode alone would leave them none.
    top.Fail("fp8_fast_accum", "fast-accumulation rows without fp8 rows");
  }
  // A published sweep that timed only the exact mode carries the fast mode as one scale of its fp8
  // rows (scripts/gemm/te_fast_accum.py; docs/time-model.md §3.1): the rows are derived here, each
  // capped at the fp8 peak, rather than stored. Fast accumulation skips work, so it is never slower
  // (>= 1); at most 2 (the guide's ratio is 1.12).
  if (const auto scale = top.Number("fp8_fast_accum_scale", false, 1, 2)) {
    if (root["fp8_fast_accum"]) {
      top.Fail("fp8_fast_accum_scale", "both fp8_fast_accum rows and a scale of the fp8 rows: give one");
    }
    if (t.fp8.empty()) {
      top.Fail("fp8_fast_accum_scale", "a scale of the fp8 rows, but the table has no fp8 rows");
    }
    t.fp8_fast_scale = *scale;
    t.fp8_fast = t.fp8;
    for (auto& r : t.fp8_fast) {
      r[3] *= *scale;
      if (t.peak_tflops_fp8 > 0) {
        r[3] = std::min(r[3], t.peak_tflops_fp8);
      }
    }
  }
  // Index() holds each datatype's grid densely (m sizes x n sizes x k sizes): bounded, so that a
  // few thousand scattered rows cannot ask for gigabytes.
  for (const int rows : {kBf16, kFp8, kFp8FastAccum}) {
    const char* key = rows == kBf16 ? "bf16" : rows == kFp8 ? "fp8" : "fp8_fast_accum";
    const auto axis = Axes(t.RowsOf(rows));
    const double cells = static_cast<double>(axis[0].size()) * static_cast<double>(axis[1].size()) *
                         static_cast<double>(axis[2].size());
    if (cells > static_cast<double>(kMaxGridCells)) {
      top.Fail(key, fmt::format("a grid of {} m x {} n x {} k sizes is more than {} shapes", axis[0].size(),
                                axis[1].size(), axis[2].size(), kMaxGridCells));
    }
  }
  t.Index();
  return t;
}

GemmTable GemmTable::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

void GemmTable::Index() {
  static std::atomic<uint64_t> next_id{1};
  id = next_id.fetch_add(1);
  for (int d = 0; d < 3; ++d) {
    Grid& g = grid[d];
    g = Grid{};
    const auto& rows = RowsOf(d);
    g.axis = Axes(rows);
    for (std::size_t a = 0; a < 3; ++a) {
      for (double v : g.axis[a]) {
        g.log_axis[a].push_back(std::log2(v));
      }
    }
    const std::size_t nn = g.axis[1].size(), nk = g.axis[2].size();
    g.at.assign(g.axis[0].size() * nn * nk, std::nan(""));
    auto index = [&](std::size_t a, double v) {
      return static_cast<std::size_t>(std::lower_bound(g.axis[a].begin(), g.axis[a].end(), v) - g.axis[a].begin());
    };
    for (const auto& r : rows) {
      g.at[(index(0, r[0]) * nn + index(1, r[1])) * nk + index(2, r[2])] = r[3];
    }
  }
}

std::optional<double> GemmTable::Tflops(int rows_wanted, double m, double n, double k) const {
  const int which = RowsFor(rows_wanted);
  if (RowsOf(which).empty()) {
    return std::nullopt;
  }
  // A search estimates the same few dozen shapes for thousands of layouts: each thread keeps the
  // last rate of each of 1024 slots, keyed by the table's id, the datatype and the shape (a
  // speed-up only: a hit returns what the lookup below would).
  struct Slot {
    uint64_t key = 0;  // id << 2 | rows; ids start at 1, so an empty slot matches no table
    double m = 0, n = 0, k = 0, tflops = 0;
  };
  constexpr int kSlotBits = 10;
  thread_local std::array<Slot, std::size_t{1} << kSlotBits> memo{};
  const uint64_t key = (id << 2) | static_cast<uint64_t>(which);
  // The fields' bits times odd constants, summed (independent multiplies, unlike a chain of
  // mixing rounds), folded once and multiplied again; the slot is the top bits. Round sizes
  // leave the low bits of their doubles zero, which the products carry upwards.
  uint64_t h = std::bit_cast<uint64_t>(m) * 0x9E3779B97F4A7C15ULL + std::bit_cast<uint64_t>(n) * 0xC2B2AE3D27D4EB4FULL +
               std::bit_cast<uint64_t>(k) * 0x165667B19E3779F9ULL + key * 0xD6E8FEB86659FD93ULL;
  h = (h ^ (h >> 29)) * 0xBF58476D1CE4E5B9ULL;
  Slot& slot = memo[h >> (64 - kSlotBits)];
  if (slot.key == key && slot.m == m && slot.n == n && slot.k == k) {
    return slot.tflops;
  }
  const double v = Lookup(which, m, n, k);
  slot = Slot{key, m, n, k, v};
  return v;
}

double GemmTable::Lookup(int rows_wanted, double m, double n, double k) const {
  const int which = RowsFor(rows_wanted);
  const auto& rows = RowsOf(which);
  const Grid& g = grid[which];
  const Bracket b[3] = {Around(g.axis[0], g.log_axis[0], m), Around(g.axis[1], g.log_axis[1], n),
                        Around(g.axis[2], g.log_axis[2], k)};
  const std::size_t nn = g.axis[1].size(), nk = g.axis[2].size();
  double sum = 0;
  for (int c = 0; c < 8; ++c) {
    double weight = 1;
    std::size_t at[3];
    for (int a = 0; a < 3; ++a) {
      const bool upper = (c >> a) & 1;
      weight *= upper ? b[a].w : 1 - b[a].w;
      at[a] = b[a].lo + (upper ? 1 : 0);
    }
    if (weight == 0) {
      continue;
    }
    const double v = g.at[(at[0] * nn + at[1]) * nk + at[2]];
    if (std::isnan(v)) {
      // A corner the sweep skipped: the nearest measured point in log space (the sizes clamped
      // to the measured range, as above).
      const double x[3] = {std::clamp(m, g.axis[0].front(), g.axis[0].back()),
                           std::clamp(n, g.axis[1].front(), g.axis[1].back()),
                           std::clamp(k, g.axis[2].front(), g.axis[2].back())};
      double best = 0, best_d = 1e300;
      for (const auto& r : rows) {
        const double d = std::pow(std::log2(r[0] / x[0]), 2) + std::pow(std::log2(r[1] / x[1]), 2) +
                         std::pow(std::log2(r[2] / x[2]), 2);
        if (d < best_d) {
          best_d = d;
          best = r[3];
        }
      }
      return best;
    }
    sum += weight * v;
  }
  return sum;
}

const GemmTable* GemmTables::For(const Gpu& gpu, bool* own) const {
  bool own_table = false;
  // Every estimate asks (RatesFor); names are normalised only when the card changes.
  struct Last {
    const GemmTables* tables = nullptr;
    uint64_t generation = 0;
    std::string name;
    const GemmTable* table = nullptr;
    bool own = false;
  };
  const GemmTable* t = nullptr;
  if (generation == 0) {
    t = Find(gpu, &own_table);
  } else {
    thread_local Last last;
    if (!(last.tables == this && last.generation == generation && last.name == gpu.name)) {
      bool found_own = false;
      const GemmTable* found = Find(gpu, &found_own);
      last = Last{this, generation, gpu.name, found, found_own};
    }
    t = last.table;
    own_table = last.own;
  }
  if (own) {
    *own = own_table;
  }
  return t;
}

const GemmTable* GemmTables::Find(const Gpu& gpu, bool* own) const {
  *own = false;
  auto find = [&](const std::string& name) -> const GemmTable* {
    auto it = by_name.find(NormalizeName(name));
    return it == by_name.end() ? nullptr : &it->second;
  };
  if (const GemmTable* t = find(gpu.name)) {
    *own = true;
    return t;
  }
  for (const auto& a : gpu.aliases) {
    if (const GemmTable* t = find(a)) {
      *own = true;
      return t;
    }
  }
  if (auto it = by_architecture.find(NormalizeName(gpu.architecture)); it != by_architecture.end()) {
    return &by_name.at(it->second);
  }
  return nullptr;
}

uint64_t GemmTables::NextGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

GemmTables LoadGemmTables(const std::string& data_dir) {
  GemmTables tables;
  tables.generation = GemmTables::NextGeneration();
  for (const auto& f : YamlFiles(std::filesystem::path(data_dir) / "gemm")) {
    GemmTable t = GemmTable::Load(f.string());
    const std::string key = NormalizeName(t.gpu);
    auto it = tables.by_name.find(key);
    if (it == tables.by_name.end()) {
      tables.by_name.emplace(key, std::move(t));
      continue;
    }
    // Our own sweep of a card replaces a published one (docs/time-model.md §3.1); two of a kind
    // for one card is an error.
    if (it->second.source.empty() == t.source.empty()) {
      throw InputError("a second table for " + t.gpu + " (first: " + it->second.file + ")", f.string(), 0, "gpu");
    }
    if (t.source.empty()) {
      it->second = std::move(t);
    }
  }
  // The table standing for each architecture (at most one; a card's own table always wins).
  for (const auto& [key, t] : tables.by_name) {
    if (t.architecture.empty()) {
      continue;
    }
    if (const auto it = tables.by_architecture.find(t.architecture); it != tables.by_architecture.end()) {
      throw InputError("a second table standing for the architecture " + t.architecture + " (first: " +
                           tables.by_name.at(it->second).file + ")",
                       t.file, 0, "architecture");
    }
    tables.by_architecture.emplace(t.architecture, key);
  }
  // §3.2 fused-attention rates, one table an architecture.
  for (const auto& f : YamlFiles(std::filesystem::path(data_dir) / "attention")) {
    AttentionTable t = AttentionTable::Load(f.string());
    if (const auto it = tables.attention.find(t.architecture); it != tables.attention.end()) {
      throw InputError("a second attention table for the architecture " + t.architecture + " (first: " +
                           it->second.file + ")",
                       f.string(), 0, "architecture");
    }
    std::string key = t.architecture;
    tables.attention.emplace(std::move(key), std::move(t));
  }
  return tables;
}

const AttentionTable* GemmTables::AttentionFor(const Gpu& gpu) const {
  if (attention.empty()) {
    return nullptr;
  }
  const auto it = attention.find(NormalizeName(gpu.architecture));
  return it == attention.end() ? nullptr : &it->second;
}

std::shared_ptr<const GemmTables> SharedGemmTables(const std::string& data_dir) {
  // What the folder holds: each table's name, size and modification time.
  std::string signature;
  for (const char* folder : {"gemm", "attention"}) {
    for (const auto& f : YamlFiles(std::filesystem::path(data_dir) / folder)) {
      std::error_code fe;
      const auto size = std::filesystem::file_size(f, fe);
      const auto time = std::filesystem::last_write_time(f, fe).time_since_epoch().count();
      signature += fmt::format("{}/{}|{}|{}\n", folder, f.filename().string(), size, time);
    }
  }
  struct Entry {
    std::string signature;
    std::shared_ptr<const GemmTables> tables;
  };
  static std::mutex mutex;
  static std::map<std::string, Entry> cache;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (const auto it = cache.find(data_dir); it != cache.end() && it->second.signature == signature) {
      return it->second.tables;
    }
  }
  auto tables = std::make_shared<const GemmTables>(LoadGemmTables(data_dir));  // throws on a bad table: nothing kept
  const std::lock_guard<std::mutex> lock(mutex);
  cache[data_dir] = Entry{signature, tables};
  return tables;
}

}  // namespace gpuplan
