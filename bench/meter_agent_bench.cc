// The meter agent's own cost (issue 11: under 1% of one core for 8 GPUs at 1 Hz, in replay).
//
// BM_AgentReplay8Gpus: RunMeter (src/meter/agent.h) replays a trace of 8 GPUs with one process
//   each, sampled at 1 Hz for 15 minutes, values changing every second (so no repeat lines: the
//   reader parses every step), into a fresh SQLite store with the default 5 s flush, on a
//   ManualMeterClock (no sleeping: only the work is timed). The process's CPU time (sampling and
//   writer threads) over the 900 s of samples is the agent's CPU per second of sampling. Counters: cpu_ms_per_sample_second
//   and core_percent (that per second, as a share of one core).
// BM_ProcessIdentityTick8: the live path's per-tick /proc cost for 8 processes already cached
//   (one read of /proc/PID/stat each, to notice a reused pid).
//
// Run: build/gpuplan_meter_agent_bench
#include <benchmark/benchmark.h>

#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "meter/agent.h"
#include "meter/processes.h"
#include "meter/trace.h"

namespace {

using namespace gpuplan;
namespace fs = std::filesystem;

constexpr int kGpus = 8;
constexpr int kSeconds = 900;
constexpr int64_t kT0 = 1772409600000;  // 2026-03-02T00:00:00Z

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::string WriteBenchTrace(const std::string& path) {
  Trace t;
  t.header.host = "bench";
  t.header.interval_seconds = 1;
  for (int g = 0; g < kGpus; ++g) {
    t.header.gpus.push_back(TraceGpu{g, "NVIDIA H100 80GB HBM3", "GPU-bench-" + std::to_string(g), 85899345920ull});
  }
  std::ofstream out(path);
  TraceWriter w(out, t.header);
  uint64_t energy = 1000000;
  for (int k = 0; k < kSeconds; ++k) {
    TraceStep s;
    s.time = FromUnixMillis(kT0 + k * 1000LL);
    for (int g = 0; g < kGpus; ++g) {
      GpuSample x;
      x.time = s.time;
      x.gpu = g;
      x.utilization_gpu = (k * 7 + g * 13) % 101;
      x.utilization_memory = (k * 3 + g) % 60;
      x.memory_used = (40ull << 30) + static_cast<uint64_t>(k % 100) * (1ull << 20);
      x.power = 300.0 + (k * 11 + g) % 400;
      energy += 350000;
      x.energy_mj = energy;
      x.temperature = 50 + (k + g) % 30;
      x.sm_clock = 1700 + (k % 20) * 10;
      x.clock_event_reasons = 0;
      s.gpus.push_back(x);
      ProcessSample p;
      p.time = s.time;
      p.gpu = g;
      p.pid = 10000 + g;
      p.user = "alice";
      p.command = "python train.py --config llama-70b.yaml --rank " + std::to_string(g);
      p.slurm_job_id = "4711";
      p.gpu_memory = (39ull << 30) + static_cast<uint64_t>(k % 100) * (1ull << 20);
      s.processes.push_back(p);
    }
    w.Write(s);
  }
  w.Finish();
  return path;
}

void BM_AgentReplay8Gpus(benchmark::State& state) {
  const fs::path dir = fs::temp_directory_path() / ("gpuplan-agent-bench-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string trace = WriteBenchTrace((dir / "t.jsonl").string());
  double cpu = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove(dir / "m.db");
    fs::remove(dir / "m.db-wal");
    fs::remove(dir / "m.db-shm");
    state.ResumeTiming();
    const double c0 = ProcessCpuSeconds();
    MeterAgentRequest r;
    r.db = (dir / "m.db").string();
    r.replay = trace;
    ManualMeterClock clock(1e9);
    benchmark::DoNotOptimize(RunMeter(r, clock));
    cpu += ProcessCpuSeconds() - c0;
    ++runs;
  }
  const double per_second = cpu / static_cast<double>(runs) / kSeconds;
  state.counters["cpu_ms_per_sample_second"] = per_second * 1e3;
  state.counters["core_percent"] = per_second * 100;
  fs::remove_all(dir);
}
BENCHMARK(BM_AgentReplay8Gpus)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_ProcessIdentityTick8(benchmark::State& state) {
  ProcessIdentityCache cache;
  const int pid = static_cast<int>(getpid());
  for (auto _ : state) {
    for (int i = 0; i < kGpus; ++i) {
      benchmark::DoNotOptimize(cache.Lookup(pid));
    }
    cache.Sweep();
  }
}
BENCHMARK(BM_ProcessIdentityTick8)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
