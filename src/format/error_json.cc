#include "format/error_json.h"

namespace gpuplan {

nlohmann::json ErrorToJson(const ErrorReport& r) {
  auto or_null = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  return {{"error",
           {{"kind", std::string(ToString(r.kind))},
            {"message", r.message},
            {"file", or_null(r.file)},
            {"line", r.line > 0 ? nlohmann::json(r.line) : nlohmann::json(nullptr)},
            {"field", or_null(r.field)},
            {"suggestions", r.suggestions}}}};
}

}  // namespace gpuplan
