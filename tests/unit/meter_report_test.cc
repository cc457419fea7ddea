// The meter's money of observed use and its reports (src/meter/observed.h, report.h; renderers
// src/meter/render/meter_json.h, meter_text.h) on real SQLite stores in a temporary folder under the
// current directory. Each store is built from samples constructed here with known busy and idle
// hours; every expected figure is worked out by hand in the comment beside it.
//
// Sampling: one sample a minute (the stores are written with sample_interval 60 s and a 90 s
// gap limit, so each sample stands for 60 s), at whole minutes: the samples at H + 0 min ..
// H + 59 min make hour H fully observed (60 x 60 s = 1 h).
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "cost/billing.h"
#include "catalog/offer.h"
#include "cost/requests.h"
#include "cost/usage.h"
#include "meter/render/meter_json.h"
#include "meter/render/meter_text.h"
#include "format/text_lang.h"
#include "read/messages.h"
#include "read/time_text.h"
#include "test_time.h"
#include "meter/observed.h"
#include "meter/report.h"
#include "meter/sample.h"
#include "meter/store.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMin = kMillisecondsPerMinute;
constexpr int64_t kHr = kMillisecondsPerHour;

// A local hour in China Standard Time (+08:00, the offers' zone below) as UTC milliseconds.
int64_t Cst(int y, unsigned m, unsigned d, int hour = 0) { return (test::Days(y, m, d) * 24 + hour - 8) * kHr; }
// 2027-03-01T00:00+08:00: a Monday, the 1st of a 31-day month (744 h).
const int64_t kMarch = Cst(2027, 3, 1);

UtcSeconds Seconds(int64_t ms) { return test::Seconds(ms / 1000); }

// Samples of one machine, built run by run.
class Machine {
 public:
  // GPU `gpu` sampled once a minute over [from, to) with utilisation `util` (%), drawing
  // `watts` (its energy counter advances by watts x 60 s per sample), and, when `who` is given,
  // that process on it at every sample.
  void Run(int gpu, int64_t from, int64_t to, int util, double watts, std::optional<ProcessIdentity> who = {},
           uint64_t process_memory = 1ull << 30) {
    for (int64_t t = from; t < to; t += kMin) {
      uint64_t& energy = energy_mj_[gpu];
      energy += static_cast<uint64_t>(watts * 60.0 * 1000.0);
      GpuSample s;
      s.time = FromUnixMillis(t);
      s.gpu = gpu;
      s.uuid = "GPU-" + std::to_string(gpu);
      s.utilization_gpu = util;
      s.power = watts;
      s.energy_mj = energy;
      gpu_.push_back(s);
      if (who) {
        ProcessSample p;
        static_cast<ProcessIdentity&>(p) = *who;
        p.time = FromUnixMillis(t);
        p.gpu = gpu;
        p.gpu_memory = process_memory;
        proc_.push_back(p);
      }
    }
  }
  const std::vector<GpuSample>& gpu() const { return gpu_; }
  const std::vector<ProcessSample>& processes() const { return proc_; }

 private:
  std::vector<GpuSample> gpu_;
  std::vector<ProcessSample> proc_;
  std::map<int, uint64_t> energy_mj_;
};

ProcessIdentity Proc(int pid, const std::string& user, std::optional<std::string> job = {},
                     std::optional<std::string> pod = {}) {
  ProcessIdentity p;
  p.pid = pid;
  p.user = user;
  p.command = "/usr/bin/python3 train.py --lr 3e-4";
  p.slurm_job_id = std::move(job);
  if (pod) {
    p.pod_namespace = "ml";
    p.pod_name = *pod;
  }
  return p;
}

const char* kOnDemandByTheHour = R"(currency: CNY
timezone: "+08:00"
offers:
  - id: od
    gpu: A100 80GB SXM
    mode: on_demand
    price: 10
    granularity: hour
    billing_starts: create
)";

class MeterReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::current_path() / ("meter_report_test." + std::to_string(getpid()) + "." + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string File(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(File(name)) << text;
    return File(name);
  }
  // Writes the machine's samples into a new store, flushed and rolled up at `now` (by default an
  // hour after the last sample, so every minute and hour is rolled up).
  std::string Store(const Machine& m, std::optional<int64_t> now = {}, const std::string& name = "meter.db") const {
    StoreOptions o;
    o.sample_interval_seconds = 60;
    o.max_sample_gap_seconds = 90;
    o.max_buffered_samples = 1000000;
    int64_t last = 0;
    for (const auto& s : m.gpu()) last = std::max(last, UnixMillis(s.time));
    const int64_t at = now.value_or(last + kHr);
    MeterStore store = MeterStore::Open(File(name), o);
    store.Append(m.gpu());
    store.Append(m.processes());
    while (store.Buffered() > 0) {
      store.Flush(FromUnixMillis(at));
    }
    store.RollUp(FromUnixMillis(at));
    return File(name);
  }
  MeterReportRequest Request(const std::string& db, const std::string& offers, int64_t from, int64_t to) const {
    MeterReportRequest r;
    r.db = db;
    r.offers = offers;
    r.from = FormatLocalHour(test::Hour(from / kHr + 8)) + "+08:00";
    r.to = FormatLocalHour(test::Hour(to / kHr + 8)) + "+08:00";
    r.now = Seconds(to) + std::chrono::hours{7 * 24};  // a week later: the range is in the past
    r.sample_interval_seconds = 60;
    r.max_sample_gap_seconds = 90;
    return r;
  }

  fs::path dir_;
};

// The day of the lead's example: 3 GPUs up 24 h. GPU 0 runs alice's job at 100 % all day
// (300 W), GPU 1 alice's at 20 % (300 W), GPU 2 bob's at 60 % for 14 h (300 W), then nothing
// for 10 h (60 W).
Machine ThreeGpuDay() {
  Machine m;
  m.Run(0, kMarch, kMarch + 24 * kHr, 100, 300, Proc(100, "alice", "81234", "trainer-0"));
  m.Run(1, kMarch, kMarch + 24 * kHr, 20, 300, Proc(101, "alice", "81234", "trainer-0"));
  m.Run(2, kMarch, kMarch + 14 * kHr, 60, 300, Proc(200, "bob", {}, {}));
  m.Run(2, kMarch + 14 * kHr, kMarch + 24 * kHr, 0, 60);
  return m;
}

// --- the billing rules shared with the optimiser ------------------------------------------------

TEST(MeterBilling, HourRuleIsTheOptimisersGranularityPriceAndFees) {
  const OfferSet s = ParseOffers(R"(currency: CNY
offers:
  - id: m
    gpu: A100 80GB SXM
    mode: on_demand
    price: 12
    granularity: minute
    addon_fee_ratio: 0.25
    storage: {kind: nas, gb: 730, price_per_gb_month: 1}
    night_discount: {from: "22:00", to: "08:00", factor: 0.5}
)",
                                 "o.yaml", test::Catalog());
  const Offer& o = s.offers[0];
  // 90.5 s = 1.508 min, rounded up to 2 whole minutes = 1/30 h. At 12:00 the price is 12 x 1.25
  // = 15 per hour; storage 730 GB x 1 per GB-month / 730 h = 1 per hour.
  const InstanceHourCharge day = ChargeInstanceHour(o, 12, 90.5 / 60.0);
  EXPECT_NEAR(day.billed_hours, 2.0 / 60.0, 1e-12);
  EXPECT_NEAR(day.Compute(), 15.0 / 30.0, 1e-12);    // 0.5
  EXPECT_NEAR(day.FixedFees(), 1.0 / 30.0, 1e-12);
  EXPECT_NEAR(day.Total(), 16.0 / 30.0, 1e-12);
  // At 23:00 inside the night window: 15 x 0.5 = 7.5 per hour; spot-style work factor 1.2: 9.
  const InstanceHourCharge night = ChargeInstanceHour(o, 23, 60, 1.2);
  EXPECT_NEAR(night.Compute(), 9.0, 1e-12);
  EXPECT_NEAR(night.Total(), 10.0, 1e-12);
  // A day block: 24 h x (12 x 1.25 + 1) = 384, no night window.
  EXPECT_NEAR(InstanceDayCharge(o), 384.0, 1e-9);
}

TEST(MeterBilling, DayGranularityBillsTheDaysUsedInsideTheSpan) {
  const OfferSet s = ParseOffers(R"(currency: CNY
offers:
  - id: d
    gpu: A100 80GB SXM
    mode: on_demand
    price: 10
    granularity: day
)",
                                 "o.yaml", test::Catalog());
  // A span of 36 local hours from 12:00 of day D: used 5 minutes at 13:00 of D only. Day D's
  // block (24 x 10 = 240) is billed for its 12 hours inside the span: 120; day D+1 unused: 0.
  const LocalHour start = test::Hour(test::Days(2027, 3, 1) * 24 + 12);
  std::vector<double> minutes(36, 0.0);
  minutes[1] = 5;
  const InstanceBill b = BillInstanceHours(s.offers[0], start, minutes);
  EXPECT_NEAR(b.Total(), 120.0, 1e-9);
  EXPECT_NEAR(b.billed_hours, 12.0, 1e-12);
  EXPECT_EQ(b.hour_billed[11], 1.0);  // 23:00 of day D
  EXPECT_EQ(b.hour_billed[12], 0.0);  // 00:00 of D+1
}

// --- money of observed use -------------------------------------------------------------------

TEST_F(MeterReportTest, OnDemandByTheHourFromCreationBillsUpTimeAndNamesTheIdleGpu) {
  const std::string db = Store(ThreeGpuDay());
  const std::string offers = Write("od.yaml", kOnDemandByTheHour);
  const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 24 * kHr), test::Catalog());
  ASSERT_EQ(r.gpus, (std::vector<int>{0, 1, 2}));
  ASSERT_EQ(r.groups.size(), 3u);
  ASSERT_TRUE(r.priced);
  // Up 24 h: 3 GPUs x 24 h = 72 card-hours billed, x 10 = 720 CNY.
  EXPECT_NEAR(r.total.billed_hours, 72, 1e-9);
  EXPECT_NEAR(r.total.money, 720, 1e-9);
  // Busy: 24 + 24 + 14 = 62 h; allocated but idle: GPU 2's 10 h, billed 100 CNY.
  EXPECT_NEAR(r.total.observed_hours, 72, 1e-9);
  EXPECT_NEAR(r.total.busy_hours, 62, 1e-9);
  EXPECT_NEAR(r.total.idle_hours, 10, 1e-9);
  EXPECT_NEAR(r.total.idle_billed_hours, 10, 1e-9);
  EXPECT_NEAR(r.total.idle_money, 100, 1e-9);
  EXPECT_NEAR(r.groups[2].money, 240, 1e-9);
  EXPECT_NEAR(r.groups[2].idle_money, 100, 1e-9);
  EXPECT_NEAR(r.groups[0].idle_money, 0, 1e-9);
  // The money of use (issue 26 req. 3): GPU 2's 14 busy hours x 10 = 140 of its 240; all: 620.
  EXPECT_NEAR(r.groups[2].UseMoney(), 140, 1e-9);
  EXPECT_NEAR(r.total.UseMoney(), 620, 1e-9);
  ASSERT_EQ(r.idle.size(), 1u);
  EXPECT_EQ(r.idle[0].gpu, 2);
  EXPECT_EQ(r.idle[0].line, "GPU 2: 10 h billed with no process, 100 CNY");
  // Utilisation (share of observed time): GPU 0 all 76-100, GPU 1 all 1-25, GPU 2 14 h 51-75 and
  // 10 h at 0. Total: 0: 10 h, 1-25: 24, 26-50: 0, 51-75: 14, 76-100: 24.
  EXPECT_NEAR(r.total.utilisation.hours[0], 10, 1e-9);
  EXPECT_NEAR(r.total.utilisation.hours[1], 24, 1e-9);
  EXPECT_NEAR(r.total.utilisation.hours[2], 0, 1e-9);
  EXPECT_NEAR(r.total.utilisation.hours[3], 14, 1e-9);
  EXPECT_NEAR(r.total.utilisation.hours[4], 24, 1e-9);
  // Energy counts each sample's advance over the previous one; the first sample of a GPU has
  // none. GPU 0: 1,439 advances x 300 W x 60 s = 1439 x 18,000 J = 25,902 kJ = 7.195 kWh.
  // GPU 2: 839 x 18,000 J + 600 x 3,600 J = 15,102 + 2,160 kJ = 4.795 kWh.
  ASSERT_TRUE(r.groups[0].energy_kwh);
  EXPECT_NEAR(*r.groups[0].energy_kwh, 7.195, 1e-9);
  EXPECT_NEAR(*r.groups[2].energy_kwh, 4.795, 1e-9);
  // Every hour was observed and rolled up: no hour rests on an hour mean alone.
  EXPECT_EQ(r.utilisation_from_hour_means, 0);
}

TEST_F(MeterReportTest, ByUserJobAndPodAttributesBusyHoursToTheProcessesSeen) {
  const std::string db = Store(ThreeGpuDay());
  const std::string offers = Write("od.yaml", kOnDemandByTheHour);
  MeterReportRequest q = Request(db, offers, kMarch, kMarch + 24 * kHr);
  q.by = "user";
  const MeterReport r = RunMeterReport(q, test::Catalog());
  // alice: GPUs 0 and 1 all day = 48 h busy, 480 CNY (2 processes); bob: 14 h, 140 CNY;
  // "(no process)": GPU 2's idle 10 h, 100 CNY. Most money first, the catch-all last.
  ASSERT_EQ(r.groups.size(), 3u);
  EXPECT_EQ(r.groups[0].key, "alice");
  EXPECT_NEAR(r.groups[0].busy_hours, 48, 1e-9);
  EXPECT_NEAR(r.groups[0].money, 480, 1e-9);
  EXPECT_EQ(r.groups[0].processes, 2);
  EXPECT_EQ(r.groups[1].key, "bob");
  EXPECT_NEAR(r.groups[1].money, 140, 1e-9);
  EXPECT_NEAR(r.groups[1].utilisation.hours[3], 14, 1e-9);  // 60 %: 51-75
  // bob's energy: the 839 busy advances of GPU 2 (the hour shares are all-busy or all-idle):
  // 839 x 18,000 J = 4.195 kWh; "(no process)": 600 x 3,600 J = 0.6 kWh.
  EXPECT_NEAR(*r.groups[1].energy_kwh, 4.195, 1e-9);
  EXPECT_EQ(r.groups[2].key, "(no process)");
  EXPECT_NEAR(r.groups[2].idle_hours, 10, 1e-9);
  EXPECT_NEAR(r.groups[2].money, 100, 1e-9);
  EXPECT_NEAR(r.groups[2].utilisation.hours[0], 10, 1e-9);
  EXPECT_NEAR(*r.groups[2].energy_kwh, 0.6, 1e-9);
  // The groups add up to the total.
  EXPECT_NEAR(r.groups[0].money + r.groups[1].money + r.groups[2].money, r.total.money, 1e-9);

  q.by = "job";
  const MeterReport j = RunMeterReport(q, test::Catalog());
  ASSERT_EQ(j.groups.size(), 3u);
  EXPECT_EQ(j.groups[0].key, "slurm:81234");
  EXPECT_EQ(j.groups[1].key, "pid:200 python3");  // no Slurm job, pod or container
  q.by = "pod";
  const MeterReport p = RunMeterReport(q, test::Catalog());
  EXPECT_EQ(p.groups[0].key, "ml/trainer-0");
  EXPECT_EQ(p.groups[1].key, "(no pod)");
}

TEST_F(MeterReportTest, TwoProcessesOnOneGpuSplitItsBusyHourByTheTimeEachWasSeen) {
  // One GPU, one hour at 50 %: alice's process all hour, bob's for the last 20 minutes. The hour
  // is shared 60 : 20 = 3/4 alice, 1/4 bob: 7.5 and 2.5 CNY of 10.
  Machine alice;
  alice.Run(0, kMarch, kMarch + kHr, 50, 200, Proc(1, "alice"));
  std::vector<ProcessSample> procs = alice.processes();
  for (int64_t t = kMarch + 40 * kMin; t < kMarch + kHr; t += kMin) {
    ProcessSample p;
    static_cast<ProcessIdentity&>(p) = Proc(2, "bob");
    p.time = FromUnixMillis(t);
    p.gpu = 0;
    procs.push_back(p);
  }
  StoreOptions o;
  o.sample_interval_seconds = 60;
  o.max_sample_gap_seconds = 90;
  {
    MeterStore s = MeterStore::Open(File("two.db"), o);
    s.Append(alice.gpu());
    s.Append(procs);
    while (s.Buffered() > 0) s.Flush(FromUnixMillis(kMarch + 2 * kHr));
    s.RollUp(FromUnixMillis(kMarch + 2 * kHr));
  }
  MeterReportRequest q = Request(File("two.db"), Write("od.yaml", kOnDemandByTheHour), kMarch, kMarch + kHr);
  q.by = "user";
  const MeterReport r = RunMeterReport(q, test::Catalog());
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.groups[0].key, "alice");
  EXPECT_NEAR(r.groups[0].money, 7.5, 1e-9);
  EXPECT_NEAR(r.groups[0].busy_hours, 0.75, 1e-9);
  EXPECT_EQ(r.groups[1].key, "bob");
  EXPECT_NEAR(r.groups[1].money, 2.5, 1e-9);
}

TEST_F(MeterReportTest, NightDiscountWindowBillsTheLocalNightHoursAtTheFactor) {
  Machine m;
  m.Run(0, kMarch, kMarch + 24 * kHr, 80, 300, Proc(1, "alice"));
  const std::string db = Store(m);
  const std::string offers = Write("night.yaml", R"(currency: CNY
timezone: "+08:00"
offers:
  - id: night
    gpu: A100 80GB SXM
    mode: on_demand
    price: 10
    granularity: second
    night_discount: {from: "22:00", to: "08:00", factor: 0.5}
)");
  const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 24 * kHr), test::Catalog());
  // Local day 00:00-24:00: 00-08 and 22-24 are night, 10 h x 5 = 50; 14 day hours x 10 = 140.
  EXPECT_NEAR(r.total.money, 190, 1e-9);
  EXPECT_NEAR(r.total.billed_hours, 24, 1e-9);
}

// One GPU up 3 hours: hour 0 busy, hour 1 busy for its first 30 minutes, hour 2 idle.
Machine HalfBusyHour() {
  Machine m;
  m.Run(0, kMarch, kMarch + kHr + 30 * kMin, 70, 300, Proc(1, "alice"));
  m.Run(0, kMarch + kHr + 30 * kMin, kMarch + 3 * kHr, 0, 60);
  return m;
}

std::string OfferYaml(const std::string& granularity, const std::string& starts) {
  return "currency: CNY\ntimezone: \"+08:00\"\noffers:\n  - id: x\n    gpu: A100 80GB SXM\n    mode: on_demand\n"
         "    price: 10\n    stopped_fee_ratio: 0.5\n    granularity: " +
         granularity + "\n    billing_starts: " + starts + "\n";
}

TEST_F(MeterReportTest, BillingStartsAndGranularityDecideTheBilledTime) {
  const std::string db = Store(HalfBusyHour());
  struct Case {
    std::string granularity, starts;
    double billed, money, idle_money;
  };
  const std::vector<Case> cases = {
      // From creation, by the second: the 3 up hours, 30 CNY; idle 30 min + 1 h = 15 CNY.
      {"second", "create", 3, 30, 15},
      {"hour", "start", 3, 30, 15},
      // Task billing, by the second: only the 1.5 busy hours, 15 CNY, nothing idle (and no
      // stopped fee: nothing is billed outside tasks).
      {"second", "task", 1.5, 15, 0},
      // Task billing by the hour: hour 0 and the 30 busy minutes of hour 1 rounded up to the
      // hour: 2 h, 20 CNY, of which the 30 minutes without a task are idle: 5 CNY.
      {"hour", "task", 2, 20, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.granularity + " / " + c.starts);
    const std::string offers = Write("x.yaml", OfferYaml(c.granularity, c.starts));
    const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 3 * kHr), test::Catalog());
    EXPECT_NEAR(r.total.billed_hours, c.billed, 1e-9);
    EXPECT_NEAR(r.total.money, c.money, 1e-9);
    EXPECT_NEAR(r.total.idle_money, c.idle_money, 1e-9);
    EXPECT_NEAR(r.total.stopped_money, 0, 1e-9);
  }
}

TEST_F(MeterReportTest, DownGapsPayTheStoppedFeeOrAreReleasedWhicheverIsCheaper) {
  // Up (busy) in hours 0-1, 6-7 and 28 of the range; down in between (no samples).
  Machine m;
  for (auto [a, b] : {std::pair{0, 2}, std::pair{6, 8}, std::pair{28, 29}}) {
    m.Run(0, kMarch + a * kHr, kMarch + b * kHr, 90, 300, Proc(1, "alice"));
  }
  const std::string db = Store(m);
  const std::string offers = Write("gap.yaml", R"(currency: CNY
timezone: "+08:00"
offers:
  - id: gap
    gpu: A100 80GB SXM
    mode: on_demand
    price: 10
    granularity: hour
    stopped_fee_ratio: 0.1
    recreate_minutes: 30
)");
  const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 29 * kHr), test::Catalog());
  // 5 up hours x 10 = 50. Re-creating costs 30 min x 10 = 5; keeping stopped 10 x 0.1 = 1 per
  // hour. The 4-hour gap: keep (4 <= 5); the 20-hour gap: release (20 > 5), re-create for 5.
  // 50 + 4 + 5 = 59, of which 9 between up periods.
  EXPECT_NEAR(r.total.billed_hours, 5, 1e-9);
  EXPECT_NEAR(r.total.stopped_money, 9, 1e-9);
  EXPECT_NEAR(r.total.money, 59, 1e-9);
  EXPECT_NEAR(r.total.idle_money, 0, 1e-9);  // down time is not "allocated but idle"
}

TEST_F(MeterReportTest, MonthlyOfferIsProratedWhetherUsedOrNot) {
  const std::string db = Store(ThreeGpuDay());
  const std::string offers = Write("monthly.yaml", R"(currency: CNY
timezone: "+08:00"
offers:
  - id: mon
    gpu: A100 80GB SXM
    mode: monthly
    price: 14880
)");
  // March has 744 h: 14,880 / 744 = 20 per GPU-hour. Over 48 h (the machine seen only the first
  // 24): 3 GPUs x 48 h x 20 = 2,880 CNY whatever the use. Not busy: GPU 0 and 1 the 24 h
  // unobserved, GPU 2 those and its 10 idle hours: 24 + 24 + 34 = 82 h, 1,640 CNY.
  const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 48 * kHr), test::Catalog());
  EXPECT_NEAR(r.total.billed_hours, 144, 1e-9);
  EXPECT_NEAR(r.total.money, 2880, 1e-9);
  EXPECT_NEAR(r.total.idle_billed_hours, 82, 1e-9);
  EXPECT_NEAR(r.total.idle_money, 1640, 1e-9);
  EXPECT_EQ(r.idle[0].line, "GPU 2: 34 h billed with no process, 680 CNY");
  // The same 48 h on demand by the hour: only the 24 up hours, 720 (down hours are released).
  const MeterReport od =
      RunMeterReport(Request(db, Write("od.yaml", kOnDemandByTheHour), kMarch, kMarch + 48 * kHr), test::Catalog());
  EXPECT_NEAR(od.total.money, 720, 1e-9);
}

TEST_F(MeterReportTest, ProjectsTheCalendarMonthAtTheObservedRate) {
  // One GPU busy from 2027-03-11T00:00 to 03-12T00:00 (+08:00); the report runs at 03-12T00:00
  // with no --from/--to: from the 1st of March, to now.
  Machine m;
  m.Run(0, Cst(2027, 3, 11), Cst(2027, 3, 12), 90, 300, Proc(1, "alice"));
  const std::string db = Store(m, Cst(2027, 3, 12));
  MeterReportRequest q;
  q.db = db;
  q.offers = Write("od.yaml", kOnDemandByTheHour);
  q.now = Seconds(Cst(2027, 3, 12));
  q.sample_interval_seconds = 60;
  q.max_sample_gap_seconds = 90;
  const MeterReport r = RunMeterReport(q, test::Catalog());
  EXPECT_EQ(UnixMillis(r.from), kMarch);
  EXPECT_EQ(UnixMillis(r.to), Cst(2027, 3, 12));
  EXPECT_NEAR(r.total.money, 240, 1e-9);
  ASSERT_TRUE(r.projection);
  const MonthProjection& p = *r.projection;
  // The month so far counts from the first observation (03-11), not the 1st: 24 h, 240 CNY,
  // 10 per hour; the month ends 2027-04-01T00:00, 744 - 264 = 480 h later: 240 + 4,800 = 5,040.
  EXPECT_EQ(p.month, "2027-03");
  EXPECT_EQ(UnixMillis(p.from), Cst(2027, 3, 11));
  EXPECT_EQ(UnixMillis(p.month_end), Cst(2027, 4, 1));
  EXPECT_NEAR(p.so_far, 240, 1e-9);
  EXPECT_NEAR(p.per_hour, 10, 1e-9);
  EXPECT_NEAR(p.remaining_hours, 480, 1e-9);
  EXPECT_NEAR(p.projected, 5040, 1e-9);
}

TEST_F(MeterReportTest, ProjectionFromTheMonthsStartCountsTheDownHours) {
  // Observed since before March: the month so far starts on the 1st. Up (busy) only on March
  // 1st, the report at 03-03T00:00: 240 CNY in 48 h = 5 per hour; 696 h left: 240 + 3,480 = 3,720.
  Machine m;
  m.Run(0, kMarch - 2 * kHr, kMarch + 24 * kHr, 90, 300, Proc(1, "alice"));
  const std::string db = Store(m);
  MeterReportRequest q = Request(db, Write("od.yaml", kOnDemandByTheHour), kMarch, Cst(2027, 3, 3));
  q.now = Seconds(Cst(2027, 3, 3));
  const MeterReport r = RunMeterReport(q, test::Catalog());
  ASSERT_TRUE(r.projection);
  EXPECT_EQ(UnixMillis(r.projection->from), kMarch);
  EXPECT_NEAR(r.projection->so_far, 240, 1e-9);
  EXPECT_NEAR(r.projection->per_hour, 5, 1e-9);
  EXPECT_NEAR(r.projection->projected, 3720, 1e-9);
}

TEST_F(MeterReportTest, SoFarIncludesTheMinutesNotRolledUpYet) {
  // Sampled each second (the store's default interval) for 2 hours, flushed at 1 h 30 min: hour
  // 0 is rolled up into the hour table, 1:00-1:30 into minutes; the last 30 minutes are written
  // as raw samples only (a second flush without a roll-up of them). The report still sees 2 h.
  std::vector<GpuSample> g;
  for (int64_t t = kMarch; t < kMarch + 2 * kHr; t += 1000) {
    GpuSample s;
    s.time = FromUnixMillis(t);
    s.gpu = 0;
    s.utilization_gpu = 40;
    g.push_back(s);
  }
  {
    MeterStore s = MeterStore::Open(File("tail.db"));
    std::vector<GpuSample> first(g.begin(), g.begin() + 5400), rest(g.begin() + 5400, g.end());
    s.Append(first);
    while (s.Buffered() > 0) s.Flush(FromUnixMillis(kMarch + 90 * kMin));
    s.Append(rest);
    while (s.Buffered() > 0) s.Flush(FromUnixMillis(kMarch + 90 * kMin));
    const StoreExtent e = s.Extent();
    ASSERT_TRUE(e.hours_done && e.minutes_done);
    ASSERT_EQ(UnixMillis(*e.hours_done), kMarch + kHr);
    ASSERT_EQ(UnixMillis(*e.minutes_done), kMarch + 90 * kMin);
  }
  MeterReportRequest q = Request(File("tail.db"), Write("od.yaml", kOnDemandByTheHour), kMarch, kMarch + 2 * kHr);
  q.sample_interval_seconds.reset();  // the store's 1 s / 10 s
  q.max_sample_gap_seconds.reset();
  const MeterReport r = RunMeterReport(q, test::Catalog());
  // 7,200 samples of 1 s: 2 h observed and busy (40 %: 26-50), 2 h billed, 20 CNY.
  EXPECT_NEAR(r.total.observed_hours, 2, 1e-9);
  EXPECT_NEAR(r.total.busy_hours, 2, 1e-9);
  EXPECT_NEAR(r.total.utilisation.hours[2], 2, 1e-9);
  EXPECT_NEAR(r.total.money, 20, 1e-9);
}

// --- export and the loop to the optimiser ----------------------------------------------------

TEST_F(MeterReportTest, ExportIsTheUsageCsvCostReads) {
  const std::string db = Store(ThreeGpuDay());
  MeterExportRequest x;
  x.db = db;
  x.offers = Write("od.yaml", kOnDemandByTheHour);  // for its zone, +08:00
  x.now = Seconds(kMarch + 48 * kHr);
  x.sample_interval_seconds = 60;
  x.max_sample_gap_seconds = 90;
  const MeterExport e = RunMeterExport(x, test::Catalog());
  // The whole store by default: 24 rows; 3 GPUs busy in hours 0-13, 2 in 14-23.
  std::istringstream lines(e.csv);
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header, "timestamp,gpus");
  EXPECT_EQ(first, "2027-03-01T00:00+08:00,3");
  const UsageTrace back = ParseUsageCsv(e.csv, "export.csv", test::Offset(8 * 60));
  ASSERT_EQ(back.hours.size(), 24u);
  EXPECT_EQ(test::Count(back.start_hour), test::Days(2027, 3, 1) * 24);
  for (std::size_t h = 0; h < 24; ++h) {
    EXPECT_DOUBLE_EQ(back.hours[h].firm, h < 14 ? 3.0 : 2.0) << h;
    EXPECT_DOUBLE_EQ(back.hours[h].firm, e.trace.hours[h].firm) << h;
  }
  EXPECT_DOUBLE_EQ(back.TotalGpuHours(), 62.0);  // 14 x 3 + 10 x 2
  // Read in UTC the same rows start 8 hours earlier: the offsets are in the file.
  EXPECT_EQ(test::Count(ParseUsageCsv(e.csv, "export.csv", test::Offset(0)).start_hour), test::Days(2027, 3, 1) * 24 - 8);
  // Allocated: every GPU observed all day, 3 each hour.
  x.basis = "allocated";
  const MeterExport a = RunMeterExport(x, test::Catalog());
  EXPECT_DOUBLE_EQ(ParseUsageCsv(a.csv, "a.csv", test::Offset(8 * 60)).TotalGpuHours(), 72.0);
  // Without an offers file the CSV is in UTC.
  x.offers.clear();
  x.basis = "busy";
  const MeterExport u = RunMeterExport(x, test::Catalog());
  EXPECT_EQ(u.csv.substr(0, 40), "timestamp,gpus\n2027-02-28T16:00+00:00,3\n");
  // Half-busy hours export their GPU-hours: 1.5 busy hours of one GPU -> 1, 0.5, 0.
  const MeterExport half = [&] {
    MeterExportRequest h = x;
    h.db = Store(HalfBusyHour(), {}, "half.db");
    return RunMeterExport(h, test::Catalog());
  }();
  EXPECT_EQ(half.csv, "timestamp,gpus\n2027-02-28T16:00+00:00,1\n2027-02-28T17:00+00:00,0.5\n"
                      "2027-02-28T18:00+00:00,0\n");
}

TEST_F(MeterReportTest, LoopFromStoreThroughExportToTheOptimiser) {
  const std::string db = Store(ThreeGpuDay());
  const std::string offers = Write("od.yaml", kOnDemandByTheHour);
  MeterExportRequest x;
  x.db = db;
  x.offers = offers;
  x.now = Seconds(kMarch + 48 * kHr);
  x.sample_interval_seconds = 60;
  x.max_sample_gap_seconds = 90;
  const std::string csv = Write("usage.csv", RunMeterExport(x, test::Catalog()).csv);
  OptimizeRequest o;
  o.offers = offers;
  o.usage = csv;
  const OptimizeResult plan = RunOptimize(o, test::Catalog());
  ASSERT_TRUE(plan.plan.feasible);
  // With only the on-demand offer the optimiser rents what was busy: 62 GPU-hours x 10 = 620
  // CNY (idle instances are released: no re-creation cost). The bill of what was observed is
  // 720: the difference is exactly the idle money, 100.
  EXPECT_NEAR(plan.plan.cost.Total(), 620, 1e-6);
  EXPECT_NEAR(plan.plan.on_demand_gpu_hours.at("od"), 62, 1e-6);
  const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 24 * kHr), test::Catalog());
  EXPECT_NEAR(r.total.money - plan.plan.cost.Total(), r.total.idle_money, 1e-6);
}

// --- requests and renderers ------------------------------------------------------------------

TEST_F(MeterReportTest, RequestErrorsNameTheirFlag) {
  const std::string db = Store(ThreeGpuDay());
  auto field_of = [&](MeterReportRequest q) {
    try {
      RunMeterReport(q, test::Catalog());
    } catch (const InputError& e) {
      return test::AsCli(e).field();
    }
    return std::string("no error");
  };
  const std::string two = Write("two.yaml", std::string(kOnDemandByTheHour) +
                                                "  - id: od2\n    gpu: A100 80GB SXM\n    mode: on_demand\n"
                                                "    price: 11\n");
  MeterReportRequest q = Request(db, two, kMarch, kMarch + kHr);
  EXPECT_EQ(field_of(q), "--offer");  // two offers, none named
  q.offer = "od3";
  EXPECT_EQ(field_of(q), "--offer");
  q.offer = "od2";
  EXPECT_EQ(field_of(q), "no error");
  q.from = "yesterday";
  EXPECT_EQ(field_of(q), "--from");
  q.from = "2027-03-02";
  q.to = "2027-03-01";
  EXPECT_EQ(field_of(q), "--from");  // from after to
  q.to = "2027-03-02T00:30";         // not on the hour
  EXPECT_EQ(field_of(q), "--to");
  q = Request(db, "", kMarch, kMarch + kHr);
  q.by = "team";
  EXPECT_EQ(field_of(q), "--by");
  q.by = "gpu";
  q.db.clear();
  EXPECT_EQ(field_of(q), "--db");
  // The accepted forms of a time, in +08:00 and with their own offset.
  EXPECT_EQ(UnixMillis(ParseMeterTime("2027-03", test::Offset(480), "t")), kMarch);
  EXPECT_EQ(UnixMillis(ParseMeterTime("2027-03-01", test::Offset(480), "t")), kMarch);
  EXPECT_EQ(UnixMillis(ParseMeterTime("2027-03-01T00:00", test::Offset(480), "t")), kMarch);
  EXPECT_EQ(UnixMillis(ParseMeterTime("2027-02-28T16:00Z", test::Offset(480), "t")), kMarch);
  EXPECT_EQ(UnixMillis(ParseMeterTime("2027-02-28T16:00", test::Offset(0), "t")), kMarch);
  // A time with its offset is that instant, also in the hour a real zone repeats: 01:00Z on
  // 2027-10-31 is 02:00+01:00 in Berlin (the second 02:00), not the first 02:00 (00:00Z).
  // 2027-10-31 is 21,122 days after 1970-01-01: 57 x 365 + 14 leap days = 20,819 to 2027-01-01,
  // then 303 days (31+28+31+30+31+30+31+31+30+30) to October 31.
  EXPECT_EQ(UnixMillis(ParseMeterTime("2027-10-31T01:00Z", *ParseZone("Europe/Berlin"), "t")),
            (int64_t{21122} * 86400 + 3600) * 1000);
}

TEST_F(MeterReportTest, UnpricedReportHasNoMoneyAndNamesIdleTime) {
  const std::string db = Store(ThreeGpuDay());
  const MeterReport r = RunMeterReport(Request(db, "", kMarch, kMarch + 24 * kHr), test::Catalog());
  EXPECT_FALSE(r.priced);
  EXPECT_FALSE(r.projection);
  EXPECT_EQ(r.zone, test::Offset(0));  // UTC without an offers file
  ASSERT_EQ(r.idle.size(), 1u);
  EXPECT_EQ(r.idle[0].line, "GPU 2: 10 h allocated with no process");
  const nlohmann::json j = MeterReportToJson(r);
  EXPECT_TRUE(j["total"]["money"].is_null());
  EXPECT_TRUE(j["currency"].is_null());
  EXPECT_EQ(j["from"], "2027-02-28T16:00+00:00");
}

TEST_F(MeterReportTest, JsonAndTextCarryTheFigures) {
  const std::string db = Store(ThreeGpuDay());
  const std::string offers = Write("od.yaml", kOnDemandByTheHour);
  const MeterReport r = RunMeterReport(Request(db, offers, kMarch, kMarch + 24 * kHr), test::Catalog());
  const nlohmann::json j = MeterReportToJson(r);
  EXPECT_EQ(j["from"], "2027-03-01T00:00+08:00");
  EXPECT_EQ(j["to"], "2027-03-02T00:00+08:00");
  EXPECT_EQ(j["hours"], 24);
  EXPECT_EQ(j["by"], "gpu");
  EXPECT_EQ(j["currency"], "CNY");
  EXPECT_EQ(j["offer"]["id"], "od");
  EXPECT_EQ(j["offer"]["granularity"], "hour");
  ASSERT_EQ(j["groups"].size(), 3u);
  EXPECT_EQ(j["groups"][2]["key"], "GPU 2");
  EXPECT_EQ(j["groups"][2]["uuid"], "GPU-2");
  EXPECT_DOUBLE_EQ(j["groups"][2]["idle_money"].get<double>(), 100.0);
  EXPECT_EQ(j["groups"][2]["utilisation"][0]["bucket"], "0");
  EXPECT_DOUBLE_EQ(j["groups"][2]["utilisation"][0]["hours"].get<double>(), 10.0);
  EXPECT_NEAR(j["groups"][2]["utilisation"][3]["share"].get<double>(), 14.0 / 24.0, 1e-12);
  EXPECT_DOUBLE_EQ(j["total"]["money"].get<double>(), 720.0);
  EXPECT_DOUBLE_EQ(j["total"]["billed_hours"].get<double>(), 72.0);
  EXPECT_EQ(j["idle"][0]["line"], "GPU 2: 10 h billed with no process, 100 CNY");
  ASSERT_TRUE(j["projection"].is_object());
  EXPECT_EQ(j["projection"]["month"], "2027-03");

  std::ostringstream os;
  MeterReportToText(os, r);
  const std::string text = os.str();
  EXPECT_NE(text.find("meter report 2027-03-01T00:00+08:00 .. 2027-03-02T00:00+08:00 (24 h), 3 GPUs, by gpu"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  GPU 2: 10 h billed with no process, 100 CNY\n"), std::string::npos) << text;
  // GPU 2's row: 24 observed, 14 busy, 10 idle, 42/0/0/58/0 % (10 and 14 of 24 h), 24 billed,
  // 240 CNY, 100 CNY idle.
  std::istringstream rows(text);
  std::string line, gpu2;
  while (std::getline(rows, line)) {
    if (line.rfind("GPU 2 ", 0) == 0) gpu2 = line;
  }
  std::istringstream cells(gpu2);
  std::vector<std::string> c;
  for (std::string w; cells >> w;) c.push_back(w);
  ASSERT_GE(c.size(), 12u) << gpu2;
  EXPECT_EQ(std::vector<std::string>(c.begin() + 2, c.end()),
            (std::vector<std::string>{"24", "14", "10", "42/0/0/58/0", "4.8", "24", "240", "CNY", "100", "CNY"}))
      << gpu2;
}

// A process's command line, user and pod name are whatever that user chose: the text report
// writes their control characters as escapes (never raw: an OSC retitling the terminal, a CSI
// moving the cursor up, a CR rewriting the line) and cuts a 10,000-byte user name at 2,000
// bytes saying its length. The JSON keeps the strings as they are (JSON escapes them).
TEST_F(MeterReportTest, TextEscapesAndCutsWhatTheMachineNamed) {
  const std::string hostile = "\x1b]0;pwned\a\x1b[31mpython\x1b[2K\r\x1b[1Aalice-job";
  const std::string long_user(10000, 'u');
  Machine m;
  ProcessIdentity a = Proc(7, "mallory\x1b[8m\xc2\x9b" "2J");
  a.command = hostile + " --lr 3e-4";  // the job's key is the command's first word: the hostile part
  ProcessIdentity b = Proc(8, long_user, {}, "pod\r\x7f" "evil");
  m.Run(0, kMarch, kMarch + 2 * kHr, 50, 300, a);
  m.Run(1, kMarch, kMarch + 2 * kHr, 50, 300, b);
  const std::string db = Store(m);
  const auto text = [&](const std::string& by) {
    MeterReportRequest q = Request(db, "", kMarch, kMarch + 2 * kHr);
    q.by = by;
    const MeterReport r = RunMeterReport(q, test::Catalog());
    std::ostringstream os;
    MeterReportToText(os, r);
    return std::make_pair(os.str(), MeterReportToJson(r));
  };
  const auto no_raw_controls = [](const std::string& t) {
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto c = static_cast<unsigned char>(t[i]);
      EXPECT_FALSE((c < 0x20 && c != '\n') || c == 0x7f) << "byte " << i << " is " << int(c);
      EXPECT_FALSE(c == 0xc2 && i + 1 < t.size() && static_cast<unsigned char>(t[i + 1]) >= 0x80 &&
                   static_cast<unsigned char>(t[i + 1]) <= 0x9f)
          << "C1 control at byte " << i;
    }
  };

  const auto [job, job_json] = text("job");
  no_raw_controls(job);
  EXPECT_NE(job.find("pid:7 \\x1b]0;pwned\\x07\\x1b[31mpython\\x1b[2K\\x0d\\x1b[1Aalice-job "), std::string::npos) << job;
  EXPECT_NE(job.find("pod:ml/pod\\x0d\\x7fevil "), std::string::npos) << job;
  ASSERT_EQ(job_json["groups"].size(), 2u);
  bool as_it_was = false;  // JSON: the key as it was
  for (const auto& g : job_json["groups"]) as_it_was = as_it_was || g["key"] == "pid:7 " + hostile;
  EXPECT_TRUE(as_it_was) << job_json.dump();

  const auto [user, user_json] = text("user");
  no_raw_controls(user);
  EXPECT_NE(user.find("mallory\\x1b[8m\\u009b2J "), std::string::npos) << user;
  EXPECT_NE(user.find("\n" + std::string(2000, 'u') + "... (10000 bytes in all) "), std::string::npos);
  EXPECT_EQ(user.find(std::string(2001, 'u')), std::string::npos);
  EXPECT_LT(user.size(), 4000u);
  bool whole = false;
  for (const auto& g : user_json["groups"]) whole = whole || g["key"] == long_user;
  EXPECT_TRUE(whole);

  const auto [pod, pod_json] = text("pod");
  no_raw_controls(pod);
  EXPECT_NE(pod.find("ml/pod\\x0d\\x7fevil "), std::string::npos) << pod;
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// Right-sizing on the three-GPU day, with GPU 1's job holding 6 GiB and bob's at 40 %. Offers:
// the A100 80GB SXM the jobs ran on at 10 CNY/h, an L4 at 3 and an L40S at 6 (catalog: A100 312,
// L4 121, L40S 362 dense bf16 TFLOPS; 2,039, 300 and 864 GB/s; 80, 24.2 and 48.3 GB). A card's
// share of the A100 is the lower of the two ratios: L4 min(0.388, 0.147) = 0.147, L40S
// min(1.160, 0.424) = 0.424.
TEST_F(MeterReportTest, RightSizingNamesASliceOrACheaperCardWithTheMoney) {
  Machine m;
  m.Run(0, kMarch, kMarch + 24 * kHr, 100, 300, Proc(100, "alice", "81234"), 30ull << 30);
  m.Run(1, kMarch, kMarch + 24 * kHr, 20, 300, Proc(101, "alice", "81234"), 6ull << 30);
  m.Run(2, kMarch, kMarch + 14 * kHr, 40, 300, Proc(200, "bob"));
  const std::string offers = Write("offers.yaml", std::string(kOnDemandByTheHour) + R"(  - id: l4
    gpu: L4
    mode: on_demand
    price: 3
  - id: l40s
    gpu: L40S
    mode: on_demand
    price: 6
)");
  MeterReportRequest q = Request(Store(m), offers, kMarch, kMarch + 24 * kHr);
  q.offer = "od";
  const MeterReport r = RunMeterReport(q, test::Catalog());
  ASSERT_EQ(r.right_sizing.size(), 2u);
  // slurm:81234 on GPU 1: 6 GiB x 1.1 = 7.09 GB at 20 % (> 1/7): the smallest slice is 2g.20gb
  // (2/7 of the card, 20 GB); at 2/7 x 10 = 2.857 CNY/h over 24 h it saves (10 - 2.857) x 24 =
  // 171.43 CNY. The L4 (0.147 < 0.2) is too slow; the L40S (0.424) saves (10 - 6) x 24 = 96.
  const RightSizing& a = r.right_sizing[0];
  EXPECT_EQ(a.job, "slurm:81234");
  EXPECT_EQ(a.gpu, 1);
  EXPECT_DOUBLE_EQ(a.hours, 24);
  EXPECT_EQ(a.peak_memory, 6ull << 30);
  EXPECT_DOUBLE_EQ(a.peak_utilisation, 20);
  ASSERT_EQ(a.options.size(), 2u);
  EXPECT_EQ(a.options[0].target, "MIG 2g.20gb of A100 80GB SXM");
  EXPECT_NEAR(*a.options[0].money_saved, (10 - 10 * 2.0 / 7) * 24, 1e-9);
  EXPECT_EQ(a.options[1].target, "L40S");
  EXPECT_NEAR(*a.options[1].money_saved, 96, 1e-9);
  EXPECT_NEAR(a.options[1].compute_share, 864.0 / 2039, 1e-12);
  EXPECT_EQ(a.line,
            "slurm:81234 on GPU 1 (A100 80GB SXM, 24 h): peak 6.4 GB, peak utilisation 20% -> MIG 2g.20gb of A100 "
            "80GB SXM, saves 171 CNY");
  // bob's job on GPU 2 at 40 % for 14 h: 3g.40gb (3/7 = 0.43) saves (10 - 30/7) x 14 = 80 CNY,
  // the L40S (0.424) (10 - 6) x 14 = 56.
  const RightSizing& b = r.right_sizing[1];
  EXPECT_EQ(b.gpu, 2);
  ASSERT_EQ(b.options.size(), 2u);
  EXPECT_EQ(b.options[0].target, "MIG 3g.40gb of A100 80GB SXM");
  EXPECT_NEAR(*b.options[0].money_saved, (10 - 30.0 / 7) * 14, 1e-9);
  EXPECT_EQ(b.options[1].target, "L40S");
  EXPECT_NEAR(*b.options[1].money_saved, 56, 1e-9);
  // GPU 0 at 100 % fits nothing smaller (the L40S computes faster but has 0.42 of the bandwidth).
  const auto j = MeterReportToJson(r);
  EXPECT_EQ(j["right_sizing"].size(), 2u);
  EXPECT_EQ(j["right_sizing"][0]["options"][0]["kind"], "mig");
}

// The report of the three-GPU day and the right-sizing above in each language (issue 12,
// requirement 3): the Chinese words of data/messages.json, the same figures, the same JSON.
std::string ReportText(const MeterReport& r, Lang lang) {
  SetTextLanguage(Messages::Load(test::DataDir() + "/messages.json"), lang);
  std::ostringstream os;
  MeterReportToText(os, r);
  SetTextLanguage(Messages(), Lang::kEn);
  return os.str();
}

std::vector<std::string> Figures(const std::string& text) {
  std::vector<std::string> out;
  std::string n;
  for (const char c : text + " ") {
    if ((c >= '0' && c <= '9') || (c == '.' && !n.empty())) {
      n += c;
    } else if (!n.empty()) {
      out.push_back(n);
      n.clear();
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(MeterReportTest, OneReportInEachLanguage) {
  const std::string offers = Write("od.yaml", std::string(kOnDemandByTheHour) + R"(  - id: l40s
    gpu: L40S
    mode: on_demand
    price: 6
)");
  // The three-GPU day without the pod (the jobs are Slurm's and bob's).
  Machine m;
  m.Run(0, kMarch, kMarch + 24 * kHr, 100, 300, Proc(100, "alice", "81234"));
  m.Run(1, kMarch, kMarch + 24 * kHr, 20, 300, Proc(101, "alice", "81234"));
  m.Run(2, kMarch, kMarch + 14 * kHr, 60, 300, Proc(200, "bob"));
  m.Run(2, kMarch + 14 * kHr, kMarch + 24 * kHr, 0, 60);
  MeterReportRequest q = Request(Store(m), offers, kMarch, kMarch + 24 * kHr);
  q.offer = "od";
  const MeterReport r = RunMeterReport(q, test::Catalog());
  const std::string en = ReportText(r, Lang::kEn);
  const std::string zh = ReportText(r, Lang::kZh);
  EXPECT_NE(en.find("meter report 2027-03-01T00:00+08:00 .. 2027-03-02T00:00+08:00 (24 h), 3 GPUs, by gpu\n"
                    "priced with od (on_demand, 10 CNY per instance-hour, 1 GPU per instance, hour granularity, "
                    "billed from create)\n"),
            std::string::npos)
      << en;
  EXPECT_NE(zh.find("计量报告 2027-03-01T00:00+08:00 .. 2027-03-02T00:00+08:00（24 小时），3 块 GPU，分组：GPU\n"
                    "计价：报价 od（按量，每实例每小时 10 CNY，每实例 1 块 GPU，计费粒度：小时，计费起点：创建实例时）\n"),
            std::string::npos)
      << zh;
  // The header: "分组" (4 columns) padded to the column's 20, "观测小时" (8) right-aligned in 10.
  EXPECT_NE(zh.find("分组" + std::string(16, ' ') + "   观测小时 "), std::string::npos) << zh;
  // GPU 2 idles 10 h at 10 CNY (JsonAndTextCarryTheFigures).
  EXPECT_NE(zh.find("空闲但计费的费用：\n  GPU 2：10 小时计费但无进程，100 CNY\n"), std::string::npos) << zh;
  // The total row: 72 billed hours, 720 CNY.
  std::istringstream rows(zh);
  std::string line, total;
  while (std::getline(rows, line)) {
    if (line.rfind("合计 ", 0) == 0) total = line;
  }
  EXPECT_NE(total.find(" 720 CNY "), std::string::npos) << zh;
  // Alice's job on GPU 1 at 20 % with 1 GiB (1.07 GB): the smallest MIG slice above 1/7 of the
  // card is 2g.20gb, 2/7 of 10 CNY/h: (10 - 20/7) x 24 = 171.4 CNY saved; the L40S (0.424 of
  // the card) (10 - 6) x 24 = 96.
  EXPECT_NE(zh.find("换卡与 MIG 建议：\n  slurm:81234（GPU 1，A100 80GB SXM，24 小时）：显存峰值 1.1 GB，利用率峰值 20% -> "
                    "A100 80GB SXM 的 MIG 2g.20gb 实例，可省 171 CNY\n    或 L40S：可省 96 CNY\n"),
            std::string::npos)
      << zh;
  EXPECT_NE(zh.find("注：从创建实例时计费：按计量代理看到的开机时间"), std::string::npos) << zh;
  for (const char* english : {"meter report", "billed with no process", "right-sizing", "note:", "saves", "total"}) {
    EXPECT_EQ(zh.find(english), std::string::npos) << english << " in\n" << zh;
  }
  EXPECT_EQ(Figures(zh), Figures(en));
  SetTextLanguage(Messages::Load(test::DataDir() + "/messages.json"), Lang::kZh);
  const std::string json_zh = MeterReportToJson(r).dump();
  SetTextLanguage(Messages(), Lang::kEn);
  EXPECT_EQ(json_zh, MeterReportToJson(r).dump());
}

TEST(MeterRightSizing, MigProfileNames) {
  EXPECT_EQ(ParseMigProfile("1g.10gb")->sevenths, 1);
  EXPECT_DOUBLE_EQ(ParseMigProfile("3g.40gb")->memory_bytes, 40e9);
  EXPECT_EQ(ParseMigProfile("1g.5gb+me")->sevenths, 1);
  EXPECT_FALSE(ParseMigProfile("9g.10gb").has_value());
  EXPECT_FALSE(ParseMigProfile("big").has_value());
}

// fuzz_serve_api (docs/fuzzing.md, "Found and fixed"): GET /api/meter/export?from=401-03-02 read
// one row per hour from the year 401 (about 14 million) and ran out of memory. A range starts
// 2000-01-01T00:00Z or later: 946,684,800,000 ms (10,957 days after 1970-01-01).
TEST(MeterRange, StartsIn2000OrLater) {
  const UtcSeconds now = test::Seconds(1772359200);  // 2026-03-01T10:00Z
  const auto field = [now](const std::string& from, const std::string& to, int zone) -> std::string {
    try {
      MeterReportRange(from, to, test::Offset(zone), now);
    } catch (const InputError& e) {
      return test::AsCli(e).field();
    }
    return "";
  };
  EXPECT_EQ(field("401-03-02", "", 0), "--from");
  EXPECT_EQ(field("1999-12-31T23:00Z", "2000-01-02", 0), "--from");
  // 2000-01-01 00:00 at +08:00 is 1999-12-31T16:00Z: before the earliest start.
  EXPECT_EQ(field("2000-01-01", "2000-01-02", 480), "--from");
  const TimeRange r = MeterReportRange("2000-01-01", "2000-01-02", test::Offset(0), now);
  EXPECT_EQ(UnixMillis(r.from), 946684800000);
  EXPECT_EQ(UnixMillis(r.to), 946684800000 + 24 * 3600000LL);
}

}  // namespace
}  // namespace gpuplan
