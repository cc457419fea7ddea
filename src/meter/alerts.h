// Alerts of `gpuplan meter` (docs/meter-alerts.md): money billed for nothing, a month's budget
// running out, a card in trouble. The engine is fed what the agent sees, tick by tick, and
// returns the alerts that are due; it keeps no clock of its own (time comes with each sample),
// so a replayed week raises the same alerts as the live week did. Delivery (log, webhooks) is
// webhook.h's: the engine never blocks and never sends.
//
// Rules (thresholds and their reasons in docs/meter-alerts.md):
//   idle_no_process  a GPU with no process for `idle_minutes` while the instance is billed
//   low_utilization  a GPU under `low_util_percent` for `low_util_minutes` (with processes:
//                    a job that holds the card but does not use it)
//   budget           the month's projected cost reaching each of `budget_fractions` of
//                    `monthly_budget` (once per threshold per month)
//   ecc / xid        a rise of the uncorrected ECC count, an XID event
//   throttling       a hardware slowdown, thermal or power-brake clock event for
//                    `throttle_minutes` while the GPU is busy
// A condition that stays true is repeated at most every `repeat_minutes`; when it clears, the
// next occurrence alerts at once.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/money.h"
#include "catalog/offer.h"
#include "meter/sample.h"

namespace gpuplan {

struct AlertRules {
  double idle_minutes = 30;
  double low_util_percent = 5;
  double low_util_minutes = 30;
  double throttle_minutes = 5;
  double repeat_minutes = 60;
  // A condition's stretch ends where its GPU was not observed for longer than this (the agent
  // was down: not billed on hourly offers, docs/meter.md §7, and unknown on the others); the
  // next observation starts a new stretch. 2.5 minutes: a tick a minute (the minute roll-ups a
  // stored period replays) may miss one; the agent sets 2.5 intervals when sampling slower.
  double max_gap_minutes = 2.5;
  // Price of one billed GPU-hour (the offer's instance price / its GPUs): alerts name the money
  // per hour an idle card costs. Absent: the alert says the price is unknown.
  std::optional<Money> gpu_hour_price;
  // The offer's night window (on demand and spot offers; catalog/offer.h): inside it a GPU-hour costs
  // gpu_hour_price x its factor. Hours of the day are local, in `price_zone`
  // (the offers file's time zone).
  std::optional<NightDiscount> night;
  Zone price_zone;

  // The price of one GPU-hour at `time` (the night window applied); nullopt without a price.
  std::optional<Money> GpuHourPriceAt(UtcMillis time) const;
  // What one GPU billed from `from` to `to` costs: each part of an hour at that hour's price.
  std::optional<Money> GpuMoneyBetween(UtcMillis from, UtcMillis to) const;
  std::optional<Money> monthly_budget;
  std::vector<double> budget_fractions = {0.8, 1.0};
};

// Reads the `rules:` part of an alerts file (docs/meter-alerts.md); InputError names the file,
// line and key.
AlertRules AlertRulesFromYaml(const std::string& text, const std::string& file);

enum class AlertKind { kIdleNoProcess, kLowUtilization, kBudget, kEcc, kXid, kThrottling };
const char* ToString(AlertKind k);  // "idle_no_process", "low_utilization", "budget", ...

struct Alert {
  AlertKind kind = AlertKind::kIdleNoProcess;
  int gpu = -1;             // -1: the whole machine (budget)
  UtcMillis since{};        // when the condition began (JSON "since_ms")
  UtcMillis at{};           // when the alert was raised (JSON "at_ms")
  double minutes = 0;       // how long the condition has held at `at`
  std::optional<Money> money_per_hour;  // what the condition costs while it lasts
  std::optional<Money> money;           // budget: the projection; idle: the money so far
  std::string severity;     // "warning" or "critical"
  std::string summary;      // one line for a log or a chat message
  bool repeat = false;      // a reminder of a condition already alerted
  // "" for an alert; "end" or "digest" for those notifications of the live agent (NoticeAlert)
  std::string notice;
};

// What a team is sent (docs/meter-alerts.md, "Incidents and the digest"): the alerts of one
// condition (kind, GPU, since) are one incident with a start, escalations (a higher severity;
// an idle or low-use condition reaching 4 h and 24 h) and an end, and each local day that saw an
// incident gets one digest line; the hourly reminders ("still") are not sent on their own.
struct AlertNotification {
  std::string type;          // "start", "escalation", "end" or "digest"
  UtcMillis at{};
  std::optional<AlertKind> kind;  // none for a digest
  int gpu = -1;
  UtcMillis since{};
  std::string severity;
  double minutes = 0;        // how long the condition had held (end: at least)
  std::optional<Money> money;  // lost so far (idle, low use; end: at least)
  std::string summary;
};
// One incident's state as its alerts arrive: whether the next alert is sent (its start, or an
// escalation: a higher severity, or an idle or low-use incident reaching 4 h or 24 h). The live
// agent sends its webhooks through it; GroupAlertNotifications applies the same rule.
struct IncidentState {
  bool seen = false;
  int rank = 0;        // the highest severity so far (1 warning, 2 critical)
  double minutes = 0;  // the longest duration alerted so far
};
bool SendAndUpdate(const Alert& a, IncidentState& s);

// The end of an idle or low-use incident (`first` and `last` its first and last alert) at
// `end`. `exact`: the condition is known to have cleared at `end` (the live agent, at the tick
// it cleared): the duration from its start and the money from the rules' price, night window
// applied. Otherwise (a replay of alerts) `end` is the latest it can be and the figures are the
// last alert's, "at least".
AlertNotification IncidentEnd(const Alert& first, const Alert& last, UtcMillis end, bool exact,
                              const AlertRules& rules, const Zone& zone);
// The digest of one local day (days since 1970-01-01 in the zone) from the alerts raised that
// day, sent at `at`: incidents with alerts, new ones, and the money lost to idle and low use.
AlertNotification DayDigest(LocalDay local_day, const std::vector<const Alert*>& day_alerts, UtcMillis at);
// A notification as the webhook sender carries it (`notice` "end" or "digest").
Alert NoticeAlert(const AlertNotification& n);

// `to`: where the alerts stop (an incident whose last reminder is within repeat_minutes of it
// may still be open: no end). An end's time is the latest it can be: the condition cleared after
// its last reminder and before the next one was due.
std::vector<AlertNotification> GroupAlertNotifications(const std::vector<Alert>& alerts, UtcMillis to,
                                                       const AlertRules& rules, const Zone& zone);

// An alert's own fields as JSON (docs/meter-alerts.md "generic" body): kind, severity, gpu (null for
// the budget), since_ms, at_ms, minutes, money_per_hour and money ({amount, currency} or null),
// summary, repeat. The webhook's generic body and `meter alerts --json` both start from it.
nlohmann::json AlertFieldsJson(const Alert& a);

// The clock events that count as throttling (docs/meter-alerts.md): hardware slowdown, software
// and hardware thermal, power brake.
extern const uint64_t kAlertThrottleReasons;

// What the rules judge of one GPU at one moment: whether each condition holds, and what the
// alert lines name. ObserveGpu derives it from a tick; a replay of the store's minute roll-ups
// (alert_replay.h) sets it from a minute's sums.
struct AlertGpuState {
  int gpu = 0;
  UtcMillis time{};
  bool idle_no_process = false;   // billed, and no process on the GPU
  bool low_utilization = false;   // billed, processes on it, utilisation measured and under the limit
  uint64_t throttle_reasons = 0;  // of kAlertThrottleReasons, while busy; 0: not throttled
  int processes = 0;
  std::optional<int> temperature;  // C, for the throttling line
};

// What the agent knows about one GPU at one tick.
struct AlertGpuTick {
  GpuSample sample;
  int processes = 0;                            // processes NVML lists on the GPU
  bool billed = true;                           // the instance is up and billed
  std::optional<uint64_t> ecc_uncorrected;      // cumulative count, as NVML gives it
  std::vector<int> xids;                        // XID events seen since the last tick
};

class AlertEngine {
 public:
  explicit AlertEngine(AlertRules rules);

  // One tick of one GPU; returns the alerts due now (usually none).
  std::vector<Alert> ObserveGpu(const AlertGpuTick& tick);
  // The rules' view of a tick (ObserveGpu is ObserveState(StateOf(tick)) plus the ECC and XID
  // events), and a state fed directly (a replay of minute roll-ups).
  AlertGpuState StateOf(const AlertGpuTick& tick) const;
  std::vector<Alert> ObserveState(const AlertGpuState& state);
  // The conditions that hold now (GPU, since when): a replay that starts late extends its
  // start while a condition holds from its first tick (alert_replay.h).
  std::vector<std::pair<int, UtcMillis>> Holding() const;
  // Whether the condition of `kind` on `gpu` that began at `since` still holds.
  bool Holds(AlertKind kind, int gpu, UtcMillis since) const;
  // The month's cost so far and its projection to the month's end, at `time`; `month` names
  // the calendar month ("2026-12") so each threshold alerts once per month.
  std::vector<Alert> ObserveBudget(UtcMillis time, const std::string& month, const Money& spent,
                                   const Money& projected);

  const AlertRules& rules() const { return rules_; }

 private:
  struct Condition {
    std::optional<UtcMillis> since;    // the condition holds since then
    std::optional<UtcMillis> alerted;  // last alert of this run of the condition
    std::optional<UtcMillis> last;     // the latest observation it held at
  };
  std::vector<Alert> Track(Condition& c, bool holds, UtcMillis now, double after_minutes, Alert proto);

  AlertRules rules_;
  std::map<std::tuple<int, AlertKind>, Condition> conditions_;
  std::map<int, uint64_t> ecc_seen_;
  std::map<std::string, double> budget_alerted_;  // month -> highest fraction alerted
};

}  // namespace gpuplan
