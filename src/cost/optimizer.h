// The cheapest rental mix for a usage trace on the calendar: a mixed-integer program solved
// with GLPK (docs/cost-model.md §4).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/money.h"
#include "catalog/offer.h"
#include "cost/usage.h"

namespace gpuplan {

struct OptimizeOptions {
  bool spot_for_all = false;   // false: only interruptible work may run on spot
  bool retain_idle = true;     // false (--release-idle): release every idle on-demand instance
  bool allow_reserved = true;
  bool allow_on_demand = true;
  bool allow_spot = true;
  std::vector<std::string> only_offers;  // when non-empty, use just these offer ids
  // GPUs a plan may hold at once (--max-gpus). Unset: with deferrable work, the usage's peak
  // rounded up to whole instances of the largest offer (deferred work may not pile onto more GPUs
  // than the lab ever uses at once); without, no cap is needed.
  std::optional<double> max_gpus;
};

struct CostItems {
  double reserved = 0;        // term prices (add-on fees included)
  double on_demand = 0;       // instance-hours at their hour's price, add-on fees included
  double spot = 0;            // including expected rework
  double stopped = 0;         // retention of idle on-demand instances kept stopped
  double recreate = 0;        // set-up time billed when released instances are created again
  double fixed_fees = 0;      // storage and bandwidth
  // Of reserved, on_demand and spot: the image / add-on fees (addon_fee_ratio), shown on their own
  // line; already inside those items, not added again by Total().
  double addons_included = 0;
  // Of fixed_fees (and of on_demand for day-billed offers, of stopped for retention): the link
  // upgrades bought to reach the link asked for (cost's `link_gbps`, docs/cost-model.md §9), shown
  // on their own line; already inside those items, not added again by Total().
  double link_upgrades_included = 0;
  double subsidies = 0;       // vouchers and subsidies paid back (OfferSet::subsidies), subtracted
  // Data leaving the data centre (UsageTrace::egress_gb) at the highest egress price per GB
  // (`bandwidth.price_per_gb`) of the offers the plan uses (docs/cost-model.md §9).
  double egress = 0;
  double Total() const { return reserved + on_demand + spot + stopped + recreate + fixed_fees + egress - subsidies; }
};

// Reserved instances of one offer held for one calendar term.
struct ReservedTerm {
  std::string offer;
  LocalHour start{};       // the offers' wall clock (catalog/calendar.h)
  LocalHour end{};
  int64_t instances = 0;
  bool after_trace = false;  // paid only because of a minimum term running past the trace
};

struct Plan {
  bool feasible = false;
  std::string currency = "CNY";
  std::map<std::string, int64_t> reserved;            // offer id -> most instances held in any term
  std::vector<ReservedTerm> reserved_terms;           // terms with instances, in time order
  std::map<std::string, double> on_demand_gpu_hours;  // offer id -> GPU-hours of capacity
  std::map<std::string, double> spot_gpu_hours;       // offer id -> GPU-hours of work (before rework)
  std::map<std::string, double> kept_idle_instance_hours;  // on-demand instances kept stopped
  std::map<std::string, int64_t> releases;                 // idle gaps released (and re-created)
  double deferred_gpu_hours = 0;                      // deferrable work moved to a later hour
  std::optional<double> max_gpus;                     // the cap on GPUs held at once it honoured
  std::map<std::string, double> subsidies;            // subsidy id -> money paid back
  double egress_gb = 0;                               // priced in cost.egress
  double egress_price_per_gb = 0;                     // the price it was priced at
  CostItems cost;
  std::string solver_status;
  std::string note;
  int variables = 0;
  int integer_variables = 0;
  int constraints = 0;
  Money Total() const { return {cost.Total(), currency}; }
};

// How a glp_intopt run ended (GLPK reference manual, glp_intopt "Returns" and glp_mip_status):
// return 0 with status GLP_OPT is an optimum; GLP_ENOPFS (the LP relaxation has no primal
// feasible solution) or return 0 with GLP_NOFEAS is "the offers cannot serve the usage", a
// negative answer (exit 1); anything else (numerical failure, limits, an unbounded relaxation)
// means our model or the solver misbehaved: OptimizeRental throws and the CLI exits 4.
enum class SolverOutcome { kOptimal, kInfeasible, kFailed };
SolverOutcome ReadGlpkOutcome(int glp_intopt_rc, int glp_mip_status);

// All offers must be for one GPU type (usage is in GPUs of that type). Reserved instances are
// decided per calendar term of each reserved offer (anchored at the trace's start), honouring
// minimum terms; on-demand instances are kept stopped or released per idle gap, whichever
// costs less (billing.h, IdleInstanceCosts).
// `pure`: PureStrategies(offers, usage, o) when the caller has them already (not recomputed).
Plan OptimizeRental(const OfferSet& offers, const UsageTrace& usage, const OptimizeOptions& o = {},
                    const std::map<std::string, Plan>* pure = nullptr);

// Pure strategies: everything on one billing mode. A reserved mode takes, term by term, the
// instances that term's peak needs (the optimiser restricted to that mode's offers); all
// on-demand and all spot run work when it arrives. Key: billing mode name.
std::map<std::string, Plan> PureStrategies(const OfferSet& offers, const UsageTrace& usage,
                                           const OptimizeOptions& base = {});

// Scales every hour's demand (for the +-20% sensitivity).
UsageTrace ScaleUsage(const UsageTrace& u, double factor);

}  // namespace gpuplan
