// What the agent does with each tick besides storing it (docs/meter-alerts.md,
// docs/meter-metrics.md): the alert engine, the webhook sender and the Prometheus state, as a
// MeterObserver that RunMeter calls and that passes every call on to the front end's observer.
// The instance counts as billed while the agent runs (the agent runs on the rented machine).
#pragma once

#include <tuple>

#include <map>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "meter/agent.h"
#include "meter/alerts.h"
#include "meter/metrics.h"
#include "meter/observed.h"
#include "meter/webhook.h"

namespace gpuplan {

struct MeterMonitorOptions {
  AlertRules rules;
  std::vector<WebhookTarget> webhooks;
  WebhookSenderOptions sender;
};

// The alerts file (docs/meter-alerts.md): rules and webhooks. InputError names file, line, key.
MeterMonitorOptions LoadMeterMonitorOptions(const std::string& path);

// The rules for a machine rented under `offer`: `rules` with the price of a billed GPU-hour set
// from the offer (its instance price per hour over its GPUs, OfferGpuHourPrice of rightsize.h, at
// the local hour of `time`, in the offers' currency) unless the alerts file sets one.
// `meter run --offers` prices its alerts so, and `meter alerts --offers` (alert_replay.h) too.
AlertRules PricedAlertRules(AlertRules rules, const Offer& offer, const OfferSet& offers, UtcMillis time);

class MeterMonitor : public MeterObserver {
 public:
  // `log` gets one line per alert and per webhook failure; `next` (may be null) every call.
  MeterMonitor(MeterMonitorOptions options, MeterObserver* next, std::function<void(const std::string&)> log);

  void OnStart(const std::string& source, const TraceHeader& machine) override;
  void OnTick(const TraceStep& step, int64_t tick) override;
  void OnStoreBehind(const FlushStatus& status) override;
  void OnStoreCaughtUp(const FlushStatus& status) override;
  void OnMessage(const std::string& line) override;
  void OnStop(const MeterRunSummary& summary) override;

  // The month's cost so far and its projection at a time, from the store and the offer
  // (the service opens the store read-only); asked at the first tick and then every
  // `every_seconds` of sample time. Feeds the budget alerts and gpuplan_month_* metrics.
  using BudgetProbe = std::function<std::optional<MonthProjection>(UtcMillis time)>;
  void SetBudgetProbe(BudgetProbe probe, std::string currency, double every_seconds = 3600);

  MeterMetrics& metrics() { return metrics_; }
  const std::vector<Alert>& alerts() const { return alerts_; }  // raised so far
  // Waits for the webhooks to be delivered (or given up), at most `seconds`.
  bool FlushWebhooks(double seconds) { return sender_.Flush(seconds); }
  WebhookSender::Stats webhook_stats() const { return sender_.stats(); }

 private:
  MeterMonitorOptions options_;
  MeterObserver* next_;
  std::function<void(const std::string&)> log_;
  AlertEngine engine_;
  // (kind, GPU, since): what was sent, and the incident's first and last alert while it is open
  struct OpenIncident {
    IncidentState state;
    std::optional<Alert> first, last;
    bool ended = false;
  };
  std::map<std::tuple<int, int, UtcMillis>, OpenIncident> incidents_;
  std::optional<LocalDay> day_;     // the local day of the last tick (the offers' zone)
  std::vector<Alert> day_alerts_;   // the alerts raised that day, for its digest
  MeterMetrics metrics_;
  WebhookSender sender_;
  std::vector<Alert> alerts_;
  double interval_seconds_ = 1;
  std::optional<UtcMillis> last_;
  BudgetProbe probe_;
  std::string currency_;
  double probe_every_seconds_ = 3600;
  std::optional<UtcMillis> probed_;
  void Raise(Alert a);
  // The incidents whose condition cleared at `time` get their end sent; a new local day sends
  // the digest of the day before (docs/meter-alerts.md, "Incidents and the digest").
  void SendEnds(UtcMillis time);
  void SendDigestOnANewDay(UtcMillis time);
  void Notify(const AlertNotification& n);
};

}  // namespace gpuplan
