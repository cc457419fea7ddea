#include "meter/render/meter_json.h"

#include "format/money.h"
#include "format/numbers.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

nlohmann::json MoneyOrNull(double v, bool priced) { return priced ? nlohmann::json(v) : nlohmann::json(nullptr); }

}  // namespace

nlohmann::json MeterGroupToJson(const MeterGroup& g, bool priced) {
  nlohmann::json util = nlohmann::json::array();
  const double observed = g.utilisation.Total();
  for (std::size_t b = 0; b < kUtilisationBuckets; ++b) {
    util.push_back({{"bucket", std::string(UtilisationBucketName(b))},
                    {"hours", g.utilisation.hours[b]},
                    {"share", observed > 0 ? g.utilisation.hours[b] / observed : 0.0}});
  }
  nlohmann::json j = {{"key", g.key},
                      {"gpu", OptionalToJson(g.gpu)},
                      {"uuid", OptionalToJson(g.uuid)},
                      {"observed_hours", g.observed_hours},
                      {"busy_hours", g.busy_hours},
                      {"active_hours", g.active_hours},
                      {"idle_hours", g.idle_hours},
                      {"utilisation", util},
                      {"utilisation_unmeasured_hours", g.utilisation.unmeasured_hours},
                      {"energy_kwh", OptionalToJson(g.energy_kwh)},
                      {"processes", g.processes},
                      {"billed_hours", MoneyOrNull(g.billed_hours, priced)},
                      {"idle_billed_hours", MoneyOrNull(g.idle_billed_hours, priced)},
                      {"money", MoneyOrNull(g.money, priced)},
                      {"idle_money", MoneyOrNull(g.idle_money, priced)},
                      {"use_money", MoneyOrNull(g.UseMoney(), priced)},
                      {"stopped_money", MoneyOrNull(g.stopped_money, priced)}};
  return j;
}

nlohmann::json MonthProjectionToJson(const MonthProjection& p, const Zone& zone) {
  return {{"month", p.month},
          {"from", FormatZonedHour(zone, p.from)},
          {"to", FormatZonedHour(zone, p.to)},
          {"month_end", FormatZonedHour(zone, p.month_end)},
          {"so_far", p.so_far},
          {"per_hour", p.per_hour},
          {"remaining_hours", p.remaining_hours},
          {"projected", p.projected},
          {"whole_term", p.whole_term}};
}

nlohmann::json MeterReportToJson(const MeterReport& r) {
  const Zone& zone = r.zone;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.groups) {
    groups.push_back(MeterGroupToJson(g, r.priced));
  }
  nlohmann::json right_sizing = nlohmann::json::array();
  for (const auto& j : r.right_sizing) {
    nlohmann::json options = nlohmann::json::array();
    for (const auto& o : j.options) {
      options.push_back({{"kind", o.kind},
                         {"target", o.target},
                         {"memory_bytes", o.memory_bytes},
                         {"compute_share", o.compute_share},
                         {"gpu_hour_price", OptionalToJson(o.gpu_hour_price)},
                         {"offer", OptionalToJson(o.offer_id)},
                         {"money_saved", OptionalToJson(o.money_saved)}});
    }
    right_sizing.push_back({{"job", j.job},
                            {"gpu", j.gpu},
                            {"card", j.card},
                            {"hours", j.hours},
                            {"peak_memory_bytes", j.peak_memory},
                            {"peak_utilisation", j.peak_utilisation},
                            {"mean_utilisation", j.mean_utilisation},
                            {"gpu_hour_price", OptionalToJson(j.gpu_hour_price)},
                            {"options", options},
                            {"line", j.line}});
  }
  nlohmann::json idle = nlohmann::json::array();
  for (const auto& s : r.idle) {
    idle.push_back({{"gpu", s.gpu}, {"hours", s.hours}, {"money", MoneyOrNull(s.money, r.priced)}, {"line", s.line}});
  }
  nlohmann::json offer = nullptr;
  if (r.offer) {
    offer = {{"id", r.offer->id},
             {"file", r.offer->file},
             {"gpu", r.offer->gpu},
             {"mode", r.offer->mode},
             {"granularity", r.offer->granularity},
             {"billing_starts", r.offer->billing_starts},
             {"gpus_per_instance", r.offer->gpus_per_instance},
             {"price", r.offer->price},
             {"day_rate", r.offer->day_rate},
             {"night_rate", OptionalToJson(r.offer->night_rate)},
             {"night_window", r.offer->night_window.empty() ? nlohmann::json() : nlohmann::json(r.offer->night_window)}};
  }
  return {{"db", r.db},
          {"from", FormatZonedHour(zone, r.from)},
          {"to", FormatZonedHour(zone, r.to)},
          {"utc_offset", FormatUtcOffset(zone.OffsetAt(r.from))},
          {"hours", (r.to - r.from) / std::chrono::hours{1}},
          {"store", r.store_from && r.store_to
                        ? nlohmann::json{{"from", FormatZonedHour(zone, *r.store_from)}, {"to", FormatZonedHour(zone, *r.store_to)}}
                        : nlohmann::json(nullptr)},
          {"by", std::string(ToString(r.by))},
          {"gpus", r.gpus},
          {"priced", r.priced},
          {"currency", r.priced ? nlohmann::json(r.currency) : nlohmann::json(nullptr)},
          {"offer", offer},
          {"groups", groups},
          {"total", MeterGroupToJson(r.total, r.priced)},
          {"idle", idle},
          {"projection", r.projection ? MonthProjectionToJson(*r.projection, zone) : nlohmann::json(nullptr)},
          {"right_sizing", right_sizing},
          {"utilisation_from_hour_means", r.utilisation_from_hour_means},
          {"notes", r.notes}};
}

nlohmann::json MeterTimelineToJson(const MeterTimeline& t) {
  const Zone& zone = t.zone;
  nlohmann::json slots = nlohmann::json::array();
  for (const auto& s : t.slots) {
    slots.push_back({{"from", FormatZonedHour(zone, s.from)},
                     {"to", FormatZonedHour(zone, s.to)},
                     {"total", MeterGroupToJson(s.total, t.priced)}});
  }
  return {{"db", t.db},
          {"from", FormatZonedHour(zone, t.from)},
          {"to", FormatZonedHour(zone, t.to)},
          {"utc_offset", FormatUtcOffset(zone.OffsetAt(t.from))},
          {"step", t.step},
          {"priced", t.priced},
          {"currency", t.priced ? nlohmann::json(t.currency) : nlohmann::json(nullptr)},
          {"slots", slots}};
}

nlohmann::json AlertToJson(const Alert& a, const Zone& zone) {
  nlohmann::json j = AlertFieldsJson(a);
  j["since"] = FormatZonedMinute(zone, a.since);
  j["at"] = FormatZonedMinute(zone, a.at);
  return j;
}

nlohmann::json MeterAlertsToJson(const MeterAlerts& m) {
  const Zone& zone = m.zone;
  const AlertRules& r = m.rules;
  nlohmann::json alerts = nlohmann::json::array();
  nlohmann::json counts = nlohmann::json::object();
  for (AlertKind k : {AlertKind::kIdleNoProcess, AlertKind::kLowUtilization, AlertKind::kThrottling,
                      AlertKind::kBudget, AlertKind::kEcc, AlertKind::kXid}) {
    counts[ToString(k)] = 0;
  }
  for (const Alert& a : m.alerts) {
    alerts.push_back(AlertToJson(a, zone));
    counts[ToString(a.kind)] = counts[ToString(a.kind)].get<int>() + 1;
  }
  auto text = [zone](const std::optional<UtcMillis>& t) {
    return t ? nlohmann::json(FormatZonedMinute(zone, *t)) : nlohmann::json(nullptr);
  };
  nlohmann::json notifications = nlohmann::json::array();
  int incidents = 0;
  for (const AlertNotification& n : m.notifications) {
    incidents += n.type == "start" ? 1 : 0;
    notifications.push_back({{"type", n.type},
                             {"at", FormatZonedMinute(zone, n.at)},
                             {"kind", n.kind ? nlohmann::json(ToString(*n.kind)) : nlohmann::json()},
                             {"gpu", n.kind && n.gpu >= 0 ? nlohmann::json(n.gpu) : nlohmann::json()},
                             {"since", n.kind ? nlohmann::json(FormatZonedMinute(zone, n.since)) : nlohmann::json()},
                             {"severity", n.severity.empty() ? nlohmann::json() : nlohmann::json(n.severity)},
                             {"minutes", n.minutes},
                             {"money", MoneyToJson(n.money)},
                             {"summary", n.summary}});
  }
  counts["incidents"] = incidents;
  counts["notifications"] = m.notifications.size();
  return {{"db", m.db},
          {"from", FormatZonedHour(zone, m.from)},
          {"to", FormatZonedHour(zone, m.to)},
          {"utc_offset", FormatUtcOffset(zone.OffsetAt(m.from))},
          {"offer", OptionalToJson(m.offer)},
          {"rules",
           {{"idle_minutes", r.idle_minutes},
            {"low_util_percent", r.low_util_percent},
            {"low_util_minutes", r.low_util_minutes},
            {"throttle_minutes", r.throttle_minutes},
            {"repeat_minutes", r.repeat_minutes},
            {"gpu_hour_price", MoneyToJson(r.gpu_hour_price)},
            {"night", r.night ? nlohmann::json{{"from_minute", r.night->from_minute.count()},
                                               {"to_minute", r.night->to_minute.count()},
                                               {"factor", r.night->factor}}
                              : nlohmann::json(nullptr)},
            {"monthly_budget", MoneyToJson(r.monthly_budget)},
            {"budget_fractions", r.budget_fractions}}},
          {"replayed_from", text(m.replayed_from)},
          {"raw_from", text(m.raw_from)},
          {"counts", counts},
          {"alerts", alerts},
          {"notifications", notifications},
          {"notes", m.notes}};
}

}  // namespace gpuplan
