// The cheapest rental mix for a usage trace: a mixed-integer program solved with GLPK
// (docs/cost-model.md §4).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "cost/offer.h"
#include "cost/usage.h"

namespace gpuplan {

struct OptimizeOptions {
  bool spot_for_all = false;   // false: only interruptible work may run on spot
  bool retain_idle = true;     // on-demand capacity is kept (stopped) between uses, paying the retention fee
  bool allow_reserved = true;
  bool allow_on_demand = true;
  bool allow_spot = true;
  std::vector<std::string> only_offers;  // when non-empty, use just these offer ids
};

struct CostItems {
  double reserved = 0;        // term prices (add-on fees included) for the whole trace
  double on_demand = 0;       // GPU-hours at their hour's price, add-on fees included
  double spot = 0;            // including expected rework
  double stopped = 0;         // retention fees of idle on-demand capacity
  double fixed_fees = 0;      // storage and bandwidth of reserved instances
  double Total() const { return reserved + on_demand + spot + stopped + fixed_fees; }
};

struct Plan {
  bool feasible = false;
  std::map<std::string, int64_t> reserved;          // offer id -> instances
  std::map<std::string, double> on_demand_gpu_hours;  // offer id -> GPU-hours
  std::map<std::string, double> spot_gpu_hours;       // offer id -> GPU-hours of work (before rework)
  double deferred_gpu_hours = 0;                      // deferrable work moved to a later hour
  CostItems cost;
  std::string solver_status;
  int variables = 0;
  int integer_variables = 0;
  int constraints = 0;
};

// All offers must be for one GPU type (usage is in GPUs of that type).
Plan OptimizeRental(const OfferSet& offers, const UsageTrace& usage, const OptimizeOptions& o = {});

// Pure strategies: everything on one billing mode (for reserved modes, enough instances of the
// mode's cheapest offer to cover the peak). Key: billing mode name.
std::map<std::string, Plan> PureStrategies(const OfferSet& offers, const UsageTrace& usage,
                                           const OptimizeOptions& base = {});

// Scales every hour's demand (for the +-20% sensitivity).
UsageTrace ScaleUsage(const UsageTrace& u, double factor);

}  // namespace gpuplan
