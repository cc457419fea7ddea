// The cost jobs as request -> result functions: `gpuplan cost breakeven | compare | optimize |
// tco` and any other front end (the serve API) fill a request, call Run*, and render the result
// (cost/render/cost_json.h for JSON). Every default of these jobs is defined here, once; a front end
// binds its options to these fields and does not restate them.
//
// Lifetime: offers point into the GpuCatalog passed to Run* (`Offer::gpu` is a `const Gpu*`).
// The caller owns the catalog and must keep it alive as long as a result that holds offers
// (BreakevenResult). The other results hold no pointers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "cost/billing.h"
#include "catalog/offer.h"
#include "cost/optimizer.h"
#include "cost/tco.h"
#include "cost/usage.h"

namespace gpuplan {

// What every cost job reads: the offers and the usage to price. Errors name options by key
// (offers, usage, hours_per_month, month, extrapolate, gpu: InputError::Option).
struct CostRequest {
  std::string offers;                     // offers file (YAML, docs/offers.md); required
  std::string gpu;                        // only offers for this GPU (empty: every offer)
  std::string usage;                      // hourly usage CSV, or a gpuplan fit --json result
  std::optional<double> hours_per_month;  // instead of `usage`: hours each GPU is busy per month
  double gpus = 1;                        // GPUs used, with hours_per_month
  std::string month;                      // calendar month YYYY-MM (empty: the month after `now`)
  std::string extrapolate;                // "", "month" or "year": usage is a sample to repeat
  double egress_gb_per_month = 0;         // data leaving the data centre, per average month of 730 h
  std::optional<UtcSeconds> now;          // for the default month (unset: the clock)
  // The files' text, when a front end has it instead of a path (the serve API never reads a
  // file a request names); `offers` and `usage` then only name them in errors and results.
  std::optional<std::string> offers_text;
  std::optional<std::string> usage_text;
  // The options given, by key (the flags on the command line, the body's keys): each Run*
  // checks their values against its options table first, the same way for every front end
  // (an error in the offers file comes before the table's).
  std::vector<std::string> given;
};

// Break-even of each pair of billing modes in `month`; with `usage` (a measured trace; not
// hours_per_month) also on which side of each break-even every GPU of the trace falls.
struct BreakevenRequest : CostRequest {};

// The jobs that price the usage on the rental optimiser.
struct RentalRequest : CostRequest {
  bool spot_for_all = false;  // allow spot for every class of work, not only interruptible
  bool release_idle = false;  // release every idle on-demand instance (false: keep or release per gap)
  std::optional<double> max_gpus;  // GPUs held at once at most (unset: OptimizeOptions' default)
  // The internal link each instance needs, Gbit/s (unset: any): an offer whose stated link is
  // slower is priced with its cheapest upgrade that reaches it (`link.upgrades`); an offer that
  // states no link, or cannot reach it, is left out (LinkRequirement).
  std::optional<double> link_gbps;
  OptimizeOptions Options() const;
};
struct CompareRequest : RentalRequest {
  std::string by;  // "" (pure strategies), "provider", "region" or "offer": each one's best plan, ranked
};
struct OptimizeRequest : RentalRequest {};
struct TcoRequest : RentalRequest {
  double horizon_months = 36;  // months to compare
  OwnershipCosts own;          // its defaults: cost/tco.h (buy_gpu is set from buy_gpu_name)
  std::string buy_gpu_name;    // --buy-gpu: the card bought (empty: the rented card)
  // --model/--task: the speed ratio from fit instead of --speed-ratio: the best tokens per second
  // per GPU of the task on each card (fit's search ranked by GPU-hours, up to one 8-GPU node).
  std::string model;
  std::string task = "full";
  bool presets_only = false;  // the serve API: `model` must name a preset
};

// The usage factors of the sensitivity plans (-20%, +20%).
inline constexpr double kUsageMinusFactor = 0.8;
inline constexpr double kUsagePlusFactor = 1.2;

// One offer's cost per GPU over the month at used hours 0, 10, 20, ... and the month's length.
struct CostCurvePoint {
  int64_t hours = 0;
  double cost_per_gpu = 0;
};
struct CostCurve {
  const Offer* offer = nullptr;  // into BreakevenResult::offers
  std::vector<CostCurvePoint> points;
};

// A measured trace judged against the break-evens.
struct MeasuredBreakeven {
  UsageTrace usage;
  std::vector<double> levels;  // hours per month the k-th GPU is busy (LevelHoursPerMonth)
  bool scaled = false;         // the trace, longer than a month, was averaged to the break-even month's hours
  // [pair][k]: the offer id cheaper for the k-th GPU, or the first word of the pair's note
  // when the pair never crosses.
  std::vector<std::vector<std::string>> cheaper;
};

// Move-only: pairs and curves point into `offers`, whose elements stay put when the result
// is moved (and whose offers point into the caller's catalog).
struct BreakevenResult {
  OfferSet offers;  // the selected offers
  std::string month;  // YYYY-MM
  LocalHour month_start{};
  int64_t month_hours = 0;
  std::vector<BreakevenPair> pairs;
  std::vector<CostCurve> curves;  // one per offer, in file order
  std::optional<MeasuredBreakeven> measured;
  // Assumptions the figures rest on that the table cannot show (a subsidy's yearly or total cap,
  // which one GPU's month cannot apply).
  std::vector<std::string> notes;

  BreakevenResult() = default;
  BreakevenResult(BreakevenResult&&) = default;
  BreakevenResult& operator=(BreakevenResult&&) = default;
  BreakevenResult(const BreakevenResult&) = delete;
  BreakevenResult& operator=(const BreakevenResult&) = delete;
};

// One provider's (region's, offer's) best plan for the usage: the optimiser on its offers alone.
// What a required link speed (RentalRequest::link_gbps) did to the offers.
struct LinkRequirement {
  double gbps = 0;
  struct Bought {
    std::string offer;
    double from_gbps = 0;        // the offer's stated link
    double gbps = 0;             // the upgrade's
    double price_per_month = 0;  // per instance, one of the offer's fixed fees from now on
  };
  std::vector<Bought> bought;
  struct LeftOut {
    std::string offer;
    std::optional<double> link_gbps;  // its stated link (none: not stated)
    std::string why;
  };
  std::vector<LeftOut> left_out;
};
// The offers that reach `gbps`, each slower one with its cheapest sufficient upgrade bought.
// Throws InputError (option link_gbps) when none is left.
OfferSet RequireLink(OfferSet set, double gbps, LinkRequirement& out);

struct GroupPlan {
  std::string key;                  // the provider, region or offer id ("(none)" when unnamed)
  std::vector<std::string> offers;  // its offer ids
  Plan plan;
};

struct CompareResult {
  std::string currency;
  UsageTrace usage;
  std::optional<LinkRequirement> link;  // with link_gbps: upgrades bought, offers left out
  std::map<std::string, Plan> strategies;  // PureStrategies: billing mode name -> plan
  std::string by;                          // with --by: what groups (provider, region, offer)
  std::vector<GroupPlan> groups;           // with --by: each group's best plan, cheapest first, infeasible last
  bool AnyFeasible() const;                // false: no strategy (or group) can serve the usage (exit 1)
};

struct OptimizeResult {
  std::string currency;
  UsageTrace usage;
  std::optional<LinkRequirement> link;  // with link_gbps: upgrades bought, offers left out
  Plan plan;                                // the cheapest mix
  std::map<std::string, Plan> pure;         // every pure strategy
  // Per feasible pure strategy: 1 - plan / pure; null when the plan is infeasible or the pure
  // strategy costs 0 (nothing to save on).
  std::map<std::string, std::optional<double>> savings;
  Plan usage_minus;                         // the plan for the usage scaled by kUsageMinusFactor
  Plan usage_plus;                          // and by kUsagePlusFactor
};

// TcoResult (tco.h) with what a front end shows beside it.
// (TcoJobResult::speed_basis says where the speed ratio came from.)
struct TcoJobResult {
  std::string currency;
  UsageTrace usage;
  std::optional<LinkRequirement> link;  // with link_gbps: upgrades bought, offers left out
  TcoResult tco;
  std::string speed_basis;  // where the speed ratio came from (--speed-ratio, or fit's figures)
  bool BuyIsCheaper() const { return tco.buy_total < tco.rent_total; }
};

// The month the request names, else the month after `now` (or the clock) in the zone.
LocalHour RequestedMonthStart(const CostRequest& r, const Zone& zone);
// The offers file with only the offers for r.gpu when given. Throws InputError.
OfferSet SelectOffers(const CostRequest& r, const GpuCatalog& catalog);
// The usage the request names (CSV, fit --json job or hours per month), extrapolated when asked.
UsageTrace LoadRequestedUsage(const CostRequest& r, const Zone& zone);
// Which offer of a pair is cheaper at `hours_per_month` (see MeasuredBreakeven::cheaper).
std::string CheaperSide(const BreakevenPair& p, double hours_per_month);

BreakevenResult RunBreakeven(const BreakevenRequest& r, const GpuCatalog& catalog);
CompareResult RunCompare(const CompareRequest& r, const GpuCatalog& catalog);
OptimizeResult RunOptimize(const OptimizeRequest& r, const GpuCatalog& catalog);
// Throws InputError for invalid ownership costs, NegativeAnswer when renting cannot be priced.
// `data_dir` (models, frameworks) is needed only with r.model (the speed ratio from fit).
TcoJobResult RunTco(const TcoRequest& r, const GpuCatalog& catalog, const std::string& data_dir = "");

}  // namespace gpuplan
