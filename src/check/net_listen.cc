// The link test's listener (check/net_listen.h).
#include "check/net_listen.h"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "http/http_server.h"

namespace gpuplan {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kSourceChunkBytes = 64 * 1024;
constexpr int kStatusBadRequest = 400;
constexpr int kStatusUnauthorized = 401;

// Equal strings in a time that does not depend on where they differ.
bool SameSecret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    diff = static_cast<unsigned char>(diff | ((i < a.size() ? a[i] : 0) ^ (i < b.size() ? b[i] : 0)));
  }
  return diff == 0;
}

// One direction's pacing: a token bucket shared by every connection (the link, not a stream, has
// the rate), the wait taken outside the lock.
class Pacer {
 public:
  Pacer(std::optional<double> mbps, Clock::time_point t0) : t0_(t0) {
    if (mbps) {
      bucket_.emplace(MbpsToBytesPerSecond(*mbps), kNetPaceBurstBytes);
    }
  }
  void Pass(std::size_t bytes, const std::atomic<bool>& stopping) {
    if (!bucket_) {
      return;
    }
    double wait = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      wait = bucket_->Take(static_cast<double>(bytes), std::chrono::duration<double>(Clock::now() - t0_).count());
    }
    // Sleep in slices so a stop is seen within 50 ms.
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait));
    while (!stopping && Clock::now() < until) {
      std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
  }

 private:
  Clock::time_point t0_;
  std::mutex mu_;
  std::optional<TokenBucket> bucket_;
};

// A number of a query in [min, max], else nullopt.
std::optional<double> QueryNumber(const httplib::Request& req, const char* key, double min, double max) {
  if (!req.has_param(key)) {
    return std::nullopt;
  }
  const std::string v = req.get_param_value(key);
  std::size_t used = 0;
  double d = 0;
  try {
    d = std::stod(v, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != v.size() || !(d >= min && d <= max)) {
    return std::nullopt;
  }
  return d;
}

void Answer(httplib::Response& res, int status, const nlohmann::json& j) {
  res.status = status;
  res.set_content(j.dump(), "application/json");
}

}  // namespace

struct NetListener::Impl {
  NetListenOptions options;
  httplib::Server server;
  Clock::time_point t0 = Clock::now();
  std::atomic<bool> stopping{false};
  Pacer sink_pace;
  Pacer source_pace;
  std::string chunk;
  int port = 0;

  explicit Impl(NetListenOptions o)
      : options(std::move(o)), sink_pace(options.rate_mbps, t0), source_pace(options.rate_mbps, t0), chunk(kSourceChunkBytes, '\0') {
    std::mt19937_64 rng(5201);
    for (auto& c : chunk) {
      c = static_cast<char>(rng());
    }
  }
  double Now() const { return std::chrono::duration<double>(Clock::now() - t0).count(); }
};

NetListenOptions NetListenOptionsOf(const std::string& listen, const std::optional<double>& rate_mbps,
                                    const std::string& token) {
  NetListenOptions o;
  o.at = ParseNetEndpoint(listen, "net_listen", /*listen=*/true);
  o.rate_mbps = rate_mbps;
  o.token = token;
  if (!IsLoopbackAddress(o.at.host) && token.empty()) {
    throw InputError::Option("net_token",
                             "a listener on " + o.at.host +
                                 " (not loopback) needs a token that the client gives too: " + OptionRef("net_token") +
                                 " SECRET on both sides, or GPUPLAN_TOKEN");
  }
  return o;
}

NetListener::NetListener(NetListenOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  Impl* d = impl_.get();
  auto& s = d->server;
  const int threads = d->options.max_streams;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  const auto io = static_cast<time_t>(std::ceil(d->options.io_timeout_seconds));
  s.set_read_timeout(io, 0);
  s.set_write_timeout(io, 0);
  s.set_keep_alive_timeout(1);
  s.set_payload_max_length(kNetMaxRequestBytes);
  s.set_tcp_nodelay(true);
  s.set_pre_routing_handler([d](const httplib::Request& req, httplib::Response& res) {
    if (!d->options.token.empty() &&
        !SameSecret(req.get_header_value("Authorization"), "Bearer " + d->options.token)) {
      Answer(res, kStatusUnauthorized, {{"error", "this listener wants its token: --net-token or GPUPLAN_TOKEN"}});
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.Get("/net/ping", [d](const httplib::Request&, httplib::Response& res) {
    Answer(res, 200, {{"service", "gpuplan-net"}, {"rate_mbps", d->options.rate_mbps ? nlohmann::json(*d->options.rate_mbps) : nlohmann::json(nullptr)}});
  });
  s.Post("/net/sink", [d](const httplib::Request&, httplib::Response& res, const httplib::ContentReader& reader) {
    uint64_t bytes = 0;
    double first = 0;
    double last = 0;
    const double start = d->Now();
    reader([&](const char*, std::size_t n) {
      d->sink_pace.Pass(n, d->stopping);
      const double now = d->Now();
      if (bytes == 0) {
        first = now;
      }
      bytes += n;
      last = now;
      return !d->stopping && bytes <= kNetMaxRequestBytes && now - start <= kNetMaxRequestSeconds;
    });
    Answer(res, 200, {{"bytes", bytes}, {"first_s", first}, {"last_s", last}});
  });
  s.Get("/net/source", [d](const httplib::Request& req, httplib::Response& res) {
    const auto bytes = QueryNumber(req, "bytes", 1, static_cast<double>(kNetMaxRequestBytes));
    const auto seconds = QueryNumber(req, "seconds", 0.001, kNetMaxRequestSeconds);
    if (!bytes || !seconds) {
      Answer(res, kStatusBadRequest,
             {{"error", fmt::format("expected bytes=1..{} and seconds=0.001..{}", kNetMaxRequestBytes, kNetMaxRequestSeconds)}});
      return;
    }
    const auto total = static_cast<uint64_t>(*bytes);
    const double end = d->Now() + *seconds;
    res.set_chunked_content_provider("application/octet-stream",
                                     [d, total, end](std::size_t offset, httplib::DataSink& sink) {
                                       if (d->stopping) {
                                         return false;
                                       }
                                       if (offset >= total || d->Now() >= end) {
                                         sink.done();
                                         return true;
                                       }
                                       const std::size_t n = static_cast<std::size_t>(
                                           std::min<uint64_t>(total - offset, d->chunk.size()));
                                       d->source_pace.Pass(n, d->stopping);
                                       return sink.write(d->chunk.data(), n);
                                     });
  });
}

NetListener::~NetListener() { Stop(); }

int NetListener::Start() {
  const auto& at = impl_->options.at;
  if (at.port == 0) {
    impl_->port = impl_->server.bind_to_any_port(at.host);
  } else {
    impl_->port = impl_->server.bind_to_port(at.host, at.port) ? at.port : -1;
  }
  if (impl_->port <= 0) {
    throw EnvironmentError(fmt::format("cannot listen on {} (in use, or not an address of this machine)", at.Text()));
  }
  return impl_->port;
}

void NetListener::Run() {
  const SigpipeBlock no_sigpipe;  // the connection threads start here and inherit it
  impl_->server.listen_after_bind();
}

void NetListener::Stop() {
  impl_->stopping = true;
  impl_->server.stop();
}

int NetListener::Port() const { return impl_->port; }

}  // namespace gpuplan
