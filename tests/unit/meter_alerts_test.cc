// Alert rules on hand-made tick sequences, and webhook delivery to a real HTTP listener on
// 127.0.0.1 (docs/meter-alerts.md). Expected figures are worked by hand in the comments; the
// signatures come from Python's hmac module and RFC 4231, not from this program.
#include <httplib.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_time.h"
#include "core/error.h"
#include "meter/alerts.h"
#include "meter/metrics.h"
#include "meter/monitor.h"
#include "meter/rightsize.h"
#include "meter/webhook.h"
#include "telemetry/snapshot.h"

namespace gpuplan {
namespace {

using nlohmann::json;

AlertGpuTick Tick(int gpu, int minute, int processes, std::optional<int> util = 0) {
  AlertGpuTick t;
  t.sample.gpu = gpu;
  t.sample.time = FromUnixMillis(static_cast<int64_t>(minute) * kMillisecondsPerMinute);
  t.sample.utilization_gpu = util;
  t.processes = processes;
  return t;
}

TEST(MeterAlerts, IdleGpuAlertsAfterNMinutesThenEveryRepeatWindow) {
  AlertRules r;
  r.idle_minutes = 30;
  r.repeat_minutes = 60;
  r.gpu_hour_price = Money{12.5, "CNY"};
  AlertEngine e(r);
  std::vector<Alert> got;
  for (int m = 0; m <= 130; ++m) {
    for (auto& a : e.ObserveGpu(Tick(3, m, 0))) {
      got.push_back(a);
    }
  }
  // Idle from minute 0: alerts at 30 (first) and 90 (30 + 60); 150 is past the end.
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].kind, AlertKind::kIdleNoProcess);
  EXPECT_EQ(got[0].gpu, 3);
  EXPECT_EQ(UnixMillis(got[0].at), 30 * kMillisecondsPerMinute);
  EXPECT_DOUBLE_EQ(got[0].minutes, 30);
  EXPECT_FALSE(got[0].repeat);
  // 30 min at 12.5 CNY/h = 6.25 CNY; 90 min = 18.75 CNY.
  ASSERT_TRUE(got[0].money.has_value());
  EXPECT_DOUBLE_EQ(got[0].money->amount, 6.25);
  EXPECT_EQ(got[0].summary, "GPU 3: billed with no process for 30 min, 12.50 CNY/h (6 CNY so far)");
  EXPECT_EQ(UnixMillis(got[1].at), 90 * kMillisecondsPerMinute);
  EXPECT_TRUE(got[1].repeat);
  EXPECT_DOUBLE_EQ(got[1].money->amount, 18.75);

  // A process at minute 131 clears it; idle again from 140 alerts at 170, not at 150.
  EXPECT_TRUE(e.ObserveGpu(Tick(3, 131, 1, 80)).empty());
  got.clear();
  for (int m = 140; m <= 175; ++m) {
    for (auto& a : e.ObserveGpu(Tick(3, m, 0))) {
      got.push_back(a);
    }
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(UnixMillis(got[0].since), 140 * kMillisecondsPerMinute);
  EXPECT_EQ(UnixMillis(got[0].at), 170 * kMillisecondsPerMinute);
  EXPECT_FALSE(got[0].repeat);
}

// Time the agent was down is not billed idle time (docs/meter.md §7): 10 idle minutes, then 10
// more 3 days later, with idle_minutes 15, is two stretches of 10 minutes (the gap, longer than
// max_gap_minutes = 2.5, ends the first): no alert, where counting across the gap would say
// 3 days. A gap of 2 minutes (a missed minute) is still one stretch: 0..9 and 11..20 alert at
// minute 15 with 15 minutes held.
TEST(MeterAlerts, TimeTheAgentWasDownIsNotIdleTime) {
  AlertRules r;
  r.idle_minutes = 15;
  r.gpu_hour_price = Money{30, "CNY"};
  AlertEngine e(r);
  std::vector<Alert> got;
  const int three_days = 3 * 24 * 60;
  for (int m = 0; m < 10; ++m) {
    for (auto& a : e.ObserveGpu(Tick(0, m, 0))) {
      got.push_back(a);
    }
  }
  for (int m = three_days; m < three_days + 10; ++m) {
    for (auto& a : e.ObserveGpu(Tick(0, m, 0))) {
      got.push_back(a);
    }
  }
  EXPECT_TRUE(got.empty()) << got[0].summary;

  AlertEngine f(r);
  for (int m = 0; m <= 20; ++m) {
    if (m == 10) {
      continue;  // one minute missed: 9 -> 11 is 2 minutes, within the 2.5
    }
    for (auto& a : f.ObserveGpu(Tick(1, m, 0))) {
      got.push_back(a);
    }
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(UnixMillis(got[0].since), 0);
  EXPECT_EQ(UnixMillis(got[0].at), 15 * kMillisecondsPerMinute);
  // 15 minutes at 30 CNY/h = 7.5 CNY.
  EXPECT_DOUBLE_EQ(got[0].money->amount, 7.5);
}

TEST(MeterAlerts, IdleMoneyFollowsTheNightWindowHourByHour) {
  // 12 CNY a GPU-hour by day, half inside 22:00-08:00 local time, the offers' zone UTC+8. Idle from
  // 13:00 UTC (21:00 local) for 120 min: 21:00-22:00 at 12 plus 22:00-23:00 at 6 = 18 CNY, and at
  // 23:00 local the hour costs 6.
  AlertRules r;
  r.idle_minutes = 120;
  r.gpu_hour_price = Money{12, "CNY"};
  r.night = NightDiscount{std::chrono::hours{22}, std::chrono::hours{8}, 0.5};
  r.price_zone = test::Offset(480);
  AlertEngine e(r);
  std::vector<Alert> got;
  for (int m = 13 * 60; m <= 15 * 60; ++m) {
    for (auto& a : e.ObserveGpu(Tick(0, m, 0))) got.push_back(a);
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_DOUBLE_EQ(got[0].money_per_hour->amount, 6);
  EXPECT_DOUBLE_EQ(got[0].money->amount, 18);
  EXPECT_EQ(got[0].summary, "GPU 0: billed with no process for 2.0 h, 6.00 CNY/h (18 CNY so far)");
  // Part hours: 21:30-22:15 local = 30 min at 12 + 15 min at 6 = 7.5.
  const int64_t h = kMillisecondsPerHour, mn = kMillisecondsPerMinute;
  EXPECT_DOUBLE_EQ(r.GpuMoneyBetween(FromUnixMillis(13 * h + 30 * mn), FromUnixMillis(14 * h + 15 * mn))->amount, 7.5);
  // The night ends at 08:00 local = 00:00 UTC.
  EXPECT_DOUBLE_EQ(r.GpuHourPriceAt(FromUnixMillis(-1))->amount, 6);
  EXPECT_DOUBLE_EQ(r.GpuHourPriceAt(FromUnixMillis(0))->amount, 12);
}

TEST(MeterAlerts, AnOffersPriceCarriesItsAddOnFeesAndNightWindow) {
  // On demand, 30 CNY an instance-hour of 2 GPUs, add-on fees 20 %, half price 22:00-08:00 (UTC+8):
  // a GPU-hour is 30 x 1.2 / 2 = 18 by day and 9 at night.
  Offer o;
  o.id = "od";
  o.mode = BillingMode::kOnDemand;
  o.price = 30;
  o.addon_fee_ratio = 0.2;
  o.gpus_per_instance = 2;
  o.night = NightDiscount{std::chrono::hours{22}, std::chrono::hours{8}, 0.5};
  OfferSet set;
  set.currency = "CNY";
  set.zone = test::Offset(480);
  const AlertRules r = PricedAlertRules(AlertRules{}, o, set, FromUnixMillis(0));
  EXPECT_DOUBLE_EQ(r.gpu_hour_price->amount, 18);
  EXPECT_DOUBLE_EQ(r.GpuHourPriceAt(FromUnixMillis(4 * kMillisecondsPerHour))->amount, 18);   // 12:00 local
  EXPECT_DOUBLE_EQ(r.GpuHourPriceAt(FromUnixMillis(15 * kMillisecondsPerHour))->amount, 9);   // 23:00 local
  EXPECT_DOUBLE_EQ(OfferGpuHourPrice(o, test::Hour(23)), 9);
  EXPECT_DOUBLE_EQ(OfferGpuHourPrice(o, test::Hour(24 + 12)), 18);
  // A local day, 00:00-24:00 (16:00 UTC the day before to 16:00 UTC): 10 night hours at 9 and 14 day
  // hours at 18 = 342 / 24 = 14.25 a GPU-hour on average.
  EXPECT_DOUBLE_EQ(OfferMeanGpuHourPrice(o, {FromUnixMillis(16 * kMillisecondsPerHour), FromUnixMillis(40 * kMillisecondsPerHour)}, test::Offset(480)), 14.25);
  // /metrics prices each sample at its time: 1 s idle at 23:00 local costs 9 / 3600.
  MeterMetrics m;
  m.SetPricing(r);
  GpuSample s;
  s.time = FromUnixMillis(15 * kMillisecondsPerHour);
  m.ObserveGpu(s, 0, true, 1.0);
  EXPECT_DOUBLE_EQ(m.Snapshot().gpus[0].hourly_price->amount, 9);
  EXPECT_DOUBLE_EQ(m.Snapshot().gpus[0].idle_cost, 9.0 / 3600);
}

TEST(MeterAlerts, NotBilledIsNotIdleMoney) {
  AlertEngine e(AlertRules{});
  for (int m = 0; m <= 200; ++m) {
    AlertGpuTick t = Tick(0, m, 0);
    t.billed = false;
    EXPECT_TRUE(e.ObserveGpu(t).empty()) << "minute " << m;
  }
}

TEST(MeterAlerts, LowUtilisationNeedsAProcessAndAMeasuredValueUnderTheLimit) {
  AlertRules r;
  r.low_util_percent = 5;
  r.low_util_minutes = 30;
  AlertEngine e(r);
  int alerts = 0;
  for (int m = 0; m <= 40; ++m) {
    for (const auto& a : e.ObserveGpu(Tick(1, m, 2, 4))) {  // 4% < 5%
      EXPECT_EQ(a.kind, AlertKind::kLowUtilization);
      EXPECT_EQ(UnixMillis(a.at), 30 * kMillisecondsPerMinute);
      EXPECT_EQ(a.summary, "GPU 1: under 5% utilisation for 30 min with 2 processes, price unknown (no --offers)");
      ++alerts;
    }
  }
  EXPECT_EQ(alerts, 1);
  // Exactly 5% is not under 5%; an unmeasured utilisation is not judged.
  AlertEngine e2(r);
  for (int m = 0; m <= 100; ++m) {
    EXPECT_TRUE(e2.ObserveGpu(Tick(1, m, 1, 5)).empty());
    EXPECT_TRUE(e2.ObserveGpu(Tick(2, m, 1, std::nullopt)).empty());
  }
}

TEST(MeterAlerts, ThrottlingCountsHeatAndBrakesNotThePowerCap) {
  AlertRules r;
  r.throttle_minutes = 5;
  AlertEngine e(r);
  std::vector<Alert> got;
  for (int m = 0; m <= 6; ++m) {
    AlertGpuTick t = Tick(0, m, 1, 95);
    t.sample.clock_event_reasons = kClockEventSwPowerCap;  // a busy card at its limit: normal
    EXPECT_TRUE(e.ObserveGpu(t).empty());
  }
  for (int m = 10; m <= 16; ++m) {
    AlertGpuTick t = Tick(0, m, 1, 95);
    t.sample.clock_event_reasons = kClockEventSwPowerCap | kClockEventHwThermal;
    t.sample.temperature = 91;
    for (auto& a : e.ObserveGpu(t)) {
      got.push_back(a);
    }
  }
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(UnixMillis(got[0].at), 15 * kMillisecondsPerMinute);  // from minute 10, 5 minutes
  EXPECT_EQ(got[0].summary, "GPU 0: clocks held back (hardware thermal) for 5 min while busy, 91 C");
}

TEST(MeterAlerts, EccRiseAndXidAlertAtOnce) {
  AlertEngine e(AlertRules{});
  AlertGpuTick t = Tick(2, 0, 1, 90);
  t.ecc_uncorrected = 0;
  EXPECT_TRUE(e.ObserveGpu(t).empty());  // the first reading is the baseline
  t = Tick(2, 1, 1, 90);
  t.ecc_uncorrected = 0;
  EXPECT_TRUE(e.ObserveGpu(t).empty());
  t = Tick(2, 2, 1, 90);
  t.ecc_uncorrected = 2;
  t.xids = {79};
  const auto a = e.ObserveGpu(t);
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].kind, AlertKind::kEcc);
  EXPECT_EQ(a[0].severity, "critical");
  EXPECT_NE(a[0].summary.find("from 0 to 2"), std::string::npos);
  EXPECT_EQ(a[1].kind, AlertKind::kXid);
  EXPECT_EQ(a[1].summary, "GPU 2: XID 79 reported by the driver");
}

TEST(MeterAlerts, BudgetThresholdsOncePerMonth) {
  AlertRules r;
  r.monthly_budget = Money{10000, "CNY"};
  AlertEngine e(r);
  const Money spent{3000, "CNY"};
  EXPECT_TRUE(e.ObserveBudget(FromUnixMillis(0), "2026-12", spent, Money{7999, "CNY"}).empty());
  auto a = e.ObserveBudget(FromUnixMillis(1), "2026-12", spent, Money{8000, "CNY"});  // 80% of 10,000
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].severity, "warning");
  EXPECT_EQ(a[0].summary, "budget 2026-12: projected 8,000 CNY reaches 80% of 10,000 CNY (spent so far 3,000 CNY)");
  EXPECT_TRUE(e.ObserveBudget(FromUnixMillis(2), "2026-12", spent, Money{8500, "CNY"}).empty());
  a = e.ObserveBudget(FromUnixMillis(3), "2026-12", spent, Money{12000, "CNY"});
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].severity, "critical");
  EXPECT_TRUE(e.ObserveBudget(FromUnixMillis(4), "2026-12", spent, Money{13000, "CNY"}).empty());
  // A new month starts over: both thresholds are crossed at once.
  EXPECT_EQ(e.ObserveBudget(FromUnixMillis(5), "2027-01", spent, Money{12000, "CNY"}).size(), 2u);
}

TEST(MeterAlerts, AlertsFileErrorsNameLineAndKey) {
  const std::string good =
      "rules:\n  idle_minutes: 45\n  gpu_hour_price: 9.8\n  monthly_budget: 20000\n  budget_fractions: [1.0, 0.5]\n"
      "webhooks:\n  - format: dingtalk\n    url: https://oapi.dingtalk.com/robot/send?access_token=x\n    secret: SECx\n"
      "  - format: wecom\n    name: ops\n    url: https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=k\n";
  const AlertRules r = AlertRulesFromYaml(good, "alerts.yaml");
  EXPECT_DOUBLE_EQ(r.idle_minutes, 45);
  EXPECT_DOUBLE_EQ(r.gpu_hour_price->amount, 9.8);
  EXPECT_EQ(r.monthly_budget->currency, "CNY");
  EXPECT_EQ(r.budget_fractions, (std::vector<double>{0.5, 1.0}));
  const auto w = WebhookTargetsFromYaml(good, "alerts.yaml");
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].format, WebhookFormat::kDingTalk);
  EXPECT_EQ(w[0].name, "dingtalk");
  EXPECT_EQ(w[1].name, "ops");

  try {
    AlertRulesFromYaml("rules:\n  idle_minutes: 10\n  idel_minutes: 5\n", "a.yaml");
    FAIL() << "unknown rule accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "a.yaml");
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "rules.idel_minutes");
  }
  try {
    WebhookTargetsFromYaml("webhooks:\n  - format: wecom\n    url: https://x/y\n    secret: s\n", "a.yaml");
    FAIL() << "secret on a WeCom robot accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "webhooks[0].secret");
  }
  try {
    WebhookTargetsFromYaml("webhooks:\n  - format: slack\n    url: https://x/y\n", "a.yaml");
    FAIL() << "unknown format accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "webhooks[0].format");
    EXPECT_EQ(e.line(), 2);
  }
}

TEST(MeterWebhooks, HmacSha256MatchesRfc4231) {
  // RFC 4231 test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?") =
  // 5bdcc146...64ec3843, base64 of those 32 bytes.
  EXPECT_EQ(HmacSha256Base64("Jefe", "what do ya want for nothing?"), "W9zBRr9gdU5qBCQmCJV1x1oAPwidJzmDnexYuWTsOEM=");
}

Alert IdleAlert() {
  Alert a;
  a.kind = AlertKind::kIdleNoProcess;
  a.gpu = 3;
  a.severity = "warning";
  a.since = FromUnixMillis(1700000000000 - 41 * kMillisecondsPerHour);
  a.at = FromUnixMillis(1700000000000);
  a.minutes = 41 * 60;
  a.money_per_hour = Money{30, "CNY"};
  a.money = Money{1230, "CNY"};
  a.summary = "GPU 3: billed with no process for 41.0 h, 30.00 CNY/h (1,230 CNY so far)";
  return a;
}

TEST(MeterWebhooks, RobotBodiesAndSignaturesFollowTheVendorDocs) {
  const Alert a = IdleAlert();
  const std::string text = "[gpuplan warning] " + a.summary;
  // WeCom group robot: {"msgtype":"text","text":{"content":...}}.
  auto m = BuildWebhookMessage(a, {"w", WebhookFormat::kWeCom, "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K", ""}, FromUnixMillis(0));
  EXPECT_EQ(m.url, "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=K");
  EXPECT_EQ(json::parse(m.body), json::parse(R"({"msgtype":"text","text":{"content":)" + json(text).dump() + "}}"));
  // DingTalk, signed: timestamp in ms and sign = urlencode(base64(HMAC-SHA256(secret,
  // timestamp + "\n" + secret))) in the query; the value from Python's hmac + quote_plus.
  m = BuildWebhookMessage(a, {"d", WebhookFormat::kDingTalk, "https://oapi.dingtalk.com/robot/send?access_token=T", "SECgpuplan-test"},
                          FromUnixMillis(1700000000000));
  EXPECT_EQ(m.url,
            "https://oapi.dingtalk.com/robot/send?access_token=T&timestamp=1700000000000"
            "&sign=dIfkvd93I6GDiaR%2BbLbdvsYOYBKGQQnouuRkcCyNsYQ%3D");
  EXPECT_EQ(json::parse(m.body)["msgtype"], "text");
  EXPECT_EQ(json::parse(m.body)["text"]["content"], text);
  // Feishu, signed: timestamp in seconds (a string) and sign = base64(HMAC-SHA256(key =
  // timestamp + "\n" + secret, message = "")) in the body.
  m = BuildWebhookMessage(a, {"f", WebhookFormat::kFeishu, "https://open.feishu.cn/open-apis/bot/v2/hook/H", "SECgpuplan-test"},
                          FromUnixMillis(1700000000123));
  const json f = json::parse(m.body);
  EXPECT_EQ(f["msg_type"], "text");
  EXPECT_EQ(f["content"]["text"], text);
  EXPECT_EQ(f["timestamp"], "1700000000");
  EXPECT_EQ(f["sign"], "rZNVYnuwqtIbPrardCo/mhrjk4xurDu1Y228q4QyQnc=");
  // Generic: the alert's fields.
  const json g = json::parse(BuildWebhookMessage(a, {"g", WebhookFormat::kGeneric, "http://x/", ""}, FromUnixMillis(0)).body);
  EXPECT_EQ(g["kind"], "idle_no_process");
  EXPECT_EQ(g["gpu"], 3);
  EXPECT_EQ(g["money"]["amount"], 1230);
  EXPECT_EQ(g["money_per_hour"]["currency"], "CNY");
}

// A real HTTP server on a free loopback port that records what it receives.
class Listener {
 public:
  Listener() {
    server_.Post(R"(/(.*))", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard<std::mutex> lock(mu_);
      requests_.push_back({req.path, req.get_param_value("timestamp"), req.get_param_value("sign"), req.body});
      if (req.path == "/flaky" && ++flaky_ == 1) {
        res.status = 500;
        return;
      }
      if (req.path == "/robot-refuses") {
        res.set_content(R"({"errcode":310000,"errmsg":"sign not match"})", "application/json");
        return;
      }
      res.set_content(R"({"errcode":0,"errmsg":"ok"})", "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~Listener() {
    server_.stop();
    thread_.join();
  }
  std::string Url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  struct Got {
    std::string path, timestamp, sign, body;
  };
  std::vector<Got> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<Got> requests_;
  int flaky_ = 0;
};

TEST(MeterWebhooks, DeliveredToARealListenerWithRetries) {
  Listener l;
  std::vector<std::string> log;
  std::mutex log_mu;
  WebhookSenderOptions o;
  o.first_backoff_seconds = 0.05;
  o.max_attempts = 3;
  {
    WebhookSender s({{"generic", WebhookFormat::kGeneric, l.Url("/flaky"), ""},
                     {"wecom", WebhookFormat::kWeCom, l.Url("/cgi-bin/webhook/send?key=K"), ""},
                     {"dingtalk", WebhookFormat::kDingTalk, l.Url("/robot/send?access_token=T"), "SECs"},
                     {"feishu", WebhookFormat::kFeishu, l.Url("/open-apis/bot/v2/hook/H"), "SECs"},
                     {"refused", WebhookFormat::kDingTalk, l.Url("/robot-refuses"), ""}},
                    o, [&](const std::string& line) {
                      std::lock_guard<std::mutex> lock(log_mu);
                      log.push_back(line);
                    });
    s.Send(IdleAlert());
    ASSERT_TRUE(s.Flush(60));
    const auto st = s.stats();
    // generic: 500 then 200 (1 retry); wecom, dingtalk, feishu: 200 at once; refused: errcode
    // 310000 three times (2 retries, then given up).
    EXPECT_EQ(st.delivered, 4u);
    EXPECT_EQ(st.retried, 3u);
    EXPECT_EQ(st.given_up, 1u);
  }
  const auto got = l.requests();
  ASSERT_EQ(got.size(), 2u + 1 + 1 + 1 + 3);
  int dingtalk = 0;
  for (const auto& g : got) {
    if (g.path == "/robot/send") {
      ++dingtalk;
      EXPECT_FALSE(g.timestamp.empty());
      // The listener sees the decoded sign; it must be the HMAC of what the sender says it
      // signed (the formula itself is held by the fixed-timestamp test above).
      EXPECT_EQ(g.sign, HmacSha256Base64("SECs", g.timestamp + "\nSECs"));
      EXPECT_EQ(json::parse(g.body)["msgtype"], "text");
    }
    if (g.path == "/open-apis/bot/v2/hook/H") {
      const json f = json::parse(g.body);
      EXPECT_EQ(f["sign"], HmacSha256Base64(f["timestamp"].get<std::string>() + "\nSECs", ""));
    }
  }
  EXPECT_EQ(dingtalk, 1);
  bool gave_up = false;
  for (const auto& line : log) {
    gave_up = gave_up || line.find("webhook refused: gave up after 3 attempts (errcode 310000") == 0;
  }
  EXPECT_TRUE(gave_up);
}

TEST(MeterWebhooks, AServerThatNeverAnswersNeverBlocksSend) {
  // A listening socket nobody accepts from (httplib leaves the bound socket open): connections
  // are taken into the backlog and never answered. Send returns at once, the sender's attempt
  // times out in the background and the destructor stops it without waiting for the backoff.
  int port = 0;
  httplib::Server probe;
  port = probe.bind_to_any_port("127.0.0.1");
  WebhookSenderOptions o;
  o.first_backoff_seconds = 30;
  o.timeout_seconds = 1;
  WebhookSender s({{"down", WebhookFormat::kGeneric, "http://127.0.0.1:" + std::to_string(port) + "/", ""}}, o, nullptr);
  for (int i = 0; i < 2000; ++i) {
    s.Send(IdleAlert());
  }
  EXPECT_FALSE(s.Flush(0.5));
  // 2,000 queued against a limit of 1,000 (one may be out of the queue, being tried).
  EXPECT_GE(s.stats().dropped, 999u);
  EXPECT_LE(s.stats().dropped, 1000u);
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// What the live agent sends its webhooks (and meter alerts counts as start and escalation): an
// idle incident reminded every hour from 30 min sends at 30 min (start), at 4.5 h (past 4 h) and
// at 24.5 h (past 24 h): 3 of its 25 alerts; a later critical alert of another incident is sent.
TEST(MeterIncidents, RemindersAreNotSentEscalationsAre) {
  IncidentState idle;
  int sent = 0;
  std::vector<double> at;
  for (int k = 0; k < 25; ++k) {
    Alert a;
    a.kind = AlertKind::kIdleNoProcess;
    a.severity = "warning";
    a.minutes = 30 + 60.0 * k;
    a.repeat = k > 0;
    if (SendAndUpdate(a, idle)) {
      ++sent;
      at.push_back(a.minutes);
    }
  }
  EXPECT_EQ(sent, 3);
  EXPECT_EQ(at, (std::vector<double>{30, 270, 1470}));
  IncidentState throttle;
  Alert w;
  w.kind = AlertKind::kThrottling;
  w.severity = "warning";
  EXPECT_TRUE(SendAndUpdate(w, throttle));
  EXPECT_FALSE(SendAndUpdate(w, throttle));
  w.severity = "critical";
  EXPECT_TRUE(SendAndUpdate(w, throttle));
  EXPECT_FALSE(SendAndUpdate(w, throttle));
}

// The live agent's webhooks end an incident and send a day's digest (issue 25 req. 13): one GPU
// idle from 23:00 (+08:00, 10 CNY a GPU-hour), alerted at 23:30 (start, sent), reminded at 00:30
// (not sent), a process from 00:40. Sent, by hand: the start at 23:30; at 00:00 the digest of
// March 1 (1 incident, 1 new, 0.5 h x 10 = 5 CNY lost by its last alert that day); at 00:40 the
// end, 100 min after it began, 100/60 h x 10 CNY = 16.67 CNY.
TEST(MeterIncidents, TheLiveAgentSendsTheEndAndTheDigest) {
  Listener l;
  MeterMonitorOptions o;
  o.rules.gpu_hour_price = Money{10, "CNY"};
  o.rules.price_zone = test::Offset(480);
  o.webhooks = {{"generic", WebhookFormat::kGeneric, l.Url("/hook"), ""}};
  const int64_t t0 = 1803913200000;  // 2027-03-01T15:00Z = 23:00 +08:00
  {
    MeterMonitor m(o, nullptr, nullptr);
    TraceHeader h;
    h.host = "lab";
    h.interval_seconds = 60;
    m.OnStart("test", h);
    for (int minute = 0; minute <= 120; ++minute) {
      TraceStep s;
      s.time = FromUnixMillis(t0 + minute * 60000LL);
      GpuSample g;
      g.time = s.time;
      g.utilization_gpu = minute >= 100 ? 90 : 0;
      s.gpus.push_back(g);
      if (minute >= 100) {
        ProcessSample p;
        p.time = s.time;
        s.processes.push_back(p);
      }
      m.OnTick(s, minute);
    }
    ASSERT_TRUE(m.FlushWebhooks(30));
    EXPECT_EQ(m.alerts().size(), 2u);  // 23:30 and the 00:30 reminder
  }
  const auto got = l.requests();
  ASSERT_EQ(got.size(), 3u);
  const json start = json::parse(got[0].body), digest = json::parse(got[1].body), end = json::parse(got[2].body);
  EXPECT_EQ(start["type"], "alert");
  EXPECT_EQ(start["at_ms"], t0 + 30 * 60000LL);
  EXPECT_EQ(digest["type"], "digest");
  EXPECT_EQ(digest["at_ms"], t0 + 60 * 60000LL);
  EXPECT_NEAR(digest["money"]["amount"].get<double>(), 5.0, 1e-9);
  EXPECT_NE(digest["summary"].get<std::string>().find("digest 2027-03-01: 1 incident with alerts, 1 new"), std::string::npos);
  EXPECT_EQ(end["type"], "end");
  EXPECT_EQ(end["at_ms"], t0 + 100 * 60000LL);
  EXPECT_NEAR(end["minutes"].get<double>(), 100.0, 1e-9);
  EXPECT_NEAR(end["money"]["amount"].get<double>(), 1000.0 / 60.0, 1e-9);
  EXPECT_NE(end["summary"].get<std::string>().find("ended at 2027-03-02T00:40+08:00 after 100 min"), std::string::npos) << end["summary"];
}

}  // namespace
}  // namespace gpuplan
