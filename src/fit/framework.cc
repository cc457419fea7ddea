#include "fit/framework.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

const std::set<std::string>& ProfileKeys() {
  static const std::set<std::string> keys = {
      "name",         "kind",          "description",          "grad_dtype",
      "loss",         "loss_chunks",   "ddp_bucket_copy",      "reduce_bucket_elements",
      "allgather_bucket_elements",     "prefetch_bucket_elements", "load_peak",
      "recompute",    "kv_rule",       "kv_fraction",          "kv_block_tokens",
      "max_num_seqs", "weights",       "sources",              "attention",        "elementwise"};
  return keys;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

// One of `choices`, or Fail naming them.
std::string Choice(const YamlMap& m, const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& choices) {
  const std::string v = m.Str(key, false, fallback);
  if (std::find(choices.begin(), choices.end(), v) == choices.end()) {
    m.Fail(key, "expected " + JoinOr(choices) + ", got '" + v + "'");
  }
  return v;
}

bool Flag(const YamlMap& m, const std::string& key) {
  const std::string v = m.Str(key, false, "false");
  if (v != "true" && v != "false") {
    m.Fail(key, "expected true or false, got '" + v + "'");
  }
  return v == "true";
}

FrameworkProfile ParseProfile(const YAML::Node& n, std::size_t index, const std::string& file,
                              const std::map<std::string, std::string>& sources) {
  if (!n.IsMap()) {
    throw InputError("expected a mapping", file, YamlLine(n), "frameworks[" + std::to_string(index) + "]");
  }
  const YamlMap head(n, "frameworks[" + std::to_string(index) + "].", file);
  FrameworkProfile p;
  p.name = head.Str("name", true);
  const YamlMap m(n, "frameworks[" + p.name + "].", file);
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    if (ProfileKeys().count(key) == 0) {
      std::vector<std::string> known(ProfileKeys().begin(), ProfileKeys().end());
      throw InputError("unknown key", file, YamlLine(kv.first), m.path() + key, ClosestNames(key, known));
    }
  }
  p.line = m.line();
  p.kind = Choice(m, "kind", "training", {"training", "inference"});
  p.description = m.Str("description", false);
  p.fp32_grads = Choice(m, "grad_dtype", "param", {"param", "fp32"}) == "fp32";
  const std::string loss = Choice(m, "loss", "full", {"full", "chunked", "fused"});
  p.loss = loss == "chunked" ? LossKind::kChunked : loss == "fused" ? LossKind::kFused : LossKind::kFull;
  p.loss_chunks = static_cast<int64_t>(m.Num("loss_chunks", p.loss == LossKind::kChunked, 1, 1, 1 << 20));
  if (p.loss == LossKind::kChunked && p.loss_chunks < 2) {
    m.Fail("loss_chunks", "a chunked loss needs at least 2 chunks");
  }
  p.ddp_bucket_copy = Flag(m, "ddp_bucket_copy");
  p.reduce_bucket_elements = m.Num("reduce_bucket_elements", false, 0, 0, 1e13);
  p.allgather_bucket_elements = m.Num("allgather_bucket_elements", false, 0, 0, 1e13);
  p.prefetch_bucket_elements = m.Num("prefetch_bucket_elements", false, 0, 0, 1e13);
  const std::string load = Choice(m, "load_peak", "none", {"none", "bf16_before_quant", "unsharded_weights"});
  p.load_peak = load == "bf16_before_quant"   ? LoadPeak::kBf16BeforeQuant
                : load == "unsharded_weights" ? LoadPeak::kUnshardedWeights
                                              : LoadPeak::kNone;
  p.recompute = m.Strings("recompute");
  const std::string rule = Choice(m, "kv_rule", "none", {"none", "vllm", "sglang", "lmdeploy"});
  p.kv_rule = rule == "vllm" ? KvRule::kVllm : rule == "sglang" ? KvRule::kSglang
              : rule == "lmdeploy" ? KvRule::kLmdeploy : KvRule::kNone;
  p.kv_fraction = m.Num("kv_fraction", p.kv_rule != KvRule::kNone, 0, 0.01, 1);
  p.kv_block_tokens = static_cast<int64_t>(m.Num("kv_block_tokens", false, 1, 1, 1 << 20));
  p.max_num_seqs = static_cast<int64_t>(m.Num("max_num_seqs", false, 1, 1, 1 << 20));
  p.gguf = Choice(m, "weights", "native", {"native", "gguf"}) == "gguf";
  p.attention = Choice(m, "attention", "fa2", {"fa2", "fa3"});
  p.eager_elementwise = Choice(m, "elementwise", "fused", {"fused", "eager"}) == "eager";
  if ((p.kv_rule != KvRule::kNone || p.gguf) && p.kind != "inference") {
    m.Fail("kind", "an inference rule (kv_rule, weights) needs kind: inference");
  }
  p.sources = m.Strings("sources");
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
    FrameworkProfile p = ParseProfile(list[i], i, file, c.sources);
    for (const auto& q : c.profiles) {
      if (NormalizeName(q.name) == NormalizeName(p.name)) {
        throw InputError("duplicate profile '" + p.name + "' (first at line " + std::to_string(q.line) + ")", file,
                         p.line, "frameworks[" + p.name + "].name");
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
    out.push_back(p.name);
  }
  return out;
}

const FrameworkProfile& FrameworkCatalog::Find(const std::string& name) const {
  for (const auto& p : profiles) {
    if (NormalizeName(p.name) == NormalizeName(name)) {
      return p;
    }
  }
  const std::vector<std::string> closest = ClosestNames(name, Names());
  const std::string hint = closest.empty() ? "" : "; did you mean " + JoinOr(closest) + "?";
  throw InputError("unknown framework '" + name + "'" + hint + " (profiles in " + file + ": " + JoinOr(Names()) + ")", "",
                   0, "--framework", closest);
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
  throw InputError("unknown GGUF type '" + type + "'" + hint + " (" + JoinOr(names) + ")", "", 0, "--gguf-type", closest);
}

}  // namespace gpuplan
