#include "fit/render/catalog_json.h"

#include "fit/render/fit_json.h"

namespace gpuplan {

nlohmann::json GpusToJson(const GpuCatalog& catalog) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& gpu : catalog.gpus()) {
    j.push_back(GpuToJson(gpu));
  }
  return j;
}

nlohmann::json ModelListingToJson(const ModelListing& l) {
  const ModelSpec& m = l.spec;
  return {{"name", l.name},
          {"model_type", m.model_type},
          {"architecture", m.architecture},
          {"params_total", m.ParamsTotal()},
          {"params_active", m.ParamsActive()},
          {"layers", m.layers},
          {"hidden", m.hidden},
          {"vocab", m.vocab},
          {"path", l.path}};
}

nlohmann::json ModelsToJson(const std::vector<ModelListing>& models) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& m : models) {
    j.push_back(ModelListingToJson(m));
  }
  return j;
}

nlohmann::json FrameworksToJson(const FrameworkCatalog& catalog) {
  nlohmann::json profiles = nlohmann::json::array();
  for (const FrameworkProfile& f : catalog.profiles) {
    const bool server = f.kv_rule != KvRule::kNone;
    const bool fixed = server && f.kv_fraction_rule == "fixed";
    profiles.push_back({{"name", f.name},
                        {"version", f.version.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.version)},
                        {"id", f.Id()},
                        {"default", f.is_default},
                        {"kind", f.kind},
                        {"description", f.description},
                        {"kv_rule", server ? nlohmann::json(ToString(f.kv_rule)) : nlohmann::json(nullptr)},
                        // the fraction in effect; null where it is computed from the card (SGLang)
                        {"kv_fraction", fixed ? nlohmann::json(f.kv_fraction * f.kv_fraction_scale) : nlohmann::json(nullptr)},
                        {"kv_fraction_rule", server ? nlohmann::json(f.kv_fraction_rule) : nlohmann::json(nullptr)},
                        {"kv_block_tokens", f.kv_block_tokens},
                        // docs/time-model.md §5.2: preempt | reserve; null where not modelled
                        {"kv_overflow", f.kv_overflow == KvOverflow::kUnlimited ? nlohmann::json(nullptr)
                                                                                : nlohmann::json(ToString(f.kv_overflow))},
                        {"gguf", f.gguf},
                        {"sources", f.sources}});
  }
  nlohmann::json gguf = nlohmann::json::array();
  for (const auto& [type, bits] : catalog.gguf_bits) {
    gguf.push_back({{"type", type}, {"bits", bits}});
  }
  return {{"frameworks", profiles}, {"gguf_types", gguf}};
}

}  // namespace gpuplan
