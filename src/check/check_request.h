// `gpuplan check` as a request -> result job: the CLI (apps/gpuplan/cmd_check.cc) and any other
// front end fill a CheckRequest (from the options table, check/check_options.h), call RunCheck
// and render the CheckReport (check/render). Every default of the command is here, once.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "check/report.h"

namespace gpuplan {

enum class CheckMode { kQuick, kDefault, kFull };
const char* ToString(CheckMode m);  // "quick", "default", "full"

struct CheckRequest {
  bool quick = false;  // --quick: under 2 minutes on one GPU
  bool full = false;   // --full: adds the 30-minute burn-in (part 2)
  // What was ordered (check/expect.h): "8x H100 SXM", or an offers file and offer id.
  std::string expect;
  std::string offers;
  std::string offer;
  std::optional<int> cpu_cores;  // cores the offer promises (for the CPU throughput test)
  std::string cuda;              // the CUDA version the software needs (empty: PyTorch's, if found)
  bool allow_mig = false;
  // Where the GPU data comes from: NVML (default), `nvidia-smi -q -x` / `-q` captures (one per
  // node; no GPU and no host tests: the machine is not this one), or a recording.
  std::vector<std::string> from_nvidia_smi;
  std::string replay;  // a recording written by --record
  std::string record;  // write the NVML snapshots of this run to FILE (docs/recording-format.md)
  // Storage: the dataset folder and what training will read from it.
  std::string data;
  std::optional<double> samples_per_second;
  std::optional<double> bytes_per_sample;
  std::string fit;  // a `gpuplan fit --json` result: samples/s and checkpoint size from it
  double bytes_per_token = 4;  // with --fit: bytes per token of the dataset (4: int32 token ids)
  int storage_threads = 4;
  std::string thresholds;  // YAML overriding check/thresholds.h
  // The GPU tests (part 2, docs/check.md §11): the worker binary (empty: gpu-worker next to this
  // executable), the burn-in length (empty: 300 s by default, 1800 s with --full), how often NVML
  // is sampled while they run, and a timeout per worker (empty: planned time + a margin).
  std::string worker;
  std::optional<double> duration;
  double sample_interval = 1;
  std::optional<double> test_timeout;
  bool no_gpu_tests = false;  // --no-gpu-tests: inventory, host and storage only
  // The link test (docs/check.md §12): `net` makes the run a link test to a listener (no GPU,
  // host or storage test); `net_listen` runs the listener instead of a check. Throughput runs
  // `net_seconds` each way on `net_streams` connections; then `net_bytes` (a checkpoint) are
  // fetched from the listener.
  std::string net;         // HOST[:PORT] of a `gpuplan check --net-listen`
  std::string net_listen;  // [ADDR:]PORT to listen on (127.0.0.1 when no ADDR)
  int net_streams = 4;
  double net_seconds = 10;
  int64_t net_bytes = int64_t{1} << 30;
  std::string net_tool = "gpuplan";      // what measures: "gpuplan" (a --net-listen answers) or "iperf3" (an iperf3 -s)
  std::optional<double> net_rate_mbps;   // the listener paces to this; with iperf3, the client caps its senders (-b)
  std::string net_token;                 // shared secret; required by a listener on a non-loopback address
  std::optional<double> net_min_gbps;    // FAIL a direction below this
  std::optional<double> net_max_rtt_ms;  // FAIL a round trip above this
  // Report files, each rewritten as the run goes ("-": standard output).
  std::string json;
  std::string markdown;
  std::string html;

  // Where the NVML library is (tests point it at tests/fake_nvml); not an option of the table.
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string tool_version;

  CheckMode Mode() const { return full ? CheckMode::kFull : quick ? CheckMode::kQuick : CheckMode::kDefault; }
};

// What a front end sees while the check runs (a live terminal view, a report file rewritten
// after each test). Every call happens on the thread that called RunCheck.
class CheckObserver {
 public:
  virtual ~CheckObserver() = default;
  virtual void OnStart(const CheckReport& /*report*/, const std::vector<std::string>& /*tests*/) {}
  virtual void OnTestStart(const std::string& /*test*/, int /*index*/, int /*total*/) {}
  // fraction in [0, 1] of a long test.
  virtual void OnProgress(const std::string& /*test*/, double /*fraction*/) {}
  virtual void OnTestDone(const CheckReport& /*report*/, const std::string& /*test*/) {}
  virtual void OnFinish(const CheckReport& /*report*/) {}
};

// Several observers as one, called in order (a live view and the report files).
class CheckObservers : public CheckObserver {
 public:
  explicit CheckObservers(std::vector<CheckObserver*> all) : all_(std::move(all)) {}
  void OnStart(const CheckReport& r, const std::vector<std::string>& t) override {
    for (auto* o : all_) o->OnStart(r, t);
  }
  void OnTestStart(const std::string& t, int i, int n) override {
    for (auto* o : all_) o->OnTestStart(t, i, n);
  }
  void OnProgress(const std::string& t, double f) override {
    for (auto* o : all_) o->OnProgress(t, f);
  }
  void OnTestDone(const CheckReport& r, const std::string& t) override {
    for (auto* o : all_) o->OnTestDone(r, t);
  }
  void OnFinish(const CheckReport& r) override {
    for (auto* o : all_) o->OnFinish(r);
  }

 private:
  std::vector<CheckObserver*> all_;
};

// Runs the suite (check/suite.h) for the request. Bad input (an unknown card, a missing
// capture, a bad thresholds file) throws InputError before anything runs. A machine without
// an NVIDIA driver is not an exception: the report notes it in one line, runs the host and
// storage tests, and its ExitCode() is 3.
CheckReport RunCheck(const CheckRequest& request, const GpuCatalog& catalog, CheckObserver* observer = nullptr);

}  // namespace gpuplan
