// Alerts of a stored period (meter/alert_replay.h) and the timeline (meter/report.h) on the
// example week (data/traces/lab-4xa100-week.jsonl) replayed into a store as `meter run --replay`
// does: the stored replay against the alerts the live agent raised while writing that store, and
// both against counts worked by hand from the week's schedule (data/traces/README.md); each
// timeline slot against `meter report` of that slot.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "meter/render/meter_json.h"
#include "meter/agent.h"
#include "meter/alert_replay.h"
#include "meter/monitor.h"
#include "meter/report.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMonday = 1772409600000;  // 2026-03-02T00:00:00Z, the week's first sample
constexpr int64_t kHour = kMillisecondsPerHour;
constexpr int64_t kMinute = kMillisecondsPerMinute;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kWeekEnd = kMonday + 7 * kDay;

// The rules of tests/integration/meter_prometheus_test.sh: idle 60 min, under 5 % for 30 min, no
// repeat within the week, 30 CNY a GPU-hour.
AlertRules WeekRules() {
  AlertRules r;
  r.idle_minutes = 60;
  r.low_util_minutes = 30;
  r.repeat_minutes = 7 * 24 * 60;
  r.gpu_hour_price = Money{30, "CNY"};
  return r;
}

AlertRules DefaultRules() {
  AlertRules r;
  r.gpu_hour_price = Money{30, "CNY"};
  return r;
}

StoreOptions ReadOnly() {
  StoreOptions o;
  o.read_only = true;
  return o;
}

// The week replayed once into a store by the agent, with the live monitor's alerts for two sets
// of rules (two runs, two stores with the same samples).
class WeekStore : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::current_path() / ("alert_replay_test." + std::to_string(getpid())));
    fs::remove_all(*dir_);
    fs::create_directories(*dir_);
    ReplayLive("week.db");
    // The 4 x A100 instance at 120 CNY an hour of meter_prometheus_test.sh, in +08:00.
    std::ofstream(*dir_ / "offers.yaml") << "currency: CNY\ntimezone: \"+08:00\"\noffers:\n  - id: lab\n"
                                            "    gpu: A100 80GB SXM\n    gpus_per_instance: 4\n    mode: on_demand\n"
                                            "    price: 120\n    granularity: hour\n    billing_starts: create\n";
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
    delete live_week_rules_;
    delete live_default_rules_;
  }

  // `gpuplan meter run --replay WEEK --alerts F`: the agent with the monitor (one for each set of
  // rules, the first passing every tick on to the second), and the alerts each raised.
  static void ReplayLive(const std::string& db) {
    MeterAgentRequest r;
    r.db = Path(db);
    r.replay = test::DataDir() + "/traces/lab-4xa100-week.jsonl";
    MeterMonitorOptions week, defaults;
    week.rules = WeekRules();
    defaults.rules = DefaultRules();
    MeterMonitor second(defaults, nullptr, nullptr);
    MeterMonitor first(week, &second, nullptr);
    ManualMeterClock clock(1e9);
    RunMeter(r, clock, &first);
    live_week_rules_ = new std::vector<Alert>(first.alerts());
    live_default_rules_ = new std::vector<Alert>(second.alerts());
  }

  static std::string Path(const std::string& name) { return (*dir_ / name).string(); }

  static std::vector<Alert> Stored(const std::string& db, const AlertRules& rules, int64_t from, int64_t to) {
    const MeterStore store = MeterStore::Open(Path(db), ReadOnly());
    return ReplayStoredAlerts(store, rules, {FromUnixMillis(from), FromUnixMillis(to)}).alerts;
  }

  static std::map<AlertKind, int> Counts(const std::vector<Alert>& alerts) {
    std::map<AlertKind, int> n;
    for (const Alert& a : alerts) ++n[a.kind];
    return n;
  }

  static fs::path* dir_;
  static std::vector<Alert>* live_week_rules_;
  static std::vector<Alert>* live_default_rules_;
};
fs::path* WeekStore::dir_ = nullptr;
std::vector<Alert>* WeekStore::live_week_rules_ = nullptr;
std::vector<Alert>* WeekStore::live_default_rules_ = nullptr;

// Alert by alert: kind, GPU, times, duration, money, line, repeat.
void ExpectSameAlerts(std::vector<Alert> live, const std::vector<Alert>& stored) {
  std::stable_sort(live.begin(), live.end(),
                   [](const Alert& a, const Alert& b) { return std::make_pair(UnixMillis(a.at), a.gpu) < std::make_pair(UnixMillis(b.at), b.gpu); });
  ASSERT_EQ(live.size(), stored.size());
  for (std::size_t i = 0; i < live.size(); ++i) {
    SCOPED_TRACE("alert " + std::to_string(i) + ": " + live[i].summary);
    EXPECT_EQ(live[i].kind, stored[i].kind);
    EXPECT_EQ(live[i].gpu, stored[i].gpu);
    EXPECT_EQ(UnixMillis(live[i].since), UnixMillis(stored[i].since));
    EXPECT_EQ(UnixMillis(live[i].at), UnixMillis(stored[i].at));
    EXPECT_DOUBLE_EQ(live[i].minutes, stored[i].minutes);
    EXPECT_EQ(live[i].summary, stored[i].summary);
    EXPECT_EQ(live[i].repeat, stored[i].repeat);
    ASSERT_EQ(live[i].money.has_value(), stored[i].money.has_value());
    if (live[i].money) {
      EXPECT_DOUBLE_EQ(live[i].money->amount, stored[i].money->amount);
    }
  }
}

TEST_F(WeekStore, StoredWeekRaisesTheLiveAlertsCountedByHand) {
  // By hand (data/traces/README.md): idle stretches of an hour or more: GPU 0 Mon 00-09 and Thu
  // 21-end, GPU 2 Mon 00 - Tue 10, Tue 18 - Wed 10, Wed 18 - Fri 13, Fri 17 - end, GPU 3 Mon 00 -
  // Sat 10 and Sat 12 - end: 8, each alerted once an hour after it began. GPU 1 holds its pod's
  // process all week at 0 % every night (Mon 00-08, then 20:00-08:00): 8 low-utilisation alerts,
  // 30 minutes into each night.
  const std::vector<Alert> stored = Stored("week.db", WeekRules(), kMonday, kWeekEnd);
  EXPECT_EQ(Counts(stored)[AlertKind::kIdleNoProcess], 8);
  EXPECT_EQ(Counts(stored)[AlertKind::kLowUtilization], 8);
  EXPECT_EQ(stored.size(), 16u);
  // GPU 3: Mon 01:00 (idle since 00:00) and Sat 13:00 (since 12:00), 60 min at 30 CNY/h = 30 CNY.
  std::vector<int64_t> gpu3;
  for (const Alert& a : stored) {
    if (a.kind == AlertKind::kIdleNoProcess && a.gpu == 3) {
      gpu3.push_back(UnixMillis(a.at));
      EXPECT_DOUBLE_EQ(a.money->amount, 30.0);
      EXPECT_EQ(a.summary, "GPU 3: billed with no process for 60 min, 30.00 CNY/h (30 CNY so far)");
    }
    if (a.kind == AlertKind::kLowUtilization) {
      EXPECT_EQ(a.gpu, 1);
    }
  }
  EXPECT_EQ(gpu3, (std::vector<int64_t>{kMonday + kHour, kMonday + 5 * kDay + 13 * kHour}));
  ExpectSameAlerts(*live_week_rules_, stored);
}

TEST_F(WeekStore, DefaultRulesAlertOncePerHourOfEachIdleStretch) {
  // Default rules: idle 30 min, repeat every 60: a stretch of L whole hours alerts at 30, 90, ...
  // minutes, L times. Idle hours of the week (README): 84 + 0 + 148 + 166 = 398 idle alerts;
  // GPU 1's nights (8 + 6 x 12 + 4 = 84 h under 5 % with its process): 84 low-utilisation alerts.
  // The first of each of the 8 + 8 stretches is new, the other 466 are reminders.
  const std::vector<Alert> stored = Stored("week.db", DefaultRules(), kMonday, kWeekEnd);
  EXPECT_EQ(Counts(stored)[AlertKind::kIdleNoProcess], 398);
  EXPECT_EQ(Counts(stored)[AlertKind::kLowUtilization], 84);
  EXPECT_EQ(std::count_if(stored.begin(), stored.end(), [](const Alert& a) { return !a.repeat; }), 16);
  ExpectSameAlerts(*live_default_rules_, stored);
}

TEST_F(WeekStore, ARangeInsideAStretchFollowsItFromWhereItBegan) {
  // Sunday alone (raw samples, 48 h kept): GPU 0 idle since Thu 21:00, GPU 2 since Fri 17:00,
  // GPU 3 since Sat 12:00: each alerts at every :30 of Sunday, 24 each; GPU 1 under 5 % from
  // Sat 20:00 to Sun 08:00 (00:30 .. 07:30, 8) and from Sun 20:00 (20:30 .. 23:30, 4): 84 alerts.
  const int64_t sunday = kMonday + 6 * kDay;
  const std::vector<Alert> stored = Stored("week.db", DefaultRules(), sunday, kWeekEnd);
  EXPECT_EQ(stored.size(), 84u);
  // GPU 3's first Sunday alert: 00:30, 12.5 h into its stretch, a reminder, 375 CNY at 30 CNY/h.
  const auto first3 = std::find_if(stored.begin(), stored.end(), [](const Alert& a) { return a.gpu == 3; });
  ASSERT_NE(first3, stored.end());
  EXPECT_EQ(UnixMillis(first3->at), sunday + 30 * kMinute);
  EXPECT_EQ(UnixMillis(first3->since), kMonday + 5 * kDay + 12 * kHour);
  EXPECT_DOUBLE_EQ(first3->minutes, 750);
  EXPECT_TRUE(first3->repeat);
  EXPECT_DOUBLE_EQ(first3->money->amount, 375);
  // The live run's Sunday alerts, one by one.
  std::vector<Alert> live;
  for (const Alert& a : *live_default_rules_) {
    if (UnixMillis(a.at) >= sunday) live.push_back(a);
  }
  ExpectSameAlerts(live, stored);
}

TEST_F(WeekStore, BudgetThresholdsOnceAMonthFromTheOffersProjection) {
  // 4 x A100 at 120 CNY an instance-hour: at Mon 01:00 UTC the month so far is one hour,
  // 120 CNY, projected far past a 1 CNY budget: 80 % and 100 % at once, once for March; a budget
  // of 10^12 is never reached. The offer prices idle alerts at 120 / 4 = 30 CNY a GPU-hour.
  for (const double budget : {1.0, 1e12}) {
    const std::string file = Path("budget.yaml");
    std::ofstream(file) << "rules:\n  monthly_budget: " << budget << "\n";
    MeterAlertsRequest r;
    r.db = Path("week.db");
    r.from = "2026-03-02T00:00Z";
    r.to = "2026-03-09T00:00Z";
    r.offers = Path("offers.yaml");
    r.alerts = file;
    const MeterAlerts a = RunMeterAlerts(r, test::Catalog());
    std::vector<Alert> budget_alerts;
    for (const Alert& x : a.alerts) {
      if (x.kind == AlertKind::kBudget) budget_alerts.push_back(x);
    }
    if (budget > 1) {
      EXPECT_TRUE(budget_alerts.empty());
      continue;
    }
    ASSERT_EQ(budget_alerts.size(), 2u);
    EXPECT_EQ(UnixMillis(budget_alerts[0].at), kMonday + kHour);
    EXPECT_EQ(budget_alerts[0].severity, "warning");
    EXPECT_EQ(budget_alerts[1].severity, "critical");
    ASSERT_TRUE(a.rules.gpu_hour_price.has_value());
    EXPECT_DOUBLE_EQ(a.rules.gpu_hour_price->amount, 30.0);
    EXPECT_EQ(a.zone.OffsetAt(UtcMillis{}).count(), 8 * 60);
  }
}

TEST_F(WeekStore, RequestErrorsNameTheirFlag) {
  auto field = [](const MeterAlertsRequest& r) {
    try {
      RunMeterAlerts(r, test::Catalog());
    } catch (const InputError& e) {
      return test::AsCli(e).field();
    }
    return std::string("(no error)");
  };
  MeterAlertsRequest r;
  EXPECT_EQ(field(r), "--db");
  r.db = Path("week.db");
  r.from = "Monday";
  EXPECT_EQ(field(r), "--from");
  r.from = "2026-03-02";
  r.offer = "lab";
  EXPECT_EQ(field(r), "--offer");
  r.offer.clear();
  std::ofstream(Path("bad-alerts.yaml")) << "rules:\n  idle_minuets: 5\n";
  r.alerts = Path("bad-alerts.yaml");
  EXPECT_EQ(field(r), "rules.idle_minuets");
}

// Each slot of the timeline against `meter report` of that slot alone: the same total, to the
// last bit (the JSON both print), priced and not.
TEST_F(WeekStore, TimelineSlotsAreTheReportOfEachSlot) {
  MeterTimelineRequest t;
  t.db = Path("week.db");
  t.from = "2026-03-02T00:00Z";
  t.to = "2026-03-09T00:00Z";
  t.step = "day";
  t.offers = test::DataDir() + "/offers/nanjing-a100.yaml";
  t.offer = "nj-a100-on-demand";
  auto check = [](const MeterTimelineRequest& q, std::size_t slots) {
    const MeterTimeline tl = RunMeterTimeline(q, test::Catalog());
    ASSERT_EQ(tl.slots.size(), slots);
    const nlohmann::json j = MeterTimelineToJson(tl);
    for (std::size_t i = 0; i < tl.slots.size(); ++i) {
      // `gpuplan meter report --from SLOT --to SLOT_END`, the slot's bounds as the timeline prints them.
      MeterReportRequest r;
      r.db = q.db;
      r.offers = q.offers;
      r.offer = q.offer;
      r.from = j["slots"][i]["from"].get<std::string>();
      r.to = j["slots"][i]["to"].get<std::string>();
      const MeterReport rep = RunMeterReport(r, test::Catalog());
      EXPECT_EQ(UnixMillis(rep.from), UnixMillis(tl.slots[i].from));
      EXPECT_EQ(UnixMillis(rep.to), UnixMillis(tl.slots[i].to));
      EXPECT_EQ(MeterGroupToJson(tl.slots[i].total, tl.priced), MeterGroupToJson(rep.total, rep.priced)) << r.from;
    }
  };
  check(t, 7);
  // By hour across GPU 0's end (Thu 21:00) and GPU 2's Friday (13:00-17:00), priced: the night
  // discount (22:00-08:00 +08:00) and the per-second billing fall inside the slots.
  t.step = "hour";
  t.from = "2026-03-05T18:00Z";
  t.to = "2026-03-06T18:00Z";
  check(t, 24);
  // Unpriced, by hour over Monday.
  t.offers.clear();
  t.offer.clear();
  t.from = "2026-03-02T00:00Z";
  t.to = "2026-03-03T00:00Z";
  check(t, 24);
}

TEST_F(WeekStore, TimelineHoursByHand) {
  // The week by day: busy 274 h and idle 398 h in all (README); Monday (UTC): GPU 0 busy 09-24
  // (15 h), GPU 1 24 h, GPUs 2 and 3 idle: 39 busy, 9 + 24 + 24 = 57 idle.
  MeterTimelineRequest t;
  t.db = Path("week.db");
  t.from = "2026-03-02T00:00Z";
  t.to = "2026-03-09T00:00Z";
  t.step = "day";
  const MeterTimeline tl = RunMeterTimeline(t, test::Catalog());
  ASSERT_EQ(tl.slots.size(), 7u);
  double busy = 0, idle = 0;
  for (const auto& s : tl.slots) {
    busy += s.total.busy_hours;
    idle += s.total.idle_hours;
  }
  EXPECT_NEAR(busy, 274, 1e-9);
  EXPECT_NEAR(idle, 398, 1e-9);
  EXPECT_NEAR(tl.slots[0].total.busy_hours, 39, 1e-9);
  EXPECT_NEAR(tl.slots[0].total.idle_hours, 57, 1e-9);
  // The week by hour: 168 slots. Thursday 21:00 UTC, GPU 0's first hour after its job: only GPU 1
  // is busy (its pod's process holds it, at 0 % at night), 1 h; GPUs 0, 2 and 3 idle, 3 h.
  t.step = "hour";
  const MeterTimeline hours = RunMeterTimeline(t, test::Catalog());
  ASSERT_EQ(hours.slots.size(), 168u);
  EXPECT_NEAR(hours.slots[3 * 24 + 21].total.busy_hours, 1, 1e-9);
  EXPECT_NEAR(hours.slots[3 * 24 + 21].total.idle_hours, 3, 1e-9);
  // More than 744 slots: refused, naming --step.
  t.from = "2026-01-01T00:00Z";
  try {
    RunMeterTimeline(t, test::Catalog());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(test::AsCli(e).field(), "--step");
  }
}

// A condition that changes inside a minute, once the raw samples are gone: the minute replay
// counts a minute only when the condition held all of it (alert_replay.h).
TEST(AlertReplayMinutes, AMinuteCountsWhenTheConditionHeldAllOfIt) {
  const fs::path dir = fs::current_path() / ("alert_replay_minutes." + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "m.db").string();
  // GPU 0 every 10 s from 00:00:00: no process until 00:30:30, a process after, 0 % all along.
  StoreOptions o;
  o.sample_interval_seconds = 10;
  o.raw_retention_hours = 1;
  {
    MeterStore store = MeterStore::Open(db, o);
    std::vector<GpuSample> gpus;
    std::vector<ProcessSample> procs;
    for (int k = 0; k < 6 * 60; ++k) {  // one hour
      GpuSample s;
      s.time = FromUnixMillis(kMonday + k * 10000);
      s.gpu = 0;
      s.utilization_gpu = 0;
      gpus.push_back(s);
      if (UnixMillis(s.time) >= kMonday + 30 * kMinute + 30000) {
        ProcessSample p;
        p.time = s.time;
        p.gpu = 0;
        p.pid = 7;
        p.user = "dave";
        procs.push_back(p);
      }
    }
    // Retention measures back from the newest sample held: GPU 1's sample at 03:00 puts the
    // store's time there, so the 1 h cut (02:00) takes every sample of the first hour.
    const int64_t later = kMonday + 3 * kHour;
    GpuSample next;
    next.time = FromUnixMillis(later);
    next.gpu = 1;
    gpus.push_back(next);
    store.Append(gpus);
    store.Append(procs);
    while (store.Buffered() > 0) store.Flush(FromUnixMillis(later));
    store.RollUp(FromUnixMillis(later));
    store.ApplyRetention(FromUnixMillis(later));  // raw samples older than 1 h: all of the first hour's
  }
  const MeterStore store = MeterStore::Open(db, ReadOnly());
  ASSERT_EQ(store.Extent().raw_from, FromUnixMillis(kMonday + 3 * kHour));  // only GPU 1's, after the range
  AlertRules r;
  r.idle_minutes = 30;
  r.low_util_minutes = 15;
  const AlertReplay replay = ReplayStoredAlerts(store, r, {FromUnixMillis(kMonday), FromUnixMillis(kMonday + kHour)});
  // Live, the 00:30:00 sample is still idle (30 min held): an idle alert then. By the minute,
  // 00:30 had a process for half of it: idle held 00:00 .. 00:29 only, no idle alert. Under 5 %
  // with a process all minute from 00:31: 15 minutes later, at 00:46, a low-utilisation alert.
  ASSERT_EQ(replay.alerts.size(), 1u);
  EXPECT_EQ(replay.alerts[0].kind, AlertKind::kLowUtilization);
  EXPECT_EQ(UnixMillis(replay.alerts[0].since), kMonday + 31 * kMinute);
  EXPECT_EQ(UnixMillis(replay.alerts[0].at), kMonday + 46 * kMinute);
  EXPECT_FALSE(replay.raw_from.has_value());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gpuplan
