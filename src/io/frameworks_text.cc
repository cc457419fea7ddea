#include "io/frameworks_text.h"

#include <fmt/format.h>

#include "io/table.h"

namespace gpuplan {

void FrameworksToText(std::ostream& os, const FrameworkCatalog& catalog) {
  const Table table({{"framework", 14}, {"kind", 10}, {"KV rule", 14}, {"description"}});
  table.PrintHeader(os);
  for (const FrameworkProfile& f : catalog.profiles) {
    const std::string rule = f.kv_rule != KvRule::kNone ? fmt::format("{} {:g}", ToString(f.kv_rule), f.kv_fraction)
                             : f.gguf                   ? "gguf weights"
                                                        : "-";
    table.PrintRow(os, {f.name, f.kind, rule, f.description});
  }
  os << "GGUF types (--gguf-type, bits per weight):";
  for (const auto& [type, bits] : catalog.gguf_bits) {
    os << fmt::format(" {} {:g}", type, bits);
  }
  os << "\n";
}

}  // namespace gpuplan
