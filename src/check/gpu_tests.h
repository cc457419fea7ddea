// The GPU tests of `gpuplan check` (part 2; docs/check.md §11): usable memory, memory bandwidth,
// GEMM per precision, PCIe, P2P, NCCL and the burn-in. Each runs gpu-worker (apps/gpu-worker)
// through the runner (check/worker_runner.h), one process per GPU (one for all GPUs for P2P and
// NCCL), samples NVML while it runs, and judges what the worker printed against the catalog card.
// A crash, hang, unreadable output, CUDA error line or XID is a FAIL for that GPU with the
// evidence; the other GPUs and the rest of the suite go on.
//
// The Judge* functions are pure (worker runs in, results out), so the verdicts are tested with
// stand-in workers (tests/stand_in_worker) and no GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "check/report.h"
#include "check/thresholds.h"
#include "check/worker_runner.h"
#include "telemetry/snapshot.h"

namespace gpuplan {

struct CheckTest;

// One GPU as the tests see it: its NVML index and snapshot and the catalog card it is judged
// against (the card ordered, else its own by PCI device id; nullptr: unknown card).
struct GpuTarget {
  int gpu = 0;
  GpuSnapshot snapshot;
  const Gpu* card = nullptr;
  std::string node;
};

// What went wrong with a worker, as a FAIL result named `test` for the run's GPU, or nullopt
// when it started, printed only readable lines, no error line, exited 0 and finished `worker_test`.
// `xids` are the XID events NVML delivered for that GPU while it ran.
std::optional<CheckResult> JudgeWorkerRun(const WorkerRun& run, const std::string& test,
                                          const std::string& worker_test, const std::vector<GpuEvent>& xids = {},
                                          const std::string& node = {});

// gpu_memory_usable (MiB allocated against the catalog's memory) and memory_pattern_errors.
std::vector<CheckResult> JudgeMemory(const WorkerRun& run, const GpuTarget& t, const CheckThresholds& th);
// stream_copy, stream_scale, stream_triad (GB/s against the datasheet bandwidth).
std::vector<CheckResult> JudgeBandwidth(const WorkerRun& run, const GpuTarget& t, const CheckThresholds& th);
// gemm_<precision> (best square shape) and gemm_<precision>_layer (a transformer layer's shapes,
// time-weighted), TFLOPS against the catalog's dense peak; SKIP for a precision the worker skipped.
std::vector<CheckResult> JudgeGemm(const WorkerRun& run, const GpuTarget& t, const CheckThresholds& th);
// pcie_h2d_pinned, pcie_d2h_pinned against the link's generation x width (pageable shown beside);
// with `together` (all GPUs copying at once) pcie_*_pinned_all_gpus; pcie_link_under_load from the
// highest generation and width NVML reported while the copies ran.
std::vector<CheckResult> JudgePcie(const WorkerRun& alone, const WorkerRun* together, const GpuTarget& t,
                                   std::optional<int> gen_under_load, std::optional<int> width_under_load,
                                   const CheckThresholds& th);
// p2p_bandwidth and p2p_latency per source GPU (the matrix in the evidence), P2P access on and off.
std::vector<CheckResult> JudgeP2p(const WorkerRun& run, const std::vector<GpuTarget>& gpus, const CheckThresholds& th);
// nccl_all_reduce_busbw, nccl_all_gather_busbw, nccl_reduce_scatter_busbw for the machine.
std::vector<CheckResult> JudgeNccl(const WorkerRun& run, const std::vector<GpuTarget>& gpus, const CheckThresholds& th);
// burn_in_errors, burn_in_tflops, burn_in_throttle, burn_in_temperature, burn_in_power, burn_in_clocks.
std::vector<CheckResult> JudgeBurn(const WorkerRun& run, const GpuTarget& t, const GpuCurve* curve,
                                   const CheckThresholds& th);

// The theoretical per-direction bandwidth between GPUs of this card (NVLink: the catalog's
// bidirectional figure / 2, when the card has NVLink and links are up; else the PCIe link),
// with its description.
std::optional<std::pair<double, std::string>> GpuToGpuTheory(const GpuTarget& t);

// "18:00.0" with its domain as a number: NVML's "00000000:18:00.0" and CUDA's "0000:18:00.0" match.
std::string NormalizePciBusId(const std::string& id);

// The GPU tests in the order they run, for the suite (check/suite.cc).
std::vector<CheckTest> GpuSuiteTests();

}  // namespace gpuplan
