// gpuplan cost breakeven | compare | optimize | tco: flags into the requests of cost/requests.h,
// the library runs them, and cost/render/cost_json.h or cost/render/cost_text.h renders the results.
#include <filesystem>
#include <iostream>
#include <memory>

#include "catalog/gpu_catalog.h"
#include "cli_options.h"
#include "commands.h"
#include "cost/cost_options.h"
#include "cost/requests.h"
#include "cost/render/cost_json.h"
#include "cost/render/cost_text.h"

namespace gpuplan::cli {
namespace {

// Prints `result` as JSON or as text.
template <typename Result, typename Text>
void Render(const GlobalOptions& g, const Result& result, nlohmann::json (*to_json)(const Result&), Text text) {
  if (g.json) {
    std::cout << to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    text(std::cout, result);
  }
}

}  // namespace

Runner RegisterCost(CLI::App& app, GlobalOptions& g) {
  struct Requests {
    BreakevenRequest be;
    CompareRequest cmp;
    OptimizeRequest opt;
    TcoRequest tco;
  };
  auto r = std::make_shared<Requests>();
  CLI::App* cost = app.add_subcommand("cost", "billing modes, break-even and the cheapest rental mix");
  cost->require_subcommand(1);

  // Each subcommand's flags from its options table (cost/cost_options.h), then --json.
  auto add = [&g, cost](const char* name, const char* help, const auto& table, auto& request) {
    CLI::App* sub = cost->add_subcommand(name, help);
    AddOptions(sub, table, request);
    sub->add_flag("--json", g.json, "print JSON");
    return sub;
  };
  CLI::App* be = add("breakeven", "hours per month at which two billing modes cost the same", BreakevenOptionTable(), r->be);
  CLI::App* cmp = add("compare", "the cost of every pure strategy for the usage, fees itemised", CompareOptionTable(), r->cmp);
  CLI::App* opt = add("optimize", "the cheapest mix of reserved, on-demand and spot (MILP, GLPK)", OptimizeOptionTable(), r->opt);
  CLI::App* tco = add("tco", "buy versus rent over a horizon, against the optimised rental plan", TcoOptionTable(), r->tco);

  return [r, &g, be, cmp, opt, tco]() -> int {
    // Offers point into the catalog: it outlives every result below.
    const GpuCatalog cat = GpuCatalog::Load((std::filesystem::path(DataDir(g)) / "gpus.yaml").string());
    // The options given, by key: each job checks their values (cost/requests.h).
    r->be.given = GivenKeys(be, BreakevenOptionTable());
    r->cmp.given = GivenKeys(cmp, CompareOptionTable());
    r->opt.given = GivenKeys(opt, OptimizeOptionTable());
    r->tco.given = GivenKeys(tco, TcoOptionTable());
    if (be->parsed()) {
      Render(g, RunBreakeven(r->be, cat), &BreakevenToJson, BreakevenToText);
      return kExitOk;
    }
    if (cmp->parsed()) {
      const CompareResult c = RunCompare(r->cmp, cat);
      Render(g, c, &CompareToJson, CompareToText);
      // Negative only when no strategy can serve the usage; the ones that cannot say so.
      return c.AnyFeasible() ? kExitOk : kExitNegative;
    }
    if (tco->parsed()) {
      Render(g, RunTco(r->tco, cat, DataDir(g)), &TcoToJson, TcoToText);
      return kExitOk;
    }
    const OptimizeResult o = RunOptimize(r->opt, cat);
    Render(g, o, &OptimizeToJson, [&](std::ostream& os, const OptimizeResult& x) { OptimizeToText(os, x, r->opt.spot_for_all); });
    return o.plan.feasible ? kExitOk : kExitNegative;
  };
}

}  // namespace gpuplan::cli
