// Alerts over a stored period (`gpuplan meter alerts`, the usage page of `gpuplan serve`): the
// meter database replayed through the AlertEngine (alerts.h) with the rules `meter run --alerts`
// uses, so a lab sees the alerts of a week it did not watch live. docs/meter-alerts.md,
// "Alerts of a stored period".
//
// What is replayed, finest first:
//   - raw samples where the store still keeps them (48 h by default): each sample with the
//     processes stored at its time, exactly the ticks the agent fed its engine live;
//   - before them, the 1-minute roll-ups (30 days by default): one tick per GPU and minute, at
//     the minute's start, where a condition counts when it held the whole minute (idle: no
//     process row in the minute; low utilisation: a process at every sample and the highest
//     utilisation under the limit; throttling: the lowest utilisation at or above the limit and
//     a throttling clock event in the minute's mask, which ORs its samples'). A schedule that
//     changes on whole minutes gives the live alerts to the millisecond; otherwise times are to
//     the minute;
//   - hours kept only as 1-hour roll-ups are not replayed (a note says so).
// A condition that holds when the range starts is followed from where it began: the replay
// starts a day earlier, and earlier still (up to the start of the replayable data) while a
// condition holds from its first tick, so an alert in [from, to) has the `minutes`, `money` and
// `repeat` the live agent gave it.
//
// Budget alerts (rules.monthly_budget, with an offer): the month's projection (ProjectMonth, the
// report's) at each whole hour from the month's start, with the month up to that hour; each
// threshold alerts once per calendar month. The live agent asks at its first tick and every hour
// of samples after, with what its store held then, so the hour of a budget alert may differ.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/offer.h"
#include "meter/alerts.h"
#include "meter/store.h"

namespace gpuplan {

struct MeterAlertsRequest {
  std::string db;      // the meter database (opened read-only); required
  std::string from;    // ParseMeterTime (report.h); empty: 00:00 on the 1st of the month holding `to`
  std::string to;      // empty: now
  std::string offers;  // offers file: the idle money (PricedAlertRules) and the budget's projection
  std::string offer;   // offer id; empty: the file's only offer
  std::string alerts;  // alerts file (docs/meter-alerts.md): its `rules:` (webhooks are not sent)
  std::optional<UtcSeconds> now;  // tests; unset: the clock
};

struct MeterAlerts {
  std::string db;
  UtcMillis from{};  // [from, to), whole hours
  UtcMillis to{};
  Zone zone;                     // the offers' zone, else UTC
  AlertRules rules;            // as applied (with the offer's GPU-hour price)
  std::optional<std::string> offer;  // the offer's id
  // Where the replay began (before `from` when a condition held at `from`), and what it read.
  std::optional<UtcMillis> replayed_from;
  std::optional<UtcMillis> raw_from;  // from here on, raw samples; before, minute roll-ups
  std::vector<Alert> alerts;  // raised in [from, to), by time, then GPU, then kind
  // What would be sent: the alerts as incidents (start, escalation, end) and a daily digest.
  std::vector<AlertNotification> notifications;
  std::vector<std::string> notes;
};

// InputError naming --db, --from, --to, --offers, --offer or --alerts (and the file's line and
// key) for bad input; the store's errors for a missing or foreign database.
MeterAlerts RunMeterAlerts(const MeterAlertsRequest& r, const GpuCatalog& catalog);

// The replay itself over an open store: the GPU alerts raised in `range`, and with `offer` and
// a budget in the rules the budget alerts. `replayed_from` and `raw_from` (may be null) say
// what was read.
struct AlertReplay {
  std::vector<Alert> alerts;
  std::optional<UtcMillis> replayed_from;
  std::optional<UtcMillis> raw_from;
  std::optional<UtcMillis> data_from;  // the first minute that can be replayed (none: nothing)
};
AlertReplay ReplayStoredAlerts(const MeterStore& store, const AlertRules& rules, const TimeRange& range,
                               const Offer* offer = nullptr, const OfferSet* offers = nullptr);

}  // namespace gpuplan
