#include "cost/render/cost_json.h"

#include "format/numbers.h"
#include "read/time_text.h"

namespace gpuplan {

namespace {

nlohmann::json ReservedToJson(const std::map<std::string, int64_t>& reserved) {
  nlohmann::json r = nlohmann::json::array();
  for (const auto& [id, n] : reserved) {
    r.push_back({{"offer", id}, {"instances", n}});
  }
  return r;
}

// `link`: null without a required link speed.
nlohmann::json LinkToJson(const std::optional<LinkRequirement>& link, const std::string& currency) {
  if (!link) {
    return nullptr;
  }
  nlohmann::json bought = nlohmann::json::array();
  for (const auto& b : link->bought) {
    bought.push_back({{"offer", b.offer},
                      {"from_gbps", b.from_gbps},
                      {"gbps", b.gbps},
                      {"price_per_month", b.price_per_month},
                      {"currency", currency}});
  }
  nlohmann::json left = nlohmann::json::array();
  for (const auto& l : link->left_out) {
    left.push_back({{"offer", l.offer}, {"link_gbps", OptionalToJson(l.link_gbps)}, {"why", l.why}});
  }
  return {{"gbps", link->gbps}, {"upgrades_bought", bought}, {"left_out", left}};
}

}  // namespace

nlohmann::json CostItemsToJson(const CostItems& c, const std::string& currency) {
  return {{"reserved", c.reserved},
          {"on_demand", c.on_demand},
          {"spot", c.spot},
          {"stopped_instances", c.stopped},
          {"recreate", c.recreate},
          {"storage_and_bandwidth", c.fixed_fees},
          {"egress", c.egress},
          {"addons_included", c.addons_included},
          {"link_upgrades_included", c.link_upgrades_included},
          {"subsidies", c.subsidies},
          {"total", c.Total()},
          {"currency", currency}};
}

nlohmann::json PlanToJson(const Plan& p, const std::string& currency) {
  nlohmann::json terms = nlohmann::json::array();
  for (const auto& t : p.reserved_terms) {
    terms.push_back({{"offer", t.offer},
                     {"start", FormatLocalHour(t.start)},
                     {"end", FormatLocalHour(t.end)},
                     {"instances", t.instances},
                     {"after_trace", t.after_trace}});
  }
  double od = 0, sp = 0;
  for (const auto& [id, h] : p.on_demand_gpu_hours) od += h;
  for (const auto& [id, h] : p.spot_gpu_hours) sp += h;
  return {{"feasible", p.feasible},
          {"total_cost", p.cost.Total()},
          {"currency", currency},
          {"reserved", ReservedToJson(p.reserved)},
          {"reserved_terms", terms},
          {"on_demand_gpu_hours", od},
          {"on_demand_by_offer", p.on_demand_gpu_hours},
          {"spot_gpu_hours", sp},
          {"spot_by_offer", p.spot_gpu_hours},
          {"deferred_gpu_hours", p.deferred_gpu_hours},
          {"max_gpus", p.max_gpus ? nlohmann::json(*p.max_gpus) : nlohmann::json()},
          {"subsidies", p.subsidies},
          {"kept_idle_instance_hours", p.kept_idle_instance_hours},
          {"releases", p.releases},
          {"egress_gb", p.egress_gb},
          {"egress_price_per_gb", p.egress_price_per_gb},
          {"note", p.note},
          {"cost", CostItemsToJson(p.cost, currency)},
          {"solver", {{"name", "GLPK glp_intopt"}, {"status", p.solver_status}, {"variables", p.variables},
                      {"integer_variables", p.integer_variables}, {"constraints", p.constraints}}}};
}

nlohmann::json UsageToJson(const UsageTrace& u) {
  return {{"start", FormatLocalHour(u.start_hour)},
          {"end", FormatLocalHour(u.EndHour())},
          {"utc_offset", FormatUtcOffsetAt(u.zone, u.start_hour)},
          {"hours", u.hours.size()},
          {"gpu_hours", u.TotalGpuHours()},
          {"peak_gpus", u.Peak()},
          {"note", u.note}};
}

nlohmann::json BreakevenToJson(const BreakevenResult& b) {
  nlohmann::json j = {{"currency", b.offers.currency},
                      {"month", b.month},
                      {"month_hours", b.month_hours},
                      {"pairs", nlohmann::json::array()},
                      {"series", nlohmann::json::array()},
                      {"notes", b.notes}};
  for (std::size_t i = 0; i < b.pairs.size(); ++i) {
    const BreakevenPair& p = b.pairs[i];
    nlohmann::json measured_side = nlohmann::json::array();
    if (b.measured) {
      for (std::size_t k = 0; k < b.measured->levels.size(); ++k) {
        measured_side.push_back(
            {{"gpu", k + 1}, {"hours_per_month", b.measured->levels[k]}, {"cheaper", b.measured->cheaper[i][k]}});
      }
    }
    j["pairs"].push_back({{"measured", measured_side},
                          {"gpu", p.gpu},
                          {"from_mode", ToString(p.from->mode)},
                          {"to_mode", ToString(p.to->mode)},
                          {"from_offer", p.from->id},
                          {"to_offer", p.to->id},
                          {"hours_per_month", OptionalToJson(p.hours_per_month)},
                          {"daytime_hours_per_month", OptionalToJson(p.daytime_hours_per_month)},
                          {"note", p.note}});
  }
  for (const auto& c : b.curves) {
    nlohmann::json pts = nlohmann::json::array();
    for (const auto& pt : c.points) {
      pts.push_back({{"hours", pt.hours}, {"cost_per_gpu", pt.cost_per_gpu}});
    }
    j["series"].push_back(
        {{"offer", c.offer->id}, {"mode", ToString(c.offer->mode)}, {"gpu", c.offer->gpu->name}, {"points", pts}});
  }
  if (b.measured) {
    j["usage"] = {{"start", FormatLocalHour(b.measured->usage.start_hour)},
                  {"hours", b.measured->usage.hours.size()},
                  {"note", b.measured->usage.note},
                  {"averaged_to_month", b.measured->scaled}};
  }
  return j;
}

nlohmann::json CompareToJson(const CompareResult& c) {
  nlohmann::json j = {{"currency", c.currency},
                      {"usage", UsageToJson(c.usage)},
                      {"link", LinkToJson(c.link, c.currency)},
                      {"strategies", nlohmann::json::object()}};
  for (const auto& [mode, p] : c.strategies) {
    j["strategies"][mode] = PlanToJson(p, c.currency);
  }
  if (!c.by.empty()) {
    j["by"] = c.by;
    j["groups"] = nlohmann::json::array();
    int rank = 0;
    for (const auto& g : c.groups) {
      nlohmann::json e = PlanToJson(g.plan, c.currency);
      e["key"] = g.key;
      e["offers"] = g.offers;
      e["rank"] = g.plan.feasible ? nlohmann::json(++rank) : nlohmann::json();
      j["groups"].push_back(std::move(e));
    }
  }
  return j;
}

nlohmann::json OptimizeToJson(const OptimizeResult& o) {
  nlohmann::json j = PlanToJson(o.plan, o.currency);
  j["usage"] = UsageToJson(o.usage);
  j["link"] = LinkToJson(o.link, o.currency);
  j["pure_strategies"] = nlohmann::json::object();
  j["savings"] = nlohmann::json::object();
  for (const auto& [mode, p] : o.pure) {
    if (p.feasible) {
      j["pure_strategies"][mode] = p.cost.Total();
    }
  }
  for (const auto& [mode, s] : o.savings) {
    j["savings"][mode] = OptionalToJson(s);
  }
  j["sensitivity"] = {
      {"usage_minus_20pct", {{"total_cost", o.usage_minus.cost.Total()}, {"reserved", ReservedToJson(o.usage_minus.reserved)}}},
      {"usage_plus_20pct", {{"total_cost", o.usage_plus.cost.Total()}, {"reserved", ReservedToJson(o.usage_plus.reserved)}}}};
  return j;
}

nlohmann::json TcoToJson(const TcoJobResult& r) {
  const TcoResult& t = r.tco;
  nlohmann::json months = nlohmann::json::array();
  for (const auto& m : t.months) {
    months.push_back({{"month", m.month}, {"buy", m.buy_cumulative}, {"rent", m.rent_cumulative}});
  }
  return {{"currency", r.currency},
          {"horizon_months", t.horizon_months},
          {"link", LinkToJson(r.link, r.currency)},
          {"buy",
           {{"total", t.buy_total},
            {"gpu", t.buy_gpu},
            {"gpus", t.gpus_bought},
            {"speed_ratio", t.speed_ratio},
            {"speed_basis", r.speed_basis},
            {"peak_rent", t.peak_rent},
            {"capital", t.capital},
            {"resale_at_horizon", t.resale_at_horizon},
            {"power", t.power},
            {"room_and_cooling", t.room},
            {"operations", t.operations},
            {"failures", t.failures}}},
          {"rent", PlanToJson(t.rent_plan, r.currency)},
          {"cheaper", r.BuyIsCheaper() ? "buy" : "rent"},
          {"buy_wins_from_month", OptionalToJson(t.buy_wins_from_month)},
          {"breakeven_utilisation", OptionalToJson(t.breakeven_utilisation)},
          {"months", months}};
}

}  // namespace gpuplan
