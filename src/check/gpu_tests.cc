#include "check/gpu_tests.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <unistd.h>

#include "check/benchmark_formulas.h"
#include "telemetry/pcie.h"
#include "check/sold_as.h"
#include "check/suite.h"
#include "check/cells.h"
#include "check/verdict.h"

namespace gpuplan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr uint64_t kXidEvent = 0x8;  // nvmlEventTypeXidCriticalError
const char* const kDefaultPrecisions = "fp32,tf32,bf16,fp16,int8,fp8";
const char* const kQuickPrecisions = "bf16";
// Planned seconds of each worker on one H200 (docs/check.md §11.9): the progress bar's scale and,
// plus worker_timeout_margin_seconds, the timeout. Generous: a slower card must not time out.
constexpr double kPlannedStartup = 15;      // CUDA context, cuBLASLt handle, allocations
constexpr double kPlannedBandwidth = 15;
constexpr double kPlannedGemmQuick = 30;
constexpr double kPlannedGemmDefault = 150;
constexpr double kPlannedPcie = 20;
constexpr double kPlannedP2p = 60;
constexpr double kPlannedNccl = 120;
constexpr double kPlannedBurnExtra = 20;    // after the burn-in's own seconds
constexpr const char* kNcclMaxBytes = "1073741824";  // 1 GiB, nccl-tests' usual top

std::string CardName(const GpuTarget& t) { return t.card != nullptr ? t.card->name : std::string("unknown card"); }

// PASS / WARN / FAIL of `measured` against `peak` x fractions; fills expected and the texts.
void JudgeFraction(CheckResult& r, double measured, double peak, double warn, double fail, const std::string& what) {
  r.measured = measured;
  r.expected = warn * peak;
  r.expected_text = fmt::format(">= {:.2f} x {} {} ({}; FAIL below {:.2f} x)", warn, check_cells::Number(peak), r.unit,
                                what, fail);
  const double frac = Fraction(r, measured, peak, warn, fail);
  r.evidence += fmt::format("{}{} {} = {:.3f} of {} {} {}", r.evidence.empty() ? "" : "; ", check_cells::Number(measured),
                            r.unit, frac, what, check_cells::Number(peak), r.unit);
}

std::vector<const WorkerLine*> Lines(const WorkerRun& run, WorkerLineType type, const std::string& name) {
  std::vector<const WorkerLine*> out;
  for (const auto& l : run.lines) {
    if (l.type == type && (name.empty() || l.name == name)) {
      out.push_back(&l);
    }
  }
  return out;
}

std::string Tail(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
    s.pop_back();
  }
  if (s.size() > 600) {
    s = "..." + s.substr(s.size() - 600);
  }
  std::replace(s.begin(), s.end(), '\n', '|');
  return s;
}

bool IsHbm(const Gpu* card) { return card != nullptr && card->memory_type.rfind("HBM", 0) == 0; }

std::optional<double> PeakTflops(const Gpu& g, const std::string& precision) {
  if (precision == "fp32") return g.tflops.fp32;
  if (precision == "tf32") return g.tflops.tf32;
  if (precision == "bf16") return g.tflops.bf16;
  if (precision == "fp16") return g.tflops.fp16;
  if (precision == "fp8") return g.tflops.fp8;
  if (precision == "int8") return g.tflops.int8;
  return std::nullopt;
}

// The CUDA device index of each NVML GPU in a run driving all GPUs (its "device" lines), by PCI
// bus id; without bus ids, CUDA index = position (CUDA_DEVICE_ORDER=PCI_BUS_ID, NVML's order).
std::map<int, int> CudaToNvml(const WorkerRun& run, const std::vector<GpuTarget>& gpus) {
  std::map<int, int> out;
  for (const WorkerLine* d : Lines(run, WorkerLineType::kDevice, "")) {
    const auto bus = d->Text("pci_bus_id");
    for (const auto& t : gpus) {
      if (bus && t.snapshot.pci_bus_id && NormalizePciBusId(*bus) == NormalizePciBusId(*t.snapshot.pci_bus_id)) {
        out[d->device] = t.gpu;
      }
    }
    if (!out.count(d->device) && d->device >= 0 && static_cast<std::size_t>(d->device) < gpus.size()) {
      out[d->device] = gpus[static_cast<std::size_t>(d->device)].gpu;
    }
  }
  return out;
}

const GpuTarget* TargetOf(const std::vector<GpuTarget>& gpus, int gpu) {
  for (const auto& t : gpus) {
    if (t.gpu == gpu) {
      return &t;
    }
  }
  return nullptr;
}

}  // namespace

std::string NormalizePciBusId(const std::string& id) {
  std::string s = id;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto colon = s.find(':');
  if (colon == std::string::npos || s.find(':', colon + 1) == std::string::npos) {
    return s;
  }
  unsigned long domain = 0;
  try {
    domain = std::stoul(s.substr(0, colon), nullptr, 16);
  } catch (const std::exception&) {
    return s;
  }
  return fmt::format("{:x}:{}", domain, s.substr(colon + 1));
}

std::optional<CheckResult> JudgeWorkerRun(const WorkerRun& run, const std::string& test, const std::string& worker_test,
                                          const std::vector<GpuEvent>& xids, const std::string& node) {
  CheckResult r = Make(test, run.command.gpu, node);
  Fail(r);
  r.expected_text = "the worker finishes with verified results";
  const std::string who = run.command.gpu >= 0 ? fmt::format("the {} worker of GPU {}", worker_test, run.command.gpu)
                                               : fmt::format("the {} worker (all GPUs)", worker_test);
  std::vector<std::string> why;
  if (!run.start_error.empty()) {
    Error(r, who + " could not be started: " + run.start_error, "point --worker at a gpu-worker built for this machine (it is built where nvcc is found)");
    return r;
  }
  if (run.timed_out) {
    why.push_back(fmt::format("did not finish within {:.0f} s and was killed with its process group (a hung kernel "
                              "or CUDA call)",
                              run.seconds));
    r.measured_text = "hang";
  } else if (run.signal) {
    why.push_back("died of " + SignalName(*run.signal));
    r.measured_text = "crash";
  } else if (run.exit_code && *run.exit_code != 0) {
    why.push_back(fmt::format("exited with status {}", *run.exit_code));
    r.measured_text = "exit " + std::to_string(*run.exit_code);
  }
  for (const WorkerLine* e : Lines(run, WorkerLineType::kError, "")) {
    why.push_back(fmt::format("reported {} error {} in {} at {}", e->Text("api").value_or("CUDA"),
                              e->Text("error").value_or("(unnamed)"), e->Text("expr").value_or("?"),
                              e->Text("where").value_or("?")));
    if (r.measured_text.empty()) {
      r.measured_text = e->Text("error").value_or("error");
    }
  }
  if (!run.unreadable.empty()) {
    why.push_back(fmt::format("printed {} unreadable line(s), first: {}", run.unreadable.size(), run.unreadable.front()));
    if (r.measured_text.empty()) {
      r.measured_text = "unreadable output";
    }
  }
  for (const GpuEvent& x : xids) {
    if ((x.type & kXidEvent) != 0) {
      why.push_back(fmt::format("NVML reported XID {} on GPU {} while it ran", x.data, x.gpu));
      if (r.measured_text.empty()) {
        r.measured_text = fmt::format("XID {}", x.data);
      }
    }
  }
  if (why.empty() && !run.Finished(worker_test)) {
    why.push_back("ended without its \"done\" line (results may be missing)");
    r.measured_text = "incomplete";
  }
  if (why.empty()) {
    return std::nullopt;
  }
  r.evidence = who + " ";
  for (std::size_t i = 0; i < why.size(); ++i) {
    r.evidence += (i ? "; " : "") + why[i];
  }
  r.evidence += " (" + run.CommandLine() + ")";
  if (!run.stderr_tail.empty()) {
    r.evidence += "; stderr: " + Tail(run.stderr_tail);
  }
  r.advice = "a GPU that crashes, hangs or raises an XID under a test is not fit for work: show the provider this "
             "evidence and ask for the node to be replaced";
  return r;
}

std::vector<CheckResult> JudgeMemory(const WorkerRun& run, const GpuTarget& t, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  const auto lines = Lines(run, WorkerLineType::kResult, "memory");
  if (lines.empty()) {
    return out;
  }
  const WorkerLine& l = *lines.back();
  const double allocated = l.Number("bytes_allocated").value_or(0);
  const double free_before = l.Number("memory_free").value_or(0);
  {
    CheckResult r = Make("gpu_memory_usable", t.gpu, t.node);
    r.unit = "MiB";
    r.measured = allocated / kMiB;
    r.evidence = fmt::format("the worker allocated {:.0f} MiB in {} blocks of the {:.0f} MiB CUDA reported free",
                             allocated / kMiB, l.Number("blocks").value_or(0), free_before / kMiB);
    if (t.card != nullptr) {
      const double want = th.memory_usable_fail_fraction * static_cast<double>(t.card->memory_bytes);
      r.expected = want / kMiB;
      r.expected_text = fmt::format(">= {:.2f} x {:.0f} MiB ({})", th.memory_usable_fail_fraction,
                                    static_cast<double>(t.card->memory_bytes) / kMiB, t.card->name);
      r.expectation_source = "catalog: " + t.card->name;
      AtLeast(r, allocated, want, CheckStatus::kFail,
              "less usable memory than the card has: other processes on the GPU (see memory used in the "
              "inventory), a cut-down card, or a virtualised slice");
    } else {
      Pass(r);
      r.expected_text = "no catalog card to judge against";
    }
    if (free_before > 0 && allocated < th.memory_alloc_min_free_fraction * free_before) {
      Fail(r);
      r.evidence += fmt::format("; below {:.2f} of the free memory: allocations failed early",
                                th.memory_alloc_min_free_fraction);
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("memory_pattern_errors", t.gpu, t.node);
    r.unit = "words";
    const double bad = l.Number("mismatched_words").value_or(0);
    const double words = l.Number("words_checked").value_or(0);
    r.measured = bad;
    r.expected = 0;
    r.expected_text = "0 mismatched words";
    std::string patterns;
    if (const auto p = l.body.find("patterns"); p != l.body.end() && p->is_array()) {
      for (const auto& x : *p) {
        patterns += (patterns.empty() ? "" : ", ") + (x.is_string() ? x.get<std::string>() : x.dump());
      }
    }
    r.evidence = fmt::format("{:.0f} words written and read back over {:.0f} MiB ({}), {} pass(es): {:.0f} mismatched",
                             words, allocated / kMiB, patterns, l.Number("passes").value_or(1), bad);
    if (const auto first = l.Text("first_mismatch")) {
      r.evidence += "; first: " + *first;
    }
    if (words <= 0) {
      r.evidence += "; nothing was checked";
    }
    if (bad > 0 || words <= 0) {
      Fail(r, bad > 0 ? "memory returns other values than written: a faulty card; ask for a replacement" : "");
    } else {
      Pass(r);
    }
    out.push_back(r);
  }
  return out;
}

std::vector<CheckResult> JudgeBandwidth(const WorkerRun& run, const GpuTarget& t, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  for (const WorkerLine* l : Lines(run, WorkerLineType::kResult, "stream")) {
    const std::string kernel = l->Text("kernel").value_or("?");
    const auto k = ParseStreamKernel(kernel);
    CheckResult r = Make("stream_" + kernel, t.gpu, t.node);
    r.unit = "GB/s";
    const auto elements = static_cast<uint64_t>(l->Number("elements").value_or(0));
    const auto width = static_cast<uint64_t>(l->Number("element_bytes").value_or(0));
    const double secs = l->Number("seconds").value_or(0);
    const double mismatches = l->Number("mismatches").value_or(0);
    if (!k || elements == 0 || width == 0 || !(secs > 0)) {
      Fail(r);
      r.evidence = "the worker's stream line lacks kernel, elements, element_bytes or seconds: " + l->text;
      out.push_back(r);
      continue;
    }
    const double bytes = StreamBytes(*k, elements, width);
    const double gbs = GBs(bytes, secs);
    r.evidence = fmt::format("{} of {} x {}-byte words: {:.4g} bytes read + written in {:.6f} s (best of {})", kernel,
                             elements, width, bytes, secs, l->Number("iterations").value_or(1));
    if (t.card != nullptr && t.card->memory_bandwidth_gb_s > 0) {
      const bool hbm = IsHbm(t.card);
      r.expectation_source = "catalog: " + t.card->name;
      JudgeFraction(r, gbs, t.card->memory_bandwidth_gb_s,
                    hbm ? th.bandwidth_hbm_warn_fraction : th.bandwidth_gddr_warn_fraction,
                    hbm ? th.bandwidth_hbm_fail_fraction : th.bandwidth_gddr_fail_fraction,
                    "datasheet " + t.card->memory_type);
    } else {
      r.measured = gbs;
      Pass(r);
      r.expected_text = "no catalog bandwidth to judge against";
    }
    if (mismatches > 0) {
      Fail(r);
      r.evidence += fmt::format("; {:.0f} elements held wrong values after the kernels", mismatches);
      r.advice = "wrong results from a memory kernel: a faulty card";
    } else if (r.status != CheckStatus::kPass) {
      r.advice = "memory slower than the datasheet: memory clock capped, a throttled or a different card";
    }
    out.push_back(r);
  }
  return out;
}

std::vector<CheckResult> JudgeGemm(const WorkerRun& run, const GpuTarget& t, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  struct Acc {
    double best = 0;
    std::string best_shape;
    double layer_flop = 0;
    double layer_seconds = 0;
    double mismatches = 0;
    double samples = 0;
    double algos = 0;
    std::vector<std::string> shapes;
    bool any_square = false;
    bool any_layer = false;
  };
  std::vector<std::string> order;
  std::map<std::string, Acc> acc;
  for (const WorkerLine* l : Lines(run, WorkerLineType::kResult, "gemm")) {
    const std::string p = l->Text("precision").value_or("?");
    if (!acc.count(p)) {
      order.push_back(p);
    }
    Acc& a = acc[p];
    const auto m = static_cast<uint64_t>(l->Number("m").value_or(0));
    const auto n = static_cast<uint64_t>(l->Number("n").value_or(0));
    const auto k = static_cast<uint64_t>(l->Number("k").value_or(0));
    const double secs = l->Number("seconds").value_or(0);
    const double tf = GemmTflops(m, n, k, secs);
    const std::string shape = l->Text("shape").value_or("square");
    a.mismatches += l->Number("mismatches").value_or(0);
    a.samples += l->Number("samples_checked").value_or(0);
    a.algos = std::max(a.algos, l->Number("algorithms_tried").value_or(0));
    a.shapes.push_back(fmt::format("{} {}x{}x{} {:.1f}", shape, m, n, k, tf));
    if (l->Text("role").value_or("square") == "layer") {
      a.any_layer = true;
      a.layer_flop += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
      a.layer_seconds += secs;
    } else {
      a.any_square = true;
      if (tf > a.best) {
        a.best = tf;
        a.best_shape = fmt::format("{}x{}x{}", m, n, k);
      }
    }
  }
  auto judge = [&](CheckResult& r, const std::string& p, double tf) {
    r.unit = p == "int8" ? "TOPS" : "TFLOPS";
    const std::optional<double> peak = t.card != nullptr ? PeakTflops(*t.card, p) : std::nullopt;
    if (peak && *peak > 0) {
      r.expectation_source = "catalog: " + t.card->name + " dense " + p;
      JudgeFraction(r, tf, *peak, th.gemm_warn_fraction, th.gemm_fail_fraction, "dense " + p + " peak");
      if (r.status != CheckStatus::kPass) {
        r.advice = "slower than this card should be: check power limit, clocks and clock-event reasons (burn_in), or "
                   "it is another card";
      }
    } else {
      r.measured = tf;
      Pass(r);
      r.expected_text = "no dense " + p + " figure in the catalog for " + CardName(t) + ": shown, not judged";
    }
  };
  for (const std::string& p : order) {
    const Acc& a = acc[p];
    const std::string verify =
        fmt::format("{:.0f} sampled entries checked against a CPU reference, {:.0f} wrong", a.samples, a.mismatches);
    std::string shapes;
    for (const auto& s : a.shapes) {
      shapes += (shapes.empty() ? "" : ", ") + s;
    }
    if (a.any_square) {
      CheckResult r = Make("gemm_" + p, t.gpu, t.node);
      r.evidence = fmt::format("cuBLASLt {} best of {:.0f} heuristic algorithm(s), best shape {}", p, a.algos,
                               a.best_shape);
      judge(r, p, a.best);
      r.evidence += "; " + verify + "; all shapes (TFLOPS): " + shapes;
      if (a.mismatches > 0 || a.samples <= 0) {
        Fail(r, a.mismatches > 0 ? "the card computes wrong GEMM results: faulty, do not use" : "nothing was verified");
      }
      out.push_back(r);
    }
    if (a.any_layer && a.layer_seconds > 0) {
      CheckResult r = Make("gemm_" + p + "_layer", t.gpu, t.node);
      r.evidence = fmt::format("the GEMMs of one transformer layer (Llama-3.1-8B, 8192 tokens), time-weighted: "
                               "{:.4g} FLOP in {:.6f} s",
                               a.layer_flop, a.layer_seconds);
      judge(r, p, a.layer_flop / a.layer_seconds / 1e12);
      if (a.mismatches > 0) {
        Fail(r);
      }
      out.push_back(r);
    }
  }
  for (const WorkerLine* s : Lines(run, WorkerLineType::kSkip, "gemm")) {
    CheckResult r = Make("gemm_" + s->Text("precision").value_or("?"), t.gpu, t.node);
    Skip(r, "not measured: " + s->Text("reason").value_or("the worker skipped it"));
    out.push_back(r);
  }
  return out;
}

std::vector<CheckResult> JudgePcie(const WorkerRun& alone, const WorkerRun* together, const GpuTarget& t,
                                   std::optional<int> gen_under_load, std::optional<int> width_under_load,
                                   const CheckThresholds& th) {
  std::vector<CheckResult> out;
  const GpuSnapshot& g = t.snapshot;
  const std::optional<int> gen = g.pcie_gen_max ? g.pcie_gen_max : g.pcie_gen_current;
  const std::optional<int> width = g.pcie_width_max ? g.pcie_width_max : g.pcie_width_current;
  const std::optional<double> theory = gen && width ? PcieTheoryGBs(*gen, *width) : std::nullopt;
  std::map<std::string, double> alone_gbs;
  auto one = [&](const WorkerLine& l, const std::string& suffix) {
    const std::string dir = l.Text("direction").value_or("?");
    const std::string mem = l.Text("memory").value_or("?");
    CheckResult r = Make("pcie_" + dir + "_" + mem + suffix, t.gpu, t.node);
    r.unit = "GB/s";
    const double bytes = l.Number("bytes").value_or(0);
    const double secs = l.Number("seconds").value_or(0);
    const double gbs = GBs(bytes, secs);
    r.evidence = fmt::format("{} {:.0f} MiB {} copies: best {:.6f} s each", dir == "h2d" ? "host-to-device" : "device-to-host",
                             bytes / kMiB, mem, secs);
    if (mem == "pinned" && theory) {
      r.expectation_source = "PCIe gen x width that NVML reports";
      if (suffix.empty()) {
        JudgeFraction(r, gbs, *theory, th.pcie_warn_fraction, th.pcie_fail_fraction,
                      fmt::format("PCIe gen{} x{} theory", *gen, *width));
        alone_gbs[dir] = gbs;
        if (r.status != CheckStatus::kPass) {
          r.advice = "host transfers slower than the link should carry: a narrower or slower link, a shared switch, or "
                     "the GPU's NUMA node far from this process; ask the provider";
        }
      } else {
        // All GPUs at once, against each GPU alone: a shared PCIe switch or uplink shows here.
        r.measured = gbs;
        const double base = alone_gbs.count(dir) ? alone_gbs[dir] : *theory;
        r.expected = th.pcie_shared_warn_fraction * base;
        r.expected_text = fmt::format(">= {:.2f} x {} GB/s (this GPU alone)", th.pcie_shared_warn_fraction,
                                      check_cells::Number(base));
        AtLeast(r, gbs, th.pcie_shared_warn_fraction * base, CheckStatus::kWarn,
                "GPUs share a PCIe uplink: loading data into all GPUs at once is slower than one at a time");
        r.evidence += fmt::format("; every GPU copying at once: {} GB/s = {:.3f} of this GPU alone",
                                  check_cells::Number(gbs), base > 0 ? gbs / base : 0.0);
      }
    } else {
      r.measured = gbs;
      Pass(r);
      r.expected_text = mem == "pinned" ? "the link's generation and width were not measured: shown, not judged"
                                        : "no threshold: pageable copies are shown beside pinned ones";
    }
    if (l.Number("mismatches").value_or(0) > 0) {
      Fail(r);
      r.evidence += fmt::format("; {:.0f} bytes differed after the round trip", l.Number("mismatches").value_or(0));
      r.advice = "data changed on its way over PCIe: a faulty link or card";
    }
    out.push_back(r);
  };
  for (const WorkerLine* l : Lines(alone, WorkerLineType::kResult, "pcie")) {
    one(*l, "");
  }
  if (together != nullptr) {
    for (const WorkerLine* l : Lines(*together, WorkerLineType::kResult, "pcie")) {
      if (l->Text("memory").value_or("") == "pinned") {
        one(*l, "_all_gpus");
      }
    }
  }
  CheckResult r = Make("pcie_link_under_load", t.gpu, t.node);
  r.unit = "";
  if (gen_under_load && width_under_load && gen && width) {
    r.measured_text = fmt::format("gen{} x{}", *gen_under_load, *width_under_load);
    r.expected_text = fmt::format("gen{} x{} (the link's maximum)", *gen, *width);
    r.measured = *gen_under_load;
    r.expected = *gen;
    r.unit = "gen";
    const bool low = *gen_under_load < *gen || *width_under_load < *width;
    r.evidence = fmt::format("highest PCIe generation and width NVML reported while the copies ran: gen{} x{}; the "
                             "link can do gen{} x{}",
                             *gen_under_load, *width_under_load, *gen, *width);
    if (low) {
      Fail(r, "the link trains below its maximum under load: reseat the card or check the riser and BIOS "
              "(an idle link training down is normal, a busy one is not)");
    } else {
      Pass(r);
    }
  } else {
    Skip(r, "not measured: NVML gave no current or maximum PCIe generation and width during the copies");
  }
  out.push_back(r);
  return out;
}

std::optional<std::pair<double, std::string>> GpuToGpuTheory(const GpuTarget& t) {
  if (t.card != nullptr && t.card->interconnect.kind.rfind("nvlink", 0) == 0 && t.card->interconnect.bandwidth_gb_s > 0 &&
      t.snapshot.nvlink_up.value_or(0) > 0) {
    return std::make_pair(t.card->interconnect.bandwidth_gb_s / 2,
                          fmt::format("{} {:.0f} GB/s per direction ({} GB/s bidirectional, {} links up)",
                                      t.card->interconnect.kind, t.card->interconnect.bandwidth_gb_s / 2,
                                      t.card->interconnect.bandwidth_gb_s, *t.snapshot.nvlink_up));
  }
  const auto gen = t.snapshot.pcie_gen_max;
  const auto width = t.snapshot.pcie_width_max;
  if (gen && width) {
    if (const auto th = PcieTheoryGBs(*gen, *width)) {
      return std::make_pair(*th, fmt::format("PCIe gen{} x{} {:.1f} GB/s per direction", *gen, *width, *th));
    }
  }
  return std::nullopt;
}

std::vector<CheckResult> JudgeP2p(const WorkerRun& run, const std::vector<GpuTarget>& gpus, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  const std::map<int, int> nvml = CudaToNvml(run, gpus);
  auto to_gpu = [&nvml](double cuda) {
    const auto it = nvml.find(static_cast<int>(cuda));
    return it != nvml.end() ? it->second : static_cast<int>(cuda);
  };
  struct Row {
    std::vector<std::string> on, off, lat;
    std::optional<double> min_on;
    std::optional<double> max_lat_us;
    std::vector<std::string> no_access;
    double mismatches = 0;
  };
  std::map<int, Row> rows;
  for (const auto& l : run.lines) {
    if (l.type != WorkerLineType::kResult) {
      continue;
    }
    const int src = to_gpu(l.Number("src").value_or(-1));
    const int dst = to_gpu(l.Number("dst").value_or(-1));
    Row& row = rows[src];
    const bool peer = l.Flag("peer_access").value_or(false);
    if (l.name == "p2p_access") {
      if (!l.Flag("can_access").value_or(false)) {
        row.no_access.push_back(std::to_string(dst));
      }
    } else if (l.name == "p2p_copy") {
      const double gbs = GBs(l.Number("bytes").value_or(0), l.Number("seconds").value_or(0));
      row.mismatches += l.Number("mismatches").value_or(0);
      (peer ? row.on : row.off).push_back(fmt::format("{}->{} {:.1f}", src, dst, gbs));
      if (peer) {
        row.min_on = row.min_on ? std::min(*row.min_on, gbs) : gbs;
      }
    } else if (l.name == "p2p_latency") {
      const double copies = std::max(1.0, l.Number("copies").value_or(1));
      const double us = l.Number("seconds").value_or(0) / copies * 1e6;
      row.lat.push_back(fmt::format("{}->{} {}{:.1f}", src, dst, peer ? "" : "(off) ", us));
      if (peer) {
        row.max_lat_us = row.max_lat_us ? std::max(*row.max_lat_us, us) : us;
      }
    }
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) {
      s += (s.empty() ? "" : ", ") + x;
    }
    return s.empty() ? std::string("none") : s;
  };
  for (const auto& [src, row] : rows) {
    const GpuTarget* t = TargetOf(gpus, src);
    const std::string node = t != nullptr ? t->node : std::string();
    CheckResult r = Make("p2p_bandwidth", src, node);
    r.unit = "GB/s";
    r.evidence = "slowest copy to a peer with P2P access on; GB/s with access on: " + join(row.on) +
                 "; with access off (through the host): " + join(row.off);
    const auto theory = t != nullptr ? GpuToGpuTheory(*t) : std::nullopt;
    if (row.min_on && theory) {
      r.expectation_source = t->card != nullptr ? "catalog: " + t->card->name : "PCIe link";
      JudgeFraction(r, *row.min_on, theory->first, th.p2p_warn_fraction, th.p2p_fail_fraction, theory->second);
    } else if (row.min_on) {
      r.measured = *row.min_on;
      Pass(r);
      r.expected_text = "no NVLink or PCIe figure to judge against";
    } else {
      Fail(r);
      r.evidence = "no copy with P2P access on was measured; " + r.evidence;
    }
    if (!row.no_access.empty()) {
      r.evidence += "; no peer access to GPU(s) " + join(row.no_access);
      // Without NVLink up, GPUs reaching each other through the host is a WARN; with it, a FAIL.
      SetStatus(r, t != nullptr && t->snapshot.nvlink_up.value_or(0) > 0 ? CheckStatus::kFail : CheckStatus::kWarn);
      r.advice = "GPUs that cannot reach each other directly go through host memory: check NVLink, the fabric "
                 "manager (NVSwitch systems) and the IOMMU/ACS settings";
    }
    if (row.mismatches > 0) {
      Fail(r);
      r.evidence += fmt::format("; {:.0f} bytes arrived wrong", row.mismatches);
      r.advice = "data corrupted between GPUs: a faulty link";
    }
    out.push_back(r);
    CheckResult lat = Make("p2p_latency", src, node);
    lat.unit = "us";
    if (row.max_lat_us) {
      lat.measured = *row.max_lat_us;
      Pass(lat);
    }
    lat.expected_text = "shown, not judged (copy-engine latency of a 4-byte copy)";
    lat.evidence = "highest latency to a peer with P2P on; all (us): " + join(row.lat);
    out.push_back(lat);
  }
  return out;
}

std::vector<CheckResult> JudgeNccl(const WorkerRun& run, const std::vector<GpuTarget>& gpus, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  struct Acc {
    std::optional<double> peak;
    double peak_bytes = 0;
    double wrong = 0;
    int ranks = 0;
    std::vector<std::string> sweep;
  };
  std::map<std::string, Acc> acc;
  std::vector<std::string> order;
  for (const WorkerLine* l : Lines(run, WorkerLineType::kResult, "nccl")) {
    const std::string name = l->Text("collective").value_or("?");
    const auto c = ParseCollective(name);
    if (!c) {
      continue;
    }
    if (!acc.count(name)) {
      order.push_back(name);
    }
    Acc& a = acc[name];
    const int ranks = static_cast<int>(l->Number("ranks").value_or(0));
    const double bytes = l->Number("bytes").value_or(0);
    const double secs = l->Number("seconds").value_or(0);
    const double bus = BusBandwidthGBs(*c, ranks, bytes, secs);
    a.ranks = ranks;
    a.wrong += l->Number("wrong").value_or(0);
    a.sweep.push_back(fmt::format("{:.0f} B {:.2f}", bytes, bus));
    if (bytes >= th.nccl_judged_min_bytes && (!a.peak || bus > *a.peak)) {
      a.peak = bus;
      a.peak_bytes = bytes;
    }
  }
  // The slowest GPU's link bounds the ring.
  std::optional<std::pair<double, std::string>> theory;
  for (const auto& t : gpus) {
    const auto g = GpuToGpuTheory(t);
    if (g && (!theory || g->first < theory->first)) {
      theory = g;
    }
  }
  for (const std::string& name : order) {
    const Acc& a = acc[name];
    CheckResult r = Make("nccl_" + name + "_busbw", -1, gpus.empty() ? std::string() : gpus.front().node);
    r.unit = "GB/s";
    std::string sweep;
    for (const auto& s : a.sweep) {
      sweep += (sweep.empty() ? "" : ", ") + s;
    }
    r.evidence = fmt::format("{} over {} GPUs, busbw as nccl-tests defines it (factor {:.3f}), peak at {:.0f} B",
                             name, a.ranks, BusBandwidthFactor(*ParseCollective(name), a.ranks), a.peak_bytes);
    if (a.peak && theory) {
      r.expectation_source = "NVLink / PCIe theory of the slowest GPU";
      JudgeFraction(r, *a.peak, theory->first, th.nccl_warn_fraction, th.nccl_fail_fraction, theory->second);
      if (r.status != CheckStatus::kPass) {
        r.advice = "collectives slower than the links allow: NVLinks down, the fabric manager not running, or NCCL "
                   "falling back to PCIe/host memory (NCCL_DEBUG=INFO shows the transport)";
      }
    } else if (a.peak) {
      r.measured = *a.peak;
      Pass(r);
      r.expected_text = "no NVLink or PCIe figure to judge against";
    } else {
      Skip(r, fmt::format("not measured: no message of at least {:.0f} bytes", th.nccl_judged_min_bytes));
    }
    r.evidence += "; sweep (bytes busbw GB/s): " + sweep;
    if (a.wrong > 0) {
      Fail(r);
      r.evidence += fmt::format("; {:.0f} wrong elements in the results", a.wrong);
      r.advice = "NCCL returned wrong data: a faulty GPU or link";
    }
    out.push_back(r);
  }
  for (const WorkerLine* s : Lines(run, WorkerLineType::kSkip, "nccl")) {
    CheckResult r = Make("nccl", -1, gpus.empty() ? std::string() : gpus.front().node);
    Skip(r, "not measured: " + s->Text("reason").value_or("the worker skipped it"));
    out.push_back(r);
  }
  return out;
}

std::vector<CheckResult> JudgeBurn(const WorkerRun& run, const GpuTarget& t, const GpuCurve* curve,
                                   const CheckThresholds& th) {
  std::vector<CheckResult> out;
  const auto lines = Lines(run, WorkerLineType::kResult, "burn");
  // The last result line holds the totals; progress lines carry the running counts of a worker
  // that died before it.
  const WorkerLine* last = lines.empty() ? nullptr : lines.back();
  if (last == nullptr) {
    for (const auto& l : run.lines) {
      if (l.type == WorkerLineType::kProgress && l.test == "burn") {
        last = &l;
      }
    }
  }
  if (last != nullptr) {
    const double gemms = last->Number("gemms").value_or(0);
    const double mism = last->Number("mismatches").value_or(0);
    const double ref = last->Number("ref_mismatches").value_or(0);
    const double secs = last->Number("seconds").value_or(0);
    CheckResult e = Make("burn_in_errors", t.gpu, t.node);
    e.unit = "errors";
    e.measured = mism + ref;
    e.expected = 0;
    e.expected_text = "0 wrong elements";
    e.evidence = fmt::format("{:.0f} GEMMs ({:.1f} s of GEMM time over {:.0f} s), each result compared bit for bit "
                             "with a checked reference ({:.0f} wrong elements) and sampled entries with the CPU "
                             "reference ({:.0f} wrong)",
                             gemms, secs, last->Number("elapsed").value_or(secs), mism, ref);
    if (gemms <= 0) {
      e.evidence += "; no GEMM completed";
    }
    if ((mism + ref) > 0 || gemms <= 0) {
      Fail(e, "silent data corruption under load: the card is faulty, ask for a replacement");
    } else {
      Pass(e);
    }
    out.push_back(e);
    CheckResult f = Make("burn_in_tflops", t.gpu, t.node);
    f.unit = "TFLOPS";
    const double tf = GemmTflops(static_cast<uint64_t>(last->Number("m").value_or(0)),
                                 static_cast<uint64_t>(last->Number("n").value_or(0)),
                                 static_cast<uint64_t>(last->Number("k").value_or(0)), secs > 0 ? secs / gemms : 0);
    f.evidence = fmt::format("sustained bf16 GEMM: {:.0f} GEMMs of {:.0f}x{:.0f}x{:.0f} in {:.1f} s of GEMM time", gemms,
                             last->Number("m").value_or(0), last->Number("n").value_or(0),
                             last->Number("k").value_or(0), secs);
    const std::optional<double> peak = t.card != nullptr ? t.card->tflops.bf16 : std::nullopt;
    if (peak && *peak > 0 && gemms > 0) {
      f.expectation_source = "catalog: " + t.card->name + " dense bf16";
      JudgeFraction(f, tf, *peak, th.gemm_warn_fraction, th.gemm_fail_fraction, "dense bf16 peak");
    } else {
      f.measured = tf;
      SetStatus(f, gemms > 0 ? CheckStatus::kPass : CheckStatus::kFail);
      f.expected_text = "no dense bf16 figure in the catalog: shown, not judged";
    }
    out.push_back(f);
  }
  if (curve == nullptr || curve->t.empty()) {
    CheckResult r = Make("burn_in_throttle", t.gpu, t.node);
    Skip(r, "not measured: no NVML samples during the burn-in");
    out.push_back(r);
    return out;
  }
  {
    CheckResult r = Make("burn_in_throttle", t.gpu, t.node);
    r.unit = "s";
    const auto& secs = curve->clock_event_seconds;
    auto get = [&secs](const char* k) {
      const auto it = secs.find(k);
      return it != secs.end() ? it->second : 0.0;
    };
    const double hw = get("hw_slowdown") + get("hw_thermal_slowdown") + get("hw_power_brake_slowdown");
    const double sw_thermal = get("sw_thermal_slowdown");
    r.measured = hw + sw_thermal;
    r.expected = 0;
    r.expected_text = "0 s of hardware slowdown, hardware thermal, power-brake or software thermal slowdown";
    std::string each;
    for (const auto& [k, v] : secs) {
      each += fmt::format("{}{} {:.0f} s", each.empty() ? "" : ", ", k, v);
    }
    r.evidence = fmt::format("seconds in each clock-event reason after the first {:.1f} s (warm-up) of {} samples, "
                             "each reason counted on its own: {}",
                             curve->warmup_s, curve->t.size(), each.empty() ? "none" : each);
    if (hw > 0) {
      Fail(r);
    } else if (sw_thermal > 0) {
      Warn(r);
    } else {
      Pass(r);
    }
    if (r.status != CheckStatus::kPass) {
      r.advice = hw > 0 ? "the board or host slows the GPU (power brake, hardware slowdown, overheating): cooling or "
                          "power delivery of this server is not adequate; ask the provider"
                        : "the GPU slows itself to stay cool: check airflow and inlet temperature";
    } else if (get("sw_power_cap") > 0) {
      r.evidence += " (sw_power_cap alone is the card holding its power limit under full load: normal)";
    }
    out.push_back(r);
  }
  auto after_warmup = [&](const std::vector<std::optional<double>>& v) {
    std::vector<double> out_v;
    for (std::size_t i = 0; i < v.size() && i < curve->t.size(); ++i) {
      if (curve->t[i] >= curve->warmup_s && v[i]) {
        out_v.push_back(*v[i]);
      }
    }
    return out_v;
  };
  {
    CheckResult r = Make("burn_in_temperature", t.gpu, t.node);
    r.unit = "C";
    double hottest = -1;
    for (const auto& v : curve->temperature_c) {
      if (v) {
        hottest = std::max(hottest, *v);
      }
    }
    if (hottest < 0) {
      Skip(r, "not measured: NVML gave no temperature during the burn-in");
    } else {
      r.measured = hottest;
      const auto slowdown = t.snapshot.temperature_slowdown_c;
      r.expected = th.burn_temperature_warn_c;
      r.expected_text = fmt::format("<= {} C{}", th.burn_temperature_warn_c,
                                    slowdown ? fmt::format(" (FAIL at the card's slowdown threshold {} C)", *slowdown)
                                             : std::string());
      const std::string hot = "the GPU runs hot under sustained load: cooling of this chassis is marginal";
      if (slowdown && hottest >= *slowdown) {
        Fail(r, hot);
      } else {
        AtMost(r, hottest, th.burn_temperature_warn_c, CheckStatus::kWarn, hot);
      }
      r.evidence = fmt::format("hottest of {} samples: {:.0f} C", curve->temperature_c.size(), hottest);
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("burn_in_power", t.gpu, t.node);
    r.unit = "W";
    const std::vector<double> p = after_warmup(curve->power_w);
    if (p.size() < 2) {
      Skip(r, "not measured: fewer than two power samples after the warm-up");
    } else {
      double mean = 0;
      for (double x : p) mean += x;
      mean /= static_cast<double>(p.size());
      double var = 0;
      for (double x : p) var += (x - mean) * (x - mean);
      const double cv = mean > 0 ? std::sqrt(var / static_cast<double>(p.size() - 1)) / mean : 0;
      r.measured = mean;
      r.expected_text = fmt::format("coefficient of variation <= {:.2f}", th.burn_power_cv_warn);
      AtMost(r, cv, th.burn_power_cv_warn, CheckStatus::kWarn,
             "power swings under a steady load: unstable power delivery or clocks stepping up and down");
      r.evidence = fmt::format("mean {:.0f} W over {} samples after the warm-up, coefficient of variation {:.3f}{}", mean,
                               p.size(), cv,
                               t.snapshot.power_limit ? fmt::format(", limit {:.0f} W", *t.snapshot.power_limit)
                                                      : std::string());
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("burn_in_clocks", t.gpu, t.node);
    r.unit = "MHz";
    std::vector<double> c = after_warmup(curve->sm_clock_mhz);
    if (c.empty()) {
      Skip(r, "not measured: no SM clock samples after the warm-up");
    } else {
      std::sort(c.begin(), c.end());
      r.measured = c[c.size() / 2];
      Pass(r);
      r.expected_text = "shown, not judged (throttling is judged by burn_in_throttle)";
      r.evidence = fmt::format("SM clock after the warm-up: median {:.0f} MHz, lowest {:.0f}, highest {:.0f}{}",
                               c[c.size() / 2], c.front(), c.back(),
                               t.snapshot.sm_clock_max_mhz ? fmt::format(", card maximum {}", *t.snapshot.sm_clock_max_mhz)
                                                           : std::string());
    }
    out.push_back(r);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The suite entries.
namespace {

// Why the GPU tests cannot run here, or nullopt.
std::optional<std::string> Unavailable(const CheckContext& c, const std::string& worker) {
  if (c.request.no_gpu_tests) {
    return "--no-gpu-tests";
  }
  if (c.captures) {
    return "the GPUs are a capture, not this machine";
  }
  if (c.gpus == nullptr) {
    return "no NVIDIA driver (NVML could not be loaded), so no GPU to run on";
  }
  if (!c.request.replay.empty()) {
    return "replaying a recording (--replay): the GPU tests need this machine's GPUs";
  }
  if (c.start.empty() || c.start.front().gpus.empty()) {
    return "NVML lists no GPU";
  }
  if (access(worker.c_str(), X_OK) != 0) {
    return "no gpu-worker at " + worker + " (it is built where nvcc is found; --worker PATH)";
  }
  return std::nullopt;
}

std::string WorkerPath(const CheckContext& c) {
  return c.request.worker.empty() ? DefaultWorkerPath() : c.request.worker;
}

std::vector<GpuTarget> Targets(const CheckContext& c) {
  std::vector<GpuTarget> out;
  if (c.start.empty()) {
    return out;
  }
  for (const GpuSnapshot& g : c.start.front().gpus) {
    GpuTarget t;
    t.gpu = g.index;
    t.snapshot = g;
    t.card = c.expect.gpu != nullptr ? c.expect.gpu : CatalogCardOf(g, c.catalog);
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<CheckResult> SkipAll(const std::string& test, const std::string& why) {
  CheckResult r = Make(test, -1, {});
  Skip(r, "not measured: " + why);
  return {r};
}

WorkerCommand Command(const std::string& worker, const std::string& test, const GpuTarget* t,
                      std::vector<std::string> extra) {
  WorkerCommand cmd;
  cmd.argv = {worker, "--test", test};
  if (t != nullptr) {
    cmd.gpu = t->gpu;
    cmd.argv.push_back("--device");
    cmd.argv.push_back(std::to_string(t->gpu));
    if (t->snapshot.pci_bus_id) {
      cmd.argv.push_back("--pci-bus-id");
      cmd.argv.push_back(*t->snapshot.pci_bus_id);
    }
  } else {
    cmd.argv.push_back("--devices");
    cmd.argv.push_back("all");
  }
  cmd.argv.insert(cmd.argv.end(), extra.begin(), extra.end());
  // CUDA's device order is "fastest first" unless told otherwise; NVML's is the PCI bus order.
  cmd.env.push_back("CUDA_DEVICE_ORDER=PCI_BUS_ID");
  return cmd;
}

// Runs the commands while sampling NVML; the curves and events go to the context.
struct Sampled {
  std::vector<WorkerRun> runs;
  std::map<int, GpuCurve> curves;
  std::map<int, std::vector<GpuEvent>> xids;  // per GPU
  std::map<int, int> max_gen, max_width;      // PCIe under load
};

Sampled RunSampled(CheckContext& c, const std::string& test, const std::vector<WorkerCommand>& cmds,
                   const std::vector<GpuTarget>& targets, double planned_s, double warmup_s) {
  Sampled s;
  for (const auto& t : targets) {
    GpuCurve& cv = s.curves[t.gpu];
    cv.test = test;
    cv.gpu = t.gpu;
    cv.node = t.node;
    cv.interval_s = c.request.sample_interval;
    cv.warmup_s = warmup_s;
  }
  auto sample = [&](double at) {
    const SystemSnapshot snap = c.gpus->Snapshot();
    for (const GpuSnapshot& g : snap.gpus) {
      const auto it = s.curves.find(g.index);
      if (it == s.curves.end()) {
        continue;
      }
      GpuCurve& cv = it->second;
      cv.t.push_back(at);
      cv.temperature_c.push_back(g.temperature_c ? std::optional<double>(*g.temperature_c) : std::nullopt);
      cv.power_w.push_back(g.power_draw);
      cv.sm_clock_mhz.push_back(g.sm_clock_mhz ? std::optional<double>(*g.sm_clock_mhz) : std::nullopt);
      cv.clock_events.push_back(g.clock_event_reasons);
      if (g.pcie_gen_current) {
        s.max_gen[g.index] = std::max(s.max_gen[g.index], *g.pcie_gen_current);
      }
      if (g.pcie_width_current) {
        s.max_width[g.index] = std::max(s.max_width[g.index], *g.pcie_width_current);
      }
    }
    for (GpuEvent& e : c.gpus->Events(0)) {
      s.xids[e.gpu].push_back(e);
      c.test_events.push_back(e);
    }
    if (c.progress && planned_s > 0) {
      c.progress(std::min(1.0, at / planned_s));
    }
  };
  WorkerRunOptions opt;
  opt.timeout_s = c.request.test_timeout.value_or(planned_s + c.thresholds.worker_timeout_margin_seconds);
  opt.tick_s = c.request.sample_interval;
  const auto t0 = std::chrono::steady_clock::now();
  opt.tick = [&](double) { sample(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()); };
  sample(0);
  s.runs = RunWorkers(cmds, opt);
  for (auto& [gpu, cv] : s.curves) {
    cv.clock_event_seconds = ClockEventSeconds(cv.t, cv.clock_events, cv.interval_s, cv.warmup_s);
    c.curves.push_back(cv);
  }
  return s;
}

// The XIDs a worker of GPU `gpu` (-1: all) saw.
std::vector<GpuEvent> XidsOf(const Sampled& s, int gpu) {
  std::vector<GpuEvent> out;
  for (const auto& [g, evs] : s.xids) {
    if (gpu < 0 || g == gpu) {
      out.insert(out.end(), evs.begin(), evs.end());
    }
  }
  return out;
}

using PerGpuJudge = std::function<std::vector<CheckResult>(const WorkerRun&, const GpuTarget&, const GpuCurve*)>;

// One worker per GPU, all at once; each GPU judged on its own.
std::vector<CheckResult> PerGpu(CheckContext& c, const std::string& test, const std::string& worker_test,
                                const std::vector<std::string>& extra, double planned_s, double warmup_s,
                                const PerGpuJudge& judge) {
  const std::string worker = WorkerPath(c);
  if (const auto why = Unavailable(c, worker)) {
    return SkipAll(test, *why);
  }
  const std::vector<GpuTarget> targets = Targets(c);
  std::vector<WorkerCommand> cmds;
  for (const auto& t : targets) {
    cmds.push_back(Command(worker, worker_test, &t, extra));
  }
  Sampled s = RunSampled(c, test, cmds, targets, planned_s, warmup_s);
  std::vector<CheckResult> out;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const GpuTarget& t = targets[i];
    const auto cv = s.curves.find(t.gpu);
    auto r = judge(s.runs[i], t, cv != s.curves.end() ? &cv->second : nullptr);
    out.insert(out.end(), r.begin(), r.end());
    if (auto bad = JudgeWorkerRun(s.runs[i], test, worker_test, XidsOf(s, t.gpu), t.node)) {
      out.push_back(*bad);
    }
  }
  return out;
}

bool Quick(const CheckContext& c) { return c.mode == CheckMode::kQuick; }

std::vector<CheckResult> RunGpuMemory(CheckContext& c) {
  const double secs = Quick(c) ? c.thresholds.memory_test_seconds_quick : c.thresholds.memory_test_seconds_default;
  return PerGpu(c, "gpu_memory", "memory", {"--seconds", fmt::format("{:g}", secs)}, secs + kPlannedStartup, 0,
                [&c](const WorkerRun& r, const GpuTarget& t, const GpuCurve*) { return JudgeMemory(r, t, c.thresholds); });
}

std::vector<CheckResult> RunGpuBandwidth(CheckContext& c) {
  return PerGpu(c, "gpu_bandwidth", "bandwidth", {}, kPlannedBandwidth, 0, [&c](const WorkerRun& r, const GpuTarget& t, const GpuCurve*) {
    return JudgeBandwidth(r, t, c.thresholds);
  });
}

std::vector<CheckResult> RunGemm(CheckContext& c) {
  const bool quick = Quick(c);
  return PerGpu(c, "gemm", "gemm", {"--precisions", quick ? kQuickPrecisions : kDefaultPrecisions}, quick ? kPlannedGemmQuick : kPlannedGemmDefault, 0,
                [&c](const WorkerRun& r, const GpuTarget& t, const GpuCurve*) { return JudgeGemm(r, t, c.thresholds); });
}

std::vector<CheckResult> RunPcie(CheckContext& c) {
  const std::string worker = WorkerPath(c);
  if (const auto why = Unavailable(c, worker)) {
    return SkipAll("pcie", *why);
  }
  const std::vector<GpuTarget> targets = Targets(c);
  // Each GPU alone, one after the other, then all at once (a shared switch or uplink shows there).
  std::vector<WorkerRun> alone;
  std::map<int, int> gen, width;
  std::map<int, std::vector<GpuEvent>> xids;
  for (const auto& t : targets) {
    Sampled s = RunSampled(c, "pcie", {Command(worker, "pcie", &t, {})}, {t}, kPlannedPcie, 0);
    alone.push_back(std::move(s.runs.front()));
    if (s.max_gen.count(t.gpu)) gen[t.gpu] = s.max_gen[t.gpu];
    if (s.max_width.count(t.gpu)) width[t.gpu] = s.max_width[t.gpu];
    xids[t.gpu] = XidsOf(s, t.gpu);
  }
  std::vector<WorkerRun> together;
  if (targets.size() > 1) {
    std::vector<WorkerCommand> cmds;
    for (const auto& t : targets) {
      cmds.push_back(Command(worker, "pcie", &t, {"--pinned-only"}));
    }
    Sampled s = RunSampled(c, "pcie_all_gpus", cmds, targets, kPlannedPcie, 0);
    together = std::move(s.runs);
    for (const auto& t : targets) {
      auto more = XidsOf(s, t.gpu);
      xids[t.gpu].insert(xids[t.gpu].end(), more.begin(), more.end());
    }
  }
  std::vector<CheckResult> out;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const GpuTarget& t = targets[i];
    const auto opt = [](const std::map<int, int>& m, int k) {
      const auto it = m.find(k);
      return it != m.end() ? std::optional<int>(it->second) : std::nullopt;
    };
    auto r = JudgePcie(alone[i], together.empty() ? nullptr : &together[i], t, opt(gen, t.gpu), opt(width, t.gpu),
                       c.thresholds);
    out.insert(out.end(), r.begin(), r.end());
    if (auto bad = JudgeWorkerRun(alone[i], "pcie", "pcie", xids[t.gpu], t.node)) {
      out.push_back(*bad);
    } else if (!together.empty()) {
      if (auto bad2 = JudgeWorkerRun(together[i], "pcie", "pcie", {}, t.node)) {
        out.push_back(*bad2);
      }
    }
  }
  return out;
}

// P2P and NCCL: one process driving every GPU.
std::vector<CheckResult> AllGpus(CheckContext& c, const std::string& test, const std::string& worker_test,
                                 const std::vector<std::string>& extra, double planned_s,
                                 const std::function<std::vector<CheckResult>(const WorkerRun&,
                                                                              const std::vector<GpuTarget>&)>& judge) {
  const std::string worker = WorkerPath(c);
  if (const auto why = Unavailable(c, worker)) {
    return SkipAll(test, *why);
  }
  const std::vector<GpuTarget> targets = Targets(c);
  if (targets.size() < 2) {
    return SkipAll(test, fmt::format("{} GPU on this machine: {} needs two or more", targets.size(), test));
  }
  Sampled s = RunSampled(c, test, {Command(worker, worker_test, nullptr, extra)}, targets, planned_s, 0);
  std::vector<CheckResult> out = judge(s.runs.front(), targets);
  if (auto bad = JudgeWorkerRun(s.runs.front(), test, worker_test, XidsOf(s, -1))) {
    out.push_back(*bad);
  }
  return out;
}

std::vector<CheckResult> RunP2p(CheckContext& c) {
  return AllGpus(c, "p2p", "p2p", {}, kPlannedP2p, [&c](const WorkerRun& r, const std::vector<GpuTarget>& g) {
    return JudgeP2p(r, g, c.thresholds);
  });
}

std::vector<CheckResult> RunNccl(CheckContext& c) {
  return AllGpus(c, "nccl", "nccl", {"--max-bytes", kNcclMaxBytes}, kPlannedNccl,
                 [&c](const WorkerRun& r, const std::vector<GpuTarget>& g) { return JudgeNccl(r, g, c.thresholds); });
}

std::vector<CheckResult> RunBurn(CheckContext& c) {
  const double secs = c.request.duration.value_or(c.mode == CheckMode::kFull ? c.thresholds.burn_seconds_full
                                                                              : c.thresholds.burn_seconds_default);
  const double warmup = std::min(c.thresholds.burn_warmup_seconds, secs / 2);
  return PerGpu(c, "burn_in", "burn", {"--seconds", fmt::format("{:g}", secs)}, secs + kPlannedBurnExtra, warmup,
                [&c](const WorkerRun& r, const GpuTarget& t, const GpuCurve* cv) {
                  return JudgeBurn(r, t, cv, c.thresholds);
                });
}

}  // namespace

std::vector<CheckTest> GpuSuiteTests() {
  return {
      {"gpu_memory", CheckMode::kQuick, CheckNeeds::kThisHost,
       "usable memory: at least 95% of the free memory allocated and checked with walking ones, seeded random and "
       "address-in-address patterns",
       RunGpuMemory},
      {"gpu_bandwidth", CheckMode::kQuick, CheckNeeds::kThisHost,
       "memory bandwidth: STREAM copy, scale and triad against the datasheet", RunGpuBandwidth},
      {"gemm", CheckMode::kQuick, CheckNeeds::kThisHost,
       "cuBLASLt GEMM throughput per precision (bf16 in quick mode; fp32, tf32, bf16, fp16, int8, fp8 otherwise), "
       "square and transformer-layer shapes, verified",
       RunGemm},
      {"pcie", CheckMode::kQuick, CheckNeeds::kThisHost,
       "host-to-device and device-to-host copies, pinned and pageable, each GPU alone and all at once", RunPcie},
      {"p2p", CheckMode::kDefault, CheckNeeds::kThisHost,
       "GPU-to-GPU bandwidth and latency matrix with peer access on and off (2+ GPUs)", RunP2p},
      {"nccl", CheckMode::kDefault, CheckNeeds::kThisHost,
       "NCCL all-reduce, all-gather and reduce-scatter bus bandwidth from 8 B to 1 GiB, results checked (2+ GPUs)",
       RunNccl},
      {"burn_in", CheckMode::kDefault, CheckNeeds::kThisHost,
       "sustained GEMMs checked against each other and a reference while NVML is sampled every second (5 min; "
       "30 min with --full; --duration)",
       RunBurn},
  };
}

}  // namespace gpuplan
