// Benchmarks for gpuplan fit (issue target: one full estimate under 20 microseconds).
// Run: build/gpuplan_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>

#include <map>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/advisor.h"
#include "fit/gemm_table.h"
#include "fit/memory_model.h"
#include "fit/op_model.h"
#include "fit/search.h"
#include "fit/time_model.h"

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

// The GEMM tables by shape fit loads (data/gemm/, docs/time-model.md §3.1).
std::shared_ptr<const GemmTables> Tables() {
  static const auto t = std::make_shared<const GemmTables>(LoadGemmTables(GPUPLAN_DATA_DIR));
  return t;
}
const GpuCatalog& Catalog() {
  static const GpuCatalog cat = GpuCatalog::Load(std::string(GPUPLAN_DATA_DIR) + "/gpus.yaml");
  return cat;
}

// One step-time estimate of the same job on 128 x H100 SXM, every kernel costed (issue 28
// target: under 1.5 microseconds); arg 1: GEMM rates from the H100 table by shape, 0: the flat
// large-shape fraction.
void BM_EstimateStepTime70BH100(benchmark::State& state) {
  const ModelSpec& m = Model("Llama-3.1-70B");
  auto [w, l] = Training70B();
  w.task = Task::kPretrain;
  const Gpu& gpu = Catalog().Find("H100 SXM 80GB");
  TimeConfig tc;
  if (state.range(0) == 1) {
    tc.gemm_tables = Tables();
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(EstimateTrainingTime(m, w, l, gpu, tc, 0));
  }
}
BENCHMARK(BM_EstimateStepTime70BH100)->Arg(0)->Arg(1);

// One GEMM time on the H100 table (a shape between grid points), the memo hit as a search hits it.
void BM_GemmSecondsH100Table(benchmark::State& state) {
  const Gpu& gpu = Catalog().Find("H100 SXM 80GB");
  const KernelRates r = RatesFor(gpu, Precision::kMixed, false, AttentionKernel::kFa2, Tables().get());
  for (auto _ : state) {
    benchmark::DoNotOptimize(GemmSeconds(r, 8192, 10240, 8192));
  }
}
BENCHMARK(BM_GemmSecondsH100Table);

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
  SearchOptions o;
  for (const auto& g : Catalog().gpus()) {
    o.gpus.push_back(&g);
  }
  if (state.range(0) == 1) {
    o.time.gemm_tables = Tables();  // as fit searches (arg 0: without, as before issue 28)
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
BENCHMARK(BM_Search70BWholeCatalog1024)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
