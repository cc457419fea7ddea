// The link test of `gpuplan check --net HOST[:PORT]` (docs/check.md §12): round-trip time,
// throughput each way on several TCP connections and a checkpoint-sized transfer, measured
// against a `gpuplan check --net-listen` on the other machine (check/net_listen.h) over HTTP
// (cpp-httplib), and judged into check results. The pacing arithmetic of the listener's
// `--net-rate-mbps` (TokenBucket) is here too, so a test knows the figure a paced link gives.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/report.h"

namespace gpuplan {

inline constexpr int kNetDefaultPort = 5201;  // iperf3's port (iperf3(1) -p)
inline constexpr int kNetMaxStreams = 64;     // connections per direction; the listener serves as many
inline constexpr double kNetMinSeconds = 1;
inline constexpr double kNetMaxSeconds = 300;
inline constexpr int64_t kNetMinBytes = int64_t{1} << 20;  // 1 MiB
inline constexpr int64_t kNetMaxBytes = int64_t{1} << 40;  // 1 TiB
inline constexpr double kNetMinRateMbps = 1;
inline constexpr double kNetMaxRateMbps = 400000;  // 400 Gbit/s
// The checkpoint transfer stops after this many times --net-seconds and is extrapolated.
inline constexpr double kNetTransferLimitFactor = 3;

// A host and port: "10.0.0.5:5201", "[fe80::1]:5201", "server" (the default port).
struct NetEndpoint {
  std::string host;
  int port = kNetDefaultPort;
  std::string Text() const;  // "10.0.0.5:5201", "[::1]:5201"
};

// Reads HOST[:PORT] (`listen`: [ADDR:]PORT, the address 127.0.0.1 when none). A port outside
// 1-65535 (0 is allowed when `listen`: any free port) or an empty host is an InputError naming
// option `key` ("net", "net_listen").
NetEndpoint ParseNetEndpoint(const std::string& text, const std::string& key, bool listen);

// A token bucket of `bytes_per_second` holding at most `burst_bytes`, full at the start. Take()
// lets `bytes` through at time `now_s` (seconds, any monotonic origin) and returns how long the
// caller must wait first: the bucket may go into debt, so a caller that takes more than it holds
// waits exactly for the refill. Over any window of T seconds the bytes let through are at most
// burst + rate x T (NetPacedBytesBound), so a paced link measured over T reads the rate within
// burst / T.
class TokenBucket {
 public:
  TokenBucket(double bytes_per_second, double burst_bytes);
  double Take(double bytes, double now_s);
  double rate() const { return rate_; }
  double burst() const { return burst_; }

 private:
  double rate_;
  double burst_;
  double tokens_;
  std::optional<double> last_;
};

// The most bytes a bucket of `rate` (bytes/s) and `burst` lets through in `seconds`.
double NetPacedBytesBound(double bytes_per_second, double burst_bytes, double seconds);
// Mbit/s (10^6 bit/s) -> bytes/s.
double MbpsToBytesPerSecond(double mbps);
// Payload bytes over seconds in 10^9 bit/s (0 when seconds <= 0).
double GbitPerSecond(uint64_t bytes, double seconds);
// The 90th percentile (nearest rank) of `v`; 0 for an empty vector (the median: Median, compare.h).
double Percentile90(std::vector<double> v);

// While alive, a write to a closed connection in this thread fails with EPIPE instead of ending
// the process with SIGPIPE (cpp-httplib 0.11 writes without MSG_NOSIGNAL): SIGPIPE is blocked in
// the thread (threads started meanwhile inherit that), and one raised meanwhile is taken before
// the mask is restored. Changes no signal disposition of the process.
class SigpipeBlock {
 public:
  SigpipeBlock();
  ~SigpipeBlock();
  SigpipeBlock(const SigpipeBlock&) = delete;
  SigpipeBlock& operator=(const SigpipeBlock&) = delete;

 private:
  bool was_blocked_ = false;
};

struct NetClientRequest {
  NetEndpoint peer;
  int streams = 4;
  double seconds = 10;
  uint64_t transfer_bytes = uint64_t{1} << 30;
  std::string token;
  int pings = 20;
  std::function<void(double)> progress;  // 0..1
  // "gpuplan": a `gpuplan check --net-listen` answers; "iperf3": an `iperf3 -s` does, and the
  // installed iperf3 measures (check/net_iperf.h).
  std::string tool = "gpuplan";
  std::optional<double> rate_mbps;  // iperf3 only: cap the sending side at this in all (-b per stream)
  std::string iperf3;               // iperf3 only: its path; empty: found on PATH
};

// One TCP connect (name resolution included), its time in ms. Throws EnvironmentError naming
// the peer and `hint` when it fails.
double NetConnectMs(const NetEndpoint& peer, const std::string& hint);

// Measures the link (with iperf3 when `tool` says so: MeasureLinkIperf). Throws EnvironmentError
// when the listener cannot be reached, does not answer as a gpuplan listener, refuses the token
// or drops a stream.
NetLink MeasureLink(const NetClientRequest& request);

// net_rtt (ms, lower is better), net_throughput and net_reverse (Gbit/s), net_transfer (s, lower
// is better): PASS with the evidence, or against --net-max-rtt-ms / --net-min-gbps (FAIL past).
std::vector<CheckResult> JudgeLink(const NetLink& link, std::optional<double> min_gbps,
                                   std::optional<double> max_rtt_ms);

}  // namespace gpuplan
