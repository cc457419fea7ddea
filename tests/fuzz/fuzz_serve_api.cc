// Fuzz the serve API's handlers, in process (HttpServer::Answer: the same gate, routes and error
// mapping as a connection, no socket): one of the API's routes, chosen by the first byte, with
// the path segment, query string and body taken from the input. A 500 answer (an exception that
// is not the project's own, turned into "internal error") is a finding, as is a crash.
//
// Input: byte 0 = route (low 5 bits) and whether a POST carries Content-Type: application/json
// (bit 7 clear) or not; then "SEGMENT\nQUERY\nBODY", where SEGMENT completes the paths below
// that end in '/': the {name} of /api/check/reports/{name}, and after /api/cost/ a cost job's
// name or any other text (the cost routes are literal, one per job: anything else is a 404);
// QUERY is "key=value&key=value" (values taken as decoded, as the server's handlers receive them).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/time.h"
#include "meter/sample.h"
#include "meter/store.h"
#include "serve/api.h"
#include "http/http_server.h"

namespace {

namespace fs = std::filesystem;

// GPU 0 sampled once a minute on 2026-03-01 from 10:00 UTC: 60 minutes busy at 50 % with a
// process, then 30 idle.
void MakeMeterDb(const std::string& path) {
  const int64_t start = (gpuplan::CivilDay(2026, 3, 1).time_since_epoch().count() * 24 + 10) * gpuplan::kMillisecondsPerHour;
  std::vector<gpuplan::GpuSample> gpu;
  std::vector<gpuplan::ProcessSample> procs;
  for (int m = 0; m < 90; ++m) {
    gpuplan::GpuSample s;
    s.time = gpuplan::FromUnixMillis(start + m * gpuplan::kMillisecondsPerMinute);
    s.gpu = 0;
    s.uuid = "GPU-0";
    s.utilization_gpu = m < 60 ? 50 : 0;
    s.power = 300;
    gpu.push_back(s);
    if (m < 60) {
      gpuplan::ProcessSample p;
      p.time = s.time;
      p.gpu = 0;
      p.pid = 4242;
      p.user = "alice";
      p.command = "python train.py";
      p.gpu_memory = 1ull << 30;
      procs.push_back(p);
    }
  }
  gpuplan::StoreOptions o;
  o.sample_interval_seconds = 60;
  o.max_sample_gap_seconds = 90;
  gpuplan::MeterStore store = gpuplan::MeterStore::Open(path, o);
  store.Append(gpu);
  store.Append(procs);
  const gpuplan::UtcMillis at = gpuplan::FromUnixMillis(start + 3 * gpuplan::kMillisecondsPerHour);
  while (store.Buffered() > 0) {
    store.Flush(at);
  }
  store.RollUp(at);
}

struct Fixture {
  fs::path dir;
  std::unique_ptr<gpuplan::HttpServer> server;

  Fixture() {
    dir = fs::temp_directory_path() / ("gpuplan-fuzz-serve-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "reports");
    MakeMeterDb((dir / "meter.db").string());
    fs::copy_file(GPUPLAN_SOURCE_DIR "/tests/fixtures/check/h100x2-burn-in.json", dir / "reports" / "h100x2-burn-in.json");
    std::ofstream(dir / "reports" / "not-a-report.json") << "{\"hello\": 1}";
    // The rules part of docs/meter-alerts.md's example.
    std::ofstream(dir / "alerts.yaml") << "rules:\n  idle_minutes: 30\n  low_util_percent: 5\n  repeat_minutes: 60\n"
                                          "  monthly_budget: 20000\n  currency: CNY\n  budget_fractions: [0.8, 1.0]\n";
    gpuplan::ServeRequest r;
    r.meter_db = (dir / "meter.db").string();
    r.meter_offers = GPUPLAN_DATA_DIR "/offers/nanjing-a100.yaml";
    r.meter_alerts = (dir / "alerts.yaml").string();
    r.reports = (dir / "reports").string();
    server = gpuplan::NewServeServer(r, GPUPLAN_DATA_DIR);
  }
  ~Fixture() {
    server.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

struct Route {
  const char* method;
  const char* path;  // ends with '/' where the segment of the input completes it
};

constexpr Route kRoutes[] = {
    {"GET", "/health"},           {"GET", "/api/gpus"},           {"GET", "/api/models"},
    {"GET", "/api/frameworks"},   {"GET", "/api/options"},        {"POST", "/api/fit"},
    {"POST", "/api/cost/"},       {"POST", "/api/cost/breakeven"}, {"POST", "/api/cost/compare"},
    {"POST", "/api/cost/optimize"}, {"POST", "/api/cost/tco"},    {"GET", "/api/meter/report"},
    {"GET", "/api/meter/export"}, {"GET", "/api/meter/timeline"}, {"GET", "/api/meter/alerts"},
    {"GET", "/api/check/reports"}, {"GET", "/api/check/reports/"}, {"POST", "/api/check/compare"},
    {"GET", "/api/openapi.json"}, {"GET", "/"},                   {"POST", "/"},
};
constexpr size_t kRouteCount = sizeof(kRoutes) / sizeof(kRoutes[0]);

// Splits `text` at the first '\n': the part before it (all of it when there is none).
std::string Take(std::string& text) {
  const auto nl = text.find('\n');
  std::string head = text.substr(0, nl);
  text = nl == std::string::npos ? std::string() : text.substr(nl + 1);
  return head;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixture = new Fixture();  // kept to the end: the handlers hold the state
  if (size == 0) {
    return 0;
  }
  const Route& route = kRoutes[(data[0] & 0x1f) % kRouteCount];
  const bool json_type = (data[0] & 0x80) == 0;
  std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const std::string segment = Take(rest);
  const std::string query = Take(rest);
  gpuplan::HttpRequest req;
  req.method = route.method;
  req.path = route.path;
  if (req.path.back() == '/') {
    req.path += segment;
  }
  req.body = rest;
  for (size_t at = 0; at < query.size();) {
    const size_t amp = std::min(query.find('&', at), query.size());
    const std::string pair = query.substr(at, amp - at);
    const size_t eq = pair.find('=');
    req.query[pair.substr(0, eq)] = eq == std::string::npos ? std::string() : pair.substr(eq + 1);
    at = amp + 1;
  }
  std::map<std::string, std::string> headers = {{"Host", "127.0.0.1:8080"}};
  if (json_type) {
    headers["Content-Type"] = "application/json";
  }
  const gpuplan::HttpResponse res = fixture->server->Answer(req, headers);
  if (res.status >= 500 && res.status != 503) {
    __builtin_trap();  // an internal error: the server's log (standard error) says which
  }
  return 0;
}
