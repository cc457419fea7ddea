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
  // GPU tests (docs/check.md §11)
  double memory_usable_fail_fraction = 0.90;    // bytes the worker allocated below 90% of the catalog's memory: FAIL
  double memory_alloc_min_free_fraction = 0.95; // the worker must allocate at least 95% of the free memory
  double bandwidth_hbm_warn_fraction = 0.85;    // STREAM GB/s below 85% of the datasheet on HBM cards: WARN
  double bandwidth_hbm_fail_fraction = 0.70;
  double bandwidth_gddr_warn_fraction = 0.75;   // GDDR cards reach a smaller fraction of their peak
  double bandwidth_gddr_fail_fraction = 0.60;
  double gemm_warn_fraction = 0.70;             // TFLOPS below 70% of the dense datasheet peak: WARN
  double gemm_fail_fraction = 0.50;
  double pcie_warn_fraction = 0.70;             // pinned copies below 70% of gen x width theory: WARN
  double pcie_fail_fraction = 0.50;             // below half: a narrower or slower link than reported
  double pcie_shared_warn_fraction = 0.70;      // all GPUs at once below 70% of each alone: WARN (shared uplink)
  double p2p_warn_fraction = 0.50;              // P2P copy below half the NVLink/PCIe theory: WARN
  double p2p_fail_fraction = 0.25;
  double nccl_warn_fraction = 0.60;             // peak busbw below 60% of NVLink/PCIe theory: WARN
  double nccl_fail_fraction = 0.30;
  double nccl_judged_min_bytes = 64.0 * 1024 * 1024;  // busbw judged on messages of at least 64 MiB
  double burn_warmup_seconds = 30;              // throttling and power judged after this
  int burn_temperature_warn_c = 85;             // hottest sample of the burn-in
  double burn_power_cv_warn = 0.10;             // power's coefficient of variation after warm-up
  double memory_test_seconds_quick = 10;
  double memory_test_seconds_default = 30;
  double burn_seconds_default = 300;            // --duration overrides
  double burn_seconds_full = 1800;
  double worker_timeout_margin_seconds = 120;   // a worker is killed this long after its planned time
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
