// gpuplan plan WORKLOAD --offers FILE...: flags into plan/plan_request.h's PlanRequest, the library
// plans (RunPlanRequest), and plan/render renders: text (plan_text.h) or JSON (plan_json.h).
#include <filesystem>
#include <iostream>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "cli_options.h"
#include "commands.h"
#include "core/atomic_file.h"
#include "plan/plan_request.h"
#include "plan/render/plan_json.h"
#include "plan/render/plan_markdown.h"
#include "plan/render/plan_text.h"

namespace gpuplan::cli {

Runner RegisterPlan(CLI::App& app, GlobalOptions& g) {
  auto q = std::make_shared<PlanRequest>();
  CLI::App* plan = app.add_subcommand("plan", "from the work of the coming months to a rental plan: cards, counts, billing, every fee");
  plan->add_option("workload", q->workload, "workload file (YAML, docs/plan.md)")->required();
  AddOptions(plan, PlanOptionTable(), *q);
  plan->add_flag("--json", g.json, "print JSON");
  return [q, &g, plan]() -> int {
    // Offers point into the catalog: it outlives the result.
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    q->given = GivenKeys(plan, PlanOptionTable());
    try {
      const PlanResult r = RunPlanRequest(*q, cat, DataDir(g));
      if (!q->usage_out.empty() && r.feasible) {
        for (const auto& [file, csv] : PlanUsageFiles(r, q->usage_out)) {
          WriteFileAtomically(file, csv, "usage");
        }
      }
      if (!q->alerts_out.empty() && r.feasible) {
        WriteFileAtomically(q->alerts_out, PlanAlertsYaml(r), "alerts file");
      }
      if (!q->markdown.empty() && q->markdown != "-") {
        WriteFileAtomically(q->markdown, PlanResultToMarkdown(r), "Markdown");
      }
      if (q->markdown == "-") {
        std::cout << PlanResultToMarkdown(r);
      } else if (g.json) {
        std::cout << PlanResultToJson(r).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
      } else {
        PlanResultToText(std::cout, r);
      }
      return r.feasible ? kExitOk : kExitNegative;
    } catch (const InputError& e) {
      throw SpellFlags(e);
    }
  };
}

}  // namespace gpuplan::cli
