#include "cost/cost_options.h"

#include "catalog/offer.h"
#include "core/error.h"

namespace gpuplan {
namespace {

void CheckExtrapolate(const std::string& s) {
  if (s != "month" && s != "year") {
    throw InputError("expected month or year, got '" + s + "'");
  }
}

template <typename R>
OptionSpec<R> Offers() {
  return Option<R>("--offers", "offers", "offers file (YAML, docs/offers.md)", &R::offers).Required();
}
template <typename R>
OptionSpec<R> GpuFilter() {
  return Option<R>("--gpu", "gpu", "only offers for this GPU", &R::gpu).Unset("every offer");
}
template <typename R>
OptionSpec<R> Month() {
  return Option<R>("--month", "month",
                   "calendar month YYYY-MM for --hours-per-month and break-even (default: next month in the offers' "
                   "time zone)",
                   &R::month)
      .Unset("next month");
}

// The options of compare, optimize and tco: offers, gpu, the usage and optimiser options, month.
template <typename R>
OptionTable<R> RentalTable() {
  OptionTable<R> t;
  t.push_back(Offers<R>());
  t.push_back(GpuFilter<R>());
  t.push_back(Option<R>("--usage", "usage", "hourly usage CSV, or a gpuplan fit --json result", &R::usage)
                  .Unset("none"));
  t.push_back(Option<R>("--hours-per-month", "hours_per_month", "hours each GPU is used per average month of 730 h, scaled to the calendar month's length (730: every hour; instead of --usage)",
                        &R::hours_per_month)
                  .Unit("hours")
                  .Min(0)
                  .Max(730)
                  .Unset("none"));
  t.push_back(Option<R>("--gpus", "gpus", "GPUs used, with --hours-per-month", &R::gpus).Min(0).Max(100000));
  t.push_back(Option<R>("--spot-for-all", "spot_for_all", "allow spot for every class of work, not only interruptible",
                        &R::spot_for_all));
  t.push_back(Option<R>("--release-idle", "release_idle",
                        "release every idle on-demand instance (default: keep or release per idle gap, whichever "
                        "costs less)",
                        &R::release_idle));
  t.push_back(Option<R>("--max-gpus", "max_gpus",
                        "GPUs a plan may hold at once, deferred work included (default: with deferrable work, the "
                        "usage's peak in whole instances)",
                        &R::max_gpus)
                  .Min(0, true)
                  .Max(1e6)
                  .Unset("the peak"));
  t.push_back(Option<R>("--link-gbps", "link_gbps",
                        "the internal link each instance needs: an offer with a slower stated link is priced with "
                        "its cheapest upgrade that reaches it (link.upgrades, a fixed fee per instance and month); "
                        "an offer that states no link or cannot reach it is left out",
                        &R::link_gbps)
                  .Unit("Gbit/s")
                  .Min(0, true)
                  .Max(3200)
                  .Unset("any"));
  t.push_back(Option<R>("--extrapolate", "extrapolate",
                        "the usage is a sample (say one or two measured weeks); repeat its weekly shape to the "
                        "whole month or year",
                        &R::extrapolate)
                  .Choices({"month", "year"}, CheckExtrapolate)
                  .Unset("none"));
  t.push_back(Option<R>("--egress-gb-per-month", "egress_gb_per_month",
                        "data leaving the data centre per average month of 730 h (checkpoints and models taken "
                        "home), priced at the offers' bandwidth.price_per_gb",
                        &R::egress_gb_per_month)
                  .Unit("GB")
                  .Min(0)
                  .Max(1e9)
                  .Unset("none"));
  t.push_back(Month<R>());
  return t;
}

template <typename R>
void CheckGiven(const OptionTable<R>& table, const R& r, const GpuCatalog& catalog) {
  try {
    CheckGivenOptions(table, r, r.given);
  } catch (const InputError&) {
    SelectOffers(r, catalog);  // its error first
    throw;
  }
}

}  // namespace

const OptionTable<BreakevenRequest>& BreakevenOptionTable() {
  using R = BreakevenRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    t.push_back(Offers<R>());
    t.push_back(GpuFilter<R>());
    t.push_back(Month<R>());
    t.push_back(Option<R>("--usage", "usage", "a measured usage CSV: says on which side of each break-even it falls",
                          &R::usage)
                    .Unset("none"));
    t.push_back(Option<R>("--extrapolate", "extrapolate", "repeat the measured sample's weekly shape to the month or year",
                          &R::extrapolate)
                    .Choices({"month", "year"}, CheckExtrapolate)
                    .Unset("none"));
    return t;
  }();
  return table;
}

const OptionTable<CompareRequest>& CompareOptionTable() {
  using R = CompareRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t = RentalTable<R>();
    t.push_back(Option<R>("--by", "by",
                          "each provider's, region's or offer's best plan (the optimiser on its offers alone), every "
                          "fee on its own line, ranked; instead of the pure strategies",
                          &R::by)
                    .Choices({"provider", "region", "offer"}, [](const std::string&) {})
                    .Unset("billing mode"));
    return t;
  }();
  return table;
}

const OptionTable<OptimizeRequest>& OptimizeOptionTable() {
  static const OptionTable<OptimizeRequest> table = RentalTable<OptimizeRequest>();
  return table;
}

const OptionTable<TcoRequest>& TcoOptionTable() {
  using R = TcoRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t = RentalTable<R>();
    auto own = [&t](const char* flag, const char* key, const char* help, double OwnershipCosts::*m) -> OptionSpec<R>& {
      t.push_back(OptionAt<R, double>(flag, key, help, [m](R& r) -> double& { return r.own.*m; }));
      return t.back();
    };
    t.push_back(Option<R>("--horizon-months", "horizon_months", "months to compare", &R::horizon_months)
                    .Unit("months")
                    .Min(1)
                    .Max(120));
    t.push_back(OptionAt<R, int>("--buy-gpus", "buy_gpus",
                                 "cards to buy; fewer than the peak needs: they carry the base load and the peaks "
                                 "are rented",
                                 [](R& r) -> int& { return r.own.gpus; })
                    .Min(1)
                    .Max(100000)
                    .Unset("the usage's peak"));
    t.push_back(Option<R>("--buy-gpu", "buy_gpu", "the card bought, if not the rented one (its power is used)",
                          &R::buy_gpu_name)
                    .Unset("the rented card"));
    t.push_back(Option<R>("--model", "model",
                          "with --buy-gpu: take the speed ratio from fit (the task's best tokens/s per GPU on each "
                          "card, up to one 8-GPU node) instead of --speed-ratio",
                          &R::model)
                    .Unset("none"));
    t.push_back(Option<R>("--task", "task", "with --model: the training task (pretrain, full, lora, qlora)", &R::task));
    own("--speed-ratio", "speed_ratio",
        "work per hour of a bought card over a rented card's (a card 2.5x slower: 0.4); the fleet doing the same "
        "work is the peak / this",
        &OwnershipCosts::speed_ratio)
        .Min(0, true)
        .Max(100);
    own("--card-price", "card_price", "per card", &OwnershipCosts::card_price).Unit("currency").Min(0, true).Max(kMaxMoney);
    own("--server-per-gpu", "server_per_gpu", "server share per GPU", &OwnershipCosts::server_per_gpu)
        .Unit("currency").Min(0).Max(kMaxMoney);
    own("--network-per-gpu", "network_per_gpu", "network share per GPU", &OwnershipCosts::network_per_gpu)
        .Unit("currency").Min(0).Max(kMaxMoney);
    own("--room-per-gpu-month", "room_per_gpu_month", "rack space and cooling per GPU-month",
        &OwnershipCosts::room_per_gpu_month)
        .Unit("currency").Min(0).Max(kMaxMoney);
    own("--power-price", "power_price", "per kWh", &OwnershipCosts::power_price_kwh).Unit("currency/kWh").Min(0).Max(1000);
    own("--pue", "pue", "power usage effectiveness (facility / IT power, at least 1)", &OwnershipCosts::pue).Min(1).Max(10);
    own("--ops-per-month", "ops_per_month", "operations staff per month", &OwnershipCosts::ops_per_month)
        .Unit("currency").Min(0).Max(kMaxMoney);
    own("--failure-rate", "failure_rate", "share of cards replaced per year", &OwnershipCosts::failure_rate_per_year)
        .Unit("1/year").Min(0).Max(1);
    own("--depreciation-years", "depreciation_years", "years to the resale value", &OwnershipCosts::depreciation_years)
        .Unit("years").Min(0, true).Max(50);
    own("--resale", "resale", "value left after depreciation (fraction)", &OwnershipCosts::resale_fraction).Min(0).Max(1);
    return t;
  }();
  return table;
}

void CheckCostRequest(const BreakevenRequest& r, const GpuCatalog& c) { CheckGiven(BreakevenOptionTable(), r, c); }
void CheckCostRequest(const CompareRequest& r, const GpuCatalog& c) { CheckGiven(CompareOptionTable(), r, c); }
void CheckCostRequest(const OptimizeRequest& r, const GpuCatalog& c) { CheckGiven(OptimizeOptionTable(), r, c); }
void CheckCostRequest(const TcoRequest& r, const GpuCatalog& c) { CheckGiven(TcoOptionTable(), r, c); }

}  // namespace gpuplan
