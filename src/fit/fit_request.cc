#include "fit/fit_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "core/error.h"

namespace gpuplan {
namespace {

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
  throw InputError::Option(field, "expected on or off, got '" + s + "'");
}

Workload WorkloadOf(const FitRequest& r) {
  Workload w;
  w.task = ParseTask(r.task);
  w.precision = ParsePrecision(r.precision);
  w.optimizer = ParseOptimizer(r.optimizer);
  w.seq = r.seq;
  w.micro_batch = r.micro_batch;
  w.global_batch = r.global_batch;
  w.recompute = ParseRecompute(r.recompute);
  w.flash_attn = ParseOnOff(r.flash_attn, "flash_attn");
  w.fp8 = ParseOnOff(r.fp8, "fp8");
  if (w.fp8 && w.task == Task::kInfer) {
    throw InputError::Option("fp8", "applies to training; for inference use `weight_dtype` fp8");
  }
  w.lora_rank = r.lora_rank;
  w.lora_dropout = r.lora_dropout;
  if (r.lora_targets != "all-linear" && r.lora_targets != "all") {
    w.lora_targets = SplitList(r.lora_targets);
  }
  w.paged_optimizer = w.task == Task::kQlora;
  w.weight_dtype = ParseWeightDtype(r.weight_dtype);
  w.kv_dtype = ParseKvDtype(r.kv_dtype);
  w.context = r.context;
  if (w.task == Task::kInfer && !r.context_given && (r.qps > 0 || r.request_lengths_given)) {
    // Sizing for a request rate, or for requests of a stated length: each sequence holds the KV
    // cache of its own request (paged KV cache, Kwon et al. 2023), not a --context window.
    w.context = r.prompt_tokens + r.output_tokens;
  }
  w.concurrency = r.concurrency;
  w.batched_tokens = r.batched_tokens;
  w.batched_tokens_given = r.batched_tokens_given;
  return w;
}

// --loss over the profile's cross-entropy (§8.3); a chunked loss keeps the profile's chunk count,
// or torchtune's 8 (CEWithChunkedOutputLoss's default) when the profile's loss is not chunked.
void ApplyLoss(const std::string& loss, FrameworkProfile& f) {
  if (loss.empty()) {
    return;
  }
  if (loss == "chunked") {
    f.loss_chunks = f.loss == LossKind::kChunked ? f.loss_chunks : 8;
    f.loss = LossKind::kChunked;
  } else if (loss == "fused") {
    f.loss = LossKind::kFused;
  } else if (loss == "full") {
    f.loss = LossKind::kFull;
  } else {
    throw InputError::Option("loss", "must be full, chunked or fused");
  }
}

// §8 of docs/memory-model.md: the profile's conventions into the overheads.
void ApplyFramework(const FitRequest& r, const std::string& data_dir, FitInputs& in) {
  if (r.gpu_memory_utilization && !(*r.gpu_memory_utilization > 0 && *r.gpu_memory_utilization <= 1)) {
    throw InputError::Option("gpu_memory_utilization", "must be in (0, 1]");
  }
  if (!r.loss.empty()) {
    if (in.workload.task == Task::kInfer) {
      throw InputError::Option("loss", "applies to training (the loss of an inference job is not computed)");
    }
  }
  ApplyLoss(r.loss, in.overhead.framework);
  if (r.framework == "generic") {
    return;  // the documented generic convention, no file needed
  }
  const FrameworkCatalog catalog = LoadFrameworkCatalog(data_dir);
  const FrameworkProfile& f = catalog.Find(r.framework);
  const bool infer = in.workload.task == Task::kInfer;
  if (!f.IsGeneric() && (f.kind == "inference") != infer) {
    throw InputError::Option("framework", f.name + " is a" + (infer ? " training" : "n inference") + " framework; `task` " + r.task +
                         " needs a" + (infer ? "n inference" : " training") + " profile");
  }
  if (r.gpu_memory_utilization && f.kv_rule == KvRule::kNone) {
    throw InputError::Option("gpu_memory_utilization", "applies to an inference server profile (vllm, sglang, lmdeploy, tgi)");
  }
  in.overhead.framework = f;
  ApplyLoss(r.loss, in.overhead.framework);
  if (!r.precision_given && !f.default_precision.empty() && IsTraining(in.workload.task)) {
    // transformers v5 loads a bf16 checkpoint in bf16 and the Trainer trains those parameters:
    // pure bf16 unless --precision says otherwise (docs/memory-model.md §8).
    in.workload.precision = ParsePrecision(f.default_precision);
  }
  if (!r.recompute_given && !f.default_recompute.empty() && IsTraining(in.workload.task)) {
    // LLaMA-Factory turns gradient checkpointing on unless disable_gradient_checkpointing: the
    // layout of one card takes it; a search still tries every recomputation.
    in.workload.recompute = ParseRecompute(f.default_recompute);
  }
  const bool full_training = in.workload.task == Task::kPretrain || in.workload.task == Task::kFull;
  if (!r.pinned.zero && f.default_zero > 0 && full_training) {
    // Megatron-Bridge's pretraining and full fine-tuning recipes shard the optimizer states over
    // the data-parallel ranks (the distributed optimizer; its PEFT recipes do not): one layout
    // without --zero takes it; a search still tries each stage.
    in.layout.zero = f.default_zero;
  }
  in.overhead.kv_fraction = r.gpu_memory_utilization.value_or(0);
  if (f.gguf) {
    in.overhead.gguf_bits = catalog.GgufBits(r.gguf_type);
  }
  if (!f.IsGeneric()) {
    if (!r.cuda_context_given) {
      in.cuda_context_mib = catalog.cuda_context_mib;
    }
  }
}

}  // namespace

bool FitRequest::IsSearch() const { return gpu.empty() || gpu.find(',') != std::string::npos || max_gpus_given; }

double FitRequest::JobTokens() const {
  double t = tokens;
  if (epochs > 0 || dataset_tokens > 0) {
    if (epochs <= 0 || dataset_tokens <= 0) {
      throw InputError::Option("epochs", "`epochs` and `dataset_tokens` go together");
    }
    t = epochs * dataset_tokens;
  }
  if (t < 0) {
    throw InputError::Option("tokens", "must be positive");
  }
  return t;
}

FitInputs PrepareFit(const FitRequest& r, const std::string& data_dir) {
  FitInputs in;
  if (r.model_config) {
    in.model = LoadModelFromConfigText(*r.model_config, "config", r.model);
  } else if (r.presets_only) {
    in.model = LoadPresetModel(r.model, data_dir);
  } else {
    in.model = LoadModel(r.model, data_dir);
  }
  in.workload = WorkloadOf(r);
  if (r.lora_dropout < 0 || r.lora_dropout >= 1) {
    throw InputError::Option("lora_dropout", fmt::format("must be in [0, 1), got {:g}", r.lora_dropout));
  }
  for (const auto& [v, field] : {std::pair{r.cuda_context_mib, "cuda_context_mib"}, std::pair{r.nccl_mib, "nccl_mib"},
                                 std::pair{r.fragmentation, "fragmentation"}}) {
    if (!(v >= 0)) {
      throw InputError::Option(field, "must be zero or positive");
    }
  }
  if (r.fragmentation > 1) {
    throw InputError::Option("fragmentation", "must be at most 1 (a fraction of the dynamic tensors)");
  }
  Layout& l = in.layout;
  l.gpus = r.gpus;
  l.tp = r.tp;
  l.pp = r.pp;
  l.ep = r.ep;
  l.vpp = r.vpp;
  l.cp = r.cp;
  l.zero = r.zero;
  l.sp = r.sp;
  l.offload_optimizer = r.offload_optimizer;
  l.offload_params = r.offload_params;
  in.overhead.cuda_context = MiB(r.cuda_context_mib);
  in.overhead.nccl_per_group = MiB(r.nccl_mib);
  in.overhead.fragmentation = r.fragmentation;
  ApplyFramework(r, data_dir, in);
  in.time.mfu = r.mfu;
  in.time.tp_overlap = ParseOnOff(r.tp_overlap, "tp_overlap");
  in.time.dp_grad_overlap = ParseOnOff(r.dp_overlap, "dp_overlap");
  in.time.gemm_tables = SharedGemmTables(data_dir);
  in.time.attention = ParseAttentionKernel(r.attention.empty() ? in.overhead.framework.attention : r.attention);
  in.time.loss = in.overhead.framework.loss;
  in.time.fp32_grad_reduce = in.overhead.framework.fp32_grads;
  in.time.fp8_tp_gather = in.overhead.framework.fp8_tp_gather;
  in.time.fp8_head = in.overhead.framework.fp8_head;
  in.time.param_gather_after_step = in.overhead.framework.param_gather_after_step;
  // The memory pays for the overlap the time assumes (DeepSpeed's second reduce bucket), in the
  // layout search too; a single fit may still take it off where it does not fit (§10).
  DeepSpeedOverlapComm(in.time.dp_grad_overlap, in.overhead.framework);
  in.time.eager_elementwise =
      r.compile.empty() ? in.overhead.framework.eager_elementwise : !ParseOnOff(r.compile, "compile");
  if (!r.network.empty()) {
    in.time.network = ParseNetwork(r.network);
  }
  in.tokens = r.JobTokens();
  in.accuracy = LoadTimeAccuracyIn(data_dir);
  DataMovementConfig& d = in.data;
  if (r.storage_gbps) {
    d.storage_gbps = *r.storage_gbps;
    d.storage_given = true;
  }
  if (!r.sync_link.empty()) {
    d.sync_link = ParseLinkRate(r.sync_link, "sync_link");
  }
  d.async = ParseOnOff(r.checkpoint_async, "checkpoint_async");
  d.consolidated = ParseOnOff(r.checkpoint_consolidated, "checkpoint_consolidated");
  if (r.failures_per_gpu_hour) {
    d.failures_per_gpu_hour = *r.failures_per_gpu_hour;
    d.failures_given = true;
  }
  if (r.node_wait_minutes) {
    d.node_wait_seconds = *r.node_wait_minutes * 60.0;
    d.node_wait_source = "given";
  }
  d.dataset_bytes = r.dataset_bytes;
  if (!r.uplink.empty()) {
    d.uplink = ParseLinkRate(r.uplink, "uplink");
  }
  d.gpus_per_node = in.time.gpus_per_node;
  for (const auto& [v, field] : {std::pair{l.gpus, "gpus"}, std::pair{l.tp, "tp"}, std::pair{l.pp, "pp"},
                                 std::pair{l.ep, "ep"}, std::pair{l.vpp, "vpp"}, std::pair{l.cp, "cp"}}) {
    if (v <= 0) {
      throw InputError::Option(field, "must be a positive number, got " + std::to_string(v));
    }
  }
  return in;
}

SearchOptions SearchOptionsOf(const FitRequest& r, const FitInputs& in, const GpuCatalog& catalog) {
  SearchOptions so;
  if (r.gpu.empty()) {
    for (const auto& gpu : catalog.gpus()) {
      so.gpus.push_back(&gpu);
    }
  } else {
    for (const auto& name : SplitList(r.gpu)) {
      so.gpus.push_back(&catalog.Find(name));
    }
  }
  so.pinned = r.pinned;
  so.each_card = !r.gpu.empty();  // a list of cards: the best layout of each is ranked too
  so.max_gpus = r.max_gpus;
  so.margin = r.margin;
  so.objective = ParseObjective(r.objective);
  so.top = static_cast<std::size_t>(std::max<int64_t>(1, r.top));
  so.tokens = in.tokens;
  so.time = in.time;
  so.overhead = in.overhead;
  so.progress = r.progress;
  return so;
}

std::optional<UnstatedSettings> ChooseUnstatedSettings(const GivenSettings& given, const ModelSpec& spec, Workload& w,
                                                       Layout& l, const Gpu& gpu, OverheadConfig& overhead,
                                                       TimeConfig& time, double tokens) {
  const FrameworkProfile& f = overhead.framework;
  std::vector<int64_t> vpps{l.vpp};
  if (!given.vpp) {
    vpps = VppCandidates(f, spec.layers, l.pp);
  }
  std::vector<bool> overlaps{time.tp_overlap};
  if (!given.tp_overlap && l.tp > 1 && l.sp && f.tp_comm_overlap) {
    overlaps = {false, true};
  }
  // Data-parallel overlap (ZeRO 0-2; ZeRO-3's prefetching is not this switch): on first, so a tie
  // (no traffic to hide) keeps the frameworks' usual setting.
  std::vector<bool> dp_overlaps{time.dp_grad_overlap};
  if (!given.dp_overlap && l.dp_cp() > 1 && l.zero < 3) {
    dp_overlaps = {true, false};
  }
  // The global batch every micro-batch must divide into (micro-batch x dp): the given one, or
  // the one the current micro-batch fills the pipeline with (the time model's rule, §1).
  const int64_t dp = std::max<int64_t>(l.dp(), 1);
  const int64_t global = w.global_batch > 0 ? w.global_batch : w.micro_batch * dp * std::max<int64_t>(l.pp, 1);
  std::vector<int64_t> micro_batches{w.micro_batch};
  if (!given.micro_batch) {
    micro_batches.clear();
    for (int64_t mb = 1; mb <= 8; mb *= 2) {
      if (global % (mb * dp) == 0) {
        micro_batches.push_back(mb);
      }
    }
    if (micro_batches.empty()) {
      micro_batches = {w.micro_batch};
    }
  }
  std::vector<Recompute> recomputes{w.recompute};
  if (!given.recompute && f.default_recompute.empty()) {
    recomputes = {Recompute::kNone};
    if (!w.flash_attn) {
      recomputes.push_back(Recompute::kSelective);
    }
    if (std::any_of(f.recompute.begin(), f.recompute.end(),
                    [](const std::string& v) { return FindRecompute(v) == Recompute::kOp; })) {
      recomputes.push_back(Recompute::kOp);
    }
    recomputes.push_back(Recompute::kFull);
  }
  if (vpps.size() == 1 && overlaps.size() == 1 && dp_overlaps.size() == 1 && micro_batches.size() == 1 &&
      recomputes.size() == 1) {
    return std::nullopt;
  }
  struct Combo {
    int64_t vpp;
    bool overlap;
    bool dp_overlap;
    int64_t micro_batch;
    Recompute recompute;
  };
  UnstatedSettings u;
  std::optional<Combo> best, worst;
  const auto consider = [&](const Combo& k) {
    Workload wc = w;
    wc.recompute = k.recompute;
    if (k.micro_batch != w.micro_batch) {
      wc.micro_batch = k.micro_batch;
      wc.global_batch = global;
    }
    Layout lc = l;
    lc.vpp = k.vpp;
    TimeConfig tc = time;
    tc.tp_overlap = k.overlap;
    tc.dp_grad_overlap = k.dp_overlap;
    ++u.combinations;
    // DeepSpeed pays for its overlap with a second reduce bucket (overlap_comm).
    OverheadConfig oc = overhead;
    if (dp_overlaps.size() > 1) {
      DeepSpeedOverlapComm(k.dp_overlap, oc.framework);
    }
    const MemoryEstimate e = EstimateMemory(spec, wc, lc, oc, std::optional<int64_t>(gpu.memory_bytes));
    if (!Fits(e, gpu)) {
      return;
    }
    ++u.fitting;
    const TrainingTime t = EstimateTrainingTime(spec, wc, lc, gpu, tc, tokens);
    if (!best || t.tokens_per_second > u.best_tokens_per_second) {
      best = k;
      u.best_tokens_per_second = t.tokens_per_second;
      u.best_step_seconds = t.step_seconds;
      u.best_mfu = t.mfu;
      u.best_total_hours = t.total_hours;
    }
    if (!worst || t.tokens_per_second < u.worst_tokens_per_second) {
      worst = k;
      u.worst_tokens_per_second = t.tokens_per_second;
      u.worst_step_seconds = t.step_seconds;
      u.worst_mfu = t.mfu;
      u.worst_total_hours = t.total_hours;
    }
  };
  for (Recompute rc : recomputes) {
    for (int64_t mb : micro_batches) {
      for (int64_t v : vpps) {
        for (bool o : overlaps) {
          for (bool d : dp_overlaps) {
            consider(Combo{v, o, d, mb, rc});
          }
        }
      }
    }
  }
  if (!best) {
    return std::nullopt;
  }
  l.vpp = best->vpp;
  time.tp_overlap = best->overlap;
  time.dp_grad_overlap = best->dp_overlap;
  if (dp_overlaps.size() > 1) {
    DeepSpeedOverlapComm(best->dp_overlap, overhead.framework);
  }
  if (best->micro_batch != w.micro_batch) {
    w.micro_batch = best->micro_batch;
    w.global_batch = global;
  }
  w.recompute = best->recompute;
  const auto choice = [&](const char* name, const std::string& chosen, std::vector<std::string> tried,
                          const std::string& slowest) {
    u.choices.push_back({name, chosen, std::move(tried), slowest});
  };
  if (vpps.size() > 1) {
    std::vector<std::string> tried;
    for (int64_t v : vpps) {
      tried.push_back(std::to_string(v));
    }
    choice("vpp", std::to_string(best->vpp), std::move(tried), std::to_string(worst->vpp));
  }
  if (overlaps.size() > 1) {
    choice("tp_overlap", best->overlap ? "on" : "off", {"off", "on"}, worst->overlap ? "on" : "off");
  }
  if (dp_overlaps.size() > 1) {
    choice("dp_overlap", best->dp_overlap ? "on" : "off", {"on", "off"}, worst->dp_overlap ? "on" : "off");
  }
  if (micro_batches.size() > 1) {
    std::vector<std::string> tried;
    for (int64_t mb : micro_batches) {
      tried.push_back(std::to_string(mb));
    }
    choice("micro_batch", std::to_string(best->micro_batch), std::move(tried), std::to_string(worst->micro_batch));
  }
  if (recomputes.size() > 1) {
    std::vector<std::string> tried;
    for (Recompute rc : recomputes) {
      tried.emplace_back(ToString(rc));
    }
    choice("recompute", ToString(best->recompute), std::move(tried), ToString(worst->recompute));
  }
  for (const UnstatedChoice& c : u.choices) {
    u.worst += (u.worst.empty() ? "" : ", ") + c.name + " " + c.slowest;
  }
  return u;
}

namespace {

// What the published-run figures are picked by (src/fit/accuracy.h): fp8 GEMMs in training, fp8
// weights in serving, and the framework profile's family.
AccuracySetup SetupOf(const Workload& w, const FrameworkProfile& f) {
  return {w.fp8 || (!IsTraining(w.task) && w.weight_dtype == WeightDtype::kFp8), f.family};
}

}  // namespace

FitSingle FitOnCard(const FitRequest& r, const FitInputs& in, const Gpu& gpu, const GpuCatalog& catalog) {
  FitSingle s;
  s.gpu = &gpu;
  s.layout = in.layout;
  std::vector<std::string> dtype_notes;
  s.workload = ForCard(in.workload, gpu, &dtype_notes);  // bf16 -> fp16 on cards without bf16 (T4, V100)
  const ModelSpec& spec = in.model.spec;
  const Workload& w = s.workload;
  const Layout& l = s.layout;
  MemoryEstimate& e = s.memory;
  OverheadConfig overhead = in.overhead;
  if (const auto it = in.cuda_context_mib.find(gpu.architecture); it != in.cuda_context_mib.end()) {
    overhead.cuda_context = MiB(it->second);  // §8.4 the card generation's context
  }
  FrameworkForCard(gpu, spec, l, s.workload, overhead, &dtype_notes);
  TimeConfig time = in.time;
  if (IsTraining(w.task) && l.pp > 1) {
    if (const std::string why = VppRefusal(overhead.framework, spec.layers, l.pp, l.vpp); !why.empty()) {
      throw InputError::Option("vpp", why);
    }
  }
  if (IsTraining(w.task)) {
    // Given: marked so by the front end, or (a request built in code) a value other than the default.
    GivenSettings given;
    given.vpp = r.pinned.vpp.has_value() || r.vpp != 1;
    given.tp_overlap = r.tp_overlap_given || r.tp_overlap != "off";
    given.dp_overlap = r.dp_overlap_given || r.dp_overlap != "on";
    given.micro_batch = r.pinned.micro_batch.has_value() || r.micro_batch != 1;
    given.recompute = r.recompute_given || r.pinned.recompute.has_value() || r.recompute != "none";
    s.unstated = ChooseUnstatedSettings(given, spec, s.workload, s.layout, gpu, overhead, time, in.tokens);
  }
  e = EstimateMemory(spec, w, l, overhead, std::optional<int64_t>(gpu.memory_bytes));
  e.notes.insert(e.notes.end(), dtype_notes.begin(), dtype_notes.end());
  const auto& ckpt = in.model.checkpoint;
  if (ckpt && ckpt->params != e.params_total) {
    e.notes.push_back(fmt::format(
        "the checkpoint holds {} parameters but config.json describes {} (difference {}): extra modules "
        "(e.g. DeepSeek's multi-token-prediction layers) or a config that does not match the weights",
        ckpt->params, e.params_total, ckpt->params - e.params_total));
  }
  s.fits = Fits(e, gpu);
  if (!s.fits) {
    // The global batch the user gave (0: none), not the one a chosen micro-batch filled in: a
    // suggestion must hold for the command it is added to.
    Workload ws = w;
    ws.global_batch = in.workload.global_batch;
    s.suggestions = SuggestFixes(spec, ws, l, gpu, catalog, overhead);
  }
  s.network = NetworkFor(in.time, gpu);
  if (!r.mfu) {
    const AccuracySetup setup = SetupOf(w, overhead.framework);
    s.accuracy = AccuracyFor(in.accuracy.get(), IsTraining(w.task), gpu, IsMoe(spec), &setup);
  }
  if (IsTraining(w.task)) {
    s.training = EstimateTrainingTime(spec, w, l, gpu, time, in.tokens);
  } else {
    s.plan = PlanInference(spec, w, l, gpu, in.time, overhead, r.prompt_tokens, r.output_tokens, r.qps,
                           r.latency_ms);
    if (s.plan->fits) {
      // The server runs no more in flight than its KV cache holds (at the steady state of its
      // overflow policy, docs/time-model.md §5.2) or its scheduler admits (§5): a time at more
      // than that would be a throughput no server of this kind reaches.
      Workload ws = w;
      ws.concurrency = std::min(w.concurrency, s.plan->max_concurrency);
      s.shown_concurrency = ws.concurrency;
      s.shown = EstimateInferenceTime(spec, ws, l, gpu, in.time, r.prompt_tokens, r.output_tokens);
    }
    if (r.latency_ms > 0 && !s.plan->meets_latency) {
      s.fits = false;
    }
  }
  s.checkpoint = EstimateCheckpoint(spec, w, l, gpu, overhead.framework, e, in.data,
                                    s.training ? s.training->total_hours.value_or(0.0) : 0.0);
  return s;
}

FitSearch SearchFit(const FitRequest& r, const FitInputs& in, SearchOptions options) {
  FitSearch s;
  s.cards_named = !r.gpu.empty();
  if (IsTraining(in.workload.task)) {
    s.training = SearchTraining(in.model.spec, in.workload, options);
  } else {
    s.inference =
        SearchInference(in.model.spec, in.workload, options, r.prompt_tokens, r.output_tokens, r.qps, r.latency_ms);
  }
  options.progress = nullptr;
  if (!r.mfu) {
    std::vector<const Gpu*> cards;
    const auto add = [&cards](const Gpu* g) {
      if (g != nullptr && std::find(cards.begin(), cards.end(), g) == cards.end()) {
        cards.push_back(g);
      }
    };
    // The cards the answer shows: the ranked rows (the top and the runners-up), and the best of
    // each card when several were named.
    const bool each_card = s.cards_named && options.gpus.size() > 1;
    if (s.training) {
      for (std::size_t i = 0; i < s.training->ranked.size(); ++i) {
        add(s.training->ranked[i].gpu);
      }
      for (std::size_t i = 0; each_card && i < s.training->best_per_gpu.size(); ++i) {
        add(s.training->best_per_gpu[i].gpu);
      }
    } else {
      for (std::size_t i = 0; i < s.inference->ranked.size(); ++i) {
        add(s.inference->ranked[i].gpu);
      }
      for (std::size_t i = 0; each_card && i < s.inference->best_per_gpu.size(); ++i) {
        add(s.inference->best_per_gpu[i].gpu);
      }
    }
    for (const Gpu* g : cards) {
      const AccuracySetup setup = SetupOf(in.workload, in.overhead.framework);
      if (auto note = AccuracyFor(in.accuracy.get(), IsTraining(in.workload.task), *g, IsMoe(in.model.spec), &setup)) {
        s.accuracy.push_back(std::move(*note));
      }
    }
  }
  s.options = std::move(options);
  return s;
}

bool FitSearch::Found() const {
  return training ? !training->ranked.empty() : inference && !inference->ranked.empty();
}

bool FitResult::Positive() const { return single ? single->fits : search && search->Found(); }

}  // namespace gpuplan
