// Benchmarks for gpuplan fit (issue target: one full estimate under 20 microseconds).
// Run: build/gpuplan_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <map>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/advisor.h"
#include "fit/memory_model.h"
#include "fit/search.h"

namespace {

using namespace gpuplan;

const ModelSpec& Model(const char* name) {
  static std::map<std::string, ModelSpec> cache;
  auto it = cache.find(name);
  if (it == cache.end()) {
    it = cache.emplace(name, LoadHfConfig(std::string(GPUPLAN_DATA_DIR) + "/models/" + name + ".json")).first;
  }
  return it->second;
}

// One full training estimate: 70B, mixed AdamW, tp=8 pp=4 dp=4 ZeRO-1, 1F1B.
std::pair<Workload, Layout> Training70B() {
  Workload w;
  w.task = Task::kFull;
  w.seq = 4096;
  w.global_batch = 256;
  Layout l;
  l.gpus = 128;
  l.tp = 8;
  l.pp = 4;
  l.zero = 1;
  return {w, l};
}

void BM_EstimateTraining70B(benchmark::State& state) {
  const ModelSpec& m = Model("Llama-3.1-70B");
  const auto [w, l] = Training70B();
  for (auto _ : state) {
    benchmark::DoNotOptimize(EstimateMemory(m, w, l, {}, int64_t{80} << 30));
  }
}
BENCHMARK(BM_EstimateTraining70B);

// The same with the model summary built once, as the layout search does.
void BM_EstimateTraining70BSummarized(benchmark::State& state) {
  const ModelSpec& m = Model("Llama-3.1-70B");
  const ModelSummary sum = Summarize(m, {});
  const auto [w, l] = Training70B();
  for (auto _ : state) {
    benchmark::DoNotOptimize(EstimateMemory(sum, w, l, {}, int64_t{80} << 30));
  }
}
BENCHMARK(BM_EstimateTraining70BSummarized);

// MoE with the most tensor groups among the presets.
void BM_EstimateTrainingDeepSeekV3(benchmark::State& state) {
  const ModelSpec& m = Model("DeepSeek-V3");
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  Layout l;
  l.gpus = 2048;
  l.tp = 1;
  l.pp = 16;
  l.ep = 64;
  l.zero = 1;
  for (auto _ : state) {
    benchmark::DoNotOptimize(EstimateMemory(m, w, l, {}, int64_t{80} << 30));
  }
}
BENCHMARK(BM_EstimateTrainingDeepSeekV3);

void BM_EstimateInference8B(benchmark::State& state) {
  const ModelSpec& m = Model("Llama-3.1-8B");
  Workload w;
  w.task = Task::kInfer;
  w.context = 8192;
  w.concurrency = 32;
  for (auto _ : state) {
    benchmark::DoNotOptimize(EstimateMemory(m, w, Layout{}, {}, int64_t{48} << 30));
  }
}
BENCHMARK(BM_EstimateInference8B);

void BM_ParseConfig(benchmark::State& state) {
  const std::string path = std::string(GPUPLAN_DATA_DIR) + "/models/DeepSeek-V3.json";
  for (auto _ : state) {
    benchmark::DoNotOptimize(LoadHfConfig(path));
  }
}
BENCHMARK(BM_ParseConfig);

// The advisor: every candidate change (and pairs when none fits) re-runs the estimate.
void BM_SuggestFixes70B(benchmark::State& state) {
  const ModelSpec& m = Model("Llama-3.1-70B");
  static const GpuCatalog cat = GpuCatalog::Load(std::string(GPUPLAN_DATA_DIR) + "/gpus.yaml");
  const Gpu& gpu = cat.Find("A100");
  Workload w;
  w.task = Task::kFull;
  w.seq = 4096;
  for (auto _ : state) {
    benchmark::DoNotOptimize(SuggestFixes(m, w, Layout{}, gpu, cat, {}));
  }
}
BENCHMARK(BM_SuggestFixes70B)->Unit(benchmark::kMillisecond);

// Issue 3 target: an exhaustive search for a 70B model over the whole catalog up to 1024 GPUs
// in under 1 second on one core. Reports layouts evaluated per second.
void BM_Search70BWholeCatalog1024(benchmark::State& state) {
  const ModelSpec& m = Model("Llama-3.1-70B");
  static const GpuCatalog cat = GpuCatalog::Load(std::string(GPUPLAN_DATA_DIR) + "/gpus.yaml");
  SearchOptions o;
  for (const auto& g : cat.gpus()) {
    o.gpus.push_back(&g);
  }
  o.max_gpus = 1024;
  o.tokens = 1e12;
  Workload w;
  w.task = Task::kPretrain;
  w.seq = 4096;
  int64_t evaluated = 0;
  for (auto _ : state) {
    const SearchResult r = SearchTraining(m, w, o);
    evaluated += r.evaluated;
    benchmark::DoNotOptimize(r.ranked.data());
  }
  state.counters["layouts"] = benchmark::Counter(static_cast<double>(evaluated) / static_cast<double>(state.iterations()));
  state.counters["layouts_per_second"] = benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Search70BWholeCatalog1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
