// gpuplan plan (docs/plan.md): the workload file's strictness, and plans whose money is worked by
// hand from the offers' prices and the sizing fit gives each job.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "cost/job_pricing.h"
#include "cost/optimizer.h"
#include "cost/usage.h"
#include "plan/plan.h"
#include "plan/plan_request.h"
#include "meter/monitor.h"
#include "meter/sample.h"
#include "meter/store.h"
#include "plan/render/plan_json.h"
#include "plan/render/plan_markdown.h"
#include "plan/workload.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

OfferSet Offers(const std::string& yaml) { return ParseOffers(yaml, "offers.yaml", test::Catalog()); }

PlanResult Plan(const std::string& workload, const std::string& offers) {
  return RunPlan(ParseWorkload(workload, "work.yaml"), Offers(offers), test::Catalog(), test::DataDir());
}

// A service small enough for one replica of one GPU (0.1 requests a second of a 7B model).
const char* kOneGpuService = R"(
currency: CNY
months: 2027-03..2027-04
serving:
  - id: chat
    model: Qwen2.5-7B
    qps: 0.1
    prompt_tokens: 512
    output_tokens: 128
)";

TEST(PlanWorkload, ReadsJobsServicesAndLimits) {
  const PlanWorkload w = ParseWorkload(R"(
currency: CNY
months: 2027-03..2027-08
training:
  - id: paper-run
    model: Qwen2.5-7B
    task: full
    tokens: 2e9
    every: month
    window: {from: 2027-05-01, to: 2027-05-31}
    interruptible: true
    framework: megatron
serving:
  - id: chat
    model: Qwen2.5-7B
    qps_by_hour: [1, 1, 1, 1, 1, 1, 1, 1, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 3, 3, 3, 3, 1, 1]
    latency_ms: 50
limits: {budget_per_month: 60000, max_gpus: 16, providers: [idc-a, idc-c]}
)", "w.yaml");
  ASSERT_EQ(w.Months().size(), 6u);
  EXPECT_EQ(w.Months().front(), CivilDay(2027, 3, 1));
  EXPECT_EQ(w.Months().back(), CivilDay(2027, 8, 1));
  ASSERT_EQ(w.training.size(), 1u);
  EXPECT_EQ(w.training[0].fit.framework, "megatron");
  EXPECT_DOUBLE_EQ(w.training[0].fit.tokens, 2e9);
  EXPECT_EQ(w.training[0].every, JobRepeat::kMonth);
  EXPECT_TRUE(w.training[0].interruptible);
  EXPECT_EQ(*w.training[0].window_to, CivilDay(2027, 5, 31));
  ASSERT_EQ(w.serving.size(), 1u);
  EXPECT_DOUBLE_EQ(w.serving[0].QpsAt(9), 5);
  EXPECT_DOUBLE_EQ(w.serving[0].PeakQps(), 5);
  EXPECT_DOUBLE_EQ(w.serving[0].fit.latency_ms, 50);
  EXPECT_EQ(*w.limits.max_gpus, 16);
  EXPECT_EQ(w.limits.providers, (std::vector<std::string>{"idc-a", "idc-c"}));
}

// The error names file, line and field, as every reader does.
void ExpectError(const std::string& yaml, int line, const std::string& field, const std::string& words) {
  try {
    ParseWorkload(yaml, "w.yaml");
    FAIL() << "accepted: " << yaml;
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "w.yaml");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(PlanWorkload, BadInputNamesFileLineAndField) {
  const std::string head = "months: 2027-03..2027-04\ntraining:\n  - id: a\n    model: Qwen2.5-7B\n    task: lora\n";
  // A misspelt fit key is not dropped: "did you mean tokens".
  ExpectError(head + "    tokns: 1e9\n", 6, "training[a].tokns", "did you mean tokens");
  // The card and the count are the plan's to choose.
  ExpectError(head + "    tokens: 1e9\n    gpus: 8\n", 7, "training[a].gpus", "the plan's to choose");
  ExpectError(head + "    tokens: 1e9\n    window: {from: 2027-06-01, to: 2027-06-05}\n", 7, "training[a].window.from",
              "outside the plan's months");
  ExpectError(head + "    tokens: 1e9\n    every: weekly\n", 7, "training[a].every", "once or month");
  ExpectError(head + "    tokens: 1e9\n  - id: a\n    model: Qwen2.5-7B\n    task: lora\n    tokens: 1e9\n", 7,
              "training[1].id", "two jobs");
  ExpectError(head, 3, "training[a].tokens", "tokens");
  ExpectError("months: 2027-03..2027-04\nserving:\n  - id: s\n    model: Qwen2.5-7B\n    qps_by_hour: [1, 2]\n", 5,
              "serving[s].qps_by_hour", "24 numbers");
  ExpectError("months: 2027-13\nserving: []\n", 1, "months", "not a month range");
  // A rate beyond fit's bound (a million requests a second) is refused, not sized into overflow.
  ExpectError("months: 2027-03\nserving:\n  - {id: s, model: Qwen2.5-7B, qps: 1e300}\n", 3, "serving[s].qps", "");
  ExpectError("months: 2027-03\nlimits: {max_gpu: 4}\nserving:\n  - {id: s, model: Qwen2.5-7B, qps: 1}\n", 2,
              "limits.max_gpu", "did you mean max_gpus");
}

TEST(Plan, FitsOwnChecksArePlacedAtTheJob) {
  // fit's checks hold for a job: a LoRA rank of 0 (fit's bounds, at the key's line) and an unknown
  // model (found when fit prepares the job, at the job's line).
  const char* offers = "currency: CNY\noffers:\n  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40}\n";
  try {
    Plan("months: 2027-03\ntraining:\n  - id: a\n    model: Qwen2.5-7B\n    task: lora\n    tokens: 1e9\n    lora_rank: 0\n",
         offers);
    FAIL() << "lora_rank 0 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "work.yaml");
    EXPECT_EQ(e.line(), 7);
    EXPECT_EQ(e.field(), "training[a].lora_rank");
  }
  try {
    Plan("months: 2027-03\nserving:\n  - {id: s, model: Qwen9-7B, qps: 1}\n", offers);
    FAIL() << "an unknown model accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field().rfind("serving[s].", 0), 0u) << e.field();
  }
}

TEST(Plan, AServiceOnOneGpuRentsTheMonthlyTermWhenItIsCheaper) {
  // One GPU all month. On demand: 744 h x 50 = 37,200 CNY in March, 720 x 50 = 36,000 in April;
  // the monthly term is 21,900 a month, so the plan reserves it both months: 43,800 in all.
  const PlanResult r = Plan(kOneGpuService, R"(
currency: CNY
offers:
  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 50}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  ASSERT_EQ(r.months.size(), 2u);
  ASSERT_EQ(r.months[0].runs.size(), 1u);
  for (int64_t g : r.months[0].runs[0].sizing.gpus_by_hour) {
    ASSERT_EQ(g, 1);  // one replica of one GPU every hour
  }
  EXPECT_NEAR(r.months[0].total, 21900, 0.005);
  EXPECT_NEAR(r.months[1].total, 21900, 0.005);
  EXPECT_NEAR(r.total, 43800, 0.005);
  EXPECT_EQ(r.months[0].runs[0].billed_by, std::vector<std::string>{"monthly"});  // no on-demand hour
  EXPECT_EQ(r.assignment.at("chat"), "A100 80GB SXM");
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].command, "gpuplan check --expect \"1x A100 80GB SXM\"");
}

TEST(Plan, ATrainingJobOnDemandIsItsGpusTimesItsHoursTimesThePrice) {
  // On demand only, 40 CNY an instance-hour of one GPU billed by the second, no fees: each month's
  // money is the job's GPUs x its hours x 40 (the last part-hour billed for the minutes it runs).
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-03..2027-04
training:
  - id: tune
    model: Qwen2.5-7B
    task: lora
    tokens: 5e7
    every: month
)", R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  for (const PlanMonth& m : r.months) {
    ASSERT_EQ(m.runs.size(), 1u);
    const PlanRun& run = m.runs[0];
    const double hours = run.sizing.hours;
    EXPECT_EQ(run.start, LocalHour{m.month});  // the first hour of the month
    EXPECT_NEAR(m.total, static_cast<double>(run.sizing.gpus) * hours * 40, 0.005);
    EXPECT_NEAR(run.share, m.total, 0.005);  // the only run holds the whole bill
  }
  // The job's hours are fit's for that card and count: 5e7 tokens at its tokens per second.
  const PlanRun& run = r.months[0].runs[0];
  EXPECT_NEAR(run.sizing.hours, 5e7 / run.sizing.tokens_per_second / 3600.0, 1e-6 * run.sizing.hours);
}

// The audit's workload: a monthly LoRA run of Qwen2.5-7B on 2e8 tokens in the window 29th-31st,
// January to March 2028, on one on-demand offer of one-GPU instances at 40 CNY an hour.
const char* kMonthlyLora = R"(
currency: CNY
months: 2028-01..2028-03
training:
  - {id: lo, model: Qwen2.5-7B, task: lora, tokens: 2e8, every: month, window: {from: 2028-01-29, to: 2028-01-31}}
)";

TEST(Plan, AManyGpuRunIsPricedAsFitPricesItNotInWholeHoursPerGpu) {
  // By hand, from fit's time model (H = 2e8 tokens / tokens per second / 3600): on 1 GPU a run
  // takes about 9.74 h, 9.74 x 40 = 389.6 CNY a month, about 1,169 CNY for three months; on 64 GPUs
  // (the fastest count) about 0.152 h, 64 x 0.152 x 40 = 389.7 CNY a run, about 1,169 too. Priced
  // in whole hours per GPU the 64-GPU run was 64 x 1 x 40 = 2,560 a month, 7,680 in all: "6,480
  // CNY more" for a plan that costs about the same.
  const std::string offers = R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40}
)";
  const PlanResult r = Plan(kMonthlyLora, offers);
  ASSERT_TRUE(r.feasible) << r.unserved;
  ASSERT_EQ(r.months.size(), 3u);
  double plan_total = 0;
  for (const PlanMonth& m : r.months) {
    ASSERT_EQ(m.runs.size(), 1u);
    const PlanRun& run = m.runs[0];
    const double h = 2e8 / run.sizing.tokens_per_second / 3600.0;
    EXPECT_NEAR(run.sizing.hours, h, 1e-6 * h);
    EXPECT_NEAR(m.total, static_cast<double>(run.sizing.gpus) * h * 40, 0.005);
    EXPECT_NEAR(run.gpu_hours, static_cast<double>(run.sizing.gpus) * h, 1e-6);
    plan_total += static_cast<double>(run.sizing.gpus) * h * 40;
  }
  EXPECT_NEAR(r.total, plan_total, 0.01);
  EXPECT_NEAR(r.total, 1169, 5);  // the hand figure above, within the time model's rounding

  // The fastest alternative on its own: every run on 64 GPUs, each month 64 x H x 40, which is
  // what fit --offers prices for the same job and start (PriceJob).
  const OfferSet o = Offers(offers);
  const PlanResult f = RunPlan(ParseWorkload(kMonthlyLora, "work.yaml"), o, test::Catalog(), test::DataDir(),
                               PlanOptions{true, {}});
  ASSERT_TRUE(f.feasible) << f.unserved;
  double fastest_total = 0;
  for (const PlanMonth& m : f.months) {
    ASSERT_EQ(m.runs.size(), 1u);
    const PlanRun& run = m.runs[0];
    EXPECT_EQ(run.sizing.gpus, 64);
    const double h = 2e8 / run.sizing.tokens_per_second / 3600.0;
    EXPECT_LT(h, 0.2);
    EXPECT_NEAR(m.total, 64 * h * 40, 0.005);
    const JobPrice fit = PriceJob(OffersFor(o, run.sizing.gpu), 64, run.sizing.hours, LocalMinute{run.start}, false, 0);
    EXPECT_NEAR(m.total, fit.total.amount, 0.005);
    fastest_total += 64 * h * 40;
  }
  EXPECT_NEAR(fastest_total, 1169, 5);
  ASSERT_FALSE(r.alternatives.empty());
  const PlanAlternative& a = r.alternatives[0];
  EXPECT_EQ(a.name, "fastest");
  EXPECT_NEAR(a.total, fastest_total, 0.01);
  // 64 x 0.152 h against 1 x 9.74 h: the same GPU-hours within 1%, so the same money within 1%.
  EXPECT_LT(std::abs(a.total - r.total), 0.01 * r.total) << a.gives_up;
}

TEST(Plan, AnHourlyBilledOfferBillsTheLastPartHourWhole) {
  // The same job on an offer billed by the hour: each month G x ceil(H) x 40 (1 GPU, 9.74 h:
  // 10 x 40 = 400 CNY a month, 1,200 in all): the plan bills a run as its offer does.
  const PlanResult r = Plan(kMonthlyLora, R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40, granularity: hour}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  for (const PlanMonth& m : r.months) {
    ASSERT_EQ(m.runs.size(), 1u);
    const PlanRun& run = m.runs[0];
    const double h = 2e8 / run.sizing.tokens_per_second / 3600.0;
    EXPECT_NEAR(m.total, static_cast<double>(run.sizing.gpus) * std::ceil(h) * 40, 0.005);
  }
}

TEST(Plan, SubsidyCapsHoldAcrossMonths) {
  // 30% of the monthly price back, at most 5,000 in total: March takes 5,000 (0.3 x 21,900 = 6,570
  // capped), April nothing: 2 x 21,900 - 5,000 = 38,800 CNY.
  const PlanResult r = Plan(kOneGpuService, R"(
currency: CNY
offers:
  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}
subsidies:
  - {id: v, share: 0.3, cap: {amount: 5000, per: total}}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  EXPECT_NEAR(r.months[0].cost.subsidies, 5000, 0.005);
  EXPECT_NEAR(r.months[1].cost.subsidies, 0, 0.005);
  EXPECT_NEAR(r.total, 38800, 0.005);
}

TEST(Plan, TheBudgetIsCheckedEveryMonth) {
  std::string w = kOneGpuService;
  w += "limits: {budget_per_month: 21000}\n";
  const PlanResult r = Plan(w, R"(
currency: CNY
offers:
  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}
)");
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.months[0].within_budget, std::optional<bool>(false));  // 21,900 > 21,000
  const nlohmann::json j = PlanResultToJson(r);
  EXPECT_EQ(j["months"][0]["within_budget"], false);
  EXPECT_EQ(j["months"].size(), 2u);
  EXPECT_NEAR(j["months"][0]["total"].get<double>(), 21900, 0.005);
  EXPECT_NEAR(j["total"].get<double>(), 43800, 0.005);
}

TEST(Plan, EachMonthIsWhatCostOptimizeGivesForTheUsageItPrints) {
  // The illustrative three-provider offers, a monthly job and a service: for every month and
  // card, cost optimize on the usage CSV the plan writes, with the minutes of the runs' last
  // part-hours the plan priced, gives that month's money (without them, never less), and no pure
  // strategy is cheaper (docs/plan.md §3, issue 30 req 6).
  const PlanWorkload w = ParseWorkload(R"(
currency: CNY
months: 2027-03..2027-04
training:
  - {id: paper-run, model: Qwen2.5-7B, task: lora, tokens: 2e8, every: month, interruptible: true}
serving:
  - {id: chat, model: Qwen2.5-7B, qps: 2, prompt_tokens: 1024, output_tokens: 256, latency_ms: 50}
)", "w.yaml");
  const OfferSet offers = LoadOffers(test::DataDir() + "/offers/three-providers.yaml", test::Catalog());
  const PlanResult r = RunPlan(w, offers, test::Catalog(), test::DataDir());
  ASSERT_TRUE(r.feasible) << r.unserved;
  for (const PlanMonth& m : r.months) {
    for (const PlanCardMonth& c : m.cards) {
      // The month's slice of the CSV the plan writes, read back as cost optimize reads it.
      const UsageTrace all = ParseUsageCsv(PlanUsageCsv(r, c.gpu), "usage.csv", offers.zone);
      UsageTrace month = all;
      const auto from = static_cast<std::size_t>((LocalHour{m.month} - all.start_hour).count());
      month.hours.assign(all.hours.begin() + static_cast<std::ptrdiff_t>(from),
                         all.hours.begin() + static_cast<std::ptrdiff_t>(from + c.usage.hours.size()));
      month.start_hour = LocalHour{m.month};
      // The CSV has no minutes: a run's last part-hour is written whole, so cost optimize on it
      // pays at most that hour in full, never less than the plan (docs/plan.md §4).
      const gpuplan::Plan whole = OptimizeRental(OffersFor(offers, c.gpu), month);
      EXPECT_GE(whole.cost.Total(), c.rental.cost.Total() - 0.005);
      // With the part-hours' minutes the plan priced, the same GPUs every hour give the same money.
      ASSERT_EQ(month.hours.size(), c.usage.hours.size());
      for (std::size_t i = 0; i < month.hours.size(); ++i) {
        EXPECT_DOUBLE_EQ(month.hours[i].Total(), c.usage.hours[i].Total()) << i;
        month.hours[i].minutes = c.usage.hours[i].minutes;
      }
      const gpuplan::Plan again = OptimizeRental(OffersFor(offers, c.gpu), month);
      EXPECT_NEAR(again.cost.Total(), c.rental.cost.Total(), 0.005);
      for (const auto& [mode, pure] : PureStrategies(OffersFor(offers, c.gpu), month)) {
        if (pure.feasible) {
          EXPECT_LE(c.rental.cost.Total(), pure.cost.Total() + 0.005) << mode;
        }
      }
    }
  }
}

TEST(Plan, ARunStartsAtTheNightWindowWhenThatIsCheaper) {
  // 40 CNY an hour by the second, half price from 22:00 to 08:00. A run of H hours from midnight
  // pays min(H, 8) night hours and the rest by day; from 22:00, min(H, 10) night hours: the plan
  // takes the cheaper start (midnight on a tie) and bills exactly that.
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-03
training:
  - {id: tune, model: Qwen2.5-7B, task: lora, tokens: 1.8e8}
)", R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40,
     night_discount: {from: "22:00", to: "08:00", factor: 0.5}}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  const PlanRun& run = r.months[0].runs[0];
  const double h = run.sizing.hours;
  const double g = static_cast<double>(run.sizing.gpus);
  const double at_midnight = g * (std::min(h, 8.0) * 20 + std::max(0.0, h - 8) * 40);
  const double at_night = g * (std::min(h, 10.0) * 20 + std::max(0.0, h - 10) * 40);
  EXPECT_NEAR(r.total, std::min(at_midnight, at_night), 0.005);
  EXPECT_EQ(run.sizing.start_hour_of_day, at_night < at_midnight - 0.005 ? 22 : 0);
  EXPECT_EQ(run.start, LocalHour{CivilDay(2027, 3, 1)} + std::chrono::hours{run.sizing.start_hour_of_day});
}

TEST(Plan, TheDeliveryCheckCarriesTheStorageRateOfItsTraining) {
  // 8-GPU instances: a machine holds min(8, G) of the job's G GPUs, so it reads that share of the
  // job's sequences a second, each seq x 4 bytes of token ids.
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-03
training:
  - {id: tune, model: Qwen2.5-7B, task: full, tokens: 2e9, seq: 4096}
)", R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: H100 SXM, gpus_per_instance: 8, mode: on_demand, price: 200}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  ASSERT_EQ(r.checks.size(), 1u);
  const PlanCheck& c = r.checks[0];
  const PlanRun& run = r.months[0].runs[0];
  const double share = std::min(1.0, 8.0 / static_cast<double>(run.sizing.gpus));
  EXPECT_NEAR(c.samples_per_second, run.sizing.tokens_per_second / 4096 * share, 1e-9);
  EXPECT_EQ(c.bytes_per_sample, 4096 * 4);
  EXPECT_EQ(c.command.rfind("gpuplan check --expect \"8x H100 SXM 80GB\" --samples-per-second ", 0), 0u) << c.command;
  EXPECT_NE(c.command.find("--bytes-per-sample 16384"), std::string::npos) << c.command;
}

TEST(Plan, TheAlertsFileIsOneMeterRunReads) {
  std::string w = kOneGpuService;
  w += "limits: {budget_per_month: 25000}\n";
  const PlanResult r = Plan(w, R"(
currency: CNY
offers:
  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}
)");
  ASSERT_TRUE(r.feasible);
  const std::filesystem::path f = std::filesystem::temp_directory_path() / ("plan-alerts-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(f) << PlanAlertsYaml(r);
  const MeterMonitorOptions o = LoadMeterMonitorOptions(f.string());
  std::filesystem::remove(f);
  ASSERT_TRUE(o.rules.monthly_budget.has_value());
  EXPECT_DOUBLE_EQ(o.rules.monthly_budget->amount, 25000);
  EXPECT_EQ(o.rules.monthly_budget->currency, "CNY");
  EXPECT_DOUBLE_EQ(o.rules.idle_minutes, 30);
  // Markdown: the month's table and its total.
  const std::string md = PlanResultToMarkdown(r);
  EXPECT_NE(md.find("## 2027-03: 21,900 CNY"), std::string::npos) << md;
  EXPECT_NE(md.find("| chat (service) | A100 80GB SXM | 1 |"), std::string::npos) << md;
}

TEST(Plan, ARunWhoseWindowCrossesTheMonthsEndIsBilledInBoth) {
  // A job run once in a window from 30 March to 5 April on a 40 CNY on-demand offer: March holds
  // its first min(H, 48) hours (30 March 00:00 to 1 April 00:00), April the rest; together
  // G x H x 40 (billed by the second), nothing lost at the month's end. One GPU (max_gpus 1) takes about 50 hours.
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-03..2027-04
training:
  - {id: long, model: Qwen2.5-7B, task: lora, tokens: 1e9, window: {from: 2027-03-30, to: 2027-04-05}}
limits: {max_gpus: 1}
)", R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  ASSERT_EQ(r.months[0].runs.size(), 1u);
  const PlanSizing& s = r.months[0].runs[0].sizing;
  const double h = s.hours, g = static_cast<double>(s.gpus);
  EXPECT_NEAR(r.months[0].total, g * std::min(h, 48.0) * 40, 0.005);
  EXPECT_NEAR(r.total, g * h * 40, 0.005);
  ASSERT_GT(h, 48) << "the run no longer crosses the month's end: lengthen it";
  {
    ASSERT_EQ(r.months[1].runs.size(), 1u);
    EXPECT_TRUE(r.months[1].runs[0].continued);
    EXPECT_NEAR(r.months[1].runs[0].gpu_hours, g * (h - 48), 1e-9);
  }
  EXPECT_NEAR(r.hours_to_finish, s.hours, 1e-9);  // counted once
}

// The cheapest rental of one-GPU instances, monthly terms against per-second on-demand hours with
// no fees, worked by hand: stack the month's demand in layers (layer k is busy in the hours that
// need k GPUs or more, for the part of the hour it is busy: a run's last part-hour its minutes);
// each layer is one instance, a monthly term or its busy hours on demand, whichever is less.
// `monthly` and `hourly`: the best price of each kind (a mix may take each layer from a different
// provider).
double LayerCake(const UsageTrace& u, double monthly, double hourly) {
  double peak = 0;
  for (const UsageHour& h : u.hours) {
    peak = std::max(peak, h.Total());
  }
  double money = 0;
  for (int k = 1; k <= static_cast<int>(std::lround(peak)); ++k) {
    double busy = 0;
    for (const UsageHour& h : u.hours) {
      busy += h.Total() >= k - 1e-9 ? h.minutes / 60.0 : 0;
    }
    money += std::min(monthly, busy * hourly);
  }
  return money;
}

TEST(Plan, TheLabWithAPaperDeadline) {
  // The articles' lab: LoRA experiments of one or two GPUs every month, a full fine-tune that must
  // finish within two days of May (so it takes many GPUs at once), and a small chat service all
  // along, on Nanjing's one-GPU offers (monthly 21,900, on demand 50 an hour, no fees here). Each
  // month's money is the layer cake of its usage: the service's GPU a monthly term, the
  // experiments' and the deadline run's GPUs on demand unless busy more than 438 h.
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-04..2027-06
training:
  - {id: paper-run, model: Qwen2.5-7B, task: full, tokens: 2e9, window: {from: 2027-05-01, to: 2027-05-02}}
  - {id: experiments, model: Qwen2.5-7B, task: lora, tokens: 3e8, every: month}
serving:
  - {id: chat, model: Qwen2.5-7B, qps: 0.1, prompt_tokens: 512, output_tokens: 128}
limits: {max_gpus: 16}
)", R"(
currency: CNY
offers:
  - {id: nj-monthly, provider: nanjing, gpu: A100 80GB SXM, mode: monthly, price: 21900}
  - {id: nj-od, provider: nanjing, gpu: A100 80GB SXM, mode: on_demand, price: 50}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  ASSERT_EQ(r.months.size(), 3u);
  for (const PlanMonth& m : r.months) {
    ASSERT_EQ(m.cards.size(), 1u);
    EXPECT_NEAR(m.total, LayerCake(m.cards[0].usage, 21900, 50), 0.005) << date::format("%F", m.month);
  }
  // The deadline run is in May only, on more GPUs than the rest of the year's work.
  int64_t paper_gpus = 0;
  for (const PlanRun& x : r.months[1].runs) {
    if (x.id == "paper-run") {
      paper_gpus = x.sizing.gpus;
      EXPECT_LE(std::ceil(x.sizing.hours), 48);  // within its two days
    }
  }
  EXPECT_GE(paper_gpus, 4);
  EXPECT_EQ(r.months[0].runs.size(), 2u);  // April: experiments and chat
  EXPECT_EQ(r.months[1].runs.size(), 3u);
  // The hours and the service's size rest on the time model: the plan says how far it came from
  // published runs on the card it rents, as fit does (data/accuracy.yaml: 12 training runs on the
  // A100 80GB SXM, 4 inference runs), once per kind.
  ASSERT_EQ(r.training_accuracy.size(), 1u);
  ASSERT_EQ(r.serving_accuracy.size(), 1u);
  EXPECT_EQ(r.training_accuracy[0].gpu, "A100 80GB SXM");
  EXPECT_TRUE(r.training_accuracy[0].training);
  ASSERT_TRUE(r.training_accuracy[0].card.has_value());
  EXPECT_EQ(r.training_accuracy[0].card->rows, 12);
  EXPECT_FALSE(r.serving_accuracy[0].training);
  ASSERT_TRUE(r.serving_accuracy[0].card.has_value());
  EXPECT_EQ(r.serving_accuracy[0].card->rows, 4);
  const nlohmann::json j = PlanResultToJson(r);
  EXPECT_EQ(j["accuracy"]["training"]["kind"], "training");
  EXPECT_EQ(j["accuracy"]["training"]["gpus"][0]["gpu"], "A100 80GB SXM");
  EXPECT_EQ(j["accuracy"]["training"]["gpus"][0]["on_gpu"]["rows"], 12);
  EXPECT_EQ(j["accuracy"]["serving"]["kind"], "inference");
}

TEST(Plan, NanjingShanghaiOrWuhu) {
  // Three cities' one-GPU A100 offers: Nanjing monthly 21,900 / on demand 50, Shanghai 24,000 /
  // 42, Wuhu 19,500 / 55 an hour. The plan mixes them layer by layer (the cheapest monthly term,
  // 19,500 at Wuhu, for a busy layer; the cheapest hour, 42 at Shanghai, for a light one); one
  // provider alone pays each provider's own pair, the cheapest of the three being the alternative.
  const std::string offers = R"(
currency: CNY
offers:
  - {id: nj-m, provider: nanjing, gpu: A100 80GB SXM, mode: monthly, price: 21900}
  - {id: nj-od, provider: nanjing, gpu: A100 80GB SXM, mode: on_demand, price: 50}
  - {id: sh-m, provider: shanghai, gpu: A100 80GB SXM, mode: monthly, price: 24000}
  - {id: sh-od, provider: shanghai, gpu: A100 80GB SXM, mode: on_demand, price: 42}
  - {id: wh-m, provider: wuhu, gpu: A100 80GB SXM, mode: monthly, price: 19500}
  - {id: wh-od, provider: wuhu, gpu: A100 80GB SXM, mode: on_demand, price: 55}
)";
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-03
training:
  - {id: experiments, model: Qwen2.5-7B, task: lora, tokens: 3e8}
serving:
  - {id: chat, model: Qwen2.5-7B, qps: 0.1, prompt_tokens: 512, output_tokens: 128}
)", offers);
  ASSERT_TRUE(r.feasible) << r.unserved;
  const UsageTrace& u = r.months[0].cards[0].usage;
  EXPECT_NEAR(r.total, LayerCake(u, 19500, 42), 0.005);
  double alone = 1e300;
  for (const auto& [m, h] : std::vector<std::pair<double, double>>{{21900, 50}, {24000, 42}, {19500, 55}}) {
    alone = std::min(alone, LayerCake(u, m, h));
  }
  const auto one = std::find_if(r.alternatives.begin(), r.alternatives.end(),
                                [](const PlanAlternative& a) { return a.name == "single_provider"; });
  ASSERT_NE(one, r.alternatives.end());
  EXPECT_NEAR(one->total, alone, 0.005);
  EXPECT_LT(r.total, one->total);  // mixing saves here: Wuhu's term and Shanghai's hours
}

// A meter database of one GPU sampled once a minute from 2027-03-01 00:00 (+08:00) for `hours`
// hours, at 100% utilisation with a process for the first `busy` of them, idle after.
std::string MeasuredStore(const std::string& name, int hours, int busy) {
  const std::filesystem::path f = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".db");
  std::filesystem::remove(f);
  const UtcMillis start = FromUnixMillis((static_cast<int64_t>(CivilDay(2027, 3, 1).time_since_epoch().count()) * 24 - 8) *
                                         kMillisecondsPerHour);
  std::vector<GpuSample> gpu;
  std::vector<ProcessSample> procs;
  for (int m = 0; m < hours * 60; ++m) {
    GpuSample g;
    g.time = start + std::chrono::minutes{m};
    g.gpu = 0;
    g.uuid = "GPU-0";
    g.utilization_gpu = m < busy * 60 ? 100 : 0;
    gpu.push_back(g);
    if (m < busy * 60) {
      ProcessSample p;
      p.pid = 42;
      p.user = "lab";
      p.command = "python serve.py";
      p.time = g.time;
      p.gpu = 0;
      procs.push_back(p);
    }
  }
  StoreOptions o;
  o.sample_interval_seconds = 60;
  o.max_sample_gap_seconds = 90;
  o.max_buffered_samples = 1000000;
  const UtcMillis after = start + std::chrono::hours{hours + 1};
  MeterStore store = MeterStore::Open(f.string(), o);
  store.Append(gpu);
  store.Append(procs);
  while (store.Buffered() > 0) {
    store.Flush(after);
  }
  store.RollUp(after);
  return f.string();
}

TEST(Plan, AgainstTheMeterSaysWhenToReplan) {
  // The plan holds one GPU for the chat service all March. Measured: one GPU for a day (24 h),
  // busy all of it: 24 busy GPU-hours against the 24 planned over the hours measured, 0% off. Busy
  // only 12 of the 24 h: (12 - 24) / 24 = -50%, beyond the 20% share: re-plan.
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string work = (dir / ("plan-w-" + std::to_string(::getpid()) + ".yaml")).string();
  const std::string offers = (dir / ("plan-o-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream(work) << "months: 2027-03\nserving:\n  - {id: chat, model: Qwen2.5-7B, qps: 0.1}\n";
  std::ofstream(offers) << "currency: CNY\ntimezone: \"+08:00\"\noffers:\n"
                           "  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}\n";
  PlanRequest q;
  q.workload = work;
  q.offers = {offers};
  q.now = UtcSeconds{std::chrono::seconds{(static_cast<int64_t>(CivilDay(2027, 3, 3).time_since_epoch().count()) * 86400)}};
  q.against = MeasuredStore("plan-busy", 24, 24);
  PlanResult r = RunPlanRequest(q, test::Catalog(), test::DataDir());
  ASSERT_TRUE(r.against);
  ASSERT_EQ(r.against->months.size(), 1u);
  EXPECT_EQ(r.against->months[0].hours, 24);
  EXPECT_FALSE(r.against->months[0].whole);
  EXPECT_NEAR(r.against->months[0].planned_gpu_hours, 24, 1e-9);
  EXPECT_NEAR(r.against->months[0].measured_gpu_hours, 24, 1e-9);
  EXPECT_FALSE(r.against->replan);
  std::filesystem::remove(q.against);

  q.against = MeasuredStore("plan-half", 24, 12);
  r = RunPlanRequest(q, test::Catalog(), test::DataDir());
  ASSERT_TRUE(r.against);
  EXPECT_NEAR(r.against->months[0].measured_gpu_hours, 12, 1e-9);
  ASSERT_TRUE(r.against->months[0].off);
  EXPECT_NEAR(*r.against->months[0].off, -0.5, 1e-9);
  EXPECT_TRUE(r.against->replan);
  ASSERT_EQ(r.against->reasons.size(), 1u);
  EXPECT_NE(r.against->reasons[0].find("-50%"), std::string::npos) << r.against->reasons[0];
  std::filesystem::remove(q.against);
  std::filesystem::remove(work);
  std::filesystem::remove(offers);
}

TEST(Plan, RunsAreMovedInTheirWindowsWhenTheyWouldCollide) {
  // One on-demand offer at 40 an hour with stock 1 (one instance at a time) and two one-GPU jobs
  // a month: both from the 1st they would need two instances at once, which no plan may hold; the
  // plan moves one later in the month, and each month costs (H1 + H2) x 40 (by the second).
  const PlanResult r = Plan(R"(
currency: CNY
months: 2027-03
training:
  - {id: a, model: Qwen2.5-7B, task: lora, tokens: 2e8, every: month}
  - {id: b, model: Qwen2.5-7B, task: lora, tokens: 2e8, every: month}
limits: {max_gpus: 1}
)", R"(
currency: CNY
offers:
  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40, stock: 1}
)");
  ASSERT_TRUE(r.feasible) << r.unserved;
  const PlanMonth& m = r.months[0];
  ASSERT_EQ(m.runs.size(), 2u);
  const PlanRun& x = m.runs[0];
  const PlanRun& y = m.runs[1];
  EXPECT_TRUE(x.end <= y.start || y.end <= x.start) << "the runs overlap";
  EXPECT_NEAR(m.total, (x.sizing.hours + y.sizing.hours) * 40, 0.005);
}

TEST(Plan, AWholeMonthMeasuredIsHeldAgainstThePlanMixModeByMode) {
  // The plan reserves March's monthly term (21,900) for a service it expects busy all month. The
  // meter saw the whole month (744 h) with the GPU busy 200 h: served cheapest on demand
  // (200 x 50 = 10,000 CNY, no term): monthly 0 GPU-hours needed against 744 planned (-100%),
  // on demand 200 against none: re-plan.
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string work = (dir / ("plan-w2-" + std::to_string(::getpid()) + ".yaml")).string();
  const std::string offers = (dir / ("plan-o2-" + std::to_string(::getpid()) + ".yaml")).string();
  std::ofstream(work) << "months: 2027-03\nserving:\n  - {id: chat, model: Qwen2.5-7B, qps: 0.1}\n";
  std::ofstream(offers) << "currency: CNY\ntimezone: \"+08:00\"\noffers:\n"
                           "  - {id: m, provider: p, gpu: A100 80GB SXM, mode: monthly, price: 21900}\n"
                           "  - {id: od, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 50}\n";
  PlanRequest q;
  q.workload = work;
  q.offers = {offers};
  q.now = UtcSeconds{std::chrono::seconds{(static_cast<int64_t>(CivilDay(2027, 4, 2).time_since_epoch().count()) * 86400)}};
  q.against = MeasuredStore("plan-month", 744, 200);
  const PlanResult r = RunPlanRequest(q, test::Catalog(), test::DataDir());
  ASSERT_TRUE(r.against);
  ASSERT_EQ(r.against->months.size(), 1u);
  const PlanMonthAgainst& a = r.against->months[0];
  EXPECT_TRUE(a.whole);
  EXPECT_NEAR(a.measured_gpu_hours, 200, 1e-6);
  ASSERT_TRUE(a.measured_optimum);
  EXPECT_NEAR(*a.measured_optimum, 10000, 0.005);
  EXPECT_EQ(a.planned_mix, "1 x m");
  EXPECT_EQ(a.mix, "none");
  ASSERT_EQ(a.modes.size(), 2u);  // by name: monthly, on_demand
  EXPECT_EQ(a.modes[0].mode, "monthly");
  EXPECT_NEAR(a.modes[0].planned_gpu_hours, 744, 1e-9);
  EXPECT_NEAR(a.modes[0].measured_gpu_hours, 0, 1e-9);
  EXPECT_TRUE(a.modes[0].off_too_much);
  EXPECT_EQ(a.modes[1].mode, "on_demand");
  EXPECT_NEAR(a.modes[1].planned_gpu_hours, 0, 1e-9);
  EXPECT_NEAR(a.modes[1].measured_gpu_hours, 200, 1e-6);
  EXPECT_TRUE(a.modes[1].off_too_much);
  EXPECT_TRUE(r.against->replan);
  std::filesystem::remove(q.against);
  std::filesystem::remove(work);
  std::filesystem::remove(offers);
}

TEST(Plan, OffersOfSeveralFilesMustAgree) {
  const OfferSet a = Offers("currency: CNY\noffers:\n  - {id: x, provider: p, gpu: A100 80GB SXM, mode: on_demand, price: 40}\n");
  OfferSet b = a;
  b.file = "b.yaml";
  try {
    MergeOffers({a, b});
    FAIL() << "an offer id twice was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "b.yaml");
    EXPECT_EQ(e.field(), "offers[x].id");
  }
  OfferSet c = Offers("currency: USD\noffers:\n  - {id: y, provider: q, gpu: A100 80GB SXM, mode: on_demand, price: 6}\n");
  EXPECT_THROW(MergeOffers({a, c}), InputError);
}

}  // namespace
}  // namespace gpuplan
