#include "catalog/gpu_catalog.h"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "catalog/json_source.h"
#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& field, const std::string& msg) const {
    throw InputError(msg, file_, LineOf(at), field);
  }

  YAML::Node Required(const YAML::Node& map, const std::string& key, const std::string& path) const {
    YAML::Node v = map[key];
    if (!v || v.IsNull()) {
      Fail(map, path + key, "required field is missing");
    }
    return v;
  }

  std::string String(const YAML::Node& map, const std::string& key, const std::string& path, bool required) const {
    YAML::Node v = map[key];
    if (!v || v.IsNull()) {
      if (required) {
        Fail(map, path + key, "required field is missing");
      }
      return {};
    }
    if (!v.IsScalar()) {
      Fail(v, path + key, "expected a text value");
    }
    return v.Scalar();
  }

  // A number >= min_value (> 0 when strictly_positive); nullopt when null/absent and optional.
  std::optional<double> Number(const YAML::Node& map, const std::string& key, const std::string& path,
                               bool required, bool strictly_positive) const {
    YAML::Node v = map[key];
    if (!v || v.IsNull()) {
      if (required) {
        Fail(map, path + key, "required field is missing");
      }
      return std::nullopt;
    }
    double d = 0;
    if (!v.IsScalar() || !YAML::convert<double>::decode(v, d) || !std::isfinite(d)) {
      Fail(v, path + key, "expected a number, got '" + (v.IsScalar() ? v.Scalar() : std::string("a structure")) + "'");
    }
    if (d < 0 || (strictly_positive && d == 0)) {
      Fail(v, path + key, std::string("must be ") + (strictly_positive ? "positive" : "zero or positive") + ", got " +
                              v.Scalar());
    }
    return d;
  }

  std::vector<std::string> Strings(const YAML::Node& map, const std::string& key, const std::string& path) const {
    std::vector<std::string> out;
    YAML::Node v = map[key];
    if (!v || v.IsNull()) {
      return out;
    }
    if (!v.IsSequence()) {
      Fail(v, path + key, "expected a list");
    }
    for (const auto& e : v) {
      if (!e.IsScalar()) {
        Fail(e, path + key, "expected a list of text values");
      }
      out.push_back(e.Scalar());
    }
    return out;
  }

 private:
  std::string file_;
};

std::string NormalizePciId(std::string id) {
  std::string n = NormalizeName(id);
  if (n.rfind("0x", 0) == 0) {
    n = n.substr(2);
  }
  // nvidia-smi prints pci.device_id as 0xDDDDVVVV (device then vendor).
  if (n.size() == 8) {
    n = n.substr(0, 4);
  }
  return n;
}

}  // namespace

GpuCatalog GpuCatalog::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

GpuCatalog GpuCatalog::Parse(const std::string& yaml_text, const std::string& file) {
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    throw InputError("YAML error: " + e.msg, file, e.mark.line >= 0 ? e.mark.line + 1 : 0);
  }
  const YamlReader r(file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with a 'gpus' list at the top level", file, 1);
  }
  std::map<std::string, std::string> sources;
  if (YAML::Node s = root["sources"]; s && !s.IsNull()) {
    if (!s.IsMap()) {
      r.Fail(s, "sources", "expected a mapping of source id to description");
    }
    for (const auto& kv : s) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
        r.Fail(kv.first, "sources", "expected 'ID: description'");
      }
      sources[kv.first.Scalar()] = kv.second.Scalar();
    }
  }
  YAML::Node list = r.Required(root, "gpus", "");
  if (!list.IsSequence() || list.size() == 0) {
    r.Fail(list, "gpus", "expected a non-empty list");
  }
  GpuCatalog cat;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node g = list[i];
    const std::string path = "gpus[" + std::to_string(i) + "].";
    if (!g.IsMap()) {
      r.Fail(g, path.substr(0, path.size() - 1), "expected a mapping");
    }
    Gpu gpu;
    gpu.name = r.String(g, "name", path, true);
    const std::string p = "gpus[" + gpu.name + "].";
    gpu.aliases = r.Strings(g, "aliases", p);
    gpu.vendor = r.String(g, "vendor", p, false);
    gpu.architecture = r.String(g, "architecture", p, false);
    gpu.compute_capability = r.String(g, "compute_capability", p, false);
    gpu.form_factor = r.String(g, "form_factor", p, false);
    const double mem = *r.Number(g, "memory_bytes", p, true, true);
    if (mem > 1e14 || mem != std::floor(mem)) {
      r.Fail(g["memory_bytes"], p + "memory_bytes", "expected a whole number of bytes below 100 TB");
    }
    gpu.memory_bytes = static_cast<int64_t>(mem);
    gpu.memory_type = r.String(g, "memory_type", p, false);
    gpu.memory_bandwidth_gb_s = *r.Number(g, "memory_bandwidth_gb_s", p, true, true);
    YAML::Node t = r.Required(g, "tflops", p);
    if (!t.IsMap()) {
      r.Fail(t, p + "tflops", "expected a mapping of precision to TFLOPS");
    }
    const std::string tp = p + "tflops.";
    gpu.tflops.fp64 = r.Number(t, "fp64", tp, false, false);
    gpu.tflops.fp64_tensor = r.Number(t, "fp64_tensor", tp, false, false);
    gpu.tflops.fp32 = r.Number(t, "fp32", tp, false, true);
    gpu.tflops.tf32 = r.Number(t, "tf32", tp, false, true);
    gpu.tflops.bf16 = r.Number(t, "bf16", tp, false, true);
    gpu.tflops.fp16 = r.Number(t, "fp16", tp, false, true);
    gpu.tflops.fp8 = r.Number(t, "fp8", tp, false, true);
    gpu.tflops.int8 = r.Number(t, "int8", tp, false, true);
    gpu.tflops.fp4 = r.Number(t, "fp4", tp, false, true);
    if (YAML::Node ic = g["interconnect"]; ic && !ic.IsNull()) {
      if (!ic.IsMap()) {
        r.Fail(ic, p + "interconnect", "expected {kind, bandwidth_gb_s, links}");
      }
      gpu.interconnect.kind = r.String(ic, "kind", p + "interconnect.", true);
      gpu.interconnect.bandwidth_gb_s = r.Number(ic, "bandwidth_gb_s", p + "interconnect.", false, false).value_or(0);
      gpu.interconnect.links =
          static_cast<int>(r.Number(ic, "links", p + "interconnect.", false, false).value_or(0));
    }
    if (YAML::Node pc = g["pcie"]; pc && !pc.IsNull()) {
      if (!pc.IsMap()) {
        r.Fail(pc, p + "pcie", "expected {gen, lanes}");
      }
      gpu.pcie_gen = static_cast<int>(r.Number(pc, "gen", p + "pcie.", true, true).value_or(0));
      gpu.pcie_lanes = static_cast<int>(r.Number(pc, "lanes", p + "pcie.", false, true).value_or(16));
    }
    gpu.tdp_watts = r.Number(g, "tdp_watts", p, false, true).value_or(0);
    if (YAML::Node mig = g["mig"]; mig && !mig.IsNull()) {
      if (!mig.IsMap()) {
        r.Fail(mig, p + "mig", "expected {max_instances, profiles}");
      }
      gpu.mig_max_instances = static_cast<int>(r.Number(mig, "max_instances", p + "mig.", false, false).value_or(0));
      gpu.mig_profiles = r.Strings(mig, "profiles", p + "mig.");
    }
    gpu.pci_device_ids = r.Strings(g, "pci_device_ids", p);
    gpu.price_cny_per_card_hour = r.Number(g, "price_cny_per_card_hour", p, false, false).value_or(0);
    gpu.confidence = r.String(g, "confidence", p, false);
    for (const auto& s : r.Strings(g, "sources", p)) {
      auto it = sources.find(s);
      if (it == sources.end()) {
        r.Fail(g["sources"], p + "sources", "unknown source id '" + s + "' (not in the top-level sources map)");
      }
      gpu.sources.push_back(s + ": " + it->second);
    }
    gpu.notes = r.String(g, "notes", p, false);

    const std::size_t pos = cat.gpus_.size();
    std::vector<std::string> keys = gpu.aliases;
    keys.push_back(gpu.name);
    for (const auto& k : keys) {
      const std::string n = NormalizeName(k);
      if (n.empty()) {
        r.Fail(g, p + "aliases", "a name or alias has no letters or digits");
      }
      auto [it, inserted] = cat.index_.emplace(n, pos);
      if (!inserted && it->second != pos) {
        r.Fail(g, p + "aliases", "'" + k + "' is already a name or alias of " + cat.gpus_[it->second].name);
      }
    }
    cat.gpus_.push_back(std::move(gpu));
  }
  return cat;
}

const Gpu* GpuCatalog::TryFind(const std::string& name) const {
  auto it = index_.find(NormalizeName(name));
  if (it != index_.end()) {
    return &gpus_[it->second];
  }
  // nvidia-smi prefixes names with the vendor ("NVIDIA H100 80GB HBM3").
  std::string n = NormalizeName(name);
  for (const char* prefix : {"nvidia", "tesla", "geforce", "huawei"}) {
    const std::string pre = prefix;
    if (n.rfind(pre, 0) == 0) {
      n = n.substr(pre.size());
      it = index_.find(n);
      if (it != index_.end()) {
        return &gpus_[it->second];
      }
    }
  }
  return nullptr;
}

std::vector<std::string> GpuCatalog::AllNames() const {
  std::vector<std::string> names;
  for (const auto& g : gpus_) {
    names.push_back(g.name);
  }
  return names;
}

const Gpu& GpuCatalog::Find(const std::string& name) const {
  if (const Gpu* g = TryFind(name)) {
    return *g;
  }
  std::vector<std::string> candidates;
  for (const auto& g : gpus_) {
    candidates.push_back(g.name);
    for (const auto& a : g.aliases) {
      candidates.push_back(a);
    }
  }
  std::vector<std::string> suggestions;
  for (const auto& c : ClosestNames(name, candidates, 6)) {
    const std::string& canonical = TryFind(c)->name;
    if (std::find(suggestions.begin(), suggestions.end(), canonical) == suggestions.end()) {
      suggestions.push_back(canonical);
    }
  }
  throw InputError("unknown GPU '" + name + "'; did you mean " + JoinOr(suggestions) + "? (gpuplan gpus lists all)",
                   "", 0, "gpu");
}

const Gpu* GpuCatalog::FindByPciId(const std::string& id) const {
  const std::string want = NormalizePciId(id);
  for (const auto& g : gpus_) {
    for (const auto& pid : g.pci_device_ids) {
      if (NormalizePciId(pid) == want) {
        return &g;
      }
    }
  }
  return nullptr;
}

}  // namespace gpuplan
