#include "io/meter_alerts_text.h"

#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "core/civil.h"
#include "core/money.h"
#include "io/table.h"
#include "io/text_lang.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string HourText(int64_t ms, int zone) {
  return FormatLocalHour(FloorDiv(ms, kMillisecondsPerHour) + zone / 60) + FormatUtcOffset(zone);
}

std::string MinuteText(int64_t ms, int zone) {
  return FormatLocalMinute(FloorDiv(ms, kMillisecondsPerMinute) + zone) + FormatUtcOffset(zone);
}

std::string Hours(double h) { return h >= 9.95 || h == 0 ? fmt::format("{:.0f}", h) : fmt::format("{:.1f}", h); }

}  // namespace

void MeterAlertsToText(std::ostream& os, const MeterAlerts& a) {
  const int zone = a.utc_offset_minutes;
  std::map<std::string, int> counts;
  for (const Alert& x : a.alerts) {
    ++counts[ToString(x.kind)];
  }
  std::string by_kind;
  for (const auto& [kind, n] : counts) {
    by_kind += (by_kind.empty() ? "" : ", ") + fmt::format("{} {}", n, kind);
  }
  os << fmt::format("meter alerts {} .. {}: {} alert{}{}\n", HourText(a.from_ms, zone), HourText(a.to_ms, zone),
                    a.alerts.size(), a.alerts.size() == 1 ? "" : "s", by_kind.empty() ? "" : " (" + by_kind + ")");
  const AlertRules& r = a.rules;
  os << fmt::format("rules: idle {:g} min, under {:g}% utilisation {:g} min, throttling {:g} min, repeat every {:g} min",
                    r.idle_minutes, r.low_util_percent, r.low_util_minutes, r.throttle_minutes, r.repeat_minutes);
  if (r.gpu_hour_price) {
    os << fmt::format(", {:.2f} {}/GPU-hour", r.gpu_hour_price->amount, r.gpu_hour_price->currency);
  }
  if (r.monthly_budget) {
    os << ", budget " << r.monthly_budget->Format() << " a month";
  }
  os << (a.offer ? " (offer " + *a.offer + ")\n" : "\n");
  for (const Alert& x : a.alerts) {
    os << fmt::format("{}  {:<8} {}{}\n", MinuteText(x.at_ms, zone), x.severity, SayMessage(x.summary),
                      x.repeat ? " (still)" : "");
  }
  for (const auto& n : a.notes) {
    os << "note: " << SayMessage(n) << "\n";
  }
}

void MeterTimelineToText(std::ostream& os, const MeterTimeline& t) {
  const int zone = t.utc_offset_minutes;
  os << fmt::format("meter timeline {} .. {}, one slot per {}\n", HourText(t.from_ms, zone), HourText(t.to_ms, zone),
                    t.step);
  std::vector<Column> cols = {{"from", 22}, {"busy h", 8, Align::kRight}, {"idle h", 8, Align::kRight}};
  if (t.priced) {
    cols.push_back({"money", 14, Align::kRight});
    cols.push_back({"idle money", 14, Align::kRight});
  }
  const Table table(cols);
  table.PrintHeader(os);
  for (const auto& s : t.slots) {
    std::vector<std::string> cells = {HourText(s.from_ms, zone), Hours(s.total.busy_hours), Hours(s.total.idle_hours)};
    if (t.priced) {
      cells.push_back(Money{s.total.money, t.currency}.Format());
      cells.push_back(Money{s.total.idle_money, t.currency}.Format());
    }
    table.PrintRow(os, cells);
  }
}

}  // namespace gpuplan
