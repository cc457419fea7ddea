// The result model of `gpuplan check`: every measurement with its expectation, status and
// evidence, the inventory it was judged on, and the suite's verdict. One model; check/render renders
// it as JSON (the report file, complete after every test), Markdown, HTML and the live terminal
// view. Field meanings are defined in docs/check.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/snapshot.h"

namespace gpuplan {

// PASS: within expectation. WARN: works but worth knowing (exit 0). FAIL: not what was sold or
// not healthy (exit 1). SKIP: not run or not measurable, with the reason (never counted as PASS).
// ERROR: the test itself could not run properly (a crash, a timeout): the report's verdict
// becomes ERROR and the exit code 3 when it is an environment problem.
enum class CheckStatus { kPass, kWarn, kFail, kSkip, kError };

// "PASS", "WARN", "FAIL", "SKIP", "ERROR".
const char* ToString(CheckStatus s);
// The worse of two (PASS < SKIP < WARN < FAIL < ERROR for the suite verdict; SKIP never makes
// a suite fail).
CheckStatus Worse(CheckStatus a, CheckStatus b);
// The order Worse uses: PASS 0 < SKIP 1 < WARN 2 < FAIL 3 < ERROR 4.
int StatusRank(CheckStatus s);

struct CheckResult {
  std::string name;   // "pcie_link_width", "storage_random_read", ...
  int gpu = -1;       // GPU index, -1 for host or whole-machine tests
  std::string node;   // hostname (or capture file) of the node, for reports of several nodes
  CheckStatus status = CheckStatus::kSkip;
  std::optional<double> measured;        // numeric value in `unit`
  std::optional<double> expected;        // the threshold or nominal value in `unit`
  std::string measured_text;             // non-numeric measurement ("x8", "0x2331 (H100 PCIe)")
  std::string expected_text;             // non-numeric expectation ("x16", ">= 0.9 x 3350 GB/s")
  std::string unit;                      // "GB/s", "W", "lanes", "" when none
  std::string evidence;                  // what was read where, and why this status
  std::string advice;                    // the next step for a FAIL/WARN (ask the provider, reseat...)
  std::string expectation_source;        // "catalog: H100 SXM5 80GB", "offer a100-monthly", "default (docs/check.md §3)"
  double seconds = 0;                    // how long the test ran
};

struct HostInfo {
  std::optional<std::string> hostname;
  std::optional<std::string> os;            // PRETTY_NAME of /etc/os-release
  std::optional<std::string> kernel;
  std::optional<std::string> cpu_model;
  std::optional<int> cpu_sockets;
  std::optional<int> cpu_cores;             // physical
  std::optional<int> cpu_threads;           // logical (online)
  std::optional<uint64_t> memory_bytes;     // MemTotal
  std::optional<bool> virtual_machine;      // hypervisor flag in /proc/cpuinfo
  std::map<std::string, std::string> not_measured;
};

// One GPU's telemetry while a GPU test ran, one sample per `interval_s` (`--sample-interval`):
// what the report's page plots for the burn-in. Index i of every vector is the same sample; a
// value NVML did not give is nullopt. `clock_event_seconds` counts each reason bit on its own
// (check/benchmark_formulas.h ClockEventSeconds) over the samples after `warmup_s`.
struct GpuCurve {
  std::string test;   // "burn_in", "gemm", ...
  int gpu = -1;
  std::string node;
  double interval_s = 1;
  double warmup_s = 0;
  std::vector<double> t;  // seconds since the test started
  std::vector<std::optional<double>> temperature_c;
  std::vector<std::optional<double>> power_w;
  std::vector<std::optional<double>> sm_clock_mhz;
  std::vector<std::optional<uint64_t>> clock_events;  // reason bit mask (telemetry/snapshot.h)
  std::map<std::string, double> clock_event_seconds;
};

// The link test (`gpuplan check --net HOST[:PORT]`, docs/check.md §12), measured from the machine
// that ran the check (the client) to a `gpuplan check --net-listen` on the other end. Rates are
// payload bits, 10^9 bit/s; "throughput" is client -> listener, "reverse" listener -> client
// (iperf3's -R names it so).
struct NetLink {
  std::string host;                  // the listener as given: "10.0.0.5:5201"
  std::string tool = "gpuplan";      // what measured: "gpuplan" (a gpuplan listener) or "iperf3" (an iperf3 -s)
  int streams = 0;                   // parallel TCP connections per direction
  double seconds = 0;                // each direction ran this long
  double connect_ms = 0;             // one TCP connect (SYN to SYN-ACK, plus name resolution)
  double rtt_ms = 0;                 // median of `pings` request round trips on one kept-alive connection
  double rtt_p90_ms = 0;
  int pings = 0;
  double throughput_gbps = 0;        // client -> listener, bytes the listener read over its reading window
  double reverse_gbps = 0;           // listener -> client, bytes the client read over its reading window
  uint64_t throughput_bytes = 0;
  uint64_t reverse_bytes = 0;
  uint64_t transfer_bytes = 0;           // the checkpoint-sized transfer (--net-bytes), listener -> client
  uint64_t transfer_measured_bytes = 0;  // what arrived before the transfer's time limit
  double transfer_seconds = 0;           // measured, or extrapolated when the limit cut it short
  bool transfer_extrapolated = false;
  std::optional<double> listener_rate_mbps;  // the listener's pacing (--net-rate-mbps), or iperf3's -b cap in all
};

struct CheckReport {
  std::string tool_version;
  std::string mode;                         // "quick", "default", "full"
  std::string started;                      // ISO 8601 UTC
  std::string finished;                     // empty while running
  std::string source;                       // where the GPU data came from (GpuSource::Describe)
  std::string expect;                       // what was ordered, as given ("8x H100 SXM")
  std::string expected_card;                // the catalog card judged against ("H100 SXM 80GB"), if named
  std::string offer_id;                     // the offer the machine was rented under (--offer), if given
  CheckStatus verdict = CheckStatus::kPass;  // worst status of the tests (SKIP counts as PASS)
  std::vector<std::string> notes;           // one-line facts about the run ("no NVIDIA driver: ...")
  HostInfo host;
  std::vector<SystemSnapshot> nodes;        // inventory at the start, one per node (NVML: one)
  std::vector<GpuEvent> events;             // XIDs and other events seen during the run
  std::vector<CheckResult> tests;
  std::vector<GpuCurve> curves;             // NVML samples during the GPU tests (burn-in and the others)
  std::optional<NetLink> net;               // the link test's figures (--net), when it ran
  bool environment_problem = false;         // no driver / unreadable device: exit 3

  void Add(CheckResult r);                  // appends and updates the verdict
  // The exit code of this report: 0 PASS/WARN, 1 FAIL, 3 ERROR or an environment problem.
  int ExitCode() const;
};

}  // namespace gpuplan
