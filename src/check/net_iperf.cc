// The link test with iperf3 (check/net_iperf.h).
#include "check/net_iperf.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "check/compare.h"
#include "check/worker_runner.h"
#include "core/error.h"

namespace gpuplan {
namespace {

using nlohmann::json;

constexpr double kConnectTimeoutMs = 5000;          // iperf3 --connect-timeout
constexpr double kEndMarginSeconds = 30;            // a run may end this long after its -t (connect, results exchange)
constexpr std::size_t kMaxOutputBytes = 16 << 20;   // -J of 64 streams x 300 one-second intervals is ~10 MB
constexpr int kBusyTries = 10;                      // "the server is busy": it is still ending the previous test
constexpr double kBusyWaitSeconds = 0.5;
constexpr const char* kInterruptMessage = "interrupt - the client has terminated";

[[noreturn]] void Fail(const NetEndpoint& peer, const std::string& why) {
  throw EnvironmentError(fmt::format("iperf3 to {}: {}", peer.Text(), why));
}

const json& Member(const json& j, const char* key, const char* where, const NetEndpoint& peer) {
  const auto it = j.find(key);
  if (it == j.end()) {
    Fail(peer, fmt::format("its -J output has no {}{}", where, key));
  }
  return *it;
}

double Number(const json& j, const char* key, const char* where, const NetEndpoint& peer) {
  const json& v = Member(j, key, where, peer);
  if (!v.is_number() || v.get<double>() < 0 || !std::isfinite(v.get<double>())) {
    Fail(peer, fmt::format("{}{} is not a number >= 0 in its -J output", where, key));
  }
  return v.get<double>();
}

uint64_t Bytes(const json& j, const char* key, const char* where, const NetEndpoint& peer) {
  const json& v = Member(j, key, where, peer);
  if (!v.is_number_unsigned()) {
    Fail(peer, fmt::format("{}{} is not a byte count in its -J output", where, key));
  }
  return v.get<uint64_t>();
}

std::string Tail(const std::string& s) {
  std::string t = s.size() > 300 ? s.substr(s.size() - 300) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) {
    t.pop_back();
  }
  return t;
}

// One iperf3 client run, again while the server says it is busy (an `iperf3 -s` serves one test
// at a time and takes a moment to end the last one).
IperfRun RunIperf(const std::vector<std::string>& argv, const NetEndpoint& peer, int streams, double timeout_s,
                  double interrupt_s = 0) {
  for (int attempt = 1;; ++attempt) {
    ProcessOptions po;
    po.timeout_s = timeout_s;
    po.interrupt_s = interrupt_s;
    po.max_stdout = kMaxOutputBytes;
    const ProcessRun p = RunProcess(argv, po);
    if (!p.start_error.empty()) {
      Fail(peer, p.start_error);
    }
    if (p.timed_out) {
      Fail(peer, fmt::format("it did not end within {} s and was killed", timeout_s));
    }
    if (p.out_truncated) {
      Fail(peer, fmt::format("its -J output is over {} MiB", kMaxOutputBytes >> 20));
    }
    const json j = json::parse(p.out, nullptr, false);
    if (!j.is_object()) {
      Fail(peer, fmt::format("it wrote no JSON (exit {}): {}", p.exit_code ? std::to_string(*p.exit_code) : "by a signal",
                             Tail(p.stderr_tail.empty() ? p.out : p.stderr_tail)));
    }
    if (const auto e = j.find("error"); e != j.end() && e->is_string() &&
                                        e->get<std::string>().find("server is busy") != std::string::npos &&
                                        attempt < kBusyTries) {
      std::this_thread::sleep_for(std::chrono::duration<double>(kBusyWaitSeconds));
      continue;
    }
    IperfRun r = ParseIperfJson(p.out, peer, streams, p.interrupted);
    if (!p.interrupted && p.exit_code != 0) {
      Fail(peer, fmt::format("it exited {}: {}", p.exit_code ? std::to_string(*p.exit_code) : SignalName(p.signal.value_or(0)),
                             Tail(p.stderr_tail)));
    }
    return r;
  }
}

}  // namespace

IperfRun ParseIperfJson(const std::string& text, const NetEndpoint& peer, int streams, bool interrupted) {
  // Not through ParseJsonText, which refuses a name given twice: iperf3 -J itself writes
  // sock_bufsize, sndbuf_actual and rcvbuf_actual twice in its "start" object (tests/fixtures/net),
  // none of which is read here.
  const json j = json::parse(text, nullptr, false);
  if (!j.is_object()) {
    Fail(peer, "its output is not a JSON object (was it run with -J?)");
  }
  IperfRun r;
  if (const auto e = j.find("error"); e != j.end()) {
    const std::string message = e->is_string() ? e->get<std::string>() : e->dump();
    if (!(interrupted && message == kInterruptMessage)) {
      Fail(peer, message);
    }
    r.interrupted = true;
  }
  const json& start = Member(j, "start", "", peer);
  const json& end = Member(j, "end", "", peer);
  if (!start.is_object() || !end.is_object()) {
    Fail(peer, "start and end are not objects in its -J output");
  }
  const json& connected = Member(start, "connected", "start.", peer);
  const json& per_stream = Member(end, "streams", "end.", peer);
  if (!connected.is_array() || !per_stream.is_array()) {
    Fail(peer, "start.connected and end.streams are not arrays in its -J output");
  }
  r.streams = static_cast<int>(per_stream.size());
  if (r.streams != streams || connected.size() != per_stream.size()) {
    Fail(peer, fmt::format("asked for {} streams (-P), it connected {} and reports {}", streams, connected.size(),
                           per_stream.size()));
  }
  const json& received = Member(end, "sum_received", "end.", peer);
  const json& sent = Member(end, "sum_sent", "end.", peer);
  if (!received.is_object() || !sent.is_object()) {
    Fail(peer, "end.sum_received and end.sum_sent are not objects in its -J output");
  }
  r.bytes = Bytes(received, "bytes", "end.sum_received.", peer);
  r.seconds = Number(received, "seconds", "end.sum_received.", peer);
  r.bits_per_second = Number(received, "bits_per_second", "end.sum_received.", peer);
  r.sent_bytes = Bytes(sent, "bytes", "end.sum_sent.", peer);
  for (const json& s : per_stream) {
    const auto sender = s.is_object() ? s.find("sender") : s.end();
    if (!s.is_object() || sender == s.end() || !sender->is_object()) {
      Fail(peer, "an end.streams entry has no sender object in its -J output");
    }
    // sender.sender: this side sent (iperf3 labels each stream's side); its RTT is this kernel's.
    const auto ours = sender->find("sender");
    const auto rtt = sender->find("mean_rtt");
    if (ours != sender->end() && ours->is_boolean() && ours->get<bool>() && rtt != sender->end() && rtt->is_number() &&
        rtt->get<double>() > 0) {
      r.sender_rtt_ms.push_back(rtt->get<double>() / 1000);  // microseconds
    }
  }
  return r;
}

std::vector<std::string> IperfArgs(const std::string& iperf3, const NetEndpoint& peer, int streams, int seconds,
                                   bool reverse, std::optional<uint64_t> bytes, std::optional<double> rate_mbps) {
  std::vector<std::string> a = {iperf3,        "-c", peer.host, "-p", std::to_string(peer.port), "-J",
                                "-P",          std::to_string(streams), "--connect-timeout",
                                fmt::format("{}", kConnectTimeoutMs)};
  if (bytes) {
    a.insert(a.end(), {"-n", std::to_string(*bytes)});
  } else {
    a.insert(a.end(), {"-t", std::to_string(seconds)});
  }
  if (reverse) {
    a.emplace_back("-R");
  }
  if (rate_mbps) {
    // iperf3's -b is per stream ("for multiple streams, the bandwidth limit is applied separately
    // to each stream"): the total split evenly.
    a.insert(a.end(), {"-b", fmt::format("{}", std::llround(*rate_mbps * 1e6 / streams))});
  }
  return a;
}

std::optional<std::string> FindExecutable(const std::string& name) {
  if (name.find('/') != std::string::npos) {
    return ::access(name.c_str(), X_OK) == 0 ? std::optional<std::string>(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t from = 0;
  for (;;) {
    const std::size_t colon = dirs.find(':', from);
    std::string dir = dirs.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string::npos) {
      return std::nullopt;
    }
    from = colon + 1;
  }
}

NetLink MeasureLinkIperf(const NetClientRequest& q) {
  const auto iperf3 = FindExecutable(q.iperf3.empty() ? "iperf3" : q.iperf3);
  if (!iperf3) {
    throw EnvironmentError(q.iperf3.empty() ? "--net-tool iperf3: no iperf3 on PATH (install it: apt-get install iperf3)"
                                            : "--net-tool iperf3: cannot run " + q.iperf3);
  }
  auto progress = [&](double f) {
    if (q.progress) {
      q.progress(f);
    }
  };
  NetLink link;
  link.host = q.peer.Text();
  link.tool = "iperf3";
  link.streams = q.streams;
  const int seconds = std::max(1, static_cast<int>(std::lround(q.seconds)));  // iperf3's -t is whole seconds
  link.seconds = seconds;
  link.transfer_bytes = q.transfer_bytes;
  link.listener_rate_mbps = q.rate_mbps;
  const double timeout = seconds + kEndMarginSeconds;

  const IperfRun up = RunIperf(IperfArgs(*iperf3, q.peer, q.streams, seconds, false, std::nullopt, q.rate_mbps), q.peer,
                               q.streams, timeout);
  link.throughput_gbps = up.bits_per_second / 1e9;
  link.throughput_bytes = up.bytes;
  if (!up.sender_rtt_ms.empty()) {
    // The sending streams' smoothed RTT while they sent (under load, so above an idle round trip).
    double sum = 0;
    for (double v : up.sender_rtt_ms) {
      sum += v;
    }
    link.rtt_ms = sum / static_cast<double>(up.sender_rtt_ms.size());
    link.rtt_p90_ms = Percentile90(up.sender_rtt_ms);
    link.pings = 0;
  } else {
    // No mean_rtt (not Linux, or an iperf3 without it): one TCP connect is one round trip.
    link.connect_ms = NetConnectMs(q.peer, " (is `iperf3 -s` running there, and its port open?)");
    link.rtt_ms = link.rtt_p90_ms = link.connect_ms;
    link.pings = 1;
  }
  progress(0.35);

  const IperfRun down = RunIperf(IperfArgs(*iperf3, q.peer, q.streams, seconds, true, std::nullopt, q.rate_mbps),
                                 q.peer, q.streams, timeout);
  link.reverse_gbps = down.bits_per_second / 1e9;
  link.reverse_bytes = down.bytes;
  progress(0.65);

  // The checkpoint: -R -n BYTES, stopped with SIGINT at 3 x the seconds (iperf3 then writes what
  // had arrived) and extrapolated, as the gpuplan path cuts its fetch.
  const double limit = kNetTransferLimitFactor * seconds;
  const IperfRun cp = RunIperf(IperfArgs(*iperf3, q.peer, q.streams, seconds, true, q.transfer_bytes, q.rate_mbps),
                               q.peer, q.streams, limit + kEndMarginSeconds, limit);
  link.transfer_measured_bytes = std::min<uint64_t>(cp.bytes, q.transfer_bytes);
  link.transfer_extrapolated = link.transfer_measured_bytes < q.transfer_bytes;
  link.transfer_seconds = !link.transfer_extrapolated ? cp.seconds
                          : link.transfer_measured_bytes > 0
                              ? cp.seconds * static_cast<double>(q.transfer_bytes) /
                                    static_cast<double>(link.transfer_measured_bytes)
                              : 0;
  progress(1);
  return link;
}

}  // namespace gpuplan
