// Issue 24 requirement 3: readers in time linear in their input. Parses nvidia-smi captures of
// 1,000 and 10,000 GPUs, made by repeating the GPU section of a real capture
// (tests/fixtures/nvidia-smi/a100-sxm4-mig.xml, 18 kB per GPU; h100-590-q.txt, 14 kB per GPU),
// and an XML capture with a 50 MB comment before its GPU. Target: 10,000 GPUs in under 10 s
// each; 10x the GPUs should take about 10x the time. Figures: docs/nvidia-smi-capture.md.
// And the shared JSON reader (ParseJsonText: the depth and unique-name pass, then nlohmann's
// parse) against nlohmann's parse alone, on 200,000 objects of 8 names (docs/architecture.md
// "Input limits"; figures in docs/performance.md).
// Run: build/gpuplan_reader_bench
#include <benchmark/benchmark.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "read/json_fields.h"
#include "telemetry/nvidia_smi.h"

namespace {

using namespace gpuplan;

// `section` with every `bus_id` and `uuid` made the i-th GPU's own: a capture that lists one bus
// id or UUID twice is refused (one GPU pasted twice is not two GPUs).
std::string Numbered(std::string section, int i, const std::string& bus_id, const std::string& uuid) {
  char bus[32];
  std::snprintf(bus, sizeof bus, "%08X%s", static_cast<unsigned>(i), bus_id.substr(8).c_str());
  char id[64];
  std::snprintf(id, sizeof id, "%s%012X", uuid.substr(0, uuid.size() - 12).c_str(), static_cast<unsigned>(i));
  for (const auto& [from, to] : {std::pair{bus_id, std::string(bus)}, std::pair{uuid, std::string(id)}}) {
    for (size_t at = section.find(from); at != std::string::npos; at = section.find(from, at + to.size())) {
      section.replace(at, from.size(), to);
    }
  }
  return section;
}

std::string Fixture(const std::string& name) {
  const std::string path = std::string(GPUPLAN_SOURCE_DIR) + "/tests/fixtures/nvidia-smi/" + name;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The fixture with its one <gpu> element repeated `gpus` times and attached_gpus set to match.
std::string XmlCapture(int gpus, const std::string& before_gpu = "") {
  const std::string one = Fixture("a100-sxm4-mig.xml");
  const size_t from = one.find("    <gpu id=");
  const size_t to = one.find("</gpu>") + 7;
  std::string head = one.substr(0, from);
  const std::string attached = "<attached_gpus>1</attached_gpus>";
  head.replace(head.find(attached), attached.size(), "<attached_gpus>" + std::to_string(gpus) + "</attached_gpus>");
  const std::string gpu = one.substr(from, to - from);
  std::string out = head + before_gpu;
  out.reserve(out.size() + gpu.size() * static_cast<size_t>(gpus) + 64);
  for (int i = 0; i < gpus; ++i) out += Numbered(gpu, i, "00000000:00:04.0", "GPU-27b94a00-ed54-5c24-b1fd-1054085de32a");
  return out + one.substr(to);
}

// The -q text with its one GPU section (from "GPU 0000..." to the end) repeated.
std::string TextCapture(int gpus) {
  const std::string one = Fixture("h100-590-q.txt");
  const size_t from = one.find("\nGPU 0000") + 1;
  std::string head = one.substr(0, from);
  const std::string attached = "Attached GPUs                                          : 1";
  head.replace(head.find(attached), attached.size(),
               "Attached GPUs                                          : " + std::to_string(gpus));
  const std::string gpu = one.substr(from);
  std::string out = head;
  out.reserve(out.size() + gpu.size() * static_cast<size_t>(gpus));
  for (int i = 0; i < gpus; ++i) out += Numbered(gpu, i, "00000000:00:09.0", "GPU-00000000-0000-0000-0000-000000000000");
  return out;
}

void BM_NvidiaSmiXml(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const std::string text = XmlCapture(gpus);
  for (auto _ : state) {
    const SystemSnapshot s = ParseNvidiaSmiXml(text, "bench.xml");
    if (s.gpus.size() != static_cast<size_t>(gpus)) state.SkipWithError("wrong GPU count");
    benchmark::DoNotOptimize(s);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}

void BM_NvidiaSmiText(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const std::string text = TextCapture(gpus);
  for (auto _ : state) {
    const SystemSnapshot s = ParseNvidiaSmiQueryText(text, "bench.txt");
    if (s.gpus.size() != static_cast<size_t>(gpus)) state.SkipWithError("wrong GPU count");
    benchmark::DoNotOptimize(s);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
}

void BM_NvidiaSmiXmlLongComment(benchmark::State& state) {
  // A 50 MB comment (80-character lines) before the one GPU.
  std::string comment = "<!--\n";
  const std::string line(79, 'c');
  while (comment.size() < 50000000) comment += line + "\n";
  comment += "-->\n";
  const std::string text = XmlCapture(1, comment);
  for (auto _ : state) {
    const SystemSnapshot s = ParseNvidiaSmiXml(text, "comment.xml");
    benchmark::DoNotOptimize(s);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}

// [{"gpu": 0, "t": 1, "util": 0.5, ...}, ...]: 200,000 objects of 8 names, about 20 MB.
std::string ManyObjects() {
  std::string text = "[";
  for (int i = 0; i < 200000; ++i) {
    text += (i ? ",\n" : "\n") + std::string(R"({"gpu": )") + std::to_string(i % 8) + R"(, "t": )" +
            std::to_string(i) +
            R"(, "util": 0.5, "mem_used": 1234567890, "power_w": 350.5, "temp_c": 61, "sm_clock": 1980, "name": "NVIDIA H100 80GB HBM3"})";
  }
  return text + "\n]\n";
}

// Arg 0: nlohmann::json::parse alone; 1: ParseJsonText (the precheck pass, then the same parse).
void BM_JsonManyObjects(benchmark::State& state) {
  const std::string text = ManyObjects();
  for (auto _ : state) {
    const nlohmann::json j = state.range(0) ? ParseJsonText(text, "many.json") : nlohmann::json::parse(text);
    benchmark::DoNotOptimize(j);
  }
  state.counters["MB"] = static_cast<double>(text.size()) / 1e6;
}

// One object of n names, then n small objects at the same depth (each reuses the big one's
// bookkeeping in the reader's name check): time linear in n, 4x the names about 4x the time.
void BM_JsonBigObjectThenSmallOnes(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  std::string text = "[{";
  for (int i = 0; i < n; ++i) {
    text += (i ? ", \"k" : "\"k") + std::to_string(i) + "\": 0";
  }
  text += "}";
  for (int i = 0; i < n; ++i) {
    text += ", {\"a\": 1}";
  }
  text += "]";
  for (auto _ : state) {
    const nlohmann::json j = ParseJsonText(text, "big.json");
    benchmark::DoNotOptimize(j);
  }
}

BENCHMARK(BM_NvidiaSmiXml)->Arg(1000)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_NvidiaSmiText)->Arg(1000)->Arg(10000)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_NvidiaSmiXmlLongComment)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_JsonManyObjects)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_JsonBigObjectThenSmallOnes)->Arg(50000)->Arg(200000)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
