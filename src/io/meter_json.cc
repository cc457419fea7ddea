#include "io/meter_json.h"

#include "core/civil.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

std::string TimeText(int64_t ms, int zone) {
  return FormatLocalHour(FloorDiv(ms, kMillisecondsPerHour) + zone / 60) + FormatUtcOffset(zone);
}

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
                      {"gpu", g.gpu ? nlohmann::json(*g.gpu) : nlohmann::json(nullptr)},
                      {"uuid", g.uuid ? nlohmann::json(*g.uuid) : nlohmann::json(nullptr)},
                      {"observed_hours", g.observed_hours},
                      {"busy_hours", g.busy_hours},
                      {"active_hours", g.active_hours},
                      {"idle_hours", g.idle_hours},
                      {"utilisation", util},
                      {"utilisation_unmeasured_hours", g.utilisation.unmeasured_hours},
                      {"energy_kwh", g.energy_kwh ? nlohmann::json(*g.energy_kwh) : nlohmann::json(nullptr)},
                      {"processes", g.processes},
                      {"billed_hours", MoneyOrNull(g.billed_hours, priced)},
                      {"idle_billed_hours", MoneyOrNull(g.idle_billed_hours, priced)},
                      {"money", MoneyOrNull(g.money, priced)},
                      {"idle_money", MoneyOrNull(g.idle_money, priced)},
                      {"stopped_money", MoneyOrNull(g.stopped_money, priced)}};
  return j;
}

nlohmann::json MonthProjectionToJson(const MonthProjection& p, int zone) {
  return {{"month", p.month},
          {"from", TimeText(p.from_ms, zone)},
          {"to", TimeText(p.to_ms, zone)},
          {"month_end", TimeText(p.month_end_ms, zone)},
          {"so_far", p.so_far},
          {"per_hour", p.per_hour},
          {"remaining_hours", p.remaining_hours},
          {"projected", p.projected}};
}

nlohmann::json MeterReportToJson(const MeterReport& r) {
  const int zone = r.utc_offset_minutes;
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
                         {"gpu_hour_price", o.gpu_hour_price ? nlohmann::json(*o.gpu_hour_price) : nlohmann::json(nullptr)},
                         {"offer", o.offer_id ? nlohmann::json(*o.offer_id) : nlohmann::json(nullptr)},
                         {"money_saved", o.money_saved ? nlohmann::json(*o.money_saved) : nlohmann::json(nullptr)}});
    }
    right_sizing.push_back({{"job", j.job},
                            {"gpu", j.gpu},
                            {"card", j.card},
                            {"hours", j.hours},
                            {"peak_memory_bytes", j.peak_memory},
                            {"peak_utilisation", j.peak_utilisation},
                            {"mean_utilisation", j.mean_utilisation},
                            {"gpu_hour_price", j.gpu_hour_price ? nlohmann::json(*j.gpu_hour_price) : nlohmann::json(nullptr)},
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
             {"price", r.offer->price}};
  }
  return {{"db", r.db},
          {"from", TimeText(r.from_ms, zone)},
          {"to", TimeText(r.to_ms, zone)},
          {"utc_offset", FormatUtcOffset(zone)},
          {"hours", (r.to_ms - r.from_ms) / kMillisecondsPerHour},
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

}  // namespace gpuplan
