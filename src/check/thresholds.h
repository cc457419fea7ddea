// The numbers `gpuplan check` judges against when the catalog or the offer gives none. Each has
// its reason in docs/check.md (§ given beside it); `--thresholds FILE` (YAML, same keys)
// overrides any of them.
#pragma once

#include <string>

namespace gpuplan {

struct CheckThresholds {
  // GPU inventory and health (docs/check.md §3)
  double power_limit_warn_fraction = 0.99;   // enforced limit below 99% of the datasheet TDP: FAIL below `fail`
  double power_limit_fail_fraction = 0.90;
  double memory_total_fail_fraction = 0.97;  // total below 97% of the catalog's bytes: cut-down or mislabelled
  int temperature_warn_c = 85;               // idle/at-start temperature
  double ecc_corrected_warn = 1000;          // aggregate corrected errors worth a WARN
  // Host (docs/check.md §4)
  double steal_warn_fraction = 0.02;         // CPU steal over the run
  double steal_fail_fraction = 0.10;
  int cpu_cores_per_gpu_warn = 4;            // physical cores per GPU below this: WARN
  double ram_per_gpu_memory_warn = 1.0;      // host RAM below this multiple of total GPU memory: WARN
  double cpu_throughput_warn_fraction = 0.80;  // parallel speed-up below 80% of the promised cores: WARN
  // Storage (docs/check.md §5)
  double storage_fail_fraction = 1.0;        // delivered / needed below this: FAIL
  double storage_warn_fraction = 1.5;        // below this headroom: WARN
  double disk_free_checkpoints = 3.0;        // free space for this many checkpoints, else WARN
  // Durations (seconds) per mode
  double storage_seconds_quick = 5;
  double storage_seconds_default = 20;
  double cpu_seconds_quick = 2;
  double cpu_seconds_default = 5;
};

// Reads a YAML mapping of the keys above (snake_case as in the struct) over `base`; an
// unknown key or a bad value is an InputError naming file, line and key.
CheckThresholds LoadCheckThresholds(const std::string& path, CheckThresholds base = {});

}  // namespace gpuplan
