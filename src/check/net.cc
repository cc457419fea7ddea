// The link test's client side, its pacing arithmetic and its verdicts (check/net.h).
#include "check/net.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <mutex>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "check/cells.h"
#include "check/compare.h"
#include "check/net_iperf.h"
#include "check/verdict.h"
#include "core/error.h"

namespace gpuplan {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kConnectTimeoutSeconds = 5;
constexpr double kReplyMarginSeconds = 30;     // a stream's answer may come this long after its data
constexpr std::size_t kChunkBytes = 64 * 1024;  // one write of the upload
constexpr int kPercent90 = 90;

double Seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

std::string N(double v) { return check_cells::Number(v, 3); }

[[noreturn]] void Unreachable(const NetEndpoint& peer, const std::string& why) {
  throw EnvironmentError(fmt::format("cannot reach the link-test listener at {}: {}", peer.Text(), why));
}

}  // namespace

double NetConnectMs(const NetEndpoint& peer, const std::string& hint) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const auto t0 = Clock::now();
  if (const int rc = ::getaddrinfo(peer.host.c_str(), std::to_string(peer.port).c_str(), &hints, &found); rc != 0) {
    Unreachable(peer, std::string("cannot resolve the host name: ") + ::gai_strerror(rc));
  }
  std::string error = "no address";
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    int rc = ::connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = ::poll(&p, 1, static_cast<int>(kConnectTimeoutSeconds * 1000));
      if (rc == 0) {
        errno = ETIMEDOUT;
        rc = -1;
      } else if (rc > 0) {
        int so = 0;
        socklen_t len = sizeof so;
        ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len);
        errno = so;
        rc = so == 0 ? 0 : -1;
      }
    }
    const int saved = errno;
    ::close(fd);
    if (rc == 0) {
      ::freeaddrinfo(found);
      return Seconds(t0, Clock::now()) * 1000;
    }
    error = std::strerror(saved);
  }
  ::freeaddrinfo(found);
  Unreachable(peer, error + hint);
}

namespace {

std::unique_ptr<httplib::Client> NewClient(const NetClientRequest& q, double read_timeout_s) {
  auto c = std::make_unique<httplib::Client>(q.peer.host, q.peer.port);
  c->set_connection_timeout(static_cast<time_t>(kConnectTimeoutSeconds), 0);
  const auto whole = static_cast<time_t>(read_timeout_s);
  c->set_read_timeout(whole, 0);
  c->set_write_timeout(whole, 0);
  c->set_keep_alive(true);
  c->set_tcp_nodelay(true);
  if (!q.token.empty()) {
    c->set_bearer_token_auth(q.token);
  }
  return c;
}

// A failed or refused request as the reason the link test stopped.
[[noreturn]] void Refused(const NetClientRequest& q, const std::string& what, const httplib::Result& res) {
  if (!res) {
    Unreachable(q.peer, what + ": " + httplib::to_string(res.error()));
  }
  if (res->status == 401) {
    Unreachable(q.peer, what + ": the listener wants its token (--net-token, or GPUPLAN_TOKEN)");
  }
  Unreachable(q.peer, fmt::format("{}: HTTP {} {}", what, res->status, res->body.substr(0, 200)));
}

// The listener's identity and the round trips: one ping that must answer as a gpuplan listener,
// then `pings` timed ones on the same connection.
void Ping(const NetClientRequest& q, NetLink& link) {
  auto c = NewClient(q, kConnectTimeoutSeconds);
  const auto first = c->Get("/net/ping");
  if (!first || first->status != 200) {
    Refused(q, "GET /net/ping", first);
  }
  const auto hello = nlohmann::json::parse(first->body, nullptr, false);
  if (!hello.is_object() || hello.value("service", "") != "gpuplan-net") {
    Unreachable(q.peer, "it answered, but not as `gpuplan check --net-listen` (an iperf3 server? see docs/check.md §12)");
  }
  if (const auto it = hello.find("rate_mbps"); it != hello.end() && it->is_number()) {
    link.listener_rate_mbps = it->get<double>();
  }
  std::vector<double> ms;
  for (int i = 0; i < q.pings; ++i) {
    const auto t0 = Clock::now();
    const auto r = c->Get("/net/ping");
    if (!r || r->status != 200) {
      Refused(q, "GET /net/ping", r);
    }
    ms.push_back(Seconds(t0, Clock::now()) * 1000);
  }
  link.pings = q.pings;
  link.rtt_ms = Median(ms);
  link.rtt_p90_ms = Percentile90(ms);
}

// What one stream moved and when: the first and last byte on one clock.
struct Window {
  uint64_t bytes = 0;
  double first_s = 0;
  double last_s = 0;
};

// Sum of the bytes over the span from the earliest first byte to the latest last one.
double AggregateGbps(const std::vector<Window>& w, uint64_t* total) {
  *total = 0;
  double lo = INFINITY;
  double hi = -INFINITY;
  for (const auto& x : w) {
    *total += x.bytes;
    lo = std::min(lo, x.first_s);
    hi = std::max(hi, x.last_s);
  }
  return hi > lo ? GbitPerSecond(*total, hi - lo) : 0;
}

// Runs `streams` copies of `one(i)` at once; the first exception is rethrown after all ended.
template <typename F>
void OnStreams(int streams, F one) {
  std::vector<std::thread> pool;
  std::mutex mu;
  std::exception_ptr error;
  for (int i = 0; i < streams; ++i) {
    pool.emplace_back([&, i] {
      const SigpipeBlock no_sigpipe;
      try {
        one(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) {
          error = std::current_exception();
        }
      }
    });
  }
  for (auto& t : pool) {
    t.join();
  }
  if (error) {
    std::rethrow_exception(error);
  }
}

// Client -> listener: each stream sends for `seconds`; the listener answers with what it read and
// when, on its own clock (one clock for every stream).
void Upload(const NetClientRequest& q, NetLink& link) {
  std::string chunk(kChunkBytes, '\0');
  std::mt19937_64 rng(5201);
  for (auto& ch : chunk) {
    ch = static_cast<char>(rng());  // not zeros: a compressing middlebox would flatter the link
  }
  std::vector<Window> w(static_cast<std::size_t>(q.streams));
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(q.seconds));
  OnStreams(q.streams, [&](int i) {
    auto c = NewClient(q, q.seconds + kReplyMarginSeconds);
    const auto res = c->Post(
        "/net/sink", httplib::Headers{},
        [&](std::size_t, httplib::DataSink& sink) {
          if (Clock::now() >= deadline) {
            sink.done();
            return true;
          }
          return sink.write(chunk.data(), chunk.size());
        },
        "application/octet-stream");
    if (!res || res->status != 200) {
      Refused(q, "POST /net/sink", res);
    }
    const auto j = nlohmann::json::parse(res->body, nullptr, false);
    if (!j.is_object() || !j.contains("bytes") || !j.contains("first_s") || !j.contains("last_s") ||
        !j["bytes"].is_number_unsigned() || !j["first_s"].is_number() || !j["last_s"].is_number()) {
      Unreachable(q.peer, "POST /net/sink answered without bytes, first_s and last_s");
    }
    w[static_cast<std::size_t>(i)] = {j["bytes"].get<uint64_t>(), j["first_s"].get<double>(), j["last_s"].get<double>()};
  });
  link.throughput_gbps = AggregateGbps(w, &link.throughput_bytes);
}

// Listener -> client: each stream asks for up to `bytes` over up to `seconds`; the client times
// the bytes as they arrive. Returns the windows (seconds since `t0`).
std::vector<Window> Download(const NetClientRequest& q, uint64_t bytes_per_stream, double seconds, Clock::time_point t0) {
  std::vector<Window> w(static_cast<std::size_t>(q.streams));
  OnStreams(q.streams, [&](int i) {
    auto c = NewClient(q, seconds + kReplyMarginSeconds);
    Window& mine = w[static_cast<std::size_t>(i)];
    const std::string path = fmt::format("/net/source?bytes={}&seconds={}", bytes_per_stream, seconds);
    const auto res = c->Get(path, httplib::Headers{}, [&](const char*, std::size_t n) {
      const double now = Seconds(t0, Clock::now());
      if (mine.bytes == 0) {
        mine.first_s = now;
      }
      mine.bytes += n;
      mine.last_s = now;
      return true;
    });
    if (!res || res->status != 200) {
      Refused(q, "GET /net/source", res);
    }
  });
  return w;
}

}  // namespace

std::string NetEndpoint::Text() const {
  return (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

NetEndpoint ParseNetEndpoint(const std::string& text, const std::string& key, bool listen) {
  NetEndpoint e;
  std::string port;
  if (!text.empty() && text.front() == '[') {  // [v6]:port
    const auto close = text.find(']');
    if (close == std::string::npos) {
      throw InputError::Option(key, "expected [ADDRESS]:PORT, got '" + text + "'");
    }
    e.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') {
        throw InputError::Option(key, "expected [ADDRESS]:PORT, got '" + text + "'");
      }
      port = text.substr(close + 2);
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos && text.find(':') == colon) {
    e.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else if (listen && !text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
    port = text;  // a port alone
  } else {
    e.host = text;  // a host alone (or a bare IPv6 address)
  }
  if (listen && e.host.empty()) {
    e.host = "127.0.0.1";
  }
  if (e.host.empty()) {
    throw InputError::Option(key, "expected HOST[:PORT], got '" + text + "'");
  }
  if (!port.empty() || text.back() == ':') {
    const int min = listen ? 0 : 1;
    const bool digits = !port.empty() && port.size() <= 5 && port.find_first_not_of("0123456789") == std::string::npos;
    const int value = digits ? std::stoi(port) : -1;
    if (value < min || value > 65535) {
      throw InputError::Option(key, fmt::format("expected a port from {} to 65535, got '{}'", min, port));
    }
    e.port = value;
  }
  return e;
}

TokenBucket::TokenBucket(double bytes_per_second, double burst_bytes)
    : rate_(bytes_per_second), burst_(burst_bytes), tokens_(burst_bytes) {}

double TokenBucket::Take(double bytes, double now_s) {
  if (last_) {
    tokens_ = std::min(burst_, tokens_ + rate_ * std::max(0.0, now_s - *last_));
  }
  last_ = std::max(now_s, last_.value_or(now_s));
  tokens_ -= bytes;
  return tokens_ < 0 ? -tokens_ / rate_ : 0;
}

double NetPacedBytesBound(double bytes_per_second, double burst_bytes, double seconds) {
  return burst_bytes + bytes_per_second * seconds;
}

double MbpsToBytesPerSecond(double mbps) { return mbps * 1e6 / 8; }

double GbitPerSecond(uint64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) * 8 / 1e9 / seconds : 0;
}

double Percentile90(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  // Nearest rank: the smallest value with at least 90% of the values at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(kPercent90 / 100.0 * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}

SigpipeBlock::SigpipeBlock() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  sigset_t old;
  pthread_sigmask(SIG_BLOCK, &pipe, &old);
  was_blocked_ = sigismember(&old, SIGPIPE) == 1;
}

SigpipeBlock::~SigpipeBlock() {
  if (was_blocked_) {
    return;
  }
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  const timespec none{0, 0};
  while (sigtimedwait(&pipe, nullptr, &none) == SIGPIPE) {
  }
  pthread_sigmask(SIG_UNBLOCK, &pipe, nullptr);
}

NetLink MeasureLink(const NetClientRequest& q) {
  if (q.tool == "iperf3") {
    return MeasureLinkIperf(q);
  }
  const SigpipeBlock no_sigpipe;
  NetLink link;
  link.host = q.peer.Text();
  link.streams = q.streams;
  link.seconds = q.seconds;
  link.transfer_bytes = q.transfer_bytes;
  auto progress = [&](double f) {
    if (q.progress) {
      q.progress(f);
    }
  };
  link.connect_ms = NetConnectMs(q.peer, " (is `gpuplan check --net-listen` running there, and its port open?)");
  Ping(q, link);
  progress(0.05);
  Upload(q, link);
  progress(0.35);
  {
    const auto t0 = Clock::now();
    // The bytes are not the limit here: at most what 400 Gbit/s moves in the time.
    const auto cap = static_cast<uint64_t>(MbpsToBytesPerSecond(kNetMaxRateMbps) * q.seconds);
    link.reverse_gbps = AggregateGbps(Download(q, cap, q.seconds, t0), &link.reverse_bytes);
  }
  progress(0.65);
  {
    // The checkpoint: split over the streams, timed from the requests to the last byte.
    const double limit = kNetTransferLimitFactor * q.seconds;
    const auto n = static_cast<uint64_t>(q.streams);
    const uint64_t per_stream = (q.transfer_bytes + n - 1) / n;
    const auto t0 = Clock::now();
    const std::vector<Window> w = Download(q, per_stream, limit, t0);
    const double elapsed = Seconds(t0, Clock::now());
    for (const auto& x : w) {
      link.transfer_measured_bytes += x.bytes;
    }
    link.transfer_measured_bytes = std::min<uint64_t>(link.transfer_measured_bytes, q.transfer_bytes);
    link.transfer_extrapolated = link.transfer_measured_bytes < q.transfer_bytes;
    link.transfer_seconds = !link.transfer_extrapolated ? elapsed
                            : link.transfer_measured_bytes > 0
                                ? elapsed * static_cast<double>(q.transfer_bytes) /
                                      static_cast<double>(link.transfer_measured_bytes)
                                : 0;
  }
  progress(1);
  return link;
}

std::vector<CheckResult> JudgeLink(const NetLink& l, std::optional<double> min_gbps, std::optional<double> max_rtt_ms) {
  std::vector<CheckResult> out;
  const bool iperf3 = l.tool == "iperf3";
  const std::string paced =
      !l.listener_rate_mbps ? ""
      : iperf3 ? fmt::format(" (iperf3's senders capped to {} Mbit/s in all, -b per stream: --net-rate-mbps)",
                             N(*l.listener_rate_mbps))
               : fmt::format(" (the listener paces to {} Mbit/s each way: --net-rate-mbps)", N(*l.listener_rate_mbps));
  {
    CheckResult r = Make("net_rtt", -1, {});
    r.unit = "ms";
    r.measured = l.rtt_ms;
    if (iperf3 && l.pings == 0) {
      r.evidence = fmt::format("mean of the {} sending streams' smoothed TCP round trip to {} as iperf3 -J reports it "
                               "(end.streams[].sender.mean_rtt, the kernel's srtt while they sent: under load, so above "
                               "an idle round trip; p90 over the streams {} ms)",
                               l.streams, l.host, N(l.rtt_p90_ms));
    } else if (iperf3) {
      r.evidence = fmt::format("one TCP connect to {} (SYN to SYN-ACK, name resolution included): iperf3 -J reported no "
                               "mean_rtt",
                               l.host);
    } else {
      r.evidence = fmt::format("median of {} HTTP round trips on one kept-alive connection to {} (p90 {} ms); one TCP "
                               "connect took {} ms",
                               l.pings, l.host, N(l.rtt_p90_ms), N(l.connect_ms));
    }
    if (max_rtt_ms) {
      r.expected = *max_rtt_ms;
      r.expected_text = "<= " + N(*max_rtt_ms) + " ms";
      r.expectation_source = "--net-max-rtt-ms";
      AtMost(r, l.rtt_ms, *max_rtt_ms, CheckStatus::kFail,
             "a long round trip slows every interactive session and small transfer: pick a closer region or ask the "
             "provider for the route");
    } else {
      Pass(r);
    }
    out.push_back(r);
  }
  auto rate = [&](const char* name, double gbps, uint64_t bytes, const char* direction) {
    CheckResult r = Make(name, -1, {});
    r.unit = "Gbit/s";
    r.measured = gbps;
    r.seconds = l.seconds;
    r.evidence = fmt::format("{}: {} MB over its reading window, {} TCP connections sending for {} s at once, payload "
                             "bits / 10^9 per s{}",
                             direction, N(static_cast<double>(bytes) / 1e6), l.streams, N(l.seconds), paced);
    if (min_gbps) {
      r.expected = *min_gbps;
      r.expected_text = ">= " + N(*min_gbps) + " Gbit/s";
      r.expectation_source = "--net-min-gbps";
      AtLeast(r, gbps, *min_gbps, CheckStatus::kFail,
              "the link is slower than needed: ask the provider for the bandwidth of the offer, or test at another "
              "hour (a shared uplink)");
    } else {
      Pass(r);
    }
    out.push_back(r);
  };
  if (iperf3) {
    rate("net_throughput", l.throughput_gbps, l.throughput_bytes,
         "this machine -> the iperf3 server, as the server received it (iperf3 -J end.sum_received)");
    rate("net_reverse", l.reverse_gbps, l.reverse_bytes,
         "the iperf3 server -> this machine (-R), as this machine received it (end.sum_received)");
  } else {
    rate("net_throughput", l.throughput_gbps, l.throughput_bytes, "this machine -> the listener, as the listener read it");
    rate("net_reverse", l.reverse_gbps, l.reverse_bytes, "the listener -> this machine, as this machine read it");
  }
  {
    CheckResult r = Make("net_transfer", -1, {});
    r.unit = "s";
    r.measured = l.transfer_seconds;
    const std::string size = N(static_cast<double>(l.transfer_bytes) / 1e9) + " GB";
    const std::string from = iperf3 ? "the iperf3 server (-R -n BYTES)" : "the listener";
    if (l.transfer_extrapolated) {
      r.evidence = fmt::format("a {} checkpoint from {} on {} connections: {} GB arrived in the limit of {} s "
                               "({} x --net-seconds){}; the time is extrapolated at that rate",
                               size, from, l.streams, N(static_cast<double>(l.transfer_measured_bytes) / 1e9),
                               N(kNetTransferLimitFactor * l.seconds), N(kNetTransferLimitFactor),
                               iperf3 ? ", when iperf3 was stopped with SIGINT" : "");
    } else if (iperf3) {
      r.evidence = fmt::format("a {} checkpoint fetched from {} on {} connections, iperf3's receiving time "
                               "(end.sum_received.seconds)",
                               size, from, l.streams);
    } else {
      r.evidence = fmt::format("a {} checkpoint fetched from the listener on {} connections, from the requests to the "
                               "last byte",
                               size, l.streams);
    }
    Pass(r);
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuplan
