// Cost: offers validation, usage parsing, break-even worked out by hand, and the rental
// optimiser against brute-force enumeration, the load-duration-curve answer and every pure
// strategy.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "cost/billing.h"
#include "cost/offer.h"
#include "cost/optimizer.h"
#include "cost/tco.h"
#include "cost/usage.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const GpuCatalog& Cat() {
  static const GpuCatalog c = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  return c;
}

Offer Make(const std::string& id, BillingMode mode, double price, int gpus = 1) {
  Offer o;
  o.id = id;
  o.gpu = &Cat().Find("A100");
  o.mode = mode;
  o.price = price;
  o.gpus_per_instance = gpus;
  return o;
}

UsageTrace Trace(const std::vector<double>& firm, const std::vector<double>& inter = {}) {
  UsageTrace t;
  for (std::size_t i = 0; i < firm.size(); ++i) {
    UsageHour h;
    h.hour_of_day = static_cast<int>(i % 24);
    h.firm = firm[i];
    h.interruptible = i < inter.size() ? inter[i] : 0;
    t.hours.push_back(h);
  }
  return t;
}

TEST(Billing, BreakevenIsMonthlyOverHourly) {
  // DOMAIN.md section 2: T = P / h. Monthly 25,000 per GPU, on-demand 50 per GPU-hour: 500 h.
  OfferSet s;
  s.offers = {Make("m", BillingMode::kMonthly, 25000), Make("od", BillingMode::kOnDemand, 50)};
  const auto pairs = Breakeven(s);
  ASSERT_EQ(pairs.size(), 1u);
  ASSERT_TRUE(pairs[0].hours_per_month.has_value());
  EXPECT_NEAR(*pairs[0].hours_per_month, 500.0, 1e-6);
  // With a 10% stopped-instance fee on idle hours: 50 H + 5 (730 - H) = 25000 -> H = (25000 - 3650) / 45.
  s.offers[1].stopped_fee_ratio = 0.1;
  EXPECT_NEAR(*Breakeven(s)[0].hours_per_month, (25000.0 - 3650.0) / 45.0, 1e-6);
  // Add-on fees of 5% on the monthly price move it up by 5%: 26250 / 50 (without the stopped fee).
  s.offers[1].stopped_fee_ratio = 0;
  s.offers[0].addon_fee_ratio = 0.05;
  EXPECT_NEAR(*Breakeven(s)[0].hours_per_month, 525.0, 1e-6);
  // Daily granularity: 500 h bills 504 h (21 days), so the break-even is the first day boundary
  // past 26250/50 = 525 h -> billed 528 h; the cost crosses inside the day starting at 504 h.
  s.offers[1].granularity = Granularity::kDay;
  EXPECT_NEAR(*Breakeven(s)[0].hours_per_month, 504.0, 1e-6);
}

TEST(Billing, YearlyVersusMonthlyNeverCross) {
  OfferSet s;
  s.offers = {Make("y", BillingMode::kYearly, 12 * 20000), Make("m", BillingMode::kMonthly, 25000)};
  const auto pairs = Breakeven(s);
  ASSERT_EQ(pairs.size(), 1u);
  EXPECT_FALSE(pairs[0].hours_per_month.has_value());
  EXPECT_NE(pairs[0].note.find("y is cheaper"), std::string::npos);
}

TEST(Billing, SpotReworkUsesYoungDaly) {
  SpotTerms t;
  t.interruptions_per_hour = 0.05;
  t.restart_minutes = 10;
  t.checkpoint_minutes = 6;
  // tau = sqrt(2 C / rate) = sqrt(2 x 0.1 / 0.05) = 2 h; rework = 0.05 x (1 + 1/6) + 0.1 / 2.
  EXPECT_NEAR(YoungDalyIntervalHours(t), 2.0, 1e-12);
  EXPECT_NEAR(SpotReworkFraction(t), 0.05 * (1.0 + 10.0 / 60) + 0.05, 1e-12);
}

// Brute force: enumerate reserved counts; per hour, reserved GPUs serve firm work first (the
// only class on-demand alone can serve), the rest goes to the cheapest allowed hourly price.
double BruteForce(const OfferSet& s, const UsageTrace& u) {
  std::vector<const Offer*> res;
  for (const auto& o : s.offers) {
    if (IsReserved(o.mode)) {
      res.push_back(&o);
    }
  }
  const double T = static_cast<double>(u.hours.size());
  const int peak = static_cast<int>(std::ceil(u.Peak()));
  double best = 1e300;
  std::vector<int> r(res.size(), 0);
  while (true) {
    double cost = 0;
    double R = 0;
    for (std::size_t k = 0; k < res.size(); ++k) {
      const double terms = std::max<double>(res[k]->min_terms, std::ceil(T / TermHours(res[k]->mode) - 1e-9));
      cost += r[k] * terms * res[k]->price * (1 + res[k]->addon_fee_ratio);
      R += r[k] * res[k]->gpus_per_instance;
    }
    bool feasible = true;
    for (const auto& h : u.hours) {
      double od = 1e300, sp = 1e300;
      for (const auto& o : s.offers) {
        if (o.mode == BillingMode::kOnDemand) {
          od = std::min(od, o.HourlyPrice(h.hour_of_day) / o.gpus_per_instance);
        } else if (o.mode == BillingMode::kSpot) {
          sp = std::min(sp, o.HourlyPrice(h.hour_of_day) / o.gpus_per_instance * (1 + SpotReworkFraction(*o.spot)));
        }
      }
      const double firm_left = std::max(0.0, h.firm - R);
      const double inter_left = std::max(0.0, h.interruptible - std::max(0.0, R - h.firm));
      if (firm_left > 0 && od >= 1e300) {
        feasible = false;
      }
      cost += firm_left * od + inter_left * std::min(od, sp);
    }
    if (feasible) {
      best = std::min(best, cost);
    }
    std::size_t k = 0;
    while (k < r.size() && ++r[k] > peak / res[k]->gpus_per_instance + 1) {
      r[k++] = 0;
    }
    if (k == r.size()) {
      break;
    }
  }
  return best;
}

TEST(Optimizer, EqualsBruteForceOnRandomInstances) {
  std::mt19937 rng(20261130);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int seed = 0; seed < 60; ++seed) {
    OfferSet s;
    const int hours = 24 + static_cast<int>(rng() % 48);
    s.offers.push_back(Make("daily", BillingMode::kDaily, 200 + 800 * unit(rng), 1 + static_cast<int>(rng() % 2)));
    s.offers.push_back(Make("weekly", BillingMode::kWeekly, 1500 + 5000 * unit(rng), 1 + static_cast<int>(rng() % 2)));
    s.offers.push_back(Make("od", BillingMode::kOnDemand, 20 + 40 * unit(rng)));
    if (seed % 2 == 0) {
      s.offers.back().night = NightDiscount{22 * 60, 8 * 60, 0.5 + 0.5 * unit(rng)};
    }
    Offer spot = Make("spot", BillingMode::kSpot, 10 + 20 * unit(rng));
    spot.spot = SpotTerms{0.02 + 0.1 * unit(rng), 10, 5};
    s.offers.push_back(spot);
    std::vector<double> firm, inter;
    for (int t = 0; t < hours; ++t) {
      firm.push_back(static_cast<double>(rng() % 5));
      inter.push_back(static_cast<double>(rng() % 3));
    }
    const UsageTrace u = Trace(firm, inter);
    const Plan p = OptimizeRental(s, u);
    ASSERT_TRUE(p.feasible) << seed;
    EXPECT_NEAR(p.cost.Total(), BruteForce(s, u), 1e-6 * BruteForce(s, u)) << "seed " << seed;
    for (const auto& [mode, pure] : PureStrategies(s, u)) {
      if (mode != "spot") {  // pure spot also puts firm work on spot, which the plan may not
        EXPECT_LE(p.cost.Total(), pure.cost.Total() + 1e-6) << mode << " seed " << seed;
      }
    }
  }
}

TEST(Optimizer, MatchesTheLoadDurationCurve) {
  // One reserved offer (one GPU, C for the trace) and on-demand at h per GPU-hour: reserve the
  // k-th GPU exactly when demand reaches k in more than C / h hours.
  std::mt19937 rng(7);
  for (int seed = 0; seed < 30; ++seed) {
    const double h = 40, C = 24 * 40 * (0.2 + 0.6 * (seed / 30.0)) + 13;  // daily term = 24 h
    OfferSet s;
    s.offers = {Make("daily", BillingMode::kDaily, C), Make("od", BillingMode::kOnDemand, h)};
    std::vector<double> firm;
    for (int t = 0; t < 24; ++t) {
      firm.push_back(static_cast<double>(rng() % 7));
    }
    int expected = 0;
    for (int k = 1; k <= 6; ++k) {
      int hours_at_least_k = 0;
      for (double d : firm) {
        hours_at_least_k += d >= k ? 1 : 0;
      }
      expected += hours_at_least_k * h > C ? 1 : 0;
    }
    const Plan p = OptimizeRental(s, Trace(firm));
    const int64_t got = p.reserved.count("daily") ? p.reserved.at("daily") : 0;
    EXPECT_EQ(got, expected) << "seed " << seed;
  }
}

TEST(Optimizer, DeferrableWorkMovesIntoTheNightWindow) {
  OfferSet s;
  s.offers = {Make("od", BillingMode::kOnDemand, 50)};
  s.offers[0].night = NightDiscount{22 * 60, 8 * 60, 0.7};
  UsageTrace u = Trace(std::vector<double>(24, 0.0));
  u.hours[14].deferrable = 4;  // 4 GPU-hours at 14:00 that may wait 10 hours (until 23:59)
  u.hours[14].deadline_hours = 10;
  const Plan p = OptimizeRental(s, u);
  ASSERT_TRUE(p.feasible);
  EXPECT_NEAR(p.deferred_gpu_hours, 4.0, 1e-9);
  EXPECT_NEAR(p.cost.Total(), 4 * 50 * 0.7, 1e-9);  // all at the 30% night discount
  u.hours[14].deadline_hours = 8;  // the window opens at 22:00, out of reach
  EXPECT_NEAR(OptimizeRental(s, u).cost.Total(), 4 * 50.0, 1e-9);
}

TEST(Optimizer, StoppedFeesAreCharged) {
  OfferSet s;
  s.offers = {Make("od", BillingMode::kOnDemand, 50)};
  s.offers[0].stopped_fee_ratio = 0.1;
  // Peak 2 GPUs for 1 hour, 1 GPU for 1 hour, 2 idle hours: idle capacity 2+... = 2 x 4 - 3 = 5 GPU-hours.
  const Plan p = OptimizeRental(s, Trace({2, 1, 0, 0}));
  EXPECT_NEAR(p.cost.on_demand, 3 * 50.0, 1e-9);
  EXPECT_NEAR(p.cost.stopped, 5 * 5.0, 1e-9);
}

const char* kOffers = R"(currency: CNY
offers:
  - id: a-monthly
    gpu: A100 80GB SXM
    mode: monthly
    price: 25000
  - id: a-od
    gpu: a100
    mode: on_demand
    price: 50
)";

TEST(Offers, ParsesTheDocumentedShape) {
  const OfferSet s = ParseOffers(kOffers, "o.yaml", Cat());
  ASSERT_EQ(s.offers.size(), 2u);
  EXPECT_EQ(s.offers[1].gpu, &Cat().Find("A100 80GB SXM"));
  EXPECT_EQ(s.offers[0].line, 3);
}

InputError CatchOffers(const std::string& text) {
  try {
    ParseOffers(text, "bad.yaml", Cat());
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("none");
}

TEST(Offers, BadFilesNameLineAndField) {
  std::string t = kOffers;
  auto e = CatchOffers(std::string(kOffers).replace(t.find("price: 50"), 9, "price: -5"));
  EXPECT_EQ(e.line(), 10);
  EXPECT_EQ(e.field(), "offers[a-od].price");
  e = CatchOffers(std::string(kOffers).replace(t.find("on_demand"), 9, "hourly"));
  EXPECT_EQ(e.line(), 9);
  EXPECT_EQ(e.field(), "offers[a-od].mode");
  e = CatchOffers(std::string(kOffers).replace(t.find("gpu: a100"), 9, "gpu: A1OO"));
  EXPECT_EQ(e.line(), 8);
  EXPECT_NE(std::string(e.what()).find("A100"), std::string::npos);
  e = CatchOffers(std::string(kOffers) + "  - id: a-od\n    gpu: A100\n    mode: spot\n    price: 1\n");
  EXPECT_EQ(e.line(), 11);
  EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos);
  e = CatchOffers("currency: CNY\noffers:\n  - id: x\n    gpu: A100\n    mode: spot\n    price: 1\n");
  EXPECT_EQ(e.field(), "offers[x].spot");
  e = CatchOffers("offers: [\n");
  EXPECT_EQ(e.file(), "bad.yaml");
  EXPECT_GT(e.line(), 0);
}

TEST(Usage, CsvWithClassesAndGaps) {
  const UsageTrace u = ParseUsageCsv(
      "timestamp,gpus,class,deadline_hours\n"
      "2026-01-05T09:00,4,steady,\n"
      "2026-01-05T09:00,2,interruptible,\n"
      "2026-01-05T12:00:00+08:00,3,deferrable,6\n",
      "u.csv");
  ASSERT_EQ(u.hours.size(), 4u);  // 09:00 .. 12:00, the gap hours empty
  EXPECT_EQ(u.hours[0].hour_of_day, 9);
  EXPECT_DOUBLE_EQ(u.hours[0].firm, 4);
  EXPECT_DOUBLE_EQ(u.hours[0].interruptible, 2);
  EXPECT_DOUBLE_EQ(u.hours[1].Total(), 0);
  EXPECT_DOUBLE_EQ(u.hours[3].deferrable, 3);
  EXPECT_EQ(u.hours[3].deadline_hours, 6);
  EXPECT_DOUBLE_EQ(u.TotalGpuHours(), 9);
}

TEST(Usage, BadCsvNamesLineAndField) {
  auto expect = [](const std::string& text, int line, const std::string& field) {
    try {
      ParseUsageCsv(text, "u.csv");
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
    }
  };
  expect("time,gpus\n", 1, "header");
  expect("timestamp,gpus\n2026-01-05T09:00,4\n2026-13-05T09:00,1\n", 3, "timestamp");
  expect("timestamp,gpus\n2026-01-05T09:00,-1\n", 2, "gpus");
  expect("timestamp,gpus,class\n2026-01-05T09:00,1,urgent\n", 2, "class");
  expect("timestamp,gpus,class,deadline_hours\n2026-01-05T09:00,1,deferrable,\n", 2, "deadline_hours");
  expect("timestamp,gpus\n2026-01-05T09:00,1\n2026-01-05T09:00,2\n", 3, "timestamp");
  expect("timestamp,gpus\n2026-01-05T09:30,1\n", 2, "timestamp");
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// A lab shaped like the one in the articles (DOMAIN.md section 2): six months; 4 GPUs of
// steady training around the clock; on working days 09:00-21:00 bursts of 0-8 more GPUs;
// interruptible hyper-parameter sweeps of 2 GPUs on some nights; deferrable evaluation jobs.
UsageTrace LabSixMonths() {
  UsageTrace t;
  std::mt19937 rng(2025);
  for (int h = 0; h < 6 * 730; ++h) {
    UsageHour x;
    x.hour_of_day = h % 24;
    const int day = h / 24;
    const bool workday = day % 7 < 5;
    const bool working_hours = x.hour_of_day >= 9 && x.hour_of_day < 21;
    x.firm = 4 + (workday && working_hours ? static_cast<double>(rng() % 9) : 0.0);
    x.interruptible = (!working_hours && day % 3 == 0) ? 2 : 0;
    if (workday && x.hour_of_day == 18) {
      x.deferrable = 2;
      x.deadline_hours = 14;
    }
    t.hours.push_back(x);
  }
  return t;
}

TEST(Optimizer, LabProfileHybridBeatsAllMonthlyAndAllOnDemand) {
  const OfferSet s = LoadOffers(test::DataDir() + "/offers/nanjing-a100.yaml", Cat());
  const UsageTrace u = LabSixMonths();
  const Plan p = OptimizeRental(s, u);
  ASSERT_TRUE(p.feasible);
  const auto pure = PureStrategies(s, u);
  const double monthly = pure.at("monthly").cost.Total();
  const double on_demand = pure.at("on_demand").cost.Total();
  EXPECT_LT(p.cost.Total(), monthly);
  EXPECT_LT(p.cost.Total(), on_demand);
  EXPECT_GT(p.reserved.size(), 0u);            // the steady base is reserved
  EXPECT_GT(p.on_demand_gpu_hours.size(), 0u);  // bursts go on demand
  std::printf("lab profile: plan %.0f CNY; all-monthly %.0f (saving %.1f%%); all-on-demand %.0f (saving %.1f%%)\n",
              p.cost.Total(), monthly, 100 * (1 - p.cost.Total() / monthly), on_demand,
              100 * (1 - p.cost.Total() / on_demand));
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(Tco, BuyVersusRentByHand) {
  // One A100 (TDP 400 W), bought for 70,000 with no server, network, room, staff or failures;
  // 3-year straight-line depreciation to 20%; busy all hours; power 0.4 kW x 1.4 PUE x 0.8 CNY.
  OwnershipCosts own;
  own.gpus = 1;
  own.card_price = 70000;
  own.server_per_gpu = own.network_per_gpu = own.room_per_gpu_month = own.ops_per_month = 0;
  own.failure_rate_per_year = 0;
  own.server_overhead_watts_per_gpu = 0;
  OfferSet s;
  s.offers = {Make("m", BillingMode::kMonthly, 10000)};
  const UsageTrace u = Trace(std::vector<double>(730, 1.0));
  const TcoResult t = BuyVersusRent(s, u, own, 36);
  const double power_per_month = 0.4 * 1.4 * 730 * 0.8;
  EXPECT_NEAR(t.capital, 70000, 1e-6);
  EXPECT_NEAR(t.resale_at_horizon, 14000, 1e-6);
  EXPECT_NEAR(t.power, 36 * power_per_month, 1e-6);
  EXPECT_NEAR(t.buy_total, 70000 - 14000 + 36 * power_per_month, 1e-6);
  EXPECT_NEAR(t.rent_total, 36 * 10000.0, 1e-6);
  // Cash view: 70,000 + m x 327.04 < 10,000 m first holds at m = 8.
  ASSERT_TRUE(t.buy_wins_from_month.has_value());
  EXPECT_EQ(*t.buy_wins_from_month, 8);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(Optimizer, HourlyInstancesOfSeveralGpusAreRentedWhole) {
  // 3 GPUs of work for 2 hours on an 8-GPU on-demand instance at 400 per instance-hour: one
  // whole instance each hour = 800, not 3/8 of it.
  OfferSet s;
  s.offers = {Make("node", BillingMode::kOnDemand, 400, 8)};
  const Plan p = OptimizeRental(s, Trace({3, 3}));
  ASSERT_TRUE(p.feasible);
  EXPECT_NEAR(p.cost.Total(), 800.0, 1e-9);
  EXPECT_NEAR(p.on_demand_gpu_hours.at("node"), 16.0, 1e-9);  // capacity rented, GPU-hours
}

TEST(Optimizer, DayGranularityBillsWholeDays) {
  // Used 2 hours on the first day and 1 hour on the second: 2 whole days of 24 h at 10 per hour.
  OfferSet s;
  s.offers = {Make("daily-billed", BillingMode::kOnDemand, 10)};
  s.offers[0].granularity = Granularity::kDay;
  std::vector<double> firm(48, 0.0);
  firm[3] = firm[4] = 1;
  firm[30] = 1;
  EXPECT_NEAR(OptimizeRental(s, Trace(firm)).cost.Total(), 2 * 24 * 10.0, 1e-9);
}

TEST(Optimizer, TaskBillingHasNoRetentionFee) {
  OfferSet s;
  s.offers = {Make("od", BillingMode::kOnDemand, 50)};
  s.offers[0].stopped_fee_ratio = 0.1;
  s.offers[0].billing_starts = BillingStart::kTask;
  const Plan p = OptimizeRental(s, Trace({2, 1, 0, 0}));
  EXPECT_NEAR(p.cost.stopped, 0.0, 1e-12);
  EXPECT_NEAR(p.cost.Total(), 3 * 50.0, 1e-9);
  // And in break-even: a task-billed on-demand offer pays nothing while idle.
  EXPECT_NEAR(MonthlyCostPerGpu(s.offers[0], 100), 100 * 50.0, 1e-9);
}

}  // namespace
}  // namespace gpuplan
