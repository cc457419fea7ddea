// Issue 9 targets (docs/check.md §10): rendering the merge of 1,000 nodes' reports (8 GPUs x 20
// results each, 160,000 results) as JSON, Markdown and HTML in under 1 second each; and the whole
// check without GPU tests adding under 20 s beyond the storage read time (reported as the
// counter overhead_s). Run: build/gpuplan_check_bench
#include <benchmark/benchmark.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "check/check_request.h"
#include "check/compare.h"
#include "check/render/check_html.h"
#include "check/render/check_json.h"
#include "check/render/check_markdown.h"

namespace {

using namespace gpuplan;

std::vector<NamedReport> ThousandNodes() {
  std::vector<NamedReport> reports;
  for (int n = 0; n < 1000; ++n) {
    NamedReport r;
    r.file = "node-" + std::to_string(n) + ".json";
    SystemSnapshot s;
    s.hostname = "node-" + std::to_string(n);
    s.driver_version = "550.54.15";
    for (int g = 0; g < 8; ++g) {
      GpuSnapshot gpu;
      gpu.index = g;
      gpu.name = "NVIDIA H100 80GB HBM3";
      gpu.pci_device_id = 0x233010DE;
      gpu.memory_total = 85520809984ull;
      s.gpus.push_back(gpu);
      for (int t = 0; t < 20; ++t) {
        CheckResult c;
        c.name = "test_" + std::to_string(t);
        c.gpu = g;
        c.status = CheckStatus::kPass;
        // One slow GPU in the cluster, the rest within 0.5%.
        c.measured = (n == 17 && g == 3 ? 800.0 : 1000.0) + (n * 8 + g + t) % 5;
        c.unit = "GB/s";
        c.evidence = "measured on the card";
        r.report.Add(std::move(c));
      }
    }
    r.report.nodes.push_back(std::move(s));
    r.report.finished = "2026-12-01T10:05:00Z";  // complete (an unfinished node adds a node_report FAIL)
    reports.push_back(std::move(r));
  }
  return reports;
}

const std::vector<NamedReport>& Reports() {
  static const std::vector<NamedReport> r = ThousandNodes();
  return r;
}

void BM_Merge1000Nodes(benchmark::State& state) {
  for (auto _ : state) {
    benchmark::DoNotOptimize(MergeReports(Reports(), MergeReportsRequest{}));
  }
}
BENCHMARK(BM_Merge1000Nodes)->Unit(benchmark::kMillisecond)->Iterations(3);

template <typename Render>
void RenderBench(benchmark::State& state, Render render) {
  const MergeResult m = MergeReports(Reports(), MergeReportsRequest{});
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream out;
    render(m, out);
    bytes = out.str().size();
    benchmark::DoNotOptimize(bytes);
  }
  state.counters["output_MB"] = static_cast<double>(bytes) / 1e6;
}
void BM_RenderMerge1000NodesJson(benchmark::State& state) {
  RenderBench(state, WriteMergeJson);  // as check_files.cc writes it
}
// The tree-then-dump way, kept for comparison (docs/check.md §10).
void BM_RenderMerge1000NodesJsonTree(benchmark::State& state) {
  RenderBench(state, [](const MergeResult& m, std::ostream& o) { o << MergeToJson(m).dump(2) << "\n"; });
}
BENCHMARK(BM_RenderMerge1000NodesJsonTree)->Unit(benchmark::kMillisecond)->Iterations(3);
void BM_RenderMerge1000NodesMarkdown(benchmark::State& state) { RenderBench(state, MergeToMarkdown); }
void BM_RenderMerge1000NodesHtml(benchmark::State& state) { RenderBench(state, MergeToHtml); }
BENCHMARK(BM_RenderMerge1000NodesJson)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_RenderMerge1000NodesMarkdown)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_RenderMerge1000NodesHtml)->Unit(benchmark::kMillisecond)->Iterations(3);

// The default-mode check on this machine (no GPU: host and storage tests), minus the time the
// storage test spends reading by design.
void BM_CheckOverheadWithoutGpus(benchmark::State& state) {
  const GpuCatalog cat = GpuCatalog::Load(std::string(GPUPLAN_DATA_DIR) + "/gpus.yaml");
  const std::filesystem::path dir = std::filesystem::current_path() / ("check-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  CheckRequest q;
  q.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  q.data = dir.string();
  double overhead = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    const CheckReport r = RunCheck(q, cat);
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double reading = 0;
    for (const auto& t : r.tests) {
      if (t.name == "storage_seq_read" || t.name == "storage_random_read") {
        reading += t.seconds;
      }
    }
    overhead = total - reading;
  }
  std::filesystem::remove_all(dir);
  state.counters["overhead_s"] = overhead;
}
BENCHMARK(BM_CheckOverheadWithoutGpus)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
