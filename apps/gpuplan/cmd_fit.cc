// gpuplan fit: memory per GPU for a model, task and layout; FITS / DOES NOT FIT and what to change.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model_loader.h"
#include "commands.h"
#include "core/error.h"
#include "fit/advisor.h"
#include "fit/memory_model.h"
#include "io/fit_json.h"

namespace gpuplan::cli {
namespace {

struct FitOptions {
  std::string model;
  std::string task = "full";
  std::string gpu;
  int64_t gpus = 1;
  int64_t seq = 2048;
  int64_t micro_batch = 1;
  int64_t global_batch = 0;
  std::string precision = "mixed";
  std::string optimizer = "adamw";
  int zero = 0;
  int64_t tp = 1, pp = 1, ep = 1, vpp = 1;
  bool sp = false;
  std::string recompute = "none";
  std::string flash_attn = "on";
  int64_t lora_rank = 16;
  double lora_dropout = 0;
  std::string lora_targets = "all-linear";
  std::string weight_dtype = "bf16";
  std::string kv_dtype = "bf16";
  int64_t context = 4096;
  int64_t concurrency = 1;
  int64_t batched_tokens = 8192;
  bool offload_optimizer = false;
  bool offload_params = false;
  double cuda_context_mib = 500;
  double nccl_mib = 256;
  double fragmentation = 0.05;
};

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) {
      out.push_back(item);
    }
  }
  return out;
}

bool ParseOnOff(const std::string& s, const char* field) {
  if (s == "on" || s == "true" || s == "1" || s == "yes") {
    return true;
  }
  if (s == "off" || s == "false" || s == "0" || s == "no") {
    return false;
  }
  throw InputError("expected on or off, got '" + s + "'", "", 0, field);
}

std::string Gib(Bytes b) { return fmt::format("{:.2f}", b.gib()); }

std::string Count(int64_t n) {
  // 8030261248 -> "8,030,261,248 (8.03 B)"
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return fmt::format("{} ({:.2f} B)", out, static_cast<double>(n) / 1e9);
}

void PrintTable(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu* gpu, const MemoryEstimate& e,
                const std::vector<Suggestion>& sug) {
  std::cout << fmt::format("model      {} ({}), {} layers, hidden {}\n", m.name, m.model_type, m.layers, m.hidden);
  std::cout << fmt::format("params     total {}   active/token {}", Count(e.params_total), Count(e.params_active));
  if (IsTraining(w.task)) {
    std::cout << fmt::format("   trainable {}", Count(e.params_trainable));
  }
  std::cout << "\n";
  std::cout << fmt::format("task       {}", ToString(w.task));
  if (IsTraining(w.task)) {
    std::cout << fmt::format(", precision {}, optimizer {}, seq {}, micro-batch {}, recompute {}, flash-attn {}",
                             ToString(w.precision), ToString(w.optimizer), w.seq, w.micro_batch,
                             ToString(w.recompute), w.flash_attn ? "on" : "off");
  } else {
    std::cout << fmt::format(", weights {}, kv {}, context {}, concurrency {}", ToString(w.weight_dtype),
                             ToString(w.kv_dtype), w.context, w.concurrency);
  }
  std::cout << "\n";
  std::cout << fmt::format("layout     {} x {}: tp={} pp={} dp={}{} zero={}{}{}\n", l.gpus, gpu ? gpu->name : "(any GPU)",
                           l.tp, l.pp, l.dp(), l.ep > 1 ? fmt::format(" ep={}", l.ep) : "", l.zero,
                           l.offload_optimizer ? " offload-optimizer" : "", l.offload_params ? " offload-params" : "");
  std::cout << "\nmemory per GPU (GiB)" << (l.pp > 1 ? fmt::format(", {} pipeline stage", e.peak_stage) : "") << "\n";
  const auto& p = e.per_gpu;
  const std::pair<const char*, Bytes> rows[] = {{"weights", p.weights},         {"gradients", p.gradients},
                                                {"optimizer", p.optimizer},     {"activations", p.activations},
                                                {"kv_cache", p.kv_cache},       {"overhead", p.overhead}};
  for (const auto& [name, b] : rows) {
    std::cout << fmt::format("  {:<12} {:>10}\n", name, Gib(b));
  }
  std::cout << fmt::format("  {:<12} {:>10}\n", "total", Gib(p.Total()));
  if (e.cpu_offload.value > 0) {
    std::cout << fmt::format("  (CPU RAM per GPU for offloaded states: {} GiB)\n", Gib(e.cpu_offload));
  }
  if (!IsTraining(w.task)) {
    std::cout << fmt::format("  kv cache per sequence: {} GiB", Gib(e.kv_per_sequence));
    if (e.max_concurrency) {
      std::cout << fmt::format("; max concurrency that fits: {}", *e.max_concurrency);
    }
    std::cout << "\n";
  }
  if (gpu != nullptr) {
    const Bytes cap(static_cast<double>(gpu->memory_bytes));
    const bool fits = Fits(e, *gpu);
    std::cout << fmt::format("\n{}: {} GiB of {} GiB ({:.0f}%) on {}\n", fits ? "FITS" : "DOES NOT FIT", Gib(p.Total()),
                             Gib(cap), 100.0 * p.Total().value / cap.value, gpu->name);
    if (!fits) {
      if (sug.empty()) {
        std::cout << "no single or paired change found that fits; try a larger cluster\n";
      } else {
        std::cout << "smallest changes that fit (each checked by the model):\n";
        for (const auto& s : sug) {
          std::cout << fmt::format("  - {}: {} of {} GiB per GPU\n      -> {}\n", s.change,
                                   Gib(s.estimate.per_gpu.Total()), Gib(Bytes(static_cast<double>(s.gpu->memory_bytes))),
                                   s.result);
        }
      }
    }
  }
  for (const auto& n : e.notes) {
    std::cout << "note: " << n << "\n";
  }
}

}  // namespace

Runner RegisterFit(CLI::App& app, GlobalOptions& g) {
  auto o = std::make_shared<FitOptions>();
  CLI::App* c = app.add_subcommand("fit", "memory per GPU for a model, task and layout; does it fit?");
  c->add_option("--model", o->model, "preset name, config.json path, or checkpoint folder")->required();
  c->add_option("--task", o->task, "pretrain | full | lora | qlora | infer")->capture_default_str();
  c->add_option("--gpu", o->gpu, "GPU name from the catalog (gpuplan gpus)");
  c->add_option("--gpus", o->gpus, "number of GPUs")->capture_default_str();
  c->add_option("--seq", o->seq, "training sequence length")->capture_default_str();
  c->add_option("--micro-batch", o->micro_batch, "sequences per GPU per micro-step")->capture_default_str();
  c->add_option("--global-batch", o->global_batch, "sequences per optimizer step (0: fill the pipeline)");
  c->add_option("--precision", o->precision, "fp32 | mixed | bf16")->capture_default_str();
  c->add_option("--optimizer", o->optimizer, "adamw | adamw8bit | sgd | adafactor")->capture_default_str();
  c->add_option("--zero", o->zero, "ZeRO stage 0-3")->capture_default_str();
  c->add_option("--tp", o->tp, "tensor-parallel size")->capture_default_str();
  c->add_option("--pp", o->pp, "pipeline-parallel size")->capture_default_str();
  c->add_option("--ep", o->ep, "expert-parallel size (MoE)")->capture_default_str();
  c->add_option("--vpp", o->vpp, "interleaved virtual pipeline stages per GPU")->capture_default_str();
  c->add_flag("--sp", o->sp, "sequence parallelism (with tp > 1)");
  c->add_option("--recompute", o->recompute, "none | selective | full")->capture_default_str();
  c->add_option("--flash-attn", o->flash_attn, "on | off")->capture_default_str();
  c->add_option("--lora-rank", o->lora_rank, "LoRA rank")->capture_default_str();
  c->add_option("--lora-dropout", o->lora_dropout, "LoRA dropout probability")->capture_default_str();
  c->add_option("--lora-targets", o->lora_targets, "all-linear or module names, comma separated")
      ->capture_default_str();
  c->add_option("--weight-dtype", o->weight_dtype, "inference weights: bf16 | fp8 | int8 | int4 | fp32")
      ->capture_default_str();
  c->add_option("--kv-dtype", o->kv_dtype, "KV cache: bf16 | fp8")->capture_default_str();
  c->add_option("--context", o->context, "inference: tokens per sequence (prompt + output)")->capture_default_str();
  c->add_option("--concurrency", o->concurrency, "inference: sequences in flight per replica")->capture_default_str();
  c->add_option("--batched-tokens", o->batched_tokens, "inference: tokens per forward pass")->capture_default_str();
  c->add_flag("--offload-optimizer", o->offload_optimizer, "ZeRO-Offload optimizer states to CPU RAM");
  c->add_flag("--offload-params", o->offload_params, "ZeRO-Infinity parameter offload (zero 3)");
  c->add_option("--cuda-context-mib", o->cuda_context_mib, "CUDA context and library workspaces, MiB")
      ->capture_default_str();
  c->add_option("--nccl-mib", o->nccl_mib, "NCCL buffers per communicator, MiB")->capture_default_str();
  c->add_option("--fragmentation", o->fragmentation, "allocator slack as a fraction of dynamic tensors")
      ->capture_default_str();
  c->add_flag("--json", g.json, "print JSON");

  return [o, &g]() -> int {
    const std::string data = DataDir(g);
    LoadedModel lm = LoadModel(o->model, data);
    Workload w;
    w.task = ParseTask(o->task);
    w.precision = ParsePrecision(o->precision);
    w.optimizer = ParseOptimizer(o->optimizer);
    w.seq = o->seq;
    w.micro_batch = o->micro_batch;
    w.global_batch = o->global_batch;
    w.recompute = ParseRecompute(o->recompute);
    w.flash_attn = ParseOnOff(o->flash_attn, "--flash-attn");
    w.lora_rank = o->lora_rank;
    w.lora_dropout = o->lora_dropout;
    if (o->lora_targets != "all-linear" && o->lora_targets != "all") {
      w.lora_targets = SplitList(o->lora_targets);
    }
    w.paged_optimizer = w.task == Task::kQlora;
    w.weight_dtype = ParseWeightDtype(o->weight_dtype);
    w.kv_dtype = ParseKvDtype(o->kv_dtype);
    w.context = o->context;
    w.concurrency = o->concurrency;
    w.batched_tokens = o->batched_tokens;
    if (o->lora_dropout < 0 || o->lora_dropout >= 1) {
      throw InputError("must be in [0, 1)", "", 0, "--lora-dropout");
    }
    if (o->cuda_context_mib < 0 || o->nccl_mib < 0 || o->fragmentation < 0 || o->fragmentation > 1) {
      throw InputError("overhead constants must be zero or positive (fragmentation at most 1)", "", 0, "--fragmentation");
    }
    Layout l;
    l.gpus = o->gpus;
    l.tp = o->tp;
    l.pp = o->pp;
    l.ep = o->ep;
    l.vpp = o->vpp;
    l.zero = o->zero;
    l.sp = o->sp;
    l.offload_optimizer = o->offload_optimizer;
    l.offload_params = o->offload_params;
    OverheadConfig oc;
    oc.cuda_context = MiB(o->cuda_context_mib);
    oc.nccl_per_group = MiB(o->nccl_mib);
    oc.fragmentation = o->fragmentation;

    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(data) / "gpus.yaml").string());
    const Gpu* gpu = o->gpu.empty() ? nullptr : &cat.Find(o->gpu);
    MemoryEstimate e =
        EstimateMemory(lm.spec, w, l, oc, gpu ? std::optional<int64_t>(gpu->memory_bytes) : std::nullopt);
    if (lm.checkpoint && lm.checkpoint->params != e.params_total) {
      e.notes.push_back(fmt::format(
          "the checkpoint holds {} parameters but config.json describes {} (difference {}): extra modules "
          "(e.g. DeepSeek's multi-token-prediction layers) or a config that does not match the weights",
          lm.checkpoint->params, e.params_total, lm.checkpoint->params - e.params_total));
    }
    std::vector<Suggestion> sug;
    const bool fits = gpu == nullptr || Fits(e, *gpu);
    if (!fits) {
      sug = SuggestFixes(lm.spec, w, l, *gpu, cat, oc);
    }
    if (g.json) {
      nlohmann::json j = FitToJson(lm.spec, w, l, gpu, e, sug);
      if (lm.checkpoint) {
        j["checkpoint"] = {{"files", lm.checkpoint->files},
                           {"params", lm.checkpoint->params},
                           {"bytes", lm.checkpoint->bytes},
                           {"params_by_dtype", lm.checkpoint->params_by_dtype}};
      }
      std::cout << j.dump(2) << "\n";
    } else {
      if (lm.checkpoint) {
        std::cout << fmt::format("checkpoint {} safetensors file(s): {} parameters, {:.2f} GiB\n", lm.checkpoint->files,
                                 Count(lm.checkpoint->params), Bytes(static_cast<double>(lm.checkpoint->bytes)).gib());
      }
      PrintTable(lm.spec, w, l, gpu, e, sug);
    }
    return fits ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
