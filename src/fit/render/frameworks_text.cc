#include "fit/render/frameworks_text.h"

#include <fmt/format.h>

#include "format/table.h"
#include "format/text_lang.h"

namespace gpuplan {

void FrameworksToText(std::ostream& os, const FrameworkCatalog& catalog) {
  const Table table({{Say("cli.catalog.col.framework", "framework"), 14},
                     {Say("cli.catalog.col.version", "version"), 13},
                     {Say("cli.catalog.col.kind", "kind"), 10},
                     {Say("cli.catalog.col.kv_rule", "KV rule, overflow"), 24},
                     {Say("cli.catalog.col.description", "description")}});
  table.PrintHeader(os);
  for (const FrameworkProfile& f : catalog.profiles) {
    std::string rule = "-";
    if (f.kv_rule != KvRule::kNone) {
      rule = f.kv_fraction_rule == "fixed" ? fmt::format("{} {:g}", ToString(f.kv_rule), f.kv_fraction * f.kv_fraction_scale)
                                           : fmt::format("{} {}", ToString(f.kv_rule),
                                                         Say("cli.catalog.by_card", "by card"));
      if (f.kv_overflow != KvOverflow::kUnlimited) {
        rule += fmt::format(", {}", ToString(f.kv_overflow));  // docs/time-model.md §5.2
      }
    } else if (f.gguf) {
      rule = Say("cli.catalog.gguf_weights", "gguf weights");
    }
    // The default version (--framework NAME) is listed first and named; the others as NAME@VERSION.
    table.PrintRow(os, {f.is_default ? f.name : "  @" + f.version, f.version.empty() ? "-" : f.version,
                        Say("cli.catalog.kind." + f.kind, f.kind), rule, f.description});
  }
  os << Say("cli.catalog.gguf_types", "GGUF types (--gguf-type, bits per weight):");
  for (const auto& [type, bits] : catalog.gguf_bits) {
    os << fmt::format(" {} {:g}", type, bits);
  }
  os << "\n";
}

}  // namespace gpuplan
