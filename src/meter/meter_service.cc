#include "meter/meter_service.h"

#include <algorithm>
#include <filesystem>

#include <cctype>
#include <memory>
#include <optional>
#include <thread>

#include "core/error.h"
#include "meter/render/meter_prometheus.h"
#include "catalog/offer.h"
#include "meter/monitor.h"
#include "meter/report.h"
#include "meter/rightsize.h"
#include "read/file_text.h"
#include "http/http_server.h"

namespace gpuplan {

namespace {

// "ADDR:PORT" ("127.0.0.1:9401", "0.0.0.0:9401", "[::1]:9401").
std::pair<std::string, int> SplitListen(const std::string& listen) {
  const std::size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == listen.size()) {
    throw InputError("expected ADDR:PORT such as 127.0.0.1:9401, got '" + listen + "'", "", 0, "--listen");
  }
  std::string addr = listen.substr(0, colon);
  if (addr.size() > 2 && addr.front() == '[' && addr.back() == ']') {
    addr = addr.substr(1, addr.size() - 2);
  }
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
  }
  if (port < 0 || port > 65535) {
    throw InputError("the port must be a number from 0 to 65535, got '" + listen.substr(colon + 1) + "'", "", 0,
                     "--listen");
  }
  return {addr, port};
}

// The token file holds one line: the token, in RFC 6750's b64token characters (letters, digits,
// - . _ ~ + /, then = padding), as a client sends it after "Bearer ". Trailing spaces and line
// ends are dropped; anything else (a second line, a space inside) could never match a header
// and is refused, naming the line.
// A token file holds one bearer token: at most kMaxTokenFileBytes (a file that size is not a
// token; reading a large one whole would only waste memory), the token at most kMaxTokenChars.
constexpr std::uintmax_t kMaxTokenFileBytes = 4096;
constexpr std::size_t kMaxTokenChars = 1024;

std::string ReadToken(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxTokenFileBytes) {
    throw InputError("the token file is " + std::to_string(size) + " bytes; a token file holds one token of at most " +
                         std::to_string(kMaxTokenChars) + " characters",
                     path, 1, "--token-file");
  }
  std::string t = ReadFileText(path);
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ' || t.back() == '\t')) t.pop_back();
  if (t.empty()) {
    throw InputError("the token file is empty", path, 1, "--token-file");
  }
  if (t.size() > kMaxTokenChars && t.find('\n') == std::string::npos) {
    throw InputError("the token is " + std::to_string(t.size()) + " characters, more than " +
                         std::to_string(kMaxTokenChars),
                     path, 1, "--token-file");
  }
  int line = 1;
  bool padding = false;
  for (char c : t) {
    if (c == '\n') {
      throw InputError("the token file must hold one line, the token; line " + std::to_string(line + 1) +
                           " is more (a header carries one token)",
                       path, line + 1, "--token-file");
    }
    const bool b64 = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' ||
                     c == '~' || c == '+' || c == '/';
    if (c == '=') {
      padding = true;
    } else if (!b64 || padding) {
      throw InputError("the token has a character a Bearer header cannot carry (RFC 6750: letters, digits, "
                       "- . _ ~ + / and = at the end)",
                       path, line, "--token-file");
    }
  }
  return t;
}

}  // namespace

MeterRunSummary RunMeterService(const MeterAgentRequest& request, MeterClock& clock, MeterObserver* front,
                                const GpuCatalog* catalog, const MeterServiceHooks& hooks) {
  MeterMonitorOptions options;
  if (!request.alerts.empty()) {
    options = LoadMeterMonitorOptions(request.alerts);
  }
  // Sampling slower than a tick a minute: a stretch ends only after 2.5 of its intervals unseen.
  if (request.interval_seconds) {
    options.rules.max_gap_minutes = std::max(options.rules.max_gap_minutes, 2.5 * *request.interval_seconds / 60);
  }
  // With the offer the machine is rented under: the GPU-hour price of the alerts and metrics
  // (unless the alerts file sets one), and the month's projection read back from the store.
  std::optional<OfferSet> offers;
  const Offer* offer = nullptr;
  if (!request.offers.empty() && catalog != nullptr) {
    offers = LoadOffers(request.offers, *catalog);
    offer = &ChooseMeterOffer(*offers, request.offer);
    options.rules = PricedAlertRules(options.rules, *offer, *offers, TimeFromSeconds(clock.WallSeconds()));
  }
  MeterMonitor monitor(options, front, hooks.log);
  if (offer != nullptr) {
    monitor.SetBudgetProbe(
        [&request, &offers, offer](UtcMillis time) -> std::optional<MonthProjection> {
          try {
            StoreOptions so;
            so.read_only = true;
            const MeterStore store = MeterStore::Open(request.db, so);
            return ProjectMonth(store, *offer, *offers, time);
          } catch (const std::exception&) {
            return std::nullopt;  // not created yet, or locked: the next probe tries again
          }
        },
        offers->currency);
  }
  std::unique_ptr<HttpServer> server;
  std::thread serving;
  if (!request.listen.empty()) {
    const auto [addr, port] = SplitListen(request.listen);
    HttpServerOptions o;
    o.bind = addr;
    o.port = port;
    // Connections that open and say nothing each hold a thread until the read timeout: 64
    // threads and 2 s keep 20 such connections from delaying a scrape past Prometheus' 10 s
    // scrape timeout (docs/meter-metrics.md). A scrape is one short request.
    o.threads = 64;
    o.read_timeout_seconds = 2;
    o.write_timeout_seconds = 10;
    o.token_flag = "--token-file";
    o.token_how = "give --token-file FILE";
    if (!request.token_file.empty()) {
      o.token = ReadToken(request.token_file);
    }
    server = std::make_unique<HttpServer>(o);
    server->Get("/metrics", [&monitor](const HttpRequest&) {
      HttpResponse r;
      r.content_type = kPrometheusTextContentType;
      r.body = RenderPrometheusText(monitor.metrics().Snapshot());
      return r;
    });
    server->Get("/", [](const HttpRequest&) {
      HttpResponse r;
      r.content_type = "text/html; charset=utf-8";
      r.body = "<!doctype html><title>gpuplan meter</title><h1>gpuplan meter agent</h1>"
               "<p><a href=\"/metrics\">/metrics</a> (docs/meter-metrics.md)</p>\n";
      return r;
    });
    const int bound = server->Start();
    serving = std::thread([&server] { server->Run(); });
    if (hooks.on_listen) hooks.on_listen(bound);
  }
  auto stop_server = [&] {
    if (server) {
      server->Stop();
      serving.join();
      server.reset();
    }
  };
  MeterRunSummary summary;
  try {
    summary = RunMeter(request, clock, &monitor, catalog);
  } catch (...) {
    stop_server();
    throw;
  }
  stop_server();
  // A chat server that is down does not hold the exit longer; after a stop request, the 5 s a
  // stop allows are mostly spent (docs/meter.md §8).
  monitor.FlushWebhooks(MeterStopRequested() ? 0.5 : 5);
  return summary;
}

}  // namespace gpuplan
