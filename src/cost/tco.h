// Buy versus rent over a horizon (docs/cost-model.md §7).
#pragma once

#include <optional>
#include <vector>

#include "catalog/offer.h"
#include "cost/optimizer.h"
#include "cost/usage.h"

namespace gpuplan {

struct OwnershipCosts {
  int gpus = 0;                      // cards bought (default: the usage's peak)
  double card_price = 70000;         // per card (A100 80GB: 60-80k CNY, DOMAIN.md)
  double server_per_gpu = 12000;     // server chassis, CPUs, RAM, NVLink board: share per GPU
  double network_per_gpu = 3000;     // switches, NICs, cables per GPU
  double room_per_gpu_month = 300;   // rack space, cooling infrastructure
  double power_price_kwh = 0.8;      // CNY per kWh
  double pue = 1.4;                  // data-centre power usage effectiveness
  double idle_power_ratio = 0.3;     // share of TDP drawn when idle
  double server_overhead_watts_per_gpu = 150;  // CPUs, fans, NICs per GPU slot
  double ops_per_month = 15000;      // operations staff share
  double failure_rate_per_year = 0.03;  // share of cards replaced per year
  double depreciation_years = 3;
  double resale_fraction = 0.2;      // value left after the depreciation period
  // The card bought (--buy-gpu): nullptr buys the rented card. Its power (TDP) is used, and the
  // work each bought card does per hour is speed_ratio x a rented card's (a card 2.5x slower:
  // 0.4), so the fleet that does the same work is peak / speed_ratio cards.
  const Gpu* buy_gpu = nullptr;
  double speed_ratio = 1.0;
};

struct TcoMonth {
  int month = 0;
  double buy_cumulative = 0;  // capital minus resale value at that month, plus running costs
  double rent_cumulative = 0;
};

struct TcoResult {
  double horizon_months = 0;
  double buy_total = 0;
  double rent_total = 0;
  double capital = 0;
  double resale_at_horizon = 0;
  double power = 0;
  double room = 0;
  double operations = 0;
  double failures = 0;
  Plan rent_plan;                          // the optimised rental plan over the horizon
  // Owning fewer cards than the peak needs: the demand above what they do is rented (the peaks),
  // and buy_total includes that rent.
  std::string buy_gpu;                     // the card bought
  double gpus_bought = 0;
  double speed_ratio = 1.0;
  double peak_rent = 0;                    // renting the peaks over the horizon (0: none)
  Plan peak_plan;
  std::optional<int> buy_wins_from_month;  // first month at which buying has cost less so far
  std::optional<double> breakeven_utilisation;  // share of hours used at which buying = renting
  std::vector<TcoMonth> months;
};

// InputError (`horizon_months`) unless a whole number of months in [1, 120].
void CheckHorizonMonths(double horizon_months);

TcoResult BuyVersusRent(const OfferSet& offers, const UsageTrace& usage, const OwnershipCosts& own,
                        double horizon_months, const OptimizeOptions& opt = {});

}  // namespace gpuplan
