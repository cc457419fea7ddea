#include "io/meter_text.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "core/civil.h"
#include "core/money.h"
#include "io/table.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string TimeText(int64_t ms, int zone) {
  return FormatLocalHour(FloorDiv(ms, kMillisecondsPerHour) + zone / 60) + FormatUtcOffset(zone);
}

std::string Hours(double h) { return h >= 9.95 || h == 0 ? fmt::format("{:.0f}", h) : fmt::format("{:.1f}", h); }

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

}  // namespace

void MeterReportToText(std::ostream& os, const MeterReport& r) {
  const int zone = r.utc_offset_minutes;
  os << fmt::format("meter report {} .. {} ({} h), {} GPU{}, by {}\n", TimeText(r.from_ms, zone),
                    TimeText(r.to_ms, zone), (r.to_ms - r.from_ms) / kMillisecondsPerHour, r.gpus.size(),
                    r.gpus.size() == 1 ? "" : "s", ToString(r.by));
  if (r.offer) {
    os << fmt::format("priced with {} ({}, {} per instance-{}, {} GPU{} per instance, {} granularity, billed from {})\n",
                      r.offer->id, r.offer->mode, Money{r.offer->price, r.currency}.Format(),
                      r.offer->mode == "on_demand" || r.offer->mode == "spot" ? "hour" : "term",
                      r.offer->gpus_per_instance, r.offer->gpus_per_instance == 1 ? "" : "s", r.offer->granularity,
                      r.offer->billing_starts);
  } else {
    os << "not priced (no --offers)\n";
  }
  std::vector<Column> cols = {{"group", 20},
                              {"observed h", 10, Align::kRight},
                              {"busy h", 8, Align::kRight},
                              {"idle h", 8, Align::kRight},
                              {"util % 0/1-25/26-50/51-75/76-100", 32, Align::kRight, "  "},
                              {"kWh", 8, Align::kRight}};
  if (r.priced) {
    cols.push_back({"billed h", 9, Align::kRight});
    cols.push_back({"money", 14, Align::kRight});
    cols.push_back({"idle money", 14, Align::kRight});
  }
  const Table table(cols);
  table.PrintHeader(os);
  auto row = [&](const MeterGroup& g) {
    std::vector<std::string> cells = {g.key,
                                      Hours(g.observed_hours),
                                      Hours(g.busy_hours),
                                      Hours(g.idle_hours),
                                      Distribution(g.utilisation),
                                      g.energy_kwh ? fmt::format("{:.1f}", *g.energy_kwh) : "-"};
    if (r.priced) {
      cells.push_back(Hours(g.billed_hours));
      cells.push_back(Money{g.money, r.currency}.Format());
      cells.push_back(Money{g.idle_money, r.currency}.Format());
    }
    table.PrintRow(os, cells);
  };
  for (const auto& g : r.groups) {
    row(g);
  }
  row(r.total);
  if (r.priced && r.total.stopped_money > 0) {
    os << fmt::format("  of the money, {} are stopped-instance fees and re-creation between up periods\n",
                      Money{r.total.stopped_money, r.currency}.Format());
  }
  if (!r.idle.empty()) {
    os << (r.priced ? "idle money:\n" : "idle time:\n");
    for (const auto& s : r.idle) {
      os << "  " << s.line << "\n";
    }
  }
  if (r.projection) {
    const MonthProjection& p = *r.projection;
    os << fmt::format("month {}: {} so far ({} .. {}), {} per hour; projected {} by {}\n", p.month,
                      Money{p.so_far, r.currency}.Format(), TimeText(p.from_ms, zone), TimeText(p.to_ms, zone),
                      fmt::format("{:.2f} {}", p.per_hour, r.currency), Money{p.projected, r.currency}.Format(),
                      TimeText(p.month_end_ms, zone));
  }
  if (!r.right_sizing.empty()) {
    os << "right-sizing:\n";
    for (const auto& j : r.right_sizing) {
      os << "  " << j.line << "\n";
      for (std::size_t i = 1; i < j.options.size(); ++i) {
        os << fmt::format("    or {}: saves {}\n", j.options[i].target,
                          Money{j.options[i].money_saved.value_or(0), r.currency}.Format());
      }
    }
  }
  for (const auto& n : r.notes) {
    os << "note: " << n << "\n";
  }
}

}  // namespace gpuplan
