#include "check/thresholds.h"

#include <limits>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {

CheckThresholds LoadCheckThresholds(const std::string& path, CheckThresholds base) {
  const YAML::Node root = ParseYamlText(ReadFileText(path), path);
  if (!root.IsMap()) {
    throw InputError("expected a mapping of threshold: value (docs/check.md)", path, YamlLine(root), "");
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  struct Key {
    const char* name;
    double* d;
    int* i;
    double min, max;
  };
  CheckThresholds& t = base;
  const std::vector<Key> keys = {
      {"power_limit_warn_fraction", &t.power_limit_warn_fraction, nullptr, 0, 1},
      {"power_limit_fail_fraction", &t.power_limit_fail_fraction, nullptr, 0, 1},
      {"memory_total_fail_fraction", &t.memory_total_fail_fraction, nullptr, 0, 1},
      {"temperature_warn_c", nullptr, &t.temperature_warn_c, 0, 150},
      {"ecc_corrected_warn", &t.ecc_corrected_warn, nullptr, 0, kInf},
      {"steal_warn_fraction", &t.steal_warn_fraction, nullptr, 0, 1},
      {"steal_fail_fraction", &t.steal_fail_fraction, nullptr, 0, 1},
      {"cpu_cores_per_gpu_warn", nullptr, &t.cpu_cores_per_gpu_warn, 0, 1024},
      {"ram_per_gpu_memory_warn", &t.ram_per_gpu_memory_warn, nullptr, 0, 100},
      {"cpu_throughput_warn_fraction", &t.cpu_throughput_warn_fraction, nullptr, 0, 1},
      {"storage_fail_fraction", &t.storage_fail_fraction, nullptr, 0, 100},
      {"storage_warn_fraction", &t.storage_warn_fraction, nullptr, 0, 100},
      {"disk_free_checkpoints", &t.disk_free_checkpoints, nullptr, 0, 1000},
      {"storage_seconds_quick", &t.storage_seconds_quick, nullptr, 0.1, 3600},
      {"storage_seconds_default", &t.storage_seconds_default, nullptr, 0.1, 3600},
      {"cpu_seconds_quick", &t.cpu_seconds_quick, nullptr, 0.1, 3600},
      {"cpu_seconds_default", &t.cpu_seconds_default, nullptr, 0.1, 3600},
      {"memory_usable_fail_fraction", &t.memory_usable_fail_fraction, nullptr, 0, 1},
      {"memory_alloc_min_free_fraction", &t.memory_alloc_min_free_fraction, nullptr, 0, 1},
      {"bandwidth_hbm_warn_fraction", &t.bandwidth_hbm_warn_fraction, nullptr, 0, 2},
      {"bandwidth_hbm_fail_fraction", &t.bandwidth_hbm_fail_fraction, nullptr, 0, 2},
      {"bandwidth_gddr_warn_fraction", &t.bandwidth_gddr_warn_fraction, nullptr, 0, 2},
      {"bandwidth_gddr_fail_fraction", &t.bandwidth_gddr_fail_fraction, nullptr, 0, 2},
      {"gemm_warn_fraction", &t.gemm_warn_fraction, nullptr, 0, 2},
      {"gemm_fail_fraction", &t.gemm_fail_fraction, nullptr, 0, 2},
      {"pcie_warn_fraction", &t.pcie_warn_fraction, nullptr, 0, 2},
      {"pcie_fail_fraction", &t.pcie_fail_fraction, nullptr, 0, 2},
      {"pcie_shared_warn_fraction", &t.pcie_shared_warn_fraction, nullptr, 0, 2},
      {"p2p_warn_fraction", &t.p2p_warn_fraction, nullptr, 0, 2},
      {"p2p_fail_fraction", &t.p2p_fail_fraction, nullptr, 0, 2},
      {"nccl_warn_fraction", &t.nccl_warn_fraction, nullptr, 0, 2},
      {"nccl_fail_fraction", &t.nccl_fail_fraction, nullptr, 0, 2},
      {"nccl_judged_min_bytes", &t.nccl_judged_min_bytes, nullptr, 8, 1e12},
      {"burn_warmup_seconds", &t.burn_warmup_seconds, nullptr, 0, 86400},
      {"burn_temperature_warn_c", nullptr, &t.burn_temperature_warn_c, 0, 150},
      {"burn_power_cv_warn", &t.burn_power_cv_warn, nullptr, 0, 10},
      {"memory_test_seconds_quick", &t.memory_test_seconds_quick, nullptr, 0.1, 3600},
      {"memory_test_seconds_default", &t.memory_test_seconds_default, nullptr, 0.1, 3600},
      {"burn_seconds_default", &t.burn_seconds_default, nullptr, 1, 86400},
      {"burn_seconds_full", &t.burn_seconds_full, nullptr, 1, 86400},
      {"worker_timeout_margin_seconds", &t.worker_timeout_margin_seconds, nullptr, 1, 86400},
  };
  std::vector<std::string> known;
  for (const Key& k : keys) {
    known.emplace_back(k.name);
  }
  const YamlMap map(root, "", path);
  for (const auto& kv : root) {
    if (!kv.first.IsScalar()) {  // `? {a: 1}: x`: a key that is a mapping or list
      throw InputError("a threshold's name must be a plain word, not a mapping or list", path, YamlLine(kv.first),
                       "(key)");
    }
    const std::string key = kv.first.Scalar();
    const Key* found = nullptr;
    for (const Key& k : keys) {
      if (key == k.name) {
        found = &k;
      }
    }
    if (found == nullptr) {
      throw InputError("unknown threshold '" + key + "' (docs/check.md lists them)", path, YamlLine(kv.first), key,
                       ClosestNames(key, known));
    }
    const double v = *map.Number(key, true, found->min, found->max);
    if (found->d != nullptr) {
      *found->d = v;
    } else {
      if (v != static_cast<double>(static_cast<int>(v))) {
        map.Fail(key, "expected a whole number");
      }
      *found->i = static_cast<int>(v);
    }
  }
  if (t.power_limit_fail_fraction > t.power_limit_warn_fraction) {
    throw InputError("power_limit_fail_fraction must not exceed power_limit_warn_fraction", path, YamlLine(root),
                     "power_limit_fail_fraction");
  }
  if (t.steal_warn_fraction > t.steal_fail_fraction) {
    throw InputError("steal_warn_fraction must not exceed steal_fail_fraction", path, YamlLine(root),
                     "steal_warn_fraction");
  }
  if (t.storage_fail_fraction > t.storage_warn_fraction) {
    throw InputError("storage_fail_fraction must not exceed storage_warn_fraction", path, YamlLine(root),
                     "storage_fail_fraction");
  }
  const std::pair<const char*, std::pair<double, double>> pairs[] = {
      {"bandwidth_hbm_fail_fraction", {t.bandwidth_hbm_fail_fraction, t.bandwidth_hbm_warn_fraction}},
      {"bandwidth_gddr_fail_fraction", {t.bandwidth_gddr_fail_fraction, t.bandwidth_gddr_warn_fraction}},
      {"gemm_fail_fraction", {t.gemm_fail_fraction, t.gemm_warn_fraction}},
      {"pcie_fail_fraction", {t.pcie_fail_fraction, t.pcie_warn_fraction}},
      {"p2p_fail_fraction", {t.p2p_fail_fraction, t.p2p_warn_fraction}},
      {"nccl_fail_fraction", {t.nccl_fail_fraction, t.nccl_warn_fraction}},
  };
  for (const auto& [key, fw] : pairs) {
    if (fw.first > fw.second) {
      const std::string k = key;
      throw InputError(k + " must not exceed " + k.substr(0, k.size() - 13) + "warn_fraction", path, YamlLine(root), k);
    }
  }
  return t;
}

}  // namespace gpuplan
