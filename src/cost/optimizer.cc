// Rental mix as a MILP (docs/cost-model.md §4), solved by GLPK's branch-and-cut (glp_intopt).
#include "cost/optimizer.h"

#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <tuple>

#include "cost/billing.h"
#include "core/error.h"

namespace gpuplan {
namespace {

// One row block of the program: an hour, or a group of interchangeable hours (same demand and
// hour of day, untouched by deferral) counted `weight` times.
struct Unit {
  double weight = 1;
  int hod = 0;
  double firm = 0;
  double inter = 0;
  int hour = -1;  // trace hour when the unit is a single hour that deferral may touch
};

struct Problem {
  glp_prob* lp = glp_create_prob();
  std::vector<int> ia{0};
  std::vector<int> ja{0};
  std::vector<double> ar{0};
  ~Problem() { glp_delete_prob(lp); }
  int AddCol(double cost, bool integer, const std::string& name) {
    const int c = glp_add_cols(lp, 1);
    glp_set_col_name(lp, c, name.substr(0, 255).c_str());
    glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, c, cost);
    if (integer) {
      glp_set_col_kind(lp, c, GLP_IV);
    }
    return c;
  }
  int AddRow(int type, double lb, double ub) {
    const int r = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, r, type, lb, ub);
    return r;
  }
  void Set(int row, int col, double v) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(v);
  }
};

double ReservedTraceCost(const Offer& o, double trace_hours) {
  const double terms = std::max<double>(o.min_terms, std::ceil(trace_hours / TermHours(o.mode) - 1e-9));
  return terms * o.price * (1.0 + o.addon_fee_ratio);
}

}  // namespace

UsageTrace ScaleUsage(const UsageTrace& u, double factor) {
  UsageTrace s = u;
  for (auto& h : s.hours) {
    h.firm *= factor;
    h.interruptible *= factor;
    h.deferrable *= factor;
  }
  return s;
}

Plan OptimizeRental(const OfferSet& set, const UsageTrace& usage, const OptimizeOptions& opt) {
  Plan plan;
  const double T = static_cast<double>(usage.hours.size());
  std::vector<const Offer*> reserved, on_demand, spot;
  const Gpu* gpu = nullptr;
  for (const auto& o : set.offers) {
    if (!opt.only_offers.empty() &&
        std::find(opt.only_offers.begin(), opt.only_offers.end(), o.id) == opt.only_offers.end()) {
      continue;
    }
    if (gpu != nullptr && o.gpu != gpu) {
      throw InputError("offers for different GPUs (" + gpu->name + ", " + o.gpu->name +
                           "): choose one with --gpu",
                       set.file, o.line, "offers[" + o.id + "].gpu");
    }
    gpu = o.gpu;
    if (IsReserved(o.mode) && opt.allow_reserved) {
      reserved.push_back(&o);
    } else if (o.mode == BillingMode::kOnDemand && opt.allow_on_demand) {
      on_demand.push_back(&o);
    } else if (o.mode == BillingMode::kSpot && opt.allow_spot) {
      spot.push_back(&o);
    }
  }

  // Day-billed hourly offers pay whole days per instance: every hour must stay its own unit.
  bool day_billed = false;
  for (const Offer* o : on_demand) {
    day_billed |= o->granularity == Granularity::kDay;
  }
  for (const Offer* o : spot) {
    day_billed |= o->granularity == Granularity::kDay;
  }
  // Units: hours that deferral can touch stay single; the rest are grouped.
  std::vector<bool> single(usage.hours.size(), day_billed);
  for (std::size_t t = 0; t < usage.hours.size(); ++t) {
    const auto& h = usage.hours[t];
    if (h.deferrable > 0) {
      const std::size_t end = std::min(usage.hours.size(), t + static_cast<std::size_t>(std::max(1, h.deadline_hours)));
      for (std::size_t k = t; k < end; ++k) {
        single[k] = true;
      }
    }
  }
  std::vector<Unit> units;
  std::map<std::tuple<double, double, int>, std::size_t> groups;
  std::vector<int> unit_of_hour(usage.hours.size(), -1);
  for (std::size_t t = 0; t < usage.hours.size(); ++t) {
    const auto& h = usage.hours[t];
    if (single[t]) {
      unit_of_hour[t] = static_cast<int>(units.size());
      units.push_back({1, h.hour_of_day, h.firm, h.interruptible, static_cast<int>(t)});
      continue;
    }
    if (h.firm == 0 && h.interruptible == 0) {
      continue;  // nothing to serve (idle hours still count for stopped fees through T)
    }
    const auto key = std::make_tuple(h.firm, h.interruptible, h.hour_of_day);
    auto it = groups.find(key);
    if (it == groups.end()) {
      groups[key] = units.size();
      units.push_back({1, h.hour_of_day, h.firm, h.interruptible, -1});
    } else {
      units[it->second].weight += 1;
    }
  }

  std::vector<int> day_of_hour(usage.hours.size(), 0);
  for (std::size_t t = 1; t < usage.hours.size(); ++t) {
    day_of_hour[t] = day_of_hour[t - 1] + (usage.hours[t].hour_of_day == 0 ? 1 : 0);
  }
  // A capacity column of an hourly offer in a unit: instances (integer) when an instance holds
  // several GPUs, else GPUs; cost per instance-hour (0 when the offer bills whole days).
  auto retains = [&](const Offer* o) {
    return o->stopped_fee_ratio > 0 && opt.retain_idle && o->billing_starts != BillingStart::kTask;
  };
  std::map<std::pair<const Offer*, int>, int> day_col;  // (offer, day) -> instances billed that day
  Problem p;
  glp_set_obj_dir(p.lp, GLP_MIN);
  auto capacity_col = [&](const Offer* o, const Unit& un, std::size_t u, double rework, const char* kind) {
    const bool whole = o->gpus_per_instance > 1;
    const double per_instance_hour = o->HourlyPrice(un.hod) * (1.0 + rework);
    const bool by_day = o->granularity == Granularity::kDay;
    const double unit_cost = by_day ? 0.0 : un.weight * per_instance_hour / (whole ? 1.0 : o->gpus_per_instance);
    const int c = p.AddCol(unit_cost, whole, std::string(kind) + o->id + "_" + std::to_string(u));
    if (by_day) {
      const int day = day_of_hour[static_cast<std::size_t>(un.hour)];
      auto key = std::make_pair(o, day);
      auto it = day_col.find(key);
      if (it == day_col.end()) {
        // 24 billed hours per instance and day (GPUs / g when not whole instances).
        const double per_day = 24.0 * o->price * (1.0 + o->addon_fee_ratio) * (1.0 + rework) /
                               (whole ? 1.0 : o->gpus_per_instance);
        it = day_col.emplace(key, p.AddCol(per_day, whole, std::string("day_") + o->id + "_" + std::to_string(day))).first;
      }
      const int row = p.AddRow(GLP_LO, 0.0, 0.0);  // day capacity >= this hour's use
      p.Set(row, it->second, 1.0);
      p.Set(row, c, -1.0);
    }
    return c;
  };
  std::vector<int> r_col;
  for (const Offer* o : reserved) {
    const double fees = o->MonthlyFixedFees() * T / kHoursPerMonth;
    r_col.push_back(p.AddCol(ReservedTraceCost(*o, T) + fees, true, "r_" + o->id));
  }
  // Peak on-demand GPUs per offer, for the stopped-instance retention fee.
  std::vector<int> peak_col(on_demand.size(), 0);
  for (std::size_t j = 0; j < on_demand.size(); ++j) {
    const Offer* o = on_demand[j];
    if (retains(o)) {
      const bool whole = o->gpus_per_instance > 1;
      peak_col[j] = p.AddCol(o->stopped_fee_ratio * o->price / (whole ? 1.0 : o->gpus_per_instance) * T, whole,
                             "peak_" + o->id);
    }
  }
  struct UnitCols {
    std::vector<int> od, sp;
  };
  std::vector<UnitCols> cols(units.size());
  std::vector<int> cover_row(units.size());
  for (std::size_t u = 0; u < units.size(); ++u) {
    const Unit& un = units[u];
    // (A) reserved + on-demand + spot >= all demand of the unit (+ deferred work arriving).
    const double need = un.firm + un.inter;
    cover_row[u] = p.AddRow(GLP_LO, need, 0.0);
    for (std::size_t k = 0; k < reserved.size(); ++k) {
      p.Set(cover_row[u], r_col[k], reserved[k]->gpus_per_instance);
    }
    for (std::size_t j = 0; j < on_demand.size(); ++j) {
      const Offer* o = on_demand[j];
      const bool whole = o->gpus_per_instance > 1;
      const int c = capacity_col(o, un, u, 0.0, "od_");
      if (peak_col[j] != 0) {  // used hours are not idle: no retention fee for them
        glp_set_obj_coef(p.lp, c, glp_get_obj_coef(p.lp, c) -
                                      un.weight * o->stopped_fee_ratio * o->price / (whole ? 1.0 : o->gpus_per_instance));
      }
      cols[u].od.push_back(c);
      p.Set(cover_row[u], c, whole ? o->gpus_per_instance : 1.0);
      if (peak_col[j] != 0) {
        const int row = p.AddRow(GLP_LO, 0.0, 0.0);  // peak_j - n_uj >= 0
        p.Set(row, peak_col[j], 1.0);
        p.Set(row, c, -1.0);
      }
    }
    if (!spot.empty()) {
      const int limit = opt.spot_for_all ? 0 : p.AddRow(GLP_UP, 0.0, un.inter);  // (B) spot only for interruptible work
      for (const Offer* o : spot) {
        const double rework = o->spot ? SpotReworkFraction(*o->spot) : 0.0;
        const double g = o->gpus_per_instance > 1 ? o->gpus_per_instance : 1.0;
        const int c = capacity_col(o, un, u, rework, "sp_");
        cols[u].sp.push_back(c);
        p.Set(cover_row[u], c, g);
        if (limit != 0) {
          p.Set(limit, c, g);
        }
      }
    }
  }
  // Deferrable work at hour t may run at any hour t .. t + deadline - 1 of the trace.
  std::vector<std::pair<int, int>> deferral_cols;  // (column, shift in hours)
  for (std::size_t t = 0; t < usage.hours.size(); ++t) {
    const auto& h = usage.hours[t];
    if (h.deferrable <= 0) {
      continue;
    }
    const int row = p.AddRow(GLP_FX, h.deferrable, h.deferrable);
    const std::size_t end = std::min(usage.hours.size(), t + static_cast<std::size_t>(std::max(1, h.deadline_hours)));
    for (std::size_t k = t; k < end; ++k) {
      const int c = p.AddCol(0.0, false, "y_" + std::to_string(t) + "_" + std::to_string(k));
      p.Set(row, c, 1.0);
      p.Set(cover_row[static_cast<std::size_t>(unit_of_hour[k])], c, -1.0);  // arriving work needs capacity
      deferral_cols.emplace_back(c, static_cast<int>(k - t));
    }
  }
  if (units.empty() && reserved.empty() && on_demand.empty() && spot.empty()) {
    throw InputError("no offers to choose from", set.file, 0, "offers");
  }
  // Without any capacity source for demand the program is infeasible: say so instead.
  if (!units.empty() && reserved.empty() && on_demand.empty() && spot.empty()) {
    plan.solver_status = "no offer can serve the demand";
    return plan;
  }
  glp_load_matrix(p.lp, static_cast<int>(p.ia.size()) - 1, p.ia.data(), p.ja.data(), p.ar.data());
  plan.variables = glp_get_num_cols(p.lp);
  plan.integer_variables = glp_get_num_int(p.lp);
  plan.constraints = glp_get_num_rows(p.lp);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  const int rc = glp_intopt(p.lp, &parm);
  const int status = rc == 0 ? glp_mip_status(p.lp) : GLP_UNDEF;
  if (status != GLP_OPT) {
    plan.solver_status = status == GLP_NOFEAS ? "infeasible" : "solver failed (glp_intopt " + std::to_string(rc) + ")";
    return plan;
  }
  plan.feasible = true;
  plan.solver_status = "optimal";
  for (std::size_t k = 0; k < reserved.size(); ++k) {
    const auto n = static_cast<int64_t>(std::llround(glp_mip_col_val(p.lp, r_col[k])));
    if (n > 0) {
      plan.reserved[reserved[k]->id] = n;
      plan.cost.reserved += static_cast<double>(n) * ReservedTraceCost(*reserved[k], T);
      plan.cost.fixed_fees += static_cast<double>(n) * reserved[k]->MonthlyFixedFees() * T / kHoursPerMonth;
    }
  }
  // GPUs a capacity column stands for (instances x GPUs when counted in whole instances).
  auto gpus_of = [](const Offer* o, double v) { return o->gpus_per_instance > 1 ? v * o->gpus_per_instance : v; };
  for (std::size_t u = 0; u < units.size(); ++u) {
    for (std::size_t j = 0; j < on_demand.size(); ++j) {
      const double v = glp_mip_col_val(p.lp, cols[u].od[j]);
      if (v > 1e-9) {
        const double gpus = gpus_of(on_demand[j], v);
        plan.on_demand_gpu_hours[on_demand[j]->id] += units[u].weight * gpus;
        if (on_demand[j]->granularity != Granularity::kDay) {
          plan.cost.on_demand += units[u].weight * gpus * on_demand[j]->HourlyPrice(units[u].hod) /
                                 on_demand[j]->gpus_per_instance;
        }
      }
    }
    for (std::size_t q = 0; q < spot.size(); ++q) {
      const double v = glp_mip_col_val(p.lp, cols[u].sp[q]);
      if (v > 1e-9) {
        const double rework = spot[q]->spot ? SpotReworkFraction(*spot[q]->spot) : 0.0;
        const double gpus = gpus_of(spot[q], v);
        plan.spot_gpu_hours[spot[q]->id] += units[u].weight * gpus;
        if (spot[q]->granularity != Granularity::kDay) {
          plan.cost.spot += units[u].weight * gpus * spot[q]->HourlyPrice(units[u].hod) / spot[q]->gpus_per_instance *
                            (1.0 + rework);
        }
      }
    }
  }
  for (const auto& [key, c] : day_col) {
    const double v = glp_mip_col_val(p.lp, c);
    const double cost = v * glp_get_obj_coef(p.lp, c);
    (key.first->mode == BillingMode::kSpot ? plan.cost.spot : plan.cost.on_demand) += cost;
  }
  for (std::size_t j = 0; j < on_demand.size(); ++j) {
    if (peak_col[j] != 0) {
      const double peak = gpus_of(on_demand[j], glp_mip_col_val(p.lp, peak_col[j]));
      const double used = plan.on_demand_gpu_hours[on_demand[j]->id];
      plan.cost.stopped += on_demand[j]->stopped_fee_ratio * on_demand[j]->price / on_demand[j]->gpus_per_instance *
                           std::max(0.0, peak * T - used);
    }
  }
  for (const auto& [c, shift] : deferral_cols) {
    if (shift > 0) {
      plan.deferred_gpu_hours += glp_mip_col_val(p.lp, c);
    }
  }
  return plan;
}

std::map<std::string, Plan> PureStrategies(const OfferSet& set, const UsageTrace& usage, const OptimizeOptions& base) {
  std::map<std::string, Plan> out;
  const double peak = usage.Peak();
  const double T = static_cast<double>(usage.hours.size());
  // Reserved modes: the mode's cheapest offer, enough instances for the peak.
  std::map<BillingMode, std::pair<const Offer*, double>> best;
  for (const auto& o : set.offers) {
    if (!IsReserved(o.mode)) {
      continue;
    }
    const double n = std::ceil(peak / o.gpus_per_instance - 1e-9);
    const double cost = n * (ReservedTraceCost(o, T) + o.MonthlyFixedFees() * T / kHoursPerMonth);
    auto it = best.find(o.mode);
    if (it == best.end() || cost < it->second.second) {
      best[o.mode] = {&o, cost};
    }
  }
  for (const auto& [mode, pick] : best) {
    Plan p;
    p.feasible = true;
    p.solver_status = "closed form";
    const auto n = static_cast<int64_t>(std::ceil(peak / pick.first->gpus_per_instance - 1e-9));
    p.reserved[pick.first->id] = n;
    p.cost.reserved = static_cast<double>(n) * ReservedTraceCost(*pick.first, T);
    p.cost.fixed_fees = static_cast<double>(n) * pick.first->MonthlyFixedFees() * T / kHoursPerMonth;
    out[ToString(mode)] = p;
  }
  OptimizeOptions od;
  od.retain_idle = base.retain_idle;
  od.allow_reserved = false;
  od.allow_spot = false;
  bool has_od = false, has_spot = false;
  for (const auto& o : set.offers) {
    has_od |= o.mode == BillingMode::kOnDemand;
    has_spot |= o.mode == BillingMode::kSpot;
  }
  UsageTrace no_deferral = usage;  // pure strategies run work when it arrives
  for (auto& h : no_deferral.hours) {
    h.firm += h.deferrable;
    h.deferrable = 0;
    h.deadline_hours = 0;
  }
  if (has_od) {
    out["on_demand"] = OptimizeRental(set, no_deferral, od);
  }
  if (has_spot) {
    OptimizeOptions sp;
    sp.retain_idle = base.retain_idle;
    sp.allow_reserved = false;
    sp.allow_on_demand = false;
    sp.spot_for_all = true;
    out["spot"] = OptimizeRental(set, no_deferral, sp);
  }
  return out;
}

}  // namespace gpuplan
