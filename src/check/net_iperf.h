// The link test with iperf3 (`gpuplan check --net HOST[:PORT] --net-tool iperf3`, docs/check.md
// §12): the other machine runs `iperf3 -s` (port 5201 unless -p), and gpuplan runs the installed
// iperf3 client as a child process (check/worker_runner.h RunProcess: no shell, its own process
// group, killed at a timeout, stdout bounded) three times — client -> server, server -> client
// (-R) and a checkpoint-sized -R -n BYTES — and reads its -J JSON into the same NetLink the
// gpuplan listener gives (`tool` "iperf3"), so JudgeLink, the report and `check compare` are the
// same.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "check/net.h"

namespace gpuplan {

// What one `iperf3 -c ... -J` run reports, read strictly where the figures come from.
struct IperfRun {
  int streams = 0;             // end.streams (and start.connected) entries
  uint64_t bytes = 0;          // end.sum_received.bytes: what arrived at the receiving side
  double seconds = 0;          // end.sum_received.seconds
  double bits_per_second = 0;  // end.sum_received.bits_per_second
  uint64_t sent_bytes = 0;     // end.sum_sent.bytes (evidence only: written, not necessarily arrived)
  // end.streams[].sender.mean_rtt in ms, for the streams whose sender was this side
  // (sender.sender true, the kernel's smoothed RTT of its TCP_INFO; Linux) and non-zero.
  std::vector<double> sender_rtt_ms;
  bool interrupted = false;  // the client was stopped with SIGINT and wrote what had arrived
};

// The iperf3 client's JSON output (`text`). An "error" member, text that is not a JSON object, or
// a missing or mistyped end.sum_received / end.streams / start.connected is an EnvironmentError
// naming `peer` and iperf3's message; so is a stream count other than `streams`. `interrupted`:
// the caller sent SIGINT, so iperf3's "interrupt - the client has terminated" is expected and the
// figures are what had arrived by then.
IperfRun ParseIperfJson(const std::string& text, const NetEndpoint& peer, int streams, bool interrupted = false);

// The iperf3 client's argv: -c HOST -p PORT -J -P STREAMS, then -t SECONDS (or -n BYTES when
// `bytes`), -R for server -> client, and -b BITS/S per stream when `rate_mbps` caps the total.
std::vector<std::string> IperfArgs(const std::string& iperf3, const NetEndpoint& peer, int streams, int seconds,
                                   bool reverse, std::optional<uint64_t> bytes, std::optional<double> rate_mbps);

// The first executable `name` in $PATH (a name with '/' as it is), or nullopt.
std::optional<std::string> FindExecutable(const std::string& name);

// Measures the link with iperf3. Throws EnvironmentError when iperf3 is not installed (nor at
// `q.iperf3`), when the server cannot be reached or iperf3 reports an error, and when it does not
// end in time.
NetLink MeasureLinkIperf(const NetClientRequest& q);

}  // namespace gpuplan
