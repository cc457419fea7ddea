#include "meter/render/meter_text.h"

#include <fmt/format.h>

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

// "12/3/5/30/50": the share of observed time in each utilisation bucket, in %.
std::string Distribution(const UtilisationDistribution& u) {
  const double total = u.Total();
  if (total <= 0) {
    return "-";
  }
  std::string s;
  for (std::size_t b = 0; b < kUtilisationBuckets; ++b) {
    s += (b > 0 ? "/" : "") + fmt::format("{:.0f}", 100.0 * u.hours[b] / total);
  }
  return s;
}

// A group's key: GPU indices, user, job and pod names as the terminal should get them (Shown:
// a user controls their own command line, so its control characters are escaped and a long one
// is cut); the two groups of the report's own ("total", "(no process)", "(unseen process)") in
// the text language.
std::string GroupKey(const std::string& key) {
  if (key == "total") {
    return Say("cli.meter.group.total", "total");
  }
  if (key == "(no process)") {
    return Say("cli.meter.group.no_process", key);
  }
  if (key == "(unseen process)") {
    return Say("cli.meter.group.unseen_process", key);
  }
  return Shown(key);
}

}  // namespace

void MeterReportToText(std::ostream& os, const MeterReport& r) {
  const Zone& zone = r.zone;
  const std::string by(ToString(r.by));
  os << SayFormat("cli.meter.head", "meter report {} .. {} ({} h), {} GPU{}, by {}",
                  {FormatZonedHour(zone, r.from), FormatZonedHour(zone, r.to),
                   std::to_string((r.to - r.from) / std::chrono::hours{1}), std::to_string(r.gpus.size()),
                   r.gpus.size() == 1 ? "" : "s", Say("cli.meter.by." + by, by)})
     << "\n";
  if (r.offer) {
    const bool hourly = r.offer->mode == "on_demand" || r.offer->mode == "spot";
    os << SayFormat("cli.meter.priced",
                    "priced with {} ({}, {} per instance-{}, {} GPU{} per instance, {} granularity, billed from {})",
                    {Shown(r.offer->id), Say("mode." + r.offer->mode, r.offer->mode), FormatMoney(r.offer->price, r.currency),
                     hourly ? Say("cli.meter.per_hour", "hour") : Say("cli.meter.per_term", "term"),
                     std::to_string(r.offer->gpus_per_instance), r.offer->gpus_per_instance == 1 ? "" : "s",
                     Say("cli.meter.granularity." + r.offer->granularity, r.offer->granularity),
                     Say("cli.meter.billing_starts." + r.offer->billing_starts, r.offer->billing_starts)})
       << "\n";
    // The rates the bill uses, add-ons included: by day and in the night window.
    os << "  "
       << SayMessage(r.offer->night_rate
                         ? fmt::format("billed {} per instance-{} by day, {} at night {} (add-ons included)",
                                       fmt::format("{:.4g} {}", r.offer->day_rate, r.currency),
                                       hourly ? "hour" : "term", fmt::format("{:.4g} {}", *r.offer->night_rate, r.currency),
                                       r.offer->night_window)
                         : fmt::format("billed {} per instance-{} (add-ons included)",
                                       fmt::format("{:.10g} {}", r.offer->day_rate, r.currency), hourly ? "hour" : "term"))
       << "\n";
  } else {
    os << Say("cli.meter.not_priced", "not priced (no --offers)") << "\n";
  }
  std::vector<Column> cols = {{Say("cli.meter.col.group", "group"), 20},
                              {Say("cli.meter.col.observed", "observed h"), 10, Align::kRight},
                              {Say("cli.meter.col.busy", "busy h"), 8, Align::kRight},
                              {Say("cli.meter.col.idle", "idle h"), 8, Align::kRight},
                              {Say("cli.meter.col.util", "util % 0/1-25/26-50/51-75/76-100"), 32, Align::kRight, "  "},
                              {"kWh", 8, Align::kRight}};
  if (r.priced) {
    cols.push_back({Say("cli.meter.col.billed", "billed h"), 9, Align::kRight});
    cols.push_back({Say("cli.meter.col.money", "money"), 14, Align::kRight});
    cols.push_back({Say("cli.meter.col.idle_money", "idle money"), 14, Align::kRight});
  }
  const Table table(cols);
  table.PrintHeader(os);
  auto row = [&](const MeterGroup& g) {
    std::vector<std::string> cells = {GroupKey(g.key),
                                      FormatHours(g.observed_hours),
                                      FormatHours(g.busy_hours),
                                      FormatHours(g.idle_hours),
                                      Distribution(g.utilisation),
                                      OptionalText(g.energy_kwh, [](double kwh) { return fmt::format("{:.1f}", kwh); })};
    if (r.priced) {
      cells.push_back(FormatHours(g.billed_hours));
      cells.push_back(FormatMoney(g.money, r.currency));
      cells.push_back(FormatMoney(g.idle_money, r.currency));
    }
    table.PrintRow(os, cells);
  };
  for (const auto& g : r.groups) {
    row(g);
  }
  row(r.total);
  if (r.priced && r.total.stopped_money > 0) {
    os << "  "
       << SayFormat("cli.meter.stopped_money",
                    "of the money, {} are stopped-instance fees and re-creation between up periods",
                    {FormatMoney(r.total.stopped_money, r.currency)})
       << "\n";
  }
  if (!r.idle.empty()) {
    os << (r.priced ? Say("cli.meter.idle_money", "idle money:") : Say("cli.meter.idle_time", "idle time:")) << "\n";
    for (const auto& s : r.idle) {
      os << "  " << Shown(SayMessage(s.line)) << "\n";
    }
  }
  if (r.projection) {
    const MonthProjection& p = *r.projection;
    os << SayFormat("cli.meter.projection", "month {}: {} so far ({} .. {}), {} per hour; projected {} by {}",
                    {p.month, FormatMoney(p.so_far, r.currency), FormatZonedHour(zone, p.from), FormatZonedHour(zone, p.to),
                     FormatMoneyCents(p.per_hour, r.currency), FormatMoney(p.projected, r.currency),
                     FormatZonedHour(zone, p.month_end)})
       << "\n";
    if (p.whole_term) {
      os << "  " << SayMessage("a reserved term is paid whole: the projection is the contract's bill for the month")
         << "\n";
    }
  }
  if (!r.right_sizing.empty()) {
    os << Say("cli.meter.right_sizing", "right-sizing:") << "\n";
    for (const auto& j : r.right_sizing) {
      os << "  " << Shown(SayMessage(j.line)) << "\n";
      for (std::size_t i = 1; i < j.options.size(); ++i) {
        os << "    "
           << SayFormat("cli.meter.right_sizing_or", "or {}: saves {}",
                        {Shown(SayMessage(j.options[i].target)), FormatMoney(j.options[i].money_saved.value_or(0), r.currency)})
           << "\n";
      }
    }
  }
  for (const auto& n : r.notes) {
    os << Say("cli.note", "note: ") << Shown(SayMessage(n)) << "\n";
  }
}

}  // namespace gpuplan
