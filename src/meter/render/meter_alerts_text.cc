#include "meter/render/meter_alerts_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "format/money.h"
#include "format/numbers.h"
#include "format/shown.h"
#include "format/table.h"
#include "format/text_lang.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {


}  // namespace

void MeterAlertsToText(std::ostream& os, const MeterAlerts& a) {
  const Zone& zone = a.zone;
  std::map<std::string, int> counts;
  for (const Alert& x : a.alerts) {
    ++counts[ToString(x.kind)];
  }
  std::string by_kind;
  for (const auto& [kind, n] : counts) {
    by_kind += (by_kind.empty() ? "" : ", ") + fmt::format("{} {}", n, Say("alert." + kind, kind));
  }
  os << SayFormat("cli.meter.alerts_head", "meter alerts {} .. {}: {} alert{}{}",
                  {FormatZonedHour(zone, a.from), FormatZonedHour(zone, a.to), std::to_string(a.alerts.size()),
                   a.alerts.size() == 1 ? "" : "s", by_kind.empty() ? "" : " (" + by_kind + ")"})
     << "\n";
  const AlertRules& r = a.rules;
  const auto g = [](double v) { return fmt::format("{:g}", v); };
  os << SayFormat("cli.meter.alerts_rules", "rules: idle {} min, under {}% utilisation {} min, throttling {} min, repeat every {} min",
                  {g(r.idle_minutes), g(r.low_util_percent), g(r.low_util_minutes), g(r.throttle_minutes), g(r.repeat_minutes)});
  if (r.gpu_hour_price) {
    os << SayFormat("cli.meter.alerts_price", ", {} {}/GPU-hour",
                    {fmt::format("{:.2f}", r.gpu_hour_price->amount), r.gpu_hour_price->currency});
    if (r.night) {
      os << SayFormat("cli.meter.alerts_night", " ({}-{} night x{})",
                      {FormatTimeOfDay(r.night->from_minute), FormatTimeOfDay(r.night->to_minute), g(r.night->factor)});
    }
  }
  if (r.monthly_budget) {
    os << SayFormat("cli.meter.alerts_budget", ", budget {} a month", {FormatMoney(*r.monthly_budget)});
  }
  os << (a.offer ? SayFormat("cli.meter.alerts_offer", " (offer {})", {Shown(*a.offer)}) : std::string()) << "\n";
  for (const Alert& x : a.alerts) {
    const std::string severity = Say("cli.meter.severity." + x.severity, x.severity);
    os << FormatZonedMinute(zone, x.at) << "  " << severity
       << std::string(static_cast<std::size_t>(std::max<int64_t>(1, 9 - DisplayWidth(severity))), ' ')
       << Shown(SayMessage(x.summary)) << (x.repeat ? Say("cli.meter.alerts_still", " (still)") : "") << "\n";
  }
  // What would be sent: incidents (start, escalation, end) and a digest a day, not every reminder.
  std::size_t incidents = 0;
  for (const AlertNotification& n : a.notifications) {
    incidents += n.type == "start" ? 1 : 0;
  }
  if (!a.notifications.empty()) {
    os << SayMessage(fmt::format("{} alerts in {} incidents: {} notifications to send (start, escalation, end, a "
                                 "daily digest)",
                                 a.alerts.size(), incidents, a.notifications.size()))
       << "\n";
    for (const AlertNotification& n : a.notifications) {
      const std::string type = Say("cli.meter.notification." + n.type, n.type);
      os << FormatZonedMinute(zone, n.at) << "  " << type
         << std::string(static_cast<std::size_t>(std::max<int64_t>(1, 11 - DisplayWidth(type))), ' ')
         << Shown(SayMessage(n.summary)) << "\n";
    }
  }
  for (const auto& n : a.notes) {
    os << Say("cli.note", "note: ") << Shown(SayMessage(n)) << "\n";
  }
}

void MeterTimelineToText(std::ostream& os, const MeterTimeline& t) {
  const Zone& zone = t.zone;
  os << SayFormat("cli.meter.timeline_head", "meter timeline {} .. {}, one slot per {}",
                  {FormatZonedHour(zone, t.from), FormatZonedHour(zone, t.to), Say("cli.meter.step." + t.step, t.step)})
     << "\n";
  std::vector<Column> cols = {{Say("cli.meter.col.from", "from"), 22},
                              {Say("cli.meter.col.busy", "busy h"), 8, Align::kRight},
                              {Say("cli.meter.col.idle", "idle h"), 8, Align::kRight}};
  if (t.priced) {
    cols.push_back({Say("cli.meter.col.money", "money"), 14, Align::kRight});
    cols.push_back({Say("cli.meter.col.idle_money", "idle money"), 14, Align::kRight});
  }
  const Table table(cols);
  table.PrintHeader(os);
  for (const auto& s : t.slots) {
    std::vector<std::string> cells = {FormatZonedHour(zone, s.from), FormatHours(s.total.busy_hours),
                                      FormatHours(s.total.idle_hours)};
    if (t.priced) {
      cells.push_back(FormatMoney(s.total.money, t.currency));
      cells.push_back(FormatMoney(s.total.idle_money, t.currency));
    }
    table.PrintRow(os, cells);
  }
}

}  // namespace gpuplan
