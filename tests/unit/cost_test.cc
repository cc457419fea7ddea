// Cost: offers validation, usage parsing, break-even worked out by hand, and the rental
// optimiser against brute-force enumeration, the load-duration-curve answer and every pure
// strategy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "cost/billing.h"
#include "plan/fit_job.h"
#include "plan/render/fit_job_json.h"
#include "catalog/offer.h"
#include "cost/optimizer.h"
#include "cost/requests.h"
#include "cost/tco.h"
#include "cost/render/cost_text.h"
#include "cost/usage.h"
#include "read/time_text.h"
#include "test_paths.h"
#include "test_time.h"

namespace gpuplan {
namespace {

const GpuCatalog& Cat() { return test::Catalog(); }

Offer Make(const std::string& id, BillingMode mode, double price, int gpus = 1) {
  Offer o;
  o.id = id;
  o.gpu = &Cat().Find("A100");
  o.mode = mode;
  o.price = price;
  o.gpus_per_instance = gpus;
  return o;
}

// 2027-04-01T00:00 local (a 30-day month), where the hand-worked traces start.
const int64_t kApril2027 = test::Days(2027, 4, 1) * 24;

UsageTrace Trace(const std::vector<double>& firm, const std::vector<double>& inter = {}, int64_t start = kApril2027) {
  UsageTrace t;
  t.start_hour = test::Hour(start);
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
  const auto pairs = Breakeven(s, test::Hour(kApril2027));
  ASSERT_EQ(pairs.size(), 1u);
  ASSERT_TRUE(pairs[0].hours_per_month.has_value());
  EXPECT_NEAR(*pairs[0].hours_per_month, 500.0, 1e-6);
  // A 10% stopped-instance fee costs nothing when the instance can be released when idle...
  s.offers[1].stopped_fee_ratio = 0.1;
  EXPECT_NEAR(*Breakeven(s, test::Hour(kApril2027))[0].hours_per_month, 500.0, 1e-6);
  // ... but when it cannot, the idle rest of April (720 h) is paid at 5 per hour:
  // 50 H + 5 (720 - H) = 25000 -> H = (25000 - 3600) / 45.
  s.offers[1].releasable = false;
  EXPECT_NEAR(*Breakeven(s, test::Hour(kApril2027))[0].hours_per_month, (25000.0 - 3600.0) / 45.0, 1e-6);
  // In March (744 h) the idle rest is 24 h longer: H = (25000 - 3720) / 45.
  EXPECT_NEAR(*Breakeven(s, test::Hour(test::Days(2027, 3, 1) * 24))[0].hours_per_month, (25000.0 - 3720.0) / 45.0, 1e-6);
  // Add-on fees of 5% on the monthly price move it up by 5%: 26250 / 50 (without the stopped fee).
  s.offers[1].stopped_fee_ratio = 0;
  s.offers[1].releasable = true;
  s.offers[0].addon_fee_ratio = 0.05;
  EXPECT_NEAR(*Breakeven(s, test::Hour(kApril2027))[0].hours_per_month, 525.0, 1e-6);
  // Daily granularity: 500 h bills 504 h (21 days), so the break-even is the first day boundary
  // past 26250/50 = 525 h -> billed 528 h; the cost crosses inside the day starting at 504 h.
  s.offers[1].granularity = Granularity::kDay;
  EXPECT_NEAR(*Breakeven(s, test::Hour(kApril2027))[0].hours_per_month, 504.0, 1e-6);
}

// The shipped offers in March 2027: monthly 21,900 x 1.06 + 500 GB x 0.35 = 23,389; on demand 53
// an hour by day, 37.1 at night (22:00-08:00), released when idle. The break-even averages the
// night over the day, (14 x 53 + 10 x 37.1) / 24 = 46.375 an hour: 23,389 / 46.375 = 504.35 h;
// used by day only it is 23,389 / 53 = 441.30 h, and the answer says so.
TEST(Billing, BreakevenWithANightWindowGivesTheDaytimeFigure) {
  const OfferSet s = LoadOffers(test::DataDir() + "/offers/nanjing-a100.yaml", Cat());
  const auto pairs = Breakeven(s, test::Hour(test::Days(2027, 3, 1) * 24));
  const auto p = std::find_if(pairs.begin(), pairs.end(), [](const BreakevenPair& x) {
    return x.from->id == "nj-a100-on-demand" && x.to->id == "nj-a100-monthly";
  });
  ASSERT_NE(p, pairs.end());
  ASSERT_TRUE(p->hours_per_month.has_value());
  EXPECT_NEAR(*p->hours_per_month, 23389 / 46.375, 1e-6);
  ASSERT_TRUE(p->daytime_hours_per_month.has_value());
  EXPECT_NEAR(*p->daytime_hours_per_month, 23389 / 53.0, 1e-6);
  EXPECT_NE(p->note.find("averages its night rate over the day (10 of 24 hours at x0.7)"), std::string::npos);
}

TEST(Billing, YearlyVersusMonthlyNeverCross) {
  OfferSet s;
  s.offers = {Make("y", BillingMode::kYearly, 12 * 20000), Make("m", BillingMode::kMonthly, 25000)};
  const auto pairs = Breakeven(s, test::Hour(kApril2027));
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

// Brute force, written without the optimiser's code: every reserved instance is an interval of
// whole calendar terms of its offer, at least min_terms long (terms after the trace are paid
// too). Enumerate how many instances of each interval type are taken; per hour, reserved GPUs
// serve firm work first (the only class on-demand alone can serve), the rest goes to the
// cheapest allowed hourly price.
double BruteForce(const OfferSet& s, const UsageTrace& u, int cap) {
  struct Type {
    const Offer* o;
    int64_t from, to;  // local hours
    double cost;
  };
  std::vector<Type> types;
  for (const auto& o : s.offers) {
    if (!IsReserved(o.mode)) {
      continue;
    }
    // Term starts by hand: days and weeks are 24 and 168 hours; months by the civil calendar.
    const int64_t h0 = test::Count(u.start_hour);
    auto start = [&](int64_t k) -> int64_t {
      if (o.mode == BillingMode::kDaily) return h0 + 24 * k;
      if (o.mode == BillingMode::kWeekly) return h0 + 168 * k;
      const date::year_month_day c{date::sys_days{date::days{h0 / 24}}};
      const int64_t m = static_cast<unsigned>(c.month()) - 1 + k * (o.mode == BillingMode::kYearly ? 12 : 1);
      return test::Days(static_cast<int>(c.year()) + static_cast<int>(m / 12), static_cast<unsigned>(m % 12) + 1,
                        static_cast<unsigned>(c.day())) * 24 + h0 % 24;
    };
    int64_t terms = 0;
    while (start(terms) < test::Count(u.EndHour())) ++terms;
    for (int64_t a = 0; a < terms; ++a) {
      for (int64_t b = a + o.min_terms - 1; b < std::max(terms, a + o.min_terms); ++b) {
        types.push_back({&o, start(a), start(b + 1), static_cast<double>(b - a + 1) * o.price * (1 + o.addon_fee_ratio)});
      }
    }
  }
  double best = 1e300;
  std::vector<int> n(types.size(), 0);
  while (true) {
    double cost = 0;
    for (std::size_t i = 0; i < types.size(); ++i) cost += n[i] * types[i].cost;
    bool feasible = true;
    for (std::size_t t = 0; t < u.hours.size() && cost < best; ++t) {
      const auto& h = u.hours[t];
      const int64_t at = test::Count(u.start_hour) + static_cast<int64_t>(t);
      double R = 0;
      for (std::size_t i = 0; i < types.size(); ++i) {
        if (at >= types[i].from && at < types[i].to) R += n[i] * types[i].o->gpus_per_instance;
      }
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
      if ((firm_left > 0 && od >= 1e300) || (inter_left > 0 && std::min(od, sp) >= 1e300)) {
        feasible = false;
        break;
      }
      cost += firm_left * od + inter_left * std::min(od, sp);
    }
    if (feasible) {
      best = std::min(best, cost);
    }
    std::size_t k = 0;
    while (k < n.size() && ++n[k] > cap) {
      n[k++] = 0;
    }
    if (k == n.size()) {
      break;
    }
  }
  return best;
}

TEST(Optimizer, EqualsBruteForceOnRandomMultiTermInstances) {
  std::mt19937 rng(20261201);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int seed = 0; seed < 40; ++seed) {
    OfferSet s;
    const int hours = 30 + static_cast<int>(rng() % 42);  // 2-3 daily terms, one weekly term
    Offer daily = Make("daily", BillingMode::kDaily, 200 + 800 * unit(rng), 1 + static_cast<int>(rng() % 2));
    daily.min_terms = seed % 3 == 0 ? 2 : 1;
    s.offers.push_back(daily);
    s.offers.push_back(Make("weekly", BillingMode::kWeekly, 1500 + 5000 * unit(rng), 1 + static_cast<int>(rng() % 2)));
    s.offers.push_back(Make("od", BillingMode::kOnDemand, 20 + 40 * unit(rng)));
    if (seed % 2 == 0) {
      s.offers.back().night = NightDiscount{std::chrono::hours{22}, std::chrono::hours{8}, 0.5 + 0.5 * unit(rng)};
    }
    Offer spot = Make("spot", BillingMode::kSpot, 10 + 20 * unit(rng));
    spot.spot = SpotTerms{0.02 + 0.1 * unit(rng), 10, 5};
    s.offers.push_back(spot);
    std::vector<double> firm, inter;
    for (int t = 0; t < hours; ++t) {
      // Demand that changes from day to day, so that per-term counts matter.
      const int day = t / 24;
      firm.push_back(static_cast<double>(rng() % (day == 1 ? 4 : 2)));
      inter.push_back(static_cast<double>(rng() % 2));
    }
    const UsageTrace u = Trace(firm, inter);
    const Plan p = OptimizeRental(s, u);
    ASSERT_TRUE(p.feasible) << seed;
    const double brute = BruteForce(s, u, 3);
    EXPECT_NEAR(p.cost.Total(), brute, 1e-6 * brute) << "seed " << seed;
    for (const auto& [mode, pure] : PureStrategies(s, u)) {
      if (mode != "spot") {  // pure spot also puts firm work on spot, which the plan may not
        EXPECT_LE(p.cost.Total(), pure.cost.Total() + 1e-6) << mode << " seed " << seed;
      }
    }
  }
}

// The outcomes of glp_intopt as its reference manual defines them (GLPK 5.0 manual, section
// 2.8.2): 0 + GLP_OPT solved; GLP_ENOPFS (LP relaxation infeasible) or 0 + GLP_NOFEAS (no
// integer point) mean the offers cannot serve the usage; the rest are solver failures.
TEST(Optimizer, ReadsGlpkOutcomesAsTheManualDefinesThem) {
  EXPECT_EQ(ReadGlpkOutcome(0, 5 /* GLP_OPT */), SolverOutcome::kOptimal);
  EXPECT_EQ(ReadGlpkOutcome(0, 4 /* GLP_NOFEAS */), SolverOutcome::kInfeasible);
  EXPECT_EQ(ReadGlpkOutcome(0x0A /* GLP_ENOPFS */, 1), SolverOutcome::kInfeasible);
  EXPECT_EQ(ReadGlpkOutcome(0x0B /* GLP_ENODFS: unbounded relaxation */, 1), SolverOutcome::kFailed);
  EXPECT_EQ(ReadGlpkOutcome(0x05 /* GLP_EFAIL */, 1), SolverOutcome::kFailed);
  EXPECT_EQ(ReadGlpkOutcome(0x09 /* GLP_ETMLIM */, 2 /* GLP_FEAS */), SolverOutcome::kFailed);
  EXPECT_EQ(ReadGlpkOutcome(0, 2 /* GLP_FEAS, not proven optimal */), SolverOutcome::kFailed);
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
  s.offers[0].night = NightDiscount{std::chrono::hours{22}, std::chrono::hours{8}, 0.7};
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

TEST(Optimizer, IdleInstancesAreKeptOrReleasedPerGap) {
  // On-demand at 50 per hour; stopped instances pay 12% (6 per hour); re-creating one bills 30
  // minutes of set-up (25). One GPU busy 09-12 and 14-17 on two days: the 2-hour lunch gap
  // costs 12 kept (< 25), the 16-hour night gap 96 kept (> 25): released and re-created.
  OfferSet s;
  s.offers = {Make("od", BillingMode::kOnDemand, 50)};
  s.offers[0].stopped_fee_ratio = 0.12;
  s.offers[0].recreate_minutes = 30;
  std::vector<double> firm(48, 0.0);
  for (int d = 0; d < 2; ++d) {
    for (int h : {9, 10, 11, 14, 15, 16}) {
      firm[static_cast<std::size_t>(24 * d + h)] = 1;
    }
  }
  const Plan p = OptimizeRental(s, Trace(firm));
  ASSERT_TRUE(p.feasible);
  EXPECT_NEAR(p.cost.on_demand, 12 * 50.0, 1e-9);
  EXPECT_NEAR(p.cost.stopped, 2 * 2 * 6.0, 1e-9);  // two lunch gaps of 2 h
  EXPECT_NEAR(p.cost.recreate, 25.0, 1e-9);        // one night gap (the trailing idle hours end the trace)
  EXPECT_EQ(p.releases.at("od"), 1);
  // --release-idle releases every gap: 3 re-creations, no retention.
  OptimizeOptions release;
  release.retain_idle = false;
  const Plan r = OptimizeRental(s, Trace(firm), release);
  EXPECT_NEAR(r.cost.stopped, 0.0, 1e-12);
  EXPECT_NEAR(r.cost.recreate, 3 * 25.0, 1e-9);
  // Without a set-up cost, releasing is free: no retention is ever paid (the old model charged
  // the stopped fee on every idle hour up to the peak).
  s.offers[0].recreate_minutes = 0;
  EXPECT_NEAR(OptimizeRental(s, Trace(firm)).cost.Total(), 12 * 50.0, 1e-9);
  // An offer that cannot be released keeps the instance from its first use to the end of the
  // trace: 48 - 9 - 12 = 27 idle hours at 6.
  s.offers[0].releasable = false;
  const Plan k = OptimizeRental(s, Trace(firm));
  EXPECT_NEAR(k.cost.stopped, 27 * 6.0, 1e-9);
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
  // A night window that holds no hour, or makes the night free: refused at the key.
  e = CatchOffers("currency: CNY\noffers:\n  - id: x\n    gpu: A100\n    mode: on_demand\n    price: 1\n"
                  "    night_discount: {from: '22:00', to: '22:00', factor: 0.7}\n");
  EXPECT_EQ(e.field(), "offers[x].night_discount.to");
  e = CatchOffers("currency: CNY\noffers:\n  - id: x\n    gpu: A100\n    mode: on_demand\n    price: 1\n"
                  "    night_discount: {from: '22:00', to: '08:00', factor: 0}\n");
  EXPECT_EQ(e.field(), "offers[x].night_discount.factor");
  e = CatchOffers(std::string(kOffers) + "  - id: a-od\n    gpu: A100\n    mode: spot\n    price: 1\n");
  EXPECT_EQ(e.line(), 11);
  EXPECT_NE(std::string(e.what()).find("duplicate"), std::string::npos);
  e = CatchOffers("currency: CNY\noffers:\n  - id: x\n    gpu: A100\n    mode: spot\n    price: 1\n");
  EXPECT_EQ(e.field(), "offers[x].spot");
  e = CatchOffers("offers: [\n");
  EXPECT_EQ(e.file(), "bad.yaml");
  EXPECT_GT(e.line(), 0);
}

// The issue's four misspellings, each of which used to drop its fee without a word (break-even
// 673.8 h became 438.0 h): every level of the file refuses a key it does not know.
TEST(Offers, MisspeltKeysAreRefusedAtEveryLevel) {
  const std::string od = "  - id: a-od\n    gpu: a100\n    mode: on_demand\n    price: 50\n";
  struct Case {
    std::string text;
    int line;
    std::string field;
    std::string meant;
  };
  const Case cases[] = {
      {"curency: CNY\noffers:\n" + od, 1, "curency", "currency"},
      {"currency: CNY\noffers:\n" + od + "    storge: {kind: nas, gb: 500, price_per_gb_month: 0.35}\n", 7,
       "offers[a-od].storge", "storage"},
      {"currency: CNY\noffers:\n" + od + "    stoped_fee_ratio: 0.12\n", 7, "offers[a-od].stoped_fee_ratio",
       "stopped_fee_ratio"},
      {"currency: CNY\noffers:\n" + od + "    night_discont: {from: '22:00', to: '08:00', factor: 0.7}\n", 7,
       "offers[a-od].night_discont", "night_discount"},
      {"currency: CNY\noffers:\n" + od + "    storage: {kind: nas, gb: 500, price_per_gb: 0.35}\n", 7,
       "offers[a-od].storage.price_per_gb", "price_per_gb_month"},
      {"currency: CNY\noffers:\n" + od + "    night_discount:\n      from: '22:00'\n      to: '08:00'\n"
       "      factr: 0.7\n", 10, "offers[a-od].night_discount.factr", "factor"},
      {"currency: CNY\noffers:\n" + od + "    bandwidth: {mbp: 100}\n", 7, "offers[a-od].bandwidth.mbp", "mbps"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.field);
    const InputError e = CatchOffers(c.text);
    EXPECT_EQ(e.line(), c.line);
    EXPECT_EQ(e.field(), c.field);
    ASSERT_FALSE(e.suggestions().empty());
    EXPECT_EQ(e.suggestions()[0], c.meant);
    EXPECT_NE(e.message().find("did you mean " + c.meant), std::string::npos) << e.message();
  }
  // A key nothing resembles lists what the level takes.
  const InputError e = CatchOffers("currency: CNY\noffers:\n" + od + "    spot: {interruptions_per_hour: 0.1, "
                                   "zzz: 1}\n");
  EXPECT_EQ(e.field(), "offers[a-od].spot.zzz");
  EXPECT_NE(e.message().find("expected one of interruptions_per_hour, restart_minutes, checkpoint_minutes"),
            std::string::npos)
      << e.message();
}

// Break-even with a subsidy covering part of the month: 20% back on on-demand spend (covers
// all) from 2027-03-02 to 2027-03-31, 30 of March's 31 days. Use spread evenly, 30/31 of it is
// eligible: on demand costs 50 H (1 - 0.2 x 30/31) = 50 H x 25/31, equal to the 21,900 term at
// H = 21,900 x 31 / 1,250 = 543.12 h. Judged by March's first hour the subsidy was dropped
// (438 h); from February 1st to March 1st (covering March 1st only) it was taken for all of March
// (21,900 / 40 = 547.5 h), where 1/31 of it is 21,900 / (50 x (1 - 0.2/31)) = 440.84 h.
TEST(Offers, BreakevenTakesASubsidyForThePartOfTheMonthItCovers) {
  const std::string base = "currency: CNY\noffers:\n  - {id: mo, gpu: A100, mode: monthly, price: 21900}\n"
                           "  - {id: od, gpu: A100, mode: on_demand, price: 50}\nsubsidies:\n";
  const LocalHour march = test::Hour(test::Days(2027, 3, 1) * 24);
  const OfferSet most = ParseOffers(base + "  - {id: v, share: 0.2, modes: [on_demand], covers: all, from: 2027-03-02, to: 2027-03-31}\n",
                                    "o.yaml", Cat());
  auto pairs = Breakeven(most, march);
  ASSERT_EQ(pairs.size(), 1u);
  ASSERT_TRUE(pairs[0].hours_per_month.has_value());
  EXPECT_NEAR(*pairs[0].hours_per_month, 21900.0 * 31 / 1250, 0.01);
  const OfferSet first_day = ParseOffers(base + "  - {id: v, share: 0.2, modes: [on_demand], covers: all, from: 2027-02-01, to: 2027-03-01}\n",
                                         "o.yaml", Cat());
  pairs = Breakeven(first_day, march);
  ASSERT_TRUE(pairs[0].hours_per_month.has_value());
  EXPECT_NEAR(*pairs[0].hours_per_month, 21900.0 / (50 * (1 - 0.2 / 31)), 0.01);
}

// Subsidies: strict like the rest of the file, and the optimiser chooses with them in view.
TEST(Offers, SubsidiesAreStrictAndChangeTheChoice) {
  const std::string base = "currency: CNY\noffers:\n  - {id: mo, gpu: A100, mode: monthly, price: 21900}\n"
                           "  - {id: od, gpu: A100, mode: on_demand, price: 50}\nsubsidies:\n";
  auto e = CatchOffers(base + "  - {id: v, share: 0.3, capp: 100}\n");
  EXPECT_EQ(e.field(), "subsidies[v].capp");
  e = CatchOffers(base + "  - {id: v, share: 1.5}\n");
  EXPECT_EQ(e.field(), "subsidies[v].share");
  e = CatchOffers(base + "  - {id: v, share: 0.3, offers: [nope]}\n");
  EXPECT_EQ(e.field(), "subsidies[v].offers");
  e = CatchOffers(base + "  - {id: v, share: 0.3, providers: [elsewhere]}\n");
  EXPECT_NE(e.message().find("applies to no offer"), std::string::npos) << e.message();
  e = CatchOffers(base + "  - {id: v, share: 0.3, cap: {amount: 10, per: week}}\n");
  EXPECT_EQ(e.field(), "subsidies[v].cap.per");
  e = CatchOffers(base + "  - {id: v, share: 0.3, from: 2027-05-01, to: 2027-04-01}\n");
  EXPECT_EQ(e.field(), "subsidies[v].to");
  // Counts are whole: 1.5 instances in stock is an error, not 1.
  e = CatchOffers("currency: CNY\noffers:\n  - {id: mo, gpu: A100, mode: monthly, price: 21900, stock: 1.5}\n");
  EXPECT_EQ(e.field(), "offers[mo].stock");
  EXPECT_NE(e.message().find("whole number"), std::string::npos) << e.message();
  // One GPU 400 hours in April 2027 (720 h): on demand 400 x 50 = 20,000 beats a monthly term,
  // 21,900. A 30% voucher on monthly makes the term 15,330, the cheaper; the same voucher on
  // on-demand makes that 14,000 instead.
  const UsageTrace u = UsageFromHoursPerMonth(400, 1, test::Hour(kApril2027));
  OfferSet none = ParseOffers(base.substr(0, base.find("subsidies:")), "o.yaml", Cat());
  EXPECT_NEAR(OptimizeRental(none, u).cost.Total(), 20000, 1e-6);
  const OfferSet on_monthly = ParseOffers(base + "  - {id: v, share: 0.3, modes: [monthly]}\n", "o.yaml", Cat());
  const Plan m = OptimizeRental(on_monthly, u);
  EXPECT_NEAR(m.cost.Total(), 15330, 1e-6);
  EXPECT_EQ(m.reserved.count("mo"), 1u);
  const OfferSet on_od = ParseOffers(base + "  - {id: v, share: 0.3, modes: [on_demand]}\n", "o.yaml", Cat());
  EXPECT_NEAR(OptimizeRental(on_od, u).cost.Total(), 14000, 1e-6);
  // Outside its window a subsidy pays nothing.
  const OfferSet later = ParseOffers(base + "  - {id: v, share: 0.3, from: 2027-05-01}\n", "o.yaml", Cat());
  EXPECT_NEAR(OptimizeRental(later, u).cost.Total(), 20000, 1e-6);
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
  // A column nobody would read: misspelt, named twice, or without a name.
  expect("timestamp,gpus,deadline_hour\n2026-01-05T09:00,2,4\n", 1, "header");
  expect("\ntimestamp,gpus,gpus\n2026-01-05T09:00,2,8\n", 2, "header");
  expect("timestamp,gpus,\n2026-01-05T09:00,2,\n", 1, "header");
  try {
    ParseUsageCsv("timestamp,gpus,deadline_hour\n", "u.csv");
  } catch (const InputError& e) {
    ASSERT_FALSE(e.suggestions().empty());
    EXPECT_EQ(e.suggestions()[0], "deadline_hours");
    EXPECT_NE(e.message().find("unknown column 'deadline_hour'"), std::string::npos) << e.what();
  }
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
// Calendar months 2027-01 .. 2027-06 (181 days), working days Monday to Friday.
UsageTrace LabSixMonths() {
  UsageTrace t;
  t.start_hour = test::Hour(test::Days(2027, 1, 1) * 24);
  std::mt19937 rng(2025);
  const auto hours = static_cast<int>((test::Days(2027, 7, 1) - test::Days(2027, 1, 1)) * 24);
  for (int h = 0; h < hours; ++h) {
    UsageHour x;
    x.hour_of_day = h % 24;
    const int day = h / 24;
    const bool workday = DayOfWeek(CivilHour(2027, 1, 1) + std::chrono::hours{24 * day}) < 5;
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

// Buying another card than the one rented (issue 25 req 9): RTX 4090s doing 0.4 of an A100's work
// per hour. One A100 busy every hour needs ceil(1 / 0.4) = 3 cards, busy 1 / (3 x 0.4) = 83.3% of
// their hours; power at the 4090's TDP, 450 W: 3 x (450 x 0.8333 + 450 x 0.3 x 0.1667) W =
// 3 x 397.5 W = 1.1925 kW x 1.4 PUE x 730 h x 0.8 CNY = 974.99 a month.
TEST(Tco, BuyingASlowerCardSizesTheFleetAndUsesItsPower) {
  OwnershipCosts own;
  own.card_price = 16000;
  own.server_per_gpu = own.network_per_gpu = own.room_per_gpu_month = own.ops_per_month = 0;
  own.failure_rate_per_year = 0;
  own.server_overhead_watts_per_gpu = 0;
  own.buy_gpu = &Cat().Find("RTX 4090");
  own.speed_ratio = 0.4;
  OfferSet s;
  s.offers = {Make("m", BillingMode::kMonthly, 10000)};
  const TcoResult t = BuyVersusRent(s, Trace(std::vector<double>(730, 1.0)), own, 36);
  EXPECT_EQ(t.gpus_bought, 3);
  EXPECT_EQ(t.buy_gpu, "RTX 4090");
  EXPECT_NEAR(t.capital, 3 * 16000, 1e-6);
  EXPECT_NEAR(t.power, 36 * 3 * (450 * (1 / 1.2) + 450 * 0.3 * (1 - 1 / 1.2)) / 1000 * 1.4 * 730 * 0.8, 1e-6);
  EXPECT_NEAR(t.peak_rent, 0, 1e-9);
}

// Owning a base load and renting the peaks: a 730-hour sample, 2 GPUs for its first 365 hours and
// 1 for the rest, one A100 bought: the second GPU's hours are rented. Repeated over April and May
// 2027 (720 + 744 = 1,464 hours, the sample by hour index) the second GPU is needed in hours
// 0-364, 730-1094 and 1460-1463: 365 + 365 + 4 = 734 hours. On demand at 20 an hour beats a
// 10,000 monthly term for them: 734 x 20 = 14,680.
TEST(Tco, OwningTheBaseLoadRentsThePeaks) {
  OwnershipCosts own;
  own.gpus = 1;
  own.server_per_gpu = own.network_per_gpu = own.room_per_gpu_month = own.ops_per_month = 0;
  own.failure_rate_per_year = 0;
  OfferSet s;
  s.offers = {Make("m", BillingMode::kMonthly, 10000), Make("od", BillingMode::kOnDemand, 20)};
  std::vector<double> month(730, 1.0);
  std::fill(month.begin(), month.begin() + 365, 2.0);
  const TcoResult t = BuyVersusRent(s, Trace(month), own, 2);
  EXPECT_EQ(t.gpus_bought, 1);
  EXPECT_NEAR(t.peak_rent, 734 * 20.0, 1e-6);
  EXPECT_NEAR(t.buy_total - t.peak_rent, t.capital - t.resale_at_horizon + t.power + t.room + t.operations + t.failures,
              1e-6);
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
  s.offers[0].releasable = false;
  EXPECT_NEAR(MonthlyCostPerGpu(s.offers[0], 100, test::Hour(kApril2027)), 100 * 50.0, 1e-9);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

TEST(Calendar, MonthsFollowTheCivilCalendar) {
  // 2027 is not a leap year, 2028 is; 2027-03-01 is a Monday (2027-01-01 is a Friday).
  EXPECT_EQ(DaysInMonth(2027, 2), 28);
  EXPECT_EQ(DaysInMonth(2028, 2), 29);
  EXPECT_EQ(DaysInMonth(2027, 3), 31);
  EXPECT_EQ(DayOfWeek(CivilHour(2027, 1, 1)), 4);
  EXPECT_EQ(DayOfWeek(CivilHour(2027, 3, 1)), 0);
  const int64_t jan31 = test::Days(2027, 1, 31) * 24 + 9;
  EXPECT_EQ(test::Count(AddMonths(test::Hour(jan31), 1)), test::Days(2027, 2, 28) * 24 + 9);  // clamped
  EXPECT_EQ(test::Count(AddMonths(test::Hour(jan31), 2)), test::Days(2027, 3, 31) * 24 + 9);  // from the anchor
  EXPECT_EQ(test::Count(AddMonths(test::Hour(test::Days(2028, 2, 29) * 24), 12)), test::Days(2029, 2, 28) * 24);
  const int64_t mar = test::Days(2027, 3, 1) * 24;
  EXPECT_EQ(TermIndex(TermUnit::kMonth, test::Hour(mar), test::Hour(mar + 743)), 0);  // March has 744 hours
  EXPECT_EQ(TermIndex(TermUnit::kMonth, test::Hour(mar), test::Hour(mar + 744)), 1);
  EXPECT_EQ(test::Count(TermStart(TermUnit::kYear, test::Hour(mar), 1)), test::Days(2028, 3, 1) * 24);
  EXPECT_EQ(FormatLocalHour(test::Hour(mar + 9)), "2027-03-01T09:00");
  const auto off = ParseZone("+08:00");
  ASSERT_TRUE(off.has_value());
  EXPECT_EQ(off->OffsetAt(UtcMillis{}).count(), 480);
  EXPECT_FALSE(ParseZone("+05:30").has_value());  // hourly traces need whole-hour offsets
}

OfferSet MonthlyAndOnDemand() {
  OfferSet s;
  s.offers = {Make("monthly", BillingMode::kMonthly, 21900), Make("od", BillingMode::kOnDemand, 50)};
  return s;
}

TEST(Calendar, ThirtyOneDayMonthIsOneMonthlyTerm) {
  // One GPU around the clock. March has 744 h, April 720 h: one monthly term each (21,900),
  // since on demand would cost 744 x 50 = 37,200 and 720 x 50 = 36,000. The old 730-hour month
  // billed March as two terms (or one term + 14 on-demand hours = 22,600).
  const OfferSet s = MonthlyAndOnDemand();
  const Plan march = OptimizeRental(s, Trace(std::vector<double>(744, 1.0), {}, test::Days(2027, 3, 1) * 24));
  const Plan april = OptimizeRental(s, Trace(std::vector<double>(720, 1.0), {}, kApril2027));
  EXPECT_NEAR(march.cost.Total(), 21900.0, 1e-6);
  EXPECT_NEAR(april.cost.Total(), 21900.0, 1e-6);
  // --hours-per-month 744 is a full March.
  const UsageTrace full = UsageFromHoursPerMonth(744, 1, test::Hour(test::Days(2027, 3, 1) * 24));
  EXPECT_EQ(full.hours.size(), 744u);
  EXPECT_NEAR(full.TotalGpuHours(), 744.0, 1e-9);
  EXPECT_THROW(UsageFromHoursPerMonth(744, 1, test::Hour(kApril2027)), InputError);  // April has 720 h
}

TEST(Optimizer, ReservesMonthByMonthForTheBusyMonth) {
  // The articles' hybrid: six calendar months from 2027-01-01; 1 GPU around the clock all the
  // time; 7 more around the clock in May (the month before a deadline); 2 more for 100 hours in
  // March. By hand, per month (monthly 21,900 per GPU; on demand 50 per GPU-hour):
  //   base GPU: on demand costs 744 x 50 = 37,200 (31-day months) or 672 x 50 = 33,600 (Feb)
  //     or 720 x 50 = 36,000 (30-day months) > 21,900: one monthly term each month: 6 terms;
  //   May's 7 extra GPUs: 744 x 50 = 37,200 each on demand > 21,900: 7 more terms in May only;
  //   March's 2 extra GPUs for 100 h: 2 x 100 x 50 = 10,000 on demand < 2 x 21,900.
  // Total = 13 x 21,900 + 10,000 = 294,700. Holding 8 monthly GPUs all six months would cost
  // 1,051,200; one monthly GPU plus May on demand 6 x 21,900 + 7 x 37,200 + 10,000 = 401,800.
  const int64_t jan = test::Days(2027, 1, 1) * 24;
  const int64_t mar = test::Days(2027, 3, 1) * 24, may = test::Days(2027, 5, 1) * 24;
  const int64_t jul = test::Days(2027, 7, 1) * 24;
  std::vector<double> firm(static_cast<std::size_t>(jul - jan), 1.0);
  for (int64_t h = may; h < may + 744; ++h) firm[static_cast<std::size_t>(h - jan)] += 7;
  for (int64_t h = mar + 9; h < mar + 9 + 100; ++h) firm[static_cast<std::size_t>(h - jan)] += 2;
  const Plan p = OptimizeRental(MonthlyAndOnDemand(), Trace(firm, {}, jan));
  ASSERT_TRUE(p.feasible);
  EXPECT_NEAR(p.cost.Total(), 294700.0, 1e-6);
  EXPECT_NEAR(p.cost.on_demand, 10000.0, 1e-6);
  ASSERT_EQ(p.reserved_terms.size(), 6u);
  for (const auto& t : p.reserved_terms) {
    EXPECT_EQ(t.instances, test::Count(t.start) == may ? 8 : 1) << FormatLocalHour(t.start);
  }
  // Never above renting each month's peak monthly (the pure monthly strategy: 1+1+3+1+8+1 = 15
  // terms = 328,500) nor all on demand.
  const auto pure = PureStrategies(MonthlyAndOnDemand(), Trace(firm, {}, jan));
  EXPECT_NEAR(pure.at("monthly").cost.Total(), 15 * 21900.0, 1e-6);
  EXPECT_LE(p.cost.Total(), pure.at("on_demand").cost.Total());
}

TEST(Optimizer, MinimumTermsAreHonoured) {
  // The monthly offer now needs 3 consecutive months. Six months from 2027-01-01:
  // - the base GPU: one instance started in January and held six months = 6 terms = 131,400
  //   (on demand all six months would be 181 x 24 x 50 = 217,200);
  // - May's 7 extra GPUs: a reservation covering May is 3 terms = 65,700 per GPU, more than
  //   May on demand (744 x 50 = 37,200): on demand, 7 x 37,200 = 260,400.
  // Total 391,800 (without the minimum: 8 terms in May, 294,700 - 10,000, see above).
  const int64_t jan = test::Days(2027, 1, 1) * 24;
  const int64_t may = test::Days(2027, 5, 1) * 24, jun = test::Days(2027, 6, 1) * 24;
  const int64_t jul = test::Days(2027, 7, 1) * 24;
  std::vector<double> firm(static_cast<std::size_t>(jul - jan), 1.0);
  for (int64_t h = may; h < may + 744; ++h) firm[static_cast<std::size_t>(h - jan)] += 7;
  OfferSet s = MonthlyAndOnDemand();
  s.offers[0].min_terms = 3;
  const Plan p = OptimizeRental(s, Trace(firm, {}, jan));
  ASSERT_TRUE(p.feasible);
  EXPECT_NEAR(p.cost.Total(), 391800.0, 1e-6);
  // Terms after the trace are paid: one GPU busy only in June (720 h). Without a minimum one
  // term (21,900) beats on demand (36,000); with 3 months it would be June..August, 65,700, so
  // on demand wins.
  std::vector<double> june(static_cast<std::size_t>(jul - jan), 0.0);
  for (int64_t h = jun; h < jul; ++h) june[static_cast<std::size_t>(h - jan)] = 1;
  EXPECT_NEAR(OptimizeRental(s, Trace(june, {}, jan)).cost.Total(), 36000.0, 1e-6);
  s.offers[0].min_terms = 1;
  EXPECT_NEAR(OptimizeRental(s, Trace(june, {}, jan)).cost.Total(), 21900.0, 1e-6);
  // A longer demand makes the commitment worth it: June alone at 3 months vs on demand... a
  // 4-month trace Jun..Sep at 1 GPU: 4 terms (Jun-Aug + Sep) = 87,600 vs 122 x 24 x 50 = 146,400.
  s.offers[0].min_terms = 3;
  const int64_t oct = test::Days(2027, 10, 1) * 24;
  const Plan q = OptimizeRental(s, Trace(std::vector<double>(static_cast<std::size_t>(oct - jun), 1.0), {}, jun));
  EXPECT_NEAR(q.cost.Total(), 4 * 21900.0, 1e-6);
  // Held 4 months although the last start (July) would commit to Jul..Sep: 4 terms, none after the trace.
  for (const auto& t : q.reserved_terms) {
    EXPECT_FALSE(t.after_trace);
  }
}

TEST(Usage, ExtrapolatesMeasuredWeeksToTheMonth) {
  // Two measured weeks from Monday 2027-03-01: one GPU 09:00-17:00 (8 h) on weekdays. Repeated
  // to March (31 days: 23 weekdays, Mar 29-31 are Monday-Wednesday): 23 x 8 = 184 GPU-hours.
  UsageTrace sample;
  sample.start_hour = test::Hour(test::Days(2027, 3, 1) * 24);
  for (int h = 0; h < 14 * 24; ++h) {
    UsageHour x;
    x.hour_of_day = h % 24;
    const bool weekday = (h / 24) % 7 < 5;
    x.firm = weekday && x.hour_of_day >= 9 && x.hour_of_day < 17 ? 1 : 0;
    sample.hours.push_back(x);
  }
  const UsageTrace month = Extrapolate(sample, TermUnit::kMonth);
  EXPECT_EQ(test::Count(month.start_hour), test::Days(2027, 3, 1) * 24);
  EXPECT_EQ(month.hours.size(), 744u);
  EXPECT_NEAR(month.TotalGpuHours(), 184.0, 1e-9);
  EXPECT_NE(month.note.find("2 weeks measured (2027-03-01 .. 2027-03-15)"), std::string::npos) << month.note;
  // The sample itself has 80 GPU-hours; a monthly term (21,900) against 184 h on demand (9,200):
  // on demand wins for the month; the trace as given would also say so, but a sample of 80 h is
  // judged on the month's 184 h, not on 80.
  const Plan p = OptimizeRental(MonthlyAndOnDemand(), month);
  EXPECT_NEAR(p.cost.Total(), 184 * 50.0, 1e-6);
  // Break-even's load-duration view: the first GPU is busy 184 h in March.
  bool scaled = true;
  const auto levels = LevelHoursPerMonth(month, 744, &scaled);
  ASSERT_EQ(levels.size(), 1u);
  EXPECT_FALSE(scaled);
  EXPECT_NEAR(levels[0], 184.0, 1e-9);
  // A year: 2027-03-01 .. 2028-03-01 (366 days, 2028 is leap: 52 weeks + 2 days, Mon + Tue).
  const UsageTrace year = Extrapolate(sample, TermUnit::kYear);
  EXPECT_EQ(year.hours.size(), 366u * 24u);
  EXPECT_NEAR(year.TotalGpuHours(), (52 * 5 + 2) * 8.0, 1e-9);
}

TEST(Billing, LevelHoursCountFractionalDemand) {
  // 1.5 GPUs for 2 hours and 3 GPUs for 1 hour: GPU 1 busy 3 h, GPU 2 2 x 0.5 + 1 = 2 h, GPU 3 1 h.
  // Three hours are the month's use as they are (a fit job): not stretched to the month (until
  // 2026-12-07 they were scaled by 730 / 3: a 2.4-hour job read as 594 h a month).
  bool scaled = true;
  const auto l = LevelHoursPerMonth(Trace({1.5, 1.5, 3}), 744, &scaled);
  ASSERT_EQ(l.size(), 3u);
  EXPECT_FALSE(scaled);
  EXPECT_NEAR(l[0], 3, 1e-9);
  EXPECT_NEAR(l[1], 2, 1e-9);
  EXPECT_NEAR(l[2], 1, 1e-9);
}

TEST(Billing, LevelHoursOfSeveralMonthsAreAveragedToTheBreakevenMonth) {
  // July and August 2027 (744 h each, 1,488 h): one GPU busy 445 h in July and 446 h in August.
  // Averaged to a 744-hour month: 891 x 744 / 1,488 = 445.5 h, above July's break-even of a
  // 21,900 monthly term against 50 an hour (438 h): monthly is cheaper, as it is in each month on
  // its own. The 730-hour average month made it 891 x 730 / 1,488 = 437.1 h, below 438.
  UsageTrace t;
  t.start_hour = test::Hour(test::Days(2027, 7, 1) * 24);
  t.hours.resize(1488);
  for (int i = 0; i < 445; ++i) t.hours[static_cast<std::size_t>(i)].firm = 1;
  for (int i = 0; i < 446; ++i) t.hours[static_cast<std::size_t>(744 + i)].firm = 1;
  bool scaled = false;
  const auto l = LevelHoursPerMonth(t, 744, &scaled);
  ASSERT_EQ(l.size(), 1u);
  EXPECT_TRUE(scaled);
  EXPECT_NEAR(l[0], 445.5, 1e-9);
  EXPECT_GT(l[0], 21900.0 / 50.0);
}

TEST(Usage, CsvOffsetsAreConvertedToTheOffersZone) {
  // 01:00Z is 09:00 in Shanghai (+08:00); a timestamp without an offset is already local.
  const UsageTrace u = ParseUsageCsv("timestamp,gpus\n2027-03-01T01:00Z,2\n2027-03-01T10:00,1\n", "u.csv");
  EXPECT_EQ(test::Count(u.start_hour), test::Days(2027, 3, 1) * 24 + 9);
  EXPECT_EQ(u.hours[0].hour_of_day, 9);
  EXPECT_EQ(u.hours.size(), 2u);
}

TEST(Usage, TheHourARealZoneRepeatsIsOneWallClockHour) {
  // Europe/Berlin leaves daylight saving at 03:00+02:00 on 2027-10-31 (the last Sunday of
  // October): 02:00+02:00 and 02:00+01:00 are two instants of one wall-clock hour, which the
  // grid holds once, at the larger of the two rows; the same hour twice with one offset is an error.
  const Zone berlin = *ParseZone("Europe/Berlin");
  const UsageTrace u = ParseUsageCsv("timestamp,gpus\n2027-10-31T01:00+02:00,2\n2027-10-31T02:00+02:00,3\n"
                                     "2027-10-31T02:00+01:00,5\n2027-10-31T03:00+01:00,1\n",
                                     "u.csv", berlin);
  ASSERT_EQ(u.hours.size(), 3u);
  EXPECT_EQ(u.hours[1].hour_of_day, 2);
  EXPECT_DOUBLE_EQ(u.hours[1].firm, 5);
  EXPECT_THROW(ParseUsageCsv("timestamp,gpus\n2027-10-31T02:00+01:00,3\n2027-10-31T02:00+01:00,5\n", "u.csv", berlin),
               InputError);
}

TEST(Optimizer, AJobOfWholeInstancesForPartOfAnHour) {
  // 56 GPUs for 30 minutes from 09:30 on 8-GPU instances at 400 per instance-hour, billed by
  // the second: 7 instances x 0.5 h x 400 = 1,400 (spreading 28 GPU-hours over the hour would
  // have rented 4 instances for the whole hour: 1,600); billed by the hour: 7 x 400 = 2,800.
  OfferSet s;
  s.offers = {Make("node", BillingMode::kOnDemand, 400, 8)};
  const UsageTrace job = UsageFromJob(56, 0.5, test::Minute((kApril2027 + 9) * 60 + 30));
  ASSERT_EQ(job.hours.size(), 1u);
  EXPECT_NEAR(job.TotalGpuHours(), 28.0, 1e-9);
  EXPECT_NEAR(OptimizeRental(s, job).cost.Total(), 1400.0, 1e-9);
  s.offers[0].granularity = Granularity::kHour;
  EXPECT_NEAR(OptimizeRental(s, job).cost.Total(), 2800.0, 1e-9);
}

}  // namespace
}  // namespace gpuplan

#include "cost/job_pricing.h"

namespace gpuplan {
namespace {

TEST(JobPricing, StartTimeAndTheNightWindow) {
  // data/offers/nanjing-a100.yaml: on demand 50 x 1.06 = 53 per GPU-hour, 30% off 22:00-08:00
  // (37.1). A 2-hour job of one GPU at 14:00 on 2027-04-01 pays the day rate: 2 x 53 = 106 (a
  // monthly term, 23,389, or a year would cost more; spot is only for interruptible work).
  // Started at the night window's next opening (22:00 the same day): 2 x 37.1 = 74.2.
  const OfferSet s = LoadOffers(test::DataDir() + "/offers/nanjing-a100.yaml", Cat());
  const int64_t two_pm = (kApril2027 + 14) * 60;
  const JobPrice p = PriceJob(s, 1, 2, test::Minute(two_pm));
  ASSERT_TRUE(p.plan.feasible);
  EXPECT_NEAR(p.total.amount, 106.0, 1e-6);
  EXPECT_EQ(p.total.currency, "CNY");
  ASSERT_TRUE(p.night_total.has_value());
  EXPECT_EQ(test::Count(*p.night_start_minute), (kApril2027 + 22) * 60);
  EXPECT_NEAR(p.night_total->amount, 74.2, 1e-6);
  // At 00:00 (the old implicit start) the same job silently got the night rate.
  EXPECT_NEAR(PriceJob(s, 1, 2, test::Minute(kApril2027 * 60)).total.amount, 74.2, 1e-6);
}

TEST(JobPricing, ServiceAroundTheClockForAMonth) {
  // Two GPUs all of April 2027 (720 h): on demand 14 day hours x 53 + 10 night hours x 37.1 =
  // 1,113 per GPU-day, 33,390 per GPU-month, more than a monthly term with its add-on and
  // storage (21,900 x 1.06 + 500 x 0.35 = 23,389). 2 x 23,389 = 46,778 a month, /720 an hour.
  const OfferSet s = LoadOffers(test::DataDir() + "/offers/nanjing-a100.yaml", Cat());
  const ServicePrice p = PriceService(s, 2, test::Hour(kApril2027));
  EXPECT_NEAR(p.per_month.amount, 46778.0, 1e-6);
  EXPECT_NEAR(p.per_hour.amount, 46778.0 / 720.0, 1e-9);
}

// A job only spot could run: never a price of 0. Not interruptible, no offer may serve it and
// the reason names --interruptible; interruptible, spot runs it with the Young/Daly rework:
// tau = sqrt(2 x 5/60 h x 1/0.05 h) = 1.8257 h; rework per hour of work = 0.05 x (tau/2 + 10/60)
// + (5/60) / tau = 0.053977 + 0.045644 = 0.099621; 1 GPU x 10 h x 12 x 1.099621 = 131.95.
TEST(JobPricing, SpotOnlyJobIsNeverPricedZero) {
  const OfferSet s = ParseOffers(R"(currency: CNY
offers:
  - {id: sp, gpu: A100 80GB SXM, mode: spot, price: 12, granularity: second,
     spot: {interruptions_per_hour: 0.05, restart_minutes: 10, checkpoint_minutes: 5}}
)",
                                 "spot.yaml", Cat());
  const int64_t nine = (kApril2027 + 9) * 60;
  const JobPrice firm = PriceJob(s, 1, 10, test::Minute(nine));
  EXPECT_FALSE(firm.plan.feasible);
  EXPECT_NE(firm.unserved.find("only spot offers rent A100 80GB SXM in spot.yaml"), std::string::npos) << firm.unserved;
  EXPECT_NE(firm.unserved.find("--interruptible"), std::string::npos);
  const JobPrice spot = PriceJob(s, 1, 10, test::Minute(nine), true);
  ASSERT_TRUE(spot.plan.feasible);
  EXPECT_NEAR(spot.total.amount, 131.95, 0.01);
  EXPECT_TRUE(spot.interruptible);
}

TEST(JobPricing, StartParsing) {
  const int64_t now = (test::Days(2027, 4, 1) * 24 + 6) * 3600 + 15 * 60;  // 06:15 UTC = 14:15 +08:00
  // No --start: 09:00 on the first Monday of next month, whatever the hour or day of this one.
  // 2027-01-01 is a Friday, so 2027-02-01 and 2027-03-01 are Mondays, 2027-04-01 a Thursday and
  // 2027-05-01 a Saturday: the first Monday of May 2027 is the 3rd.
  EXPECT_EQ(test::Count(ParseJobStart("", test::Offset(480), test::Seconds(now))), (test::Days(2027, 5, 3) * 24 + 9) * 60);
  EXPECT_EQ(test::Count(ParseJobStart("", test::Offset(480), test::Seconds(now + 20 * 86400))), (test::Days(2027, 5, 3) * 24 + 9) * 60);
  // In December the next month is January of the next year: 2027-01-04 (the 1st is a Friday).
  const int64_t december = (test::Days(2026, 12, 3) * 24 + 3) * 3600;
  EXPECT_EQ(test::Count(ParseJobStart("", test::Offset(480), test::Seconds(december))), (test::Days(2027, 1, 4) * 24 + 9) * 60);
  // A month starting on a Monday starts there (March 2027).
  EXPECT_EQ(test::Count(ParseJobStart("", test::Offset(480), test::Seconds((test::Days(2027, 2, 10) * 24) * 3600))), (test::Days(2027, 3, 1) * 24 + 9) * 60);
  EXPECT_EQ(test::Count(ParseJobStart("now", test::Offset(480), test::Seconds(now))), (kApril2027 + 14) * 60 + 15);
  EXPECT_EQ(test::Count(ParseJobStart("09:30", test::Offset(480), test::Seconds(now))), (kApril2027 + 9) * 60 + 30);
  EXPECT_EQ(test::Count(ParseJobStart("2027-05-02T23:00", test::Offset(480), test::Seconds(now))), (test::Days(2027, 5, 2) * 24 + 23) * 60);
  EXPECT_THROW(ParseJobStart("25:00", test::Offset(480), test::Seconds(now)), InputError);
}

// The cost search against brute force: every layout that fits, priced one by one with PriceJob.
// Offers where the steering price per card-hour misleads: 8-GPU instances by the hour (a 4-GPU
// layout pays for 8), a cheaper night, and a weekly 8-GPU term. The exact search must return the
// brute-force minimum (the issue's case, a LoRA: 481 CNY ranked first while 411 existed; keeping
// one layout per tp/pp shape kept a count that pays for idle GPUs of its instances).
TEST(JobPricing, CostSearchIsExactAgainstPricingEveryLayout) {
  const OfferSet offers = ParseOffers(R"(currency: CNY
offers:
  - {id: od8, gpu: A100 80GB SXM, gpus_per_instance: 8, mode: on_demand, price: 240, granularity: second,
     night_discount: {from: "22:00", to: "08:00", factor: 0.6}}
  - {id: wk8, gpu: A100 80GB SXM, gpus_per_instance: 8, mode: weekly, price: 30000}
)",
                                      "o.yaml", Cat());
  Workload w;
  w.task = Task::kLora;
  w.seq = 2048;
  SearchOptions o;
  o.gpus.push_back(&Cat().Find("A100 80GB SXM"));
  o.tokens = 2e8;
  o.max_gpus = 64;
  o.objective = Objective::kCost;
  o.price_per_card_hour = CardHourPrices(offers);
  const int64_t start = (test::Days(2027, 3, 1) * 24 + 9) * 60;  // a Monday, 09:00
  o.top = 5;
  o.keep_extra = 3 * o.top;
  SearchResult exact = SearchTraining(test::Llama8b(), w, o);
  PriceCandidatesWithOffers(exact, offers, Objective::kCost, o.tokens, o.top + 3, test::Minute(start));
  ASSERT_FALSE(exact.ranked.empty());

  // Brute force: every layout pinned in full, one search each (so no ranking rule can hide one).
  double best = 1e300;
  int priced = 0;
  SearchOptions one = o;
  one.top = 1;
  one.keep_extra = 0;
  for (int64_t gpus : {1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}) {
    for (int64_t tp : {1, 2, 4, 8}) {
      for (int64_t pp : {1, 2, 4, 8}) {
        for (int zero = 0; zero <= 3; ++zero) {
          for (int64_t mb : {1, 2, 4, 8}) {
            for (Recompute rc : {Recompute::kFull, Recompute::kSelective, Recompute::kNone}) {
              one.pinned = SearchPins{};
              one.pinned.gpus = gpus;
              one.pinned.tp = tp;
              one.pinned.pp = pp;
              one.pinned.zero = zero;
              one.pinned.micro_batch = mb;
              one.pinned.recompute = rc;
              const SearchResult r = SearchTraining(test::Llama8b(), w, one);
              for (const Candidate& c : r.ranked) {
                if (mb > 1 && mb * c.layout.dp() > 64) {
                  continue;  // a pinned micro-batch grows the 64-sequence batch: another job
                }
                const JobPrice p = PriceJob(offers, static_cast<double>(c.layout.gpus),
                                            o.tokens / c.time.tokens_per_second / 3600, test::Minute(start));
                if (p.plan.feasible) {
                  best = std::min(best, p.total.amount);
                  ++priced;
                }
              }
            }
          }
        }
      }
    }
  }
  ASSERT_GT(priced, 100);
  EXPECT_NEAR(exact.ranked.front().cost.amount, best, 0.005);
  for (std::size_t i = 1; i < exact.ranked.size(); ++i) {
    EXPECT_LE(exact.ranked[i - 1].cost.amount, exact.ranked[i].cost.amount + 1e-9);
  }
  // --top 6 with tp and pp pinned on one card and count still shows 6 rows.
  o.top = 6;
  o.keep_extra = 3 * o.top;
  o.pinned.gpus = 8;
  o.pinned.tp = 1;
  o.pinned.pp = 1;
  SearchResult pinned = SearchTraining(test::Llama8b(), w, o);
  PriceCandidatesWithOffers(pinned, offers, Objective::kCost, o.tokens, o.top + 3, test::Minute(start));
  EXPECT_GE(pinned.ranked.size(), 6u);
}

// The request -> result functions of the cost jobs (cost/requests.h), on the shipped offers
// (data/offers/nanjing-a100.yaml): monthly 21,900 x 1.06 + 500 GB x 0.35 = 23,389 per GPU-month;
// on demand 53 per hour by day, 37.1 at night (22:00-08:00); yearly 183,960 x 1.06 + 12 x 175.
namespace requests {

const std::string kNanjing = test::DataDir() + "/offers/nanjing-a100.yaml";

TEST(Requests, DefaultsAreDefinedInTheRequests) {
  const TcoRequest t;
  EXPECT_EQ(t.gpus, 1);
  EXPECT_FALSE(t.hours_per_month.has_value());
  EXPECT_EQ(t.horizon_months, 36);
  EXPECT_EQ(t.own.card_price, 70000);
  EXPECT_TRUE(t.Options().retain_idle);
  EXPECT_FALSE(t.Options().spot_for_all);
  OptimizeRequest o;
  o.release_idle = true;
  o.spot_for_all = true;
  EXPECT_FALSE(o.Options().retain_idle);
  EXPECT_TRUE(o.Options().spot_for_all);
}

// The job fit priced is the job `cost optimize --usage fit.json` prices: the start and the
// interruptible flag travel in fit --json (issue 25: 7,226 CNY in fit, 6,942 in cost optimize).
TEST(Requests, FitJsonCarriesTheJobToOptimize) {
  for (const bool interruptible : {false, true}) {
    SCOPED_TRACE(interruptible);
    FitRequest f;
    f.model = "Llama-3.1-8B";
    f.task = "lora";
    f.gpu = "A100";
    f.tokens = 5e7;
    f.offers = kNanjing;
    f.start = "2027-04-01T14:00";  // a day start: from midnight the night rate would apply
    f.interruptible = interruptible;
    const FitJobResult fit = RunFit(f, Cat(), test::DataDir());
    ASSERT_TRUE(fit.job.has_value());
    ASSERT_TRUE(fit.job->plan.feasible);
    OptimizeRequest o;
    o.offers = kNanjing;
    o.usage = "fit.json";
    o.usage_text = FitJobToJson(fit).dump();
    const OptimizeResult opt = RunOptimize(o, Cat());
    ASSERT_TRUE(opt.plan.feasible);
    EXPECT_NEAR(opt.plan.cost.Total(), fit.job->total.amount, 1e-6);
    EXPECT_EQ(test::Count(opt.usage.start_hour), (kApril2027 + 14));
    // Interruptible, the shipped file's spot offer (12 CNY an hour) runs it for less than the
    // day rate of 53; not interruptible, spot may not.
    EXPECT_EQ(opt.plan.spot_gpu_hours.empty(), !interruptible);
  }
}

TEST(Requests, OptimizeOneGpuAllOfApril) {
  OptimizeRequest r;
  r.offers = kNanjing;
  r.hours_per_month = 730;  // every hour of the month
  r.month = "2026-04";
  const OptimizeResult o = RunOptimize(r, Cat());
  EXPECT_EQ(o.currency, "CNY");
  EXPECT_EQ(o.usage.hours.size(), 720u);  // April: 30 x 24
  ASSERT_TRUE(o.plan.feasible);
  EXPECT_NEAR(o.plan.cost.Total(), 23389, 0.01);  // 21,900 x 1.06 + 500 x 0.35: one monthly term
  EXPECT_EQ(o.plan.reserved.at("nj-a100-monthly"), 1);
  // On demand every hour: 30 days x (14 x 53 + 10 x 37.1) = 30 x 1,113 = 33,390.
  EXPECT_NEAR(o.pure.at("on_demand").cost.Total(), 33390, 0.01);
  ASSERT_TRUE(o.savings.at("on_demand").has_value());
  EXPECT_NEAR(*o.savings.at("on_demand"), 1 - 23389.0 / 33390.0, 1e-9);
  // One whole yearly term: 183,960 x 1.06 + 12 x 175 = 197,097.6.
  EXPECT_NEAR(*o.savings.at("yearly"), 1 - 23389.0 / 197097.6, 1e-9);
  EXPECT_NEAR(*o.savings.at("monthly"), 0, 1e-12);
  // -20% still needs the one GPU every hour: the same monthly term; +20% never costs less.
  EXPECT_NEAR(o.usage_minus.cost.Total(), 23389, 0.01);
  EXPECT_GE(o.usage_plus.cost.Total(), o.plan.cost.Total());
}

TEST(Requests, OptimizeZeroHoursHasNoSavings) {
  OptimizeRequest r;
  r.offers = kNanjing;
  r.hours_per_month = 0;
  r.month = "2026-04";
  const OptimizeResult o = RunOptimize(r, Cat());
  EXPECT_NEAR(o.plan.cost.Total(), 0, 1e-9);
  ASSERT_EQ(o.savings.size(), 4u);  // every pure strategy is feasible and costs 0
  for (const auto& [mode, s] : o.savings) {
    EXPECT_NEAR(o.pure.at(mode).cost.Total(), 0, 1e-9) << mode;
    EXPECT_FALSE(s.has_value()) << mode;
  }
}

TEST(Requests, CompareFourGpusFourHundredHours) {
  CompareRequest r;
  r.offers = kNanjing;
  r.hours_per_month = 400;
  r.gpus = 4;
  r.month = "2026-04";
  const CompareResult c = RunCompare(r, Cat());
  EXPECT_TRUE(c.AnyFeasible());
  // 400 h per average month of 730 h is 400 x 720 / 730 = 394.52 h in April (30 days).
  const double april = 400.0 * 720 / 730;
  EXPECT_NEAR(c.usage.TotalGpuHours(), 4 * april, 1e-9);
  EXPECT_NEAR(c.strategies.at("monthly").cost.Total(), 4 * 23389.0, 0.01);
  // From 09:00: 13 day hours x 30 days, the rest (4.52 h) at night: 4 x (390 x 53 + 4.52 x 37.1).
  EXPECT_NEAR(c.strategies.at("on_demand").cost.Total(), 4 * (390 * 53 + (april - 390) * 37.1), 0.01);
  // 730 h per average month is every hour of any month: February 2027 (672 h) is not refused.
  r.hours_per_month = 730;
  r.month = "2027-02";
  EXPECT_NEAR(RunCompare(r, Cat()).usage.TotalGpuHours(), 4 * 672.0, 1e-9);
  r.month = "2027-03";
  EXPECT_NEAR(RunCompare(r, Cat()).usage.TotalGpuHours(), 4 * 744.0, 1e-9);
}

TEST(Requests, BreakevenDefaultMonthComesFromNow) {
  BreakevenRequest r;
  r.offers = kNanjing;
  r.now = test::Seconds((test::Days(2027, 2, 15) * 24 + 4) * 3600);  // 2027-02-15T04:00Z: the next month is March
  BreakevenResult b = RunBreakeven(r, Cat());
  EXPECT_EQ(b.month, "2027-03");
  EXPECT_EQ(b.month_hours, 744);
  EXPECT_FALSE(b.measured.has_value());
  // A curve per offer: hours 0, 10, .., 740 and the month's 744.
  ASSERT_EQ(b.curves.size(), b.offers.offers.size());
  ASSERT_EQ(b.curves[0].points.size(), 76u);
  EXPECT_EQ(b.curves[0].points.back().hours, 744);
  const BreakevenPair* od_monthly = nullptr;
  for (const auto& p : b.pairs) {
    if (p.from->mode == BillingMode::kOnDemand && p.to->mode == BillingMode::kMonthly) od_monthly = &p;
  }
  ASSERT_NE(od_monthly, nullptr);
  ASSERT_TRUE(od_monthly->hours_per_month.has_value());
  EXPECT_NEAR(*od_monthly->hours_per_month, 23389 / 46.375, 0.01);  // 53 x (1 - 10/24 x 0.3) = 46.375
  EXPECT_EQ(CheaperSide(*od_monthly, 552), "nj-a100-monthly");
  EXPECT_EQ(CheaperSide(*od_monthly, 240), "nj-a100-on-demand");
  // Moving the result keeps the pairs' and curves' offers pointing into its own offers.
  const BreakevenResult moved = std::move(b);
  auto inside = [&](const Offer* o) {
    const auto& v = moved.offers.offers;
    return std::any_of(v.begin(), v.end(), [o](const Offer& x) { return &x == o; });
  };
  for (const auto& p : moved.pairs) {
    EXPECT_TRUE(inside(p.from) && inside(p.to)) << p.note;
  }
  EXPECT_EQ(moved.curves[0].offer, &moved.offers.offers[0]);
}

TEST(Requests, BreakevenMeasuredTwoWeeksJudgedOnTheMonth) {
  BreakevenRequest r;
  r.offers = kNanjing;
  r.usage = std::string(GPUPLAN_TEST_FIXTURES) + "/../scenarios/cost/inputs/two-weeks-weekdays.csv";
  r.extrapolate = "month";
  r.month = "2027-03";
  const BreakevenResult b = RunBreakeven(r, Cat());
  ASSERT_TRUE(b.measured.has_value());
  EXPECT_EQ(b.measured->usage.hours.size(), 744u);
  ASSERT_EQ(b.measured->levels.size(), 1u);
  EXPECT_NEAR(b.measured->levels[0], 23 * 24, 1e-9);  // March 2027 has 23 weekdays
  ASSERT_EQ(b.measured->cheaper.size(), b.pairs.size());
  for (std::size_t i = 0; i < b.pairs.size(); ++i) {
    if (b.pairs[i].from->mode == BillingMode::kOnDemand && b.pairs[i].to->mode == BillingMode::kMonthly) {
      EXPECT_EQ(b.measured->cheaper[i][0], "nj-a100-monthly");  // 552 h > 504.35 h
    }
  }
}

TEST(Requests, BadRequestsNameTheOption) {
  auto field_of = [](auto run) -> std::string {
    try {
      run();
    } catch (const InputError& e) {
      return test::AsCli(e).field();
    }
    return "no error";
  };
  OptimizeRequest both;
  both.offers = kNanjing;
  both.usage = "u.csv";
  both.hours_per_month = 10;
  EXPECT_EQ(field_of([&] { RunOptimize(both, Cat()); }), "--usage");
  OptimizeRequest none;
  none.offers = kNanjing;
  EXPECT_EQ(field_of([&] { RunOptimize(none, Cat()); }), "--usage");
  CompareRequest month;
  month.offers = kNanjing;
  month.hours_per_month = 10;
  month.month = "2027-13";
  EXPECT_EQ(field_of([&] { RunCompare(month, Cat()); }), "--month");
  CompareRequest ext = month;
  ext.month = "2027-02";
  ext.extrapolate = "week";
  EXPECT_EQ(field_of([&] { RunCompare(ext, Cat()); }), "--extrapolate");
  BreakevenRequest gpu;
  gpu.offers = kNanjing;
  gpu.gpu = "H100";
  EXPECT_EQ(field_of([&] { RunBreakeven(gpu, Cat()); }), "--gpu");
  TcoRequest tco;
  tco.offers = kNanjing;
  tco.hours_per_month = 730;
  tco.month = "2027-01";
  tco.own.pue = 0;
  EXPECT_EQ(field_of([&] { RunTco(tco, Cat()); }), "--pue");
  tco.own.pue = 1.4;
  tco.own.resale_fraction = 2;
  EXPECT_EQ(field_of([&] { RunTco(tco, Cat()); }), "--resale");
  EXPECT_EQ(field_of([] { RunOptimize(OptimizeRequest{}, Cat()); }), "--offers");
}

// The speed ratio from fit (tco --model/--task): the same card bought as rented is 1 exactly (the
// fleet is the peak); RTX 4090s against A100s for an 8B LoRA lie between the memory-bandwidth
// ratio 1,008 / 2,039 = 0.49 and the bf16 peak ratio 165 / 312 = 0.53 widened for the 24 GB
// card's smaller layouts: (0.25, 0.75), and the fleet doing the work is ceil(4 / ratio).
TEST(Requests, TcoSpeedRatioFromFit) {
  TcoRequest t;
  t.offers = kNanjing;
  t.hours_per_month = 400;
  t.gpus = 4;
  t.month = "2027-03";
  t.model = "Llama-3.1-8B";
  t.task = "lora";
  const TcoJobResult same = RunTco(t, Cat(), test::DataDir());
  EXPECT_DOUBLE_EQ(same.tco.speed_ratio, 1.0);
  EXPECT_EQ(same.tco.gpus_bought, 4);
  t.buy_gpu_name = "RTX 4090";
  const TcoJobResult slower = RunTco(t, Cat(), test::DataDir());
  EXPECT_GT(slower.tco.speed_ratio, 0.25);
  EXPECT_LT(slower.tco.speed_ratio, 0.75);
  EXPECT_EQ(slower.tco.gpus_bought, std::ceil(4 / slower.tco.speed_ratio - 1e-9));
  EXPECT_EQ(slower.tco.buy_gpu, "RTX 4090");
  EXPECT_NE(slower.speed_basis.find("tokens/s per RTX 4090"), std::string::npos) << slower.speed_basis;
  t.task = "infer";
  EXPECT_THROW(RunTco(t, Cat(), test::DataDir()), InputError);
}

// cost tco over a usage shorter than a month (docs/cost-model.md §7). Offers: on demand at 50 an
// hour (released when idle) and a monthly term of 21,900.
const char* const kOnDemandAndMonthly =
    "currency: CNY\n"
    "offers:\n"
    "  - {id: od, gpu: A100 80GB SXM, mode: on_demand, price: 50}\n"
    "  - {id: mon, gpu: A100 80GB SXM, mode: monthly, price: 21900}\n";

// Two measured weeks of weekdays, 2 GPUs 09:00-18:00 (9 h), the rows ending on the second Friday:
// over 12 months from 2027-03-01 the weeks repeat Monday on Monday: 2027-03-01 .. 2028-03-01 has
// 262 weekdays (52 weeks and two days, a Monday and a Tuesday), each 18 GPU-hours on demand at
// 50: 262 x 18 x 50 = 235,800 (on demand is cheaper than a term at 9 h a weekday). Repeated hour
// after hour as given (12 days, no last weekend), the same sample was 289,800.
TEST(Requests, TcoRepeatsAMeasuredSampleByItsWeeks) {
  std::string csv = "timestamp,gpus\n";
  for (int day = 1; day <= 12; ++day) {
    if ((day - 1) % 7 >= 5) continue;  // 2027-03-01 is a Monday
    for (int h = 9; h < 18; ++h) csv += fmt::format("2027-03-{:02d}T{:02d}:00,2\n", day, h);
  }
  TcoRequest t;
  t.offers = "o.yaml";
  t.offers_text = kOnDemandAndMonthly;
  t.usage = "week.csv";
  t.usage_text = csv;
  t.horizon_months = 12;
  const TcoJobResult r = RunTco(t, Cat(), test::DataDir());
  EXPECT_NEAR(r.usage.TotalGpuHours(), 262 * 18.0, 1e-9);
  EXPECT_NEAR(r.tco.rent_total, 235800, 0.01);
  EXPECT_NE(r.usage.note.find("extrapolated to a 12-month horizon"), std::string::npos) << r.usage.note;
  t.horizon_months = 6.5;  // renting is priced in whole months
  EXPECT_THROW(RunTco(t, Cat(), test::DataDir()), InputError);
}

// One fit job is a month's use: 12 runs over 12 months, each as fit prices it, not the job's hours
// repeated back to back (which rented a GPU all year: 12 monthly terms).
TEST(Requests, TcoOfAFitJobIsOneRunAMonth) {
  FitRequest f;
  f.model = "Qwen2.5-7B";
  f.task = "lora";
  f.gpu = "A100 80GB SXM";
  f.gpus = 1;
  f.tokens = 5e7;
  f.offers = "o.yaml";
  f.offers_text = kOnDemandAndMonthly;
  f.start = "2027-03-01T09:00";
  const FitJobResult fit = RunFit(f, Cat(), test::DataDir());
  ASSERT_TRUE(fit.job.has_value());
  const double run = fit.job->total.amount;
  ASSERT_GT(run, 0);
  ASSERT_LT(run, 21900 / 10.0);  // a few hours on demand
  TcoRequest t;
  t.offers = "o.yaml";
  t.offers_text = kOnDemandAndMonthly;
  t.usage = "fit.json";
  t.usage_text = FitJobToJson(fit).dump();
  t.horizon_months = 12;
  const TcoJobResult r = RunTco(t, Cat(), test::DataDir());
  EXPECT_NEAR(r.tco.rent_total, 12 * run, 1e-6);
  EXPECT_NE(r.usage.note.find("one run of the job a month"), std::string::npos) << r.usage.note;
}

// Break-even with an offer billed by the day: which side a measured GPU falls on is priced at the
// hours each offer bills. On demand at 30 an hour billed per day against a monthly term of
// 21,900, March 2027 (31 days). 10 h on each day (310 h): 31 whole days billed, 31 x 24 x 30 =
// 22,320 > 21,900: the term (the one-block break-even, 21,900 / 30 = 730 h, said on demand).
// The same 310 h in one block from the 1st (12 whole days and 22 h of the 13th): 13 days,
// 13 x 24 x 30 = 9,360: on demand.
TEST(Requests, BreakevenSideOfADayBilledOfferCountsTheDaysUsed) {
  const std::string offers =
      "currency: CNY\n"
      "offers:\n"
      "  - {id: odday, gpu: A100 80GB SXM, mode: on_demand, price: 30, granularity: day}\n"
      "  - {id: mon, gpu: A100 80GB SXM, mode: monthly, price: 21900}\n";
  std::string spread = "timestamp,gpus\n";
  for (int day = 1; day <= 31; ++day) {
    for (int h = 9; h < 19; ++h) spread += fmt::format("2027-03-{:02d}T{:02d}:00,1\n", day, h);
  }
  std::string block = "timestamp,gpus\n";
  for (int i = 0; i < 310; ++i) block += fmt::format("2027-03-{:02d}T{:02d}:00,1\n", 1 + i / 24, i % 24);
  block += "2027-03-31T23:00,0\n";  // the whole month measured: not extrapolated
  for (const auto& [csv, cheaper] : {std::pair{spread, "mon"}, std::pair{block, "odday"}}) {
    BreakevenRequest r;
    r.offers = "o.yaml";
    r.offers_text = offers;
    r.usage = "u.csv";
    r.usage_text = csv;
    const BreakevenResult b = RunBreakeven(r, Cat());
    ASSERT_TRUE(b.measured.has_value());
    ASSERT_EQ(b.measured->levels.size(), 1u);
    EXPECT_NEAR(b.measured->levels[0], 310, 1e-9);
    ASSERT_EQ(b.pairs.size(), 1u);
    EXPECT_EQ(b.measured->cheaper[0][0], cheaper);
  }
}

TEST(Requests, TcoCarriesTheUsageAndCurrency) {
  TcoRequest r;
  r.offers = kNanjing;
  r.hours_per_month = 730;
  r.gpus = 4;
  r.month = "2027-01";
  const TcoJobResult t = RunTco(r, Cat());
  EXPECT_EQ(t.currency, "CNY");
  EXPECT_NEAR(t.usage.Peak(), 4, 1e-12);
  EXPECT_EQ(t.tco.horizon_months, 36);
  EXPECT_TRUE(t.tco.rent_plan.feasible);
  EXPECT_EQ(t.BuyIsCheaper(), t.tco.buy_total < t.tco.rent_total);
}

}  // namespace requests

// The Chinese names of the billing modes on providers' price lists are aliases (issue 12).
TEST(Offers, ChineseModeNamesAreAliases) {
  const std::string text = "currency: CNY\noffers:\n"
                           "  - {id: y, gpu: A100 80GB SXM, mode: 包年, price: 183960}\n"
                           "  - {id: m, gpu: A100 80GB SXM, mode: 包月, price: 21900}\n"
                           "  - {id: o, gpu: A100 80GB SXM, mode: 按量, price: 50}\n"
                           "  - {id: s, gpu: A100 80GB SXM, mode: 竞价, price: 12,\n"
                           "     spot: {interruptions_per_hour: 0.05, restart_minutes: 10, checkpoint_minutes: 5}}\n";
  const OfferSet s = ParseOffers(text, "zh.yaml", Cat());
  ASSERT_EQ(s.offers.size(), 4u);
  EXPECT_EQ(s.offers[0].mode, BillingMode::kYearly);
  EXPECT_EQ(s.offers[1].mode, BillingMode::kMonthly);
  EXPECT_EQ(s.offers[2].mode, BillingMode::kOnDemand);
  EXPECT_EQ(s.offers[3].mode, BillingMode::kSpot);
  EXPECT_STREQ(ToString(s.offers[1].mode), "monthly");  // printed by its one English name
  try {
    ParseOffers("currency: CNY\noffers:\n  - {id: x, gpu: A100 80GB SXM, mode: 包季, price: 1}\n", "zh.yaml", Cat());
    FAIL() << "an unknown mode must be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// One GPU-hour is singular, as printed: 1.2 rounds to "1 GPU-hour", 1.6 to "2 GPU-hours".
TEST(CostText, OneGpuHourIsSingular) {
  Plan p;
  p.on_demand_gpu_hours = {{"a", 1.2}, {"b", 1.6}};
  p.spot_gpu_hours = {{"c", 1.0}};
  p.deferred_gpu_hours = 0.9;
  std::ostringstream os;
  RentalToText(os, p, "CNY");
  const std::string text = os.str();
  EXPECT_NE(text.find("on-demand 1 GPU-hour on a\n"), std::string::npos) << text;
  EXPECT_NE(text.find("on-demand 2 GPU-hours on b\n"), std::string::npos) << text;
  EXPECT_NE(text.find("spot 1 GPU-hour of work on c\n"), std::string::npos) << text;
  EXPECT_NE(text.find("1 GPU-hour of deferrable work moved later"), std::string::npos) << text;
}

}  // namespace
}  // namespace gpuplan
