#include "catalog/gpu_catalog.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

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

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool KnownDatatype(std::string_view d) {
  return std::find(std::begin(kGpuDatatypes), std::end(kGpuDatatypes), d) != std::end(kGpuDatatypes);
}

std::string KnownDatatypeList() {
  std::string out;
  for (const auto d : kGpuDatatypes) {
    out += (out.empty() ? "" : ", ") + std::string(d);
  }
  return out;
}

// The `datatypes` list: known names, no repeats, and every precision with a tflops figure listed
// (a card with a rate for a type computes it). Absent: the precisions with a tflops figure.
std::vector<std::string> ReadDatatypes(const YAML::Node& g, const YamlMap& r, const Tflops& t) {
  const std::pair<const char*, bool> rated[] = {
      {"fp64", t.fp64.has_value() || t.fp64_tensor.has_value()},
      {"fp32", t.fp32.has_value()},
      {"tf32", t.tf32.has_value()},
      {"bf16", t.bf16.has_value()},
      {"fp16", t.fp16.has_value()},
      {"fp8", t.fp8.has_value()},
      {"fp4", t.fp4.has_value()},
      {"int8", t.int8.has_value()},
  };
  std::vector<std::string> out;
  if (!r.Has("datatypes")) {
    for (const auto& [name, has] : rated) {
      if (has) {
        out.emplace_back(name);
      }
    }
    return out;
  }
  const YAML::Node list = g["datatypes"];
  if (!list.IsSequence()) {
    r.Fail("datatypes", "expected a list of datatypes such as [fp32, bf16, fp16]");
  }
  for (const auto& e : list) {
    if (!e.IsScalar()) {
      throw InputError("expected a datatype name", r.file(), YamlLine(e), r.path() + "datatypes");
    }
    const std::string d = Lower(e.Scalar());
    if (!KnownDatatype(d)) {
      throw InputError("unknown datatype '" + e.Scalar() + "' (known: " + KnownDatatypeList() + ")", r.file(),
                       YamlLine(e), r.path() + "datatypes");
    }
    if (std::find(out.begin(), out.end(), d) != out.end()) {
      throw InputError("datatype '" + d + "' is listed twice", r.file(), YamlLine(e), r.path() + "datatypes");
    }
    out.push_back(d);
  }
  for (const auto& [name, has] : rated) {
    if (has && std::find(out.begin(), out.end(), name) == out.end()) {
      r.Fail("datatypes", std::string("tflops gives a ") + name + " rate but datatypes does not list " + name);
    }
  }
  return out;
}

}  // namespace

bool Gpu::Supports(std::string_view dtype) const {
  const std::string d = Lower(dtype);
  return std::find(datatypes.begin(), datatypes.end(), d) != datatypes.end();
}

GpuCatalog GpuCatalog::Load(const std::string& path) { return Parse(ReadFileText(path), path); }

GpuCatalog GpuCatalog::Parse(const std::string& yaml_text, const std::string& file) {
  const YAML::Node root = ParseYamlText(yaml_text, file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with a 'gpus' list at the top level", file, 1);
  }
  const YamlMap top(root, "", file);
  top.Only({"sources", "gpus"});
  std::map<std::string, std::string> sources;
  if (top.Has("sources")) {
    const YAML::Node s = root["sources"];
    if (!s.IsMap()) {
      top.Fail("sources", "expected a mapping of source id to description");
    }
    for (const auto& kv : s) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar()) {
        throw InputError("expected 'ID: description'", file, YamlLine(kv.first), "sources");
      }
      sources[kv.first.Scalar()] = kv.second.Scalar();
    }
  }
  const YAML::Node list = root["gpus"];
  if (!list || !list.IsSequence() || list.size() == 0) {
    throw InputError("expected a non-empty 'gpus' list", file, list ? YamlLine(list) : 1, "gpus");
  }
  constexpr double kBig = 1e15;
  GpuCatalog cat;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node g = list[i];
    if (!g.IsMap()) {
      throw InputError("expected a mapping", file, YamlLine(g), "gpus[" + std::to_string(i) + "]");
    }
    Gpu gpu;
    gpu.name = YamlMap(g, "gpus[" + std::to_string(i) + "].", file).Str("name", true);
    const YamlMap r(g, "gpus[" + gpu.name + "].", file);
    r.Only({"name", "aliases", "vendor", "architecture", "compute_capability", "form_factor", "memory_bytes",
            "memory_type", "memory_bandwidth_gb_s", "tflops", "datatypes", "interconnect", "pcie", "tdp_watts", "mig",
            "pci_device_ids", "price_cny_per_card_hour", "confidence", "sources", "notes"});
    gpu.aliases = r.Strings("aliases");
    gpu.vendor = r.Str("vendor", false);
    gpu.architecture = r.Str("architecture", false);
    gpu.compute_capability = r.Str("compute_capability", false);
    gpu.form_factor = r.Str("form_factor", false);
    const double mem = *r.Number("memory_bytes", true, 1, 1e14);
    if (mem != std::floor(mem)) {
      r.Fail("memory_bytes", "expected a whole number of bytes");
    }
    gpu.memory_bytes = static_cast<int64_t>(mem);
    gpu.memory_type = r.Str("memory_type", false);
    gpu.memory_bandwidth_gb_s = *r.Number("memory_bandwidth_gb_s", true, 1e-9, kBig);
    const auto t = r.Map("tflops", "a mapping of precision to TFLOPS");
    if (!t) {
      r.Fail("tflops", "required field is missing");
    }
    t->Only({"fp64", "fp64_tensor", "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4"});
    gpu.tflops.fp64 = t->Number("fp64", false, 0, kBig);
    gpu.tflops.fp64_tensor = t->Number("fp64_tensor", false, 0, kBig);
    gpu.tflops.fp32 = t->Number("fp32", false, 1e-9, kBig);
    gpu.tflops.tf32 = t->Number("tf32", false, 1e-9, kBig);
    gpu.tflops.bf16 = t->Number("bf16", false, 1e-9, kBig);
    gpu.tflops.fp16 = t->Number("fp16", false, 1e-9, kBig);
    gpu.tflops.fp8 = t->Number("fp8", false, 1e-9, kBig);
    gpu.tflops.int8 = t->Number("int8", false, 1e-9, kBig);
    gpu.tflops.fp4 = t->Number("fp4", false, 1e-9, kBig);
    gpu.datatypes = ReadDatatypes(g, r, gpu.tflops);
    if (const auto ic = r.Map("interconnect", "{kind, bandwidth_gb_s, links}")) {
      ic->Only({"kind", "bandwidth_gb_s", "links"});
      gpu.interconnect.kind = ic->Str("kind", true);
      gpu.interconnect.bandwidth_gb_s = ic->Num("bandwidth_gb_s", false, 0, 0, kBig);
      gpu.interconnect.links = static_cast<int>(ic->Num("links", false, 0, 0, 1024));
    }
    if (const auto pc = r.Map("pcie", "{gen, lanes}")) {
      pc->Only({"gen", "lanes"});
      gpu.pcie_gen = static_cast<int>(*pc->Number("gen", true, 1, 16));
      gpu.pcie_lanes = static_cast<int>(pc->Num("lanes", false, 16, 1, 64));
    }
    gpu.tdp_watts = r.Num("tdp_watts", false, 0, 1e-9, 1e6);
    if (const auto mig = r.Map("mig", "{max_instances, profiles}")) {
      mig->Only({"max_instances", "profiles"});
      gpu.mig_max_instances = static_cast<int>(mig->Num("max_instances", false, 0, 0, 1024));
      gpu.mig_profiles = mig->Strings("profiles");
    }
    gpu.pci_device_ids = r.Strings("pci_device_ids");
    gpu.price_cny_per_card_hour = r.Num("price_cny_per_card_hour", false, 0, 0, kBig);
    gpu.confidence = r.Str("confidence", false);
    for (const auto& s : r.Strings("sources")) {
      auto it = sources.find(s);
      if (it == sources.end()) {
        r.Fail("sources", "unknown source id '" + s + "' (not in the top-level sources map)");
      }
      gpu.sources.push_back(s + ": " + it->second);
    }
    gpu.notes = r.Str("notes", false);

    const std::size_t pos = cat.gpus_.size();
    std::vector<std::string> keys = gpu.aliases;
    keys.push_back(gpu.name);
    for (const auto& k : keys) {
      const std::string n = NormalizeName(k);
      if (n.empty()) {
        r.Fail("aliases", "a name or alias has no letters or digits");
      }
      auto [it, inserted] = cat.index_.emplace(n, pos);
      if (!inserted && it->second != pos) {
        throw InputError("'" + k + "' is already a name or alias of " + cat.gpus_[it->second].name, file,
                         YamlLine(g), r.path() + "aliases");
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
                   "", 0, "gpu", suggestions);
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
