// Issue 4 / issue 7 target: optimising a one-year hourly trace (8,760 hours) against 30 offers
// (yearly, monthly and weekly terms decided per calendar term; on-demand instances kept or
// released per idle gap) in under 1 second on one core. Run: build/gpuplan_cost_bench
#include <benchmark/benchmark.h>

#include <random>

#include "catalog/gpu_catalog.h"
#include "cost/optimizer.h"
#include "plan/plan.h"
#include "plan/workload.h"

namespace {

using namespace gpuplan;

OfferSet ThirtyOffers(const GpuCatalog& cat) {
  OfferSet s;
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(0.8, 1.2);
  const Gpu* gpu = &cat.Find("A100");
  auto add = [&](const std::string& id, BillingMode m, double price) {
    Offer o;
    o.id = id;
    o.gpu = gpu;
    o.mode = m;
    o.price = price;
    s.offers.push_back(o);
    return &s.offers.back();
  };
  for (int i = 0; i < 4; ++i) add("yearly" + std::to_string(i), BillingMode::kYearly, 183960 * u(rng));
  for (int i = 0; i < 4; ++i) add("monthly" + std::to_string(i), BillingMode::kMonthly, 21900 * u(rng));
  for (int i = 0; i < 2; ++i) add("weekly" + std::to_string(i), BillingMode::kWeekly, 6000 * u(rng));
  for (int i = 0; i < 15; ++i) {
    Offer* o = add("od" + std::to_string(i), BillingMode::kOnDemand, 50 * u(rng));
    o->stopped_fee_ratio = i % 3 == 0 ? 0.1 : 0.0;
    o->recreate_minutes = i % 3 == 0 ? 20 : 0;  // keep-or-release decided per idle gap
    o->releasable = i != 3;                     // one offer (with a stopped fee) that cannot be released
    if (i % 2 == 0) o->night = NightDiscount{std::chrono::hours{22}, std::chrono::hours{8}, 0.7};
  }
  for (int i = 0; i < 5; ++i) {
    Offer* o = add("spot" + std::to_string(i), BillingMode::kSpot, 12 * u(rng));
    o->spot = SpotTerms{0.05 * u(rng), 10, 5};
  }
  return s;
}

UsageTrace YearTrace() {
  UsageTrace t;
  t.start_hour = CivilHour(2027, 1, 1);  // calendar months and weeks from 2027-01-01
  std::mt19937 rng(2);
  for (int h = 0; h < 8760; ++h) {
    UsageHour x;
    x.hour_of_day = h % 24;
    const bool day = x.hour_of_day >= 9 && x.hour_of_day < 21 && (h / 24) % 7 < 5;
    x.firm = 8 + (day ? static_cast<double>(rng() % 17) : static_cast<double>(rng() % 3));
    x.interruptible = day ? 0 : static_cast<double>(rng() % 5);
    t.hours.push_back(x);
  }
  return t;
}

void BM_OptimizeYear30Offers(benchmark::State& state) {
  static const GpuCatalog cat = GpuCatalog::Load(std::string(GPUPLAN_DATA_DIR) + "/gpus.yaml");
  const OfferSet s = ThirtyOffers(cat);
  const UsageTrace t = YearTrace();
  for (auto _ : state) {
    const Plan p = OptimizeRental(s, t);
    benchmark::DoNotOptimize(p.cost.Total());
    state.counters["variables"] = p.variables;
    state.counters["constraints"] = p.constraints;
  }
}
BENCHMARK(BM_OptimizeYear30Offers)->Unit(benchmark::kMillisecond)->UseRealTime();

// Issue 30 requirement 8: a six-month plan over three providers (three cards) and five jobs (three
// training jobs, two services) in under 2 s: sizing on every card, the rentals per card and month,
// the joint choice of cards and the two alternatives.
void BM_PlanSixMonthsThreeProvidersFiveJobs(benchmark::State& state) {
  static const GpuCatalog cat = GpuCatalog::Load(std::string(GPUPLAN_DATA_DIR) + "/gpus.yaml");
  const OfferSet offers = ParseOffers(R"(
currency: CNY
offers:
  - {id: a-monthly, provider: idc-a, gpu: A100 80GB SXM, mode: monthly, price: 21900, addon_fee_ratio: 0.06}
  - {id: a-od, provider: idc-a, gpu: A100 80GB SXM, mode: on_demand, price: 50, night_discount: {from: "22:00", to: "08:00", factor: 0.7}}
  - {id: b-monthly, provider: idc-b, gpu: H100 SXM, gpus_per_instance: 8, mode: monthly, price: 400000}
  - {id: b-od, provider: idc-b, gpu: H100 SXM, gpus_per_instance: 8, mode: on_demand, price: 720}
  - {id: c-od, provider: idc-c, gpu: RTX 4090, mode: on_demand, price: 2.5}
  - {id: c-spot, provider: idc-c, gpu: RTX 4090, mode: spot, price: 1.2, spot: {interruptions_per_hour: 0.05, checkpoint_minutes: 10, restart_minutes: 5}}
)", "bench-offers.yaml", cat);
  const PlanWorkload w = ParseWorkload(R"(
currency: CNY
months: 2027-03..2027-08
training:
  - {id: paper-run, model: Qwen2.5-7B, task: full, tokens: 2e9, every: once, window: {from: 2027-05-01, to: 2027-05-31}}
  - {id: tune, model: Qwen2.5-7B, task: lora, tokens: 3e8, every: month, interruptible: true}
  - {id: small, model: Qwen2.5-3B, task: lora, tokens: 1e8, every: month}
serving:
  - {id: chat, model: Qwen2.5-7B, qps: 2, latency_ms: 50}
  - {id: batch, model: Qwen2.5-3B, qps_by_hour: [1, 1, 1, 1, 1, 1, 1, 1, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2, 2, 2, 2, 1, 1]}
)", "bench-workload.yaml");
  for (auto _ : state) {
    const PlanResult r = RunPlan(w, offers, cat, GPUPLAN_DATA_DIR);
    benchmark::DoNotOptimize(r.total);
    state.counters["rentals_solved"] = r.rentals_solved;
    state.counters["feasible"] = r.feasible ? 1 : 0;
  }
}
BENCHMARK(BM_PlanSixMonthsThreeProvidersFiveJobs)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
