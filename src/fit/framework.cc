#include "fit/framework.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

const std::vector<std::string>& ProfileKeys() {
  static const std::vector<std::string> keys = {
      "name",         "version",       "extends",              "kind",
      "description",  "grad_dtype",    "loss",                 "loss_chunks",          "param_gather",
      "ddp_bucket_copy",               "overlap_comm",         "reduce_bucket_elements",
      "allgather_bucket_elements",     "prefetch_bucket_elements", "load_peak",
      "recompute",    "kv_rule",       "kv_fraction",          "kv_fraction_scale",
      "kv_fraction_rule",              "kv_block_tokens",      "kv_block_rule",
      "max_num_seqs", "batched_tokens", "large_card",          "cuda_graph_mib",
      "context_outside_fraction",      "weights",              "sources",
      "batched_tokens_rule",           "card_f16_tflops",
      "attention",    "elementwise",   "default_precision",    "default_recompute",
      "checkpoint_weights",            "checkpoint_save",      "checkpoint_async",
      "interleaved_pipeline",          "pipeline_split",       "tp_comm_overlap",      "max_num_seqs_runs",
      "kv_overflow",  "mixed_batches", "tp_gather",    "fp8_head",
      "glu",          "fp8_saved_input", "default_zero"};
  return keys;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// One of `choices` (or `fallback` when the key is absent), or Fail naming them.
std::string Choice(const YamlMap& m, const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& choices) {
  const std::string v = m.Str(key, false, fallback);
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    m.Fail(key, "expected " + JoinOr(choices) + ", got '" + v + "'");
  }
  return v;
}

bool Flag(const YamlMap& m, const std::string& key, bool fallback) {
  const std::string v = m.Str(key, false, fallback ? "true" : "false");
  if (v != "true" && v != "false") {
    m.Fail(key, "expected true or false, got '" + v + "'");
  }
  return v == "true";
}

const char* LossName(LossKind k) {
  switch (k) {
    case LossKind::kChunked: return "chunked";
    case LossKind::kFused: return "fused";
    case LossKind::kFp32Once: return "fp32_once";
    case LossKind::kChunkedLinear: return "chunked_linear";
    case LossKind::kChunkedBackward: return "chunked_backward";
    case LossKind::kTeFused: return "te_fused";
    case LossKind::kFull: break;
  }
  return "full";
}

const char* LoadPeakName(LoadPeak k) {
  return k == LoadPeak::kBf16BeforeQuant ? "bf16_before_quant" : k == LoadPeak::kUnshardedWeights ? "unsharded_weights"
                                                                                                : "none";
}

// A profile's keys over `p` (the generic convention, or the profile it extends): a key the
// entry does not write keeps p's value.
void ReadProfileKeys(const YamlMap& m, FrameworkProfile& p) {
  p.kind = Choice(m, "kind", p.kind, {"training", "inference"});
  p.description = m.Str("description", false, p.description);
  p.fp32_grads = Choice(m, "grad_dtype", p.fp32_grads ? "fp32" : "param", {"param", "fp32"}) == "fp32";
  p.param_gather_after_step = Choice(m, "param_gather", p.param_gather_after_step ? "after_step" : "next_forward",
                                     {"next_forward", "after_step"}) == "after_step";
  if (m.Has("default_recompute")) {
    p.default_recompute = Choice(m, "default_recompute", "none", {"none", "selective", "op", "full"});
  }
  p.default_zero = static_cast<int>(m.Count("default_zero", false, p.default_zero, 0, 3));
  if (m.Has("default_precision")) {
    p.default_precision = Choice(m, "default_precision", "mixed", {"mixed", "bf16", "fp32"});
  }
  const std::string loss = Choice(m, "loss", LossName(p.loss),
                                  {"full", "chunked", "fused", "fp32_once", "chunked_linear", "chunked_backward", "te_fused"});
  p.loss = loss == "chunked"            ? LossKind::kChunked
           : loss == "fused"            ? LossKind::kFused
           : loss == "fp32_once"        ? LossKind::kFp32Once
           : loss == "chunked_linear"   ? LossKind::kChunkedLinear
           : loss == "chunked_backward" ? LossKind::kChunkedBackward
           : loss == "te_fused"         ? LossKind::kTeFused
                                        : LossKind::kFull;
  const bool chunks = p.loss == LossKind::kChunked || p.loss == LossKind::kChunkedLinear ||
                      p.loss == LossKind::kChunkedBackward;
  p.loss_chunks = m.Count("loss_chunks", false, chunks ? p.loss_chunks : 1, 1, 1 << 20);
  if (chunks && p.loss_chunks < 2) {
    m.Fail("loss_chunks", "a chunked loss needs at least 2 chunks");
  }
  p.ddp_bucket_copy = Flag(m, "ddp_bucket_copy", p.ddp_bucket_copy);
  const std::string overlap = Choice(m, "overlap_comm", p.overlap_comm, {"never", "always", "zero3"});
  p.overlap_comm = overlap;
  p.reduce_bucket_elements = m.Num("reduce_bucket_elements", false, p.reduce_bucket_elements, 0, 1e13);
  p.allgather_bucket_elements = m.Num("allgather_bucket_elements", false, p.allgather_bucket_elements, 0, 1e13);
  p.prefetch_bucket_elements = m.Num("prefetch_bucket_elements", false, p.prefetch_bucket_elements, 0, 1e13);
  const std::string load =
      Choice(m, "load_peak", LoadPeakName(p.load_peak), {"none", "bf16_before_quant", "unsharded_weights"});
  p.load_peak = load == "bf16_before_quant"   ? LoadPeak::kBf16BeforeQuant
                : load == "unsharded_weights" ? LoadPeak::kUnshardedWeights
                                              : LoadPeak::kNone;
  if (m.Has("recompute")) {
    p.recompute = m.Strings("recompute");
  }
  const std::string rule = Choice(m, "kv_rule", ToString(p.kv_rule), {"none", "vllm", "sglang", "lmdeploy"});
  p.kv_rule = rule == "vllm" ? KvRule::kVllm : rule == "sglang" ? KvRule::kSglang
              : rule == "lmdeploy" ? KvRule::kLmdeploy : KvRule::kNone;
  p.kv_fraction_rule = Choice(m, "kv_fraction_rule", p.kv_fraction_rule, {"fixed", "sglang", "sglang_prefill_graph"});
  p.kv_fraction = m.Num("kv_fraction", p.kv_rule != KvRule::kNone && p.kv_fraction == 0, p.kv_fraction, 0.01, 1);
  p.kv_fraction_scale = m.Num("kv_fraction_scale", false, p.kv_fraction_scale, 0.01, 1);
  p.kv_block_tokens = m.Count("kv_block_tokens", false, p.kv_block_tokens, 1, 1 << 20);
  p.kv_block_rule = Choice(m, "kv_block_rule", p.kv_block_rule, {"fixed", "tgi_attention"});
  p.max_num_seqs = m.Count("max_num_seqs", false, p.max_num_seqs, 1, 1 << 20);
  p.batched_tokens = m.Count("batched_tokens", false, p.batched_tokens, 0, 1 << 24);
  p.batched_tokens_rule = Choice(m, "batched_tokens_rule", p.batched_tokens_rule, {"fixed", "tgi_compute_optimal"});
  if (const auto cards = m.Map("card_f16_tflops", "expected a mapping of card name: TFLOP/s")) {
    p.card_f16_tflops.clear();
    for (const auto& kv : m.Node("card_f16_tflops")) {
      const std::string card = kv.first.Scalar();
      p.card_f16_tflops[card] = cards->Num(card, true, 0, 1, 1e5);
    }
  }
  if (const auto large = m.Map("large_card", "expected a mapping: min_memory_gib, except, max_num_seqs, batched_tokens")) {
    large->Only({"min_memory_gib", "except", "max_num_seqs", "batched_tokens"});
    LargeCardRule r;
    r.min_memory_gib = large->Num("min_memory_gib", true, 0, 1, 1e6);
    r.except = large->Strings("except");
    r.max_num_seqs = large->Count("max_num_seqs", true, 1, 1, 1 << 20);
    r.batched_tokens = large->Count("batched_tokens", true, 1, 1, 1 << 24);
    p.large_card = r;
  }
  p.cuda_graph_mib = m.Num("cuda_graph_mib", false, p.cuda_graph_mib, 0, 1e6);
  p.context_outside_fraction = Flag(m, "context_outside_fraction", p.context_outside_fraction);
  p.gguf = Choice(m, "weights", p.gguf ? "gguf" : "native", {"native", "gguf"}) == "gguf";
  p.attention = Choice(m, "attention", p.attention, {"fa2", "fa3"});
  p.eager_elementwise = Choice(m, "elementwise", p.eager_elementwise ? "eager" : "fused", {"fused", "eager"}) == "eager";
  p.checkpoint_half_weights =
      Choice(m, "checkpoint_weights", p.checkpoint_half_weights ? "half_and_master" : "training", {"half_and_master", "training"}) ==
      "half_and_master";
  p.checkpoint_save = Choice(m, "checkpoint_save", p.checkpoint_save, {"rank0", "replica0", "sharded"});
  p.checkpoint_async = Flag(m, "checkpoint_async", p.checkpoint_async);
  p.interleaved_pipeline = Flag(m, "interleaved_pipeline", p.interleaved_pipeline);
  p.even_pipeline_split = Choice(m, "pipeline_split", p.even_pipeline_split ? "even" : "any", {"any", "even"}) == "even";
  p.tp_comm_overlap = Flag(m, "tp_comm_overlap", p.tp_comm_overlap);
  p.fp8_tp_gather = Choice(m, "tp_gather", p.fp8_tp_gather ? "fp8" : "bf16", {"bf16", "fp8"}) == "fp8";
  p.fp8_head = Choice(m, "fp8_head", p.fp8_head ? "fp8" : "bf16", {"fp8", "bf16"}) == "fp8";
  p.fused_glu = Choice(m, "glu", p.fused_glu ? "fused" : "eager", {"eager", "fused"}) == "fused";
  p.fp8_saved_input =
      Choice(m, "fp8_saved_input", p.fp8_saved_input ? "fp8" : "training", {"training", "fp8"}) == "fp8";
  p.max_num_seqs_runs = Flag(m, "max_num_seqs_runs", p.max_num_seqs_runs);
  p.mixed_batches = Flag(m, "mixed_batches", p.mixed_batches);
  p.kv_overflow = ParseKvOverflow(
      Choice(m, "kv_overflow", ToString(p.kv_overflow), {"unlimited", "preempt", "reserve"}), "kv_overflow");
  if (p.kv_overflow != KvOverflow::kUnlimited && p.kv_rule == KvRule::kNone) {
    m.Fail("kv_overflow", "a KV overflow policy needs the server's KV space (kv_rule)");
  }
  if (m.Has("sources")) {
    p.sources = m.Strings("sources");
  }
}

FrameworkProfile ParseProfile(const YAML::Node& n, std::size_t index, const std::string& file,
                              const std::map<std::string, std::string>& sources,
                              const std::vector<FrameworkProfile>& earlier) {
  if (!n.IsMap()) {
    throw InputError("expected a mapping", file, YamlLine(n), "frameworks[" + std::to_string(index) + "]");
  }
  const YamlMap head(n, "frameworks[" + std::to_string(index) + "].", file);
  const std::string name = head.Str("name", true);
  const std::string version = head.Str("version", name != "generic");
  const YamlMap m(n, "frameworks[" + name + (version.empty() ? "" : "@" + version) + "].", file);
  m.Only(ProfileKeys());
  FrameworkProfile p;
  if (m.Has("extends")) {
    // A version that differs from another in a few values: that profile, then these keys.
    const std::string base = m.Str("extends", true);
    const auto it = std::find_if(earlier.begin(), earlier.end(), [&](const FrameworkProfile& q) { return q.Id() == base; });
    if (it == earlier.end()) {
      m.Fail("extends", "'" + base + "' is not a profile listed above (NAME@VERSION)");
    }
    p = *it;
    p.sources.clear();
  }
  p.name = name;
  p.version = version;
  p.line = m.line();
  if (p.family.empty()) {
    p.family = name;  // no `extends`: the root of its own family (an extended profile keeps its base's)
  }
  ReadProfileKeys(m, p);
  if ((p.kv_rule != KvRule::kNone || p.gguf) && p.kind != "inference") {
    m.Fail("kind", "an inference rule (kv_rule, weights) needs kind: inference");
  }
  if (p.sources.empty()) {
    m.Fail("sources", "every profile names its sources");
  }
  for (const auto& s : p.sources) {
    if (sources.count(s) == 0) {
      m.Fail("sources", "source '" + s + "' is not in the file's sources map");
    }
  }
  return p;
}

}  // namespace

FrameworkCatalog FrameworkCatalog::Parse(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlText(text, file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with frameworks, allocator, gguf_types and sources", file, YamlLine(root));
  }
  const YamlMap top(root, "", file);
  top.Only({"frameworks", "allocator", "gguf_types", "sources"});
  FrameworkCatalog c;
  c.file = file;
  if (top.Has("sources")) {
    const YAML::Node s = root["sources"];
    if (!s.IsMap()) {
      top.Fail("sources", "expected a mapping of key: text");
    }
    for (const auto& kv : s) {
      c.sources[kv.first.Scalar()] = kv.second.Scalar();
    }
  }
  const YAML::Node list = root["frameworks"];
  if (!list || !list.IsSequence()) {
    top.Fail("frameworks", "expected a list of profiles");
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    FrameworkProfile p = ParseProfile(list[i], i, file, c.sources, c.profiles);
    p.is_default = true;
    for (const auto& q : c.profiles) {
      if (NormalizeName(q.name) == NormalizeName(p.name)) {
        if (q.version == p.version) {
          throw InputError("duplicate profile '" + p.Id() + "' (first at line " + std::to_string(q.line) + ")", file,
                           p.line, "frameworks[" + p.Id() + "].version");
        }
        p.is_default = false;  // the first listed version of a framework is its default
      }
    }
    c.profiles.push_back(std::move(p));
  }
  if (std::none_of(c.profiles.begin(), c.profiles.end(), [](const FrameworkProfile& p) { return p.IsGeneric(); })) {
    top.Fail("frameworks", "the list must hold the default profile 'generic'");
  }
  if (const auto alloc = top.Map("allocator", "expected a mapping")) {
    alloc->Only({"reserve_fraction", "sources", "cuda_context_mib", "context_sources"});
    for (const char* key : {"sources", "context_sources"}) {
      for (const auto& s : alloc->Strings(key)) {
        if (c.sources.count(s) == 0) {
          alloc->Fail(key, "source '" + s + "' is not in the file's sources map");
        }
      }
    }
    c.reserve_fraction = alloc->Num("reserve_fraction", false, 0.05, 0, 1);
    if (const auto ctx = alloc->Map("cuda_context_mib", "expected a mapping of architecture: MiB")) {
      for (const auto& kv : alloc->Node("cuda_context_mib")) {
        const std::string arch = kv.first.Scalar();
        c.cuda_context_mib[arch] = ctx->Num(arch, true, 0, 0, 1e6);
      }
    }
  }
  if (const auto g = top.Map("gguf_types", "expected a mapping of type: bits per weight")) {
    for (const auto& kv : top.Node("gguf_types")) {
      const std::string type = kv.first.Scalar();
      c.gguf_bits[Upper(type)] = g->Num(type, true, 0, 1, 32);
    }
  }
  return c;
}

FrameworkCatalog FrameworkCatalog::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

FrameworkCatalog LoadFrameworkCatalog(const std::string& data_dir) {
  return FrameworkCatalog::Load(data_dir + "/frameworks.yaml");
}

std::vector<int64_t> VppCandidates(const FrameworkProfile& f, int64_t layers, int64_t pp) {
  std::vector<int64_t> out{1};
  if (pp <= 1 || !f.interleaved_pipeline) {
    return out;
  }
  if (f.even_pipeline_split) {
    if (layers % pp != 0) {
      return out;
    }
    for (int64_t v = 2; v <= 8 && v <= layers / pp; ++v) {
      if ((layers / pp) % v == 0) {
        out.push_back(v);
      }
    }
    return out;
  }
  // Free to split unevenly: the powers of two, and every v that divides a stage's layers into
  // equal chunks (the bubble's slots are as long as the largest chunk, docs/time-model.md §2).
  const int64_t stage = (layers + pp - 1) / pp;
  for (int64_t v = 2; v <= 8 && pp * v <= layers; ++v) {
    if ((v & (v - 1)) == 0 || stage % v == 0) {
      out.push_back(v);
    }
  }
  return out;
}

std::string VppRefusal(const FrameworkProfile& f, int64_t layers, int64_t pp, int64_t vpp) {
  if (vpp <= 1 || !f.even_pipeline_split) {
    return "";
  }
  const std::string who = f.name + (f.version.empty() ? "" : " " + f.version);
  if (layers % pp != 0) {
    return who + " splits the layers evenly over the pipeline stages: " + std::to_string(layers) +
           " layers do not divide by pp " + std::to_string(pp);
  }
  if ((layers / pp) % vpp != 0) {
    return who + " splits each stage's layers evenly over its virtual stages: " + std::to_string(layers / pp) +
           " layers a stage do not divide by vpp " + std::to_string(vpp);
  }
  return "";
}

const char* ToString(KvRule rule) {
  switch (rule) {
    case KvRule::kVllm: return "vllm";
    case KvRule::kSglang: return "sglang";
    case KvRule::kLmdeploy: return "lmdeploy";
    case KvRule::kNone: break;
  }
  return "none";
}

std::vector<std::string> FrameworkCatalog::Names() const {
  std::vector<std::string> out;
  for (const auto& p : profiles) {
    if (p.is_default) {
      out.push_back(p.name);
    }
  }
  return out;
}

const FrameworkProfile& FrameworkCatalog::Find(const std::string& request) const {
  const auto at = request.find('@');
  const std::string name = request.substr(0, at);
  const std::string version = at == std::string::npos ? "" : request.substr(at + 1);
  std::vector<const FrameworkProfile*> versions;
  for (const auto& p : profiles) {
    if (NormalizeName(p.name) == NormalizeName(name)) {
      versions.push_back(&p);
    }
  }
  if (versions.empty()) {
    const std::vector<std::string> closest = ClosestNames(name, Names());
    const std::string hint = closest.empty() ? "" : "; did you mean " + JoinOr(closest) + "?";
    throw InputError::Option("framework", "unknown framework '" + name + "'" + hint + " (profiles in " + file + ": " + JoinOr(Names()) + ")", closest);
  }
  if (at == std::string::npos) {
    return *versions.front();  // the default: the first listed, the newest release
  }
  // "0.20" selects version 0.20 and 0.20.x; "5" selects 5.0.
  for (const FrameworkProfile* p : versions) {
    if (p->version == version || (p->version.size() > version.size() && p->version.compare(0, version.size(), version) == 0 &&
                                  p->version[version.size()] == '.')) {
      return *p;
    }
  }
  std::vector<std::string> known;
  for (const FrameworkProfile* p : versions) {
    known.push_back(p->Id());
  }
  throw InputError::Option("framework", "no profile for " + versions.front()->name + " version '" + version + "' (profiles: " + JoinOr(known) +
                       "; the default is " + versions.front()->Id() + ")", known);
}

double FrameworkCatalog::GgufBits(const std::string& type) const {
  const auto it = gguf_bits.find(Upper(type));
  if (it != gguf_bits.end()) {
    return it->second;
  }
  std::vector<std::string> names;
  for (const auto& [k, v] : gguf_bits) {
    names.push_back(k);
  }
  const std::vector<std::string> closest = ClosestNames(type, names);
  const std::string hint = closest.empty() ? "" : "; did you mean " + JoinOr(closest) + "?";
  throw InputError::Option("gguf_type", "unknown GGUF type '" + type + "'" + hint + " (" + JoinOr(names) + ")", closest);
}

}  // namespace gpuplan

namespace gpuplan {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// SGLang's per-card defaults (python/sglang/srt/server_args.py _handle_gpu_memory_settings, the same
// table at v0.5.6.post2 L753-835 and main 8905cbd42 L3893-3947): chunked_prefill_size and the
// decode CUDA graph's max batch size by nvidia-smi memory.total in MiB and tp.
struct SglangCardDefaults {
  double chunked_prefill = 0;
  double graph_max_bs = 0;
  double prefill_graph_sizes = 0;  // entries of the prefill CUDA graph's batch-size list (main)
};

SglangCardDefaults SglangDefaults(double gpu_mib, int64_t tp) {
  const bool tp4 = tp >= 4;
  // The prefill graph's list for a max of 2048 / 4096 / 8192 / 16384 tokens has 42 / 50 / 58 / 74
  // entries (_generate_prefill_cuda_graph_batch_sizes, main L4232-4249).
  if (gpu_mib < 20 * 1024) return {2048, 8, 42};
  if (gpu_mib < 35 * 1024) return {2048, tp4 ? 80.0 : 24.0, 42};
  if (gpu_mib < 60 * 1024) return {4096, tp4 ? 160.0 : 32.0, 50};
  if (gpu_mib < 90 * 1024) return {8192, tp4 ? 512.0 : 256.0, 58};
  if (gpu_mib < 160 * 1024) return {8192, tp4 ? 512.0 : 256.0, 58};
  return {16384, 512, 74};
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

CardFramework FrameworkOnCard(const FrameworkProfile& f, const Gpu& gpu, const ModelSpec& m, int64_t tp, int64_t pp) {
  CardFramework out{f, ""};
  FrameworkProfile& r = out.profile;
  std::vector<std::string> notes;
  const double gib = static_cast<double>(gpu.memory_bytes) / (kMiB * 1024.0);
  if (f.large_card) {
    // vllm/engine/arg_utils.py _set_default_args: >= 70 GiB and not an A100 (for `vllm serve`).
    const LargeCardRule& l = *f.large_card;
    const std::string name = Lower(gpu.name);
    const bool excepted = std::any_of(l.except.begin(), l.except.end(),
                                      [&](const std::string& e) { return name.find(Lower(e)) != std::string::npos; });
    if (gib >= l.min_memory_gib && !excepted) {
      r.max_num_seqs = l.max_num_seqs;
      r.batched_tokens = l.batched_tokens;
    }
    notes.push_back(fmt::format("max_num_seqs {}, max_num_batched_tokens {} ({:.0f} GiB{})", r.max_num_seqs,
                                r.batched_tokens, gib,
                                excepted ? ", an A100" : gib >= l.min_memory_gib ? "" : fmt::format(", under {:g} GiB", l.min_memory_gib)));
  }
  if (f.kv_fraction_rule != "fixed") {
    // SGLang's default mem_fraction_static (server_args.py, v0.5.3 a17e70f5c + dda34c2f9; main adds
    // the prefill CUDA graph's reserve_for_graph_mb): all in MiB of nvidia-smi memory.total.
    const double mib = static_cast<double>(gpu.memory_bytes) / kMiB;
    const SglangCardDefaults d = SglangDefaults(mib, tp);
    double reserved = 512 + std::max(d.chunked_prefill, 2048.0) * 1.5 + d.graph_max_bs * 2 +
                      static_cast<double>(tp * pp) / 8 * 1024;
    if (f.kv_fraction_rule == "sglang_prefill_graph" && !m.mla) {
      reserved += d.prefill_graph_sizes * 8;
    } else if (f.kv_fraction_rule == "sglang_prefill_graph") {
      reserved += 1.5 * 1024;
    }
    if (mib > 60 * 1024) {
      reserved = std::max(reserved, 10.0 * 1024);
    }
    r.kv_fraction = std::round((mib - reserved) / mib * 1000) / 1000;
    notes.push_back(fmt::format("mem_fraction_static {:.3f} = ({:.0f} - {:.0f} reserved MiB) / {:.0f} MiB", r.kv_fraction,
                                mib, reserved, mib));
  }
  if (f.kv_block_rule == "tgi_attention") {
    // launcher/src/main.rs resolve_attention (v3.3.7): flashinfer (1-token blocks) when the head
    // dim (config.json's, else hidden / heads: Config::from) is 64, 128 or 256 and the model is
    // not falcon/deepseek_v2, on every card; else flashdecoding (256) on compute capability >= 8,
    // paged (16) below (models/globals.py BLOCK_SIZE).
    const bool flashinfer = (m.head_dim == 64 || m.head_dim == 128 || m.head_dim == 256) && !m.mla &&
                            m.model_type != "falcon" && m.model_type != "deepseek_v2";
    const bool sm8 = !gpu.compute_capability.empty() && std::atof(gpu.compute_capability.c_str()) >= 8.0;
    r.kv_block_tokens = flashinfer ? 1 : sm8 ? 256 : 16;
    notes.push_back(flashinfer ? std::string("flashinfer attention, 1-token KV blocks")
                    : sm8      ? std::string("flashdecoding attention, 256-token KV blocks (head dim not 64/128/256)")
                               : std::string("paged attention, 16-token KV blocks (compute capability under 8)"));
  }
  if (f.batched_tokens_rule == "tgi_compute_optimal") {
    // launcher/src/main.rs (v3.3.7) max_batch_prefill_tokens: compute_optimal = the card's fp16
    // FLOP/s x shards / Config::flop() (per token: q, k, v, attention, o and 2 x 3 x h x I per
    // layer), used when over 100, else 4096; at most max_position_embeddings; at most
    // vram_maximum = (memory.total x shards x cuda_memory_fraction (1.0) x 0.95 - model_vram) /
    // token_vram. The card is found by its nvidia-smi name, spaces as dashes, lower case.
    const double shards = static_cast<double>(tp * pp);
    double tflops = 0;
    std::string card = "unknown";
    for (const std::string& name : gpu.aliases) {
      std::string key = Lower(name);
      std::replace(key.begin(), key.end(), ' ', '-');
      if (const auto it = f.card_f16_tflops.find(key); it != f.card_f16_tflops.end()) {
        tflops = it->second;
        card = key;
        break;
      }
    }
    const double h = static_cast<double>(m.hidden);
    const double hd = static_cast<double>(m.head_dim);
    const double nh = static_cast<double>(m.heads);
    const double nkv = static_cast<double>(m.kv_heads);
    const double layers = static_cast<double>(m.layers);
    const double inter = static_cast<double>(m.intermediate);
    const double per_token = m.moe ? static_cast<double>(m.moe->experts_per_token) : 1.0;
    const double experts = m.moe ? static_cast<double>(m.moe->experts) : 1.0;
    int64_t value = f.batched_tokens > 0 ? f.batched_tokens : 4096;
    std::string why = "the launcher's default";
    if (tflops > 0) {
      const double flop = (3.0 * 2 * nh * hd * h + 2.0 * 2 * nkv * hd * h + 2.0 * 3 * h * inter * per_token) * layers;
      const auto optimal = static_cast<int64_t>(std::floor(tflops * 1e12 * shards / flop));
      if (optimal > 100) {
        value = optimal;
        why = fmt::format("{:g} TFLOP/s of {} x {:g} / {:.4g} FLOP per token", tflops, card, shards, flop);
      }
    }
    if (m.max_positions > 0 && m.max_positions < value) {
      value = m.max_positions;
      why = "max_position_embeddings";
    }
    const double mib = std::floor(static_cast<double>(gpu.memory_bytes) / kMiB);
    const auto available = static_cast<double>(static_cast<float>(mib * kMiB * shards) * 1.0F * 0.95F);
    const double model_vram = 2.0 * ((3.0 * inter * experts * h + (nh + 2 * nkv) * hd + nh * hd * h) * layers +
                                     2.0 * h * static_cast<double>(m.vocab));
    const double token_vram = nkv * 2 * hd * 2 * layers + (inter + std::floor(inter / 2)) * experts * 2 * 3;
    if (available > model_vram && token_vram > 0) {
      const auto cap = static_cast<int64_t>(std::floor((available - model_vram) / token_vram));
      if (cap < value) {
        value = cap;
        why = "the launcher's VRAM estimate";
      }
    }
    r.batched_tokens = value;
    notes.push_back(fmt::format("warm-up prefill of {} tokens ({})", value, why));
  }
  for (const auto& n : notes) {
    out.note += (out.note.empty() ? f.Label() + " on " + gpu.name + ": " : "; ") + n;
  }
  return out;
}

void DeepSpeedOverlapComm(bool overlap, FrameworkProfile& f) {
  if (f.reduce_bucket_elements > 0) {
    f.overlap_comm = overlap ? "always" : "zero3";
  }
}

}  // namespace gpuplan
