#include "meter/monitor.h"

#include <algorithm>
#include <utility>

#include "meter/rightsize.h"
#include "read/file_text.h"

namespace gpuplan {

MeterMonitorOptions LoadMeterMonitorOptions(const std::string& path) {
  const std::string text = ReadFileText(path);
  MeterMonitorOptions o;
  o.rules = AlertRulesFromYaml(text, path);
  o.webhooks = WebhookTargetsFromYaml(text, path);
  return o;
}

AlertRules PricedAlertRules(AlertRules rules, const Offer& offer, const OfferSet& offers, UtcMillis time) {
  if (!rules.gpu_hour_price) {
    const LocalHour local_hour = offers.zone.LocalHourOf(time);
    const bool hourly = offer.mode == BillingMode::kOnDemand || offer.mode == BillingMode::kSpot;
    if (hourly) {
      // The day price (add-on fees included); the night window is applied hour by hour.
      rules.gpu_hour_price = Money{offer.price * (1.0 + offer.addon_fee_ratio) / std::max(1, offer.gpus_per_instance),
                                   offers.currency};
      rules.night = offer.night;
    } else {
      rules.gpu_hour_price = Money{OfferGpuHourPrice(offer, local_hour), offers.currency};
    }
    rules.price_zone = offers.zone;
  }
  return rules;
}

MeterMonitor::MeterMonitor(MeterMonitorOptions options, MeterObserver* next, std::function<void(const std::string&)> log)
    : options_(std::move(options)),
      next_(next),
      log_(std::move(log)),
      engine_(options_.rules),
      sender_(options_.webhooks, options_.sender, log_) {
  metrics_.SetPricing(options_.rules);
  metrics_.SetBudget(options_.rules.monthly_budget);
}

void MeterMonitor::SetBudgetProbe(BudgetProbe probe, std::string currency, double every_seconds) {
  probe_ = std::move(probe);
  currency_ = std::move(currency);
  probe_every_seconds_ = every_seconds;
}

void MeterMonitor::Raise(Alert a) {
  metrics_.ObserveAlert(a);
  if (log_) log_("alert: " + a.summary);
  // Webhooks get an incident's start and escalations, not every reminder (docs/meter-alerts.md,
  // "Incidents and the digest"); the log and the metrics keep every alert.
  OpenIncident& incident = incidents_[std::make_tuple(static_cast<int>(a.kind), a.gpu, a.since)];
  if (SendAndUpdate(a, incident.state)) {
    sender_.Send(a);
  }
  if (a.kind == AlertKind::kIdleNoProcess || a.kind == AlertKind::kLowUtilization) {
    if (!incident.first) incident.first = a;
    incident.last = a;
  }
  day_alerts_.push_back(a);
  alerts_.push_back(std::move(a));
}

void MeterMonitor::Notify(const AlertNotification& n) {
  if (log_) log_(n.type + ": " + n.summary);
  sender_.Send(NoticeAlert(n));
}

void MeterMonitor::SendEnds(UtcMillis time) {
  const AlertRules& rules = engine_.rules();
  for (auto& [key, incident] : incidents_) {
    if (incident.ended || !incident.first) continue;
    const Alert& first = *incident.first;
    if (!engine_.Holds(first.kind, first.gpu, first.since)) {
      incident.ended = true;
      Notify(IncidentEnd(first, *incident.last, time, /*exact=*/true, rules, rules.price_zone));
    }
  }
  std::erase_if(incidents_, [](const auto& kv) { return kv.second.ended; });
}

void MeterMonitor::SendDigestOnANewDay(UtcMillis time) {
  const Zone& zone = engine_.rules().price_zone;
  const LocalDay day = zone.LocalDayOf(time);
  if (day_ && day > *day_) {
    if (!day_alerts_.empty()) {
      std::vector<const Alert*> list;
      for (const Alert& a : day_alerts_) list.push_back(&a);
      Notify(DayDigest(*day_, list, zone.StartOf(*day_ + date::days{1})));
    }
    day_alerts_.clear();
  }
  day_ = day;
}

void MeterMonitor::OnStart(const std::string& source, const TraceHeader& machine) {
  metrics_.SetHost(machine.host);
  interval_seconds_ = machine.interval_seconds > 0 ? machine.interval_seconds : 1;
  for (const auto& g : machine.gpus) {
    metrics_.SetGpuIdentity(g.index, g.uuid.value_or(""), g.name.value_or(""), "");
  }
  if (next_ != nullptr) next_->OnStart(source, machine);
}

void MeterMonitor::OnTick(const TraceStep& step, int64_t tick) {
  // Each sample stands for the time since the previous tick (the first for one interval).
  const double interval =
      last_ && step.time > *last_ ? static_cast<double>((step.time - *last_).count()) / 1000 : interval_seconds_;
  last_ = step.time;
  SendDigestOnANewDay(step.time);  // before this tick's alerts, which belong to the new day
  for (const GpuSample& s : step.gpus) {
    int processes = 0;
    for (const ProcessSample& p : step.processes) {
      processes += p.gpu == s.gpu ? 1 : 0;
    }
    metrics_.ObserveGpu(s, processes, true, interval);
    AlertGpuTick t;
    t.sample = s;
    t.processes = processes;
    for (const GpuHealthSample& h : step.health) {
      if (h.gpu == s.gpu) {
        t.ecc_uncorrected = h.ecc_uncorrected;
        t.xids = h.xids;
        metrics_.ObserveHealth(h);
      }
    }
    for (Alert& a : engine_.ObserveGpu(t)) {
      Raise(std::move(a));
    }
  }
  SendEnds(step.time);  // after the engine saw this tick: the conditions that cleared at it
  if (probe_ && (!probed_ || static_cast<double>((step.time - *probed_).count()) >= probe_every_seconds_ * 1000)) {
    probed_ = step.time;
    if (const auto p = probe_(step.time)) {
      const Money spent{p->so_far, currency_}, projected{p->projected, currency_};
      metrics_.ObserveMonth(spent, projected);
      for (Alert& a : engine_.ObserveBudget(step.time, p->month, spent, projected)) {
        Raise(std::move(a));
      }
    }
  }
  if (next_ != nullptr) next_->OnTick(step, tick);
}

void MeterMonitor::OnStoreBehind(const FlushStatus& status) {
  metrics_.ObserveStore(status.buffered, false);
  if (next_ != nullptr) next_->OnStoreBehind(status);
}

void MeterMonitor::OnStoreCaughtUp(const FlushStatus& status) {
  metrics_.ObserveStore(status.buffered, true);
  if (next_ != nullptr) next_->OnStoreCaughtUp(status);
}

void MeterMonitor::OnMessage(const std::string& line) {
  if (next_ != nullptr) next_->OnMessage(line);
}

void MeterMonitor::OnStop(const MeterRunSummary& summary) {
  if (next_ != nullptr) next_->OnStop(summary);
}

}  // namespace gpuplan
