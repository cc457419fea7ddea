// Load on a running `gpuplan serve` (issue 12, requirement 6): N connections, each a thread with
// a keep-alive cpp-httplib client, POST /api/fit back to back for S seconds. Prints the requests,
// errors (no answer, or a status other than 200), requests per second and the median and p99
// latency. Figures in README.md ("Performance").
//
//   build/gpuplan serve --port 8181 &
//   build/gpuplan_serve_load --port 8181 --connections 200 --seconds 30
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  std::string host = "127.0.0.1";
  int port = 8080;
  int connections = 200;
  double seconds = 30;
  double ramp_seconds = 0;
  std::string body = R"({"model": "Qwen2.5-7B", "task": "lora", "seq": 2048, "gpu": "A100 80GB SXM"})";
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const std::string v = argv[i + 1];
    if (k == "--host") {
      o.host = v;
    } else if (k == "--port") {
      o.port = std::atoi(v.c_str());
    } else if (k == "--connections") {
      o.connections = std::atoi(v.c_str());
    } else if (k == "--seconds") {
      o.seconds = std::atof(v.c_str());
    } else if (k == "--ramp") {
      o.ramp_seconds = std::atof(v.c_str());
    } else if (k == "--body") {
      o.body = v;
    } else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      std::exit(2);
    }
  }
  return o;
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) {
    return 0;
  }
  const auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = Parse(argc, argv);
  using Clock = std::chrono::steady_clock;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::atomic<long> errors{0};
  std::atomic<int> answered{0};
  std::mutex m;
  std::vector<double> latencies_ms;
  std::vector<std::thread> threads;
  std::string first_error;
  const auto start = Clock::now();
  for (int c = 0; c < o.connections; ++c) {
    threads.emplace_back([&, c]() {
      // Connections open over the first --ramp seconds: httplib's listen backlog is 5.
      std::this_thread::sleep_for(std::chrono::duration<double>(o.ramp_seconds * c / o.connections));
      httplib::Client client(o.host, o.port);
      client.set_keep_alive(true);
      client.set_tcp_nodelay(true);
      client.set_connection_timeout(30, 0);
      client.set_read_timeout(120, 0);
      client.set_write_timeout(30, 0);
      std::vector<double> mine;
      bool counted = false;
      while (Clock::now() < end) {
        const auto t0 = Clock::now();
        const auto r = client.Post("/api/fit", o.body, "application/json");
        const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
        if (!r || r->status != 200) {
          ++errors;
          const std::lock_guard<std::mutex> lock(m);
          if (first_error.empty()) {
            first_error = r ? "status " + std::to_string(r->status) : httplib::to_string(r.error());
          }
          continue;
        }
        mine.push_back(ms);
        if (!counted) {
          counted = true;
          ++answered;
        }
      }
      const std::lock_guard<std::mutex> lock(m);
      latencies_ms.insert(latencies_ms.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) {
    t.join();
  }
  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
  const std::size_t ok = latencies_ms.size();
  std::printf("connections %d, %.0f s: %zu answers (200), %ld errors%s%s\n", o.connections, wall, ok, errors.load(),
              first_error.empty() ? "" : ", first: ", first_error.c_str());
  std::printf("requests per second %.0f\n", static_cast<double>(ok) / wall);
  const double worst = latencies_ms.empty() ? 0 : *std::max_element(latencies_ms.begin(), latencies_ms.end());
  std::printf("latency median %.1f ms, p99 %.1f ms, max %.1f ms\n", Percentile(latencies_ms, 0.5),
              Percentile(latencies_ms, 0.99), worst);
  // Every connection must have been answered, not only the first ones to get a thread.
  std::printf("connections answered at least once: %d of %d\n", answered.load(), o.connections);
  return errors.load() == 0 && answered.load() == o.connections ? 0 : 1;
}
