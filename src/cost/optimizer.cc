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

  // Units: hours that deferral can touch stay single; the rest are grouped.
  std::vector<bool> single(usage.hours.size(), false);
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

  Problem p;
  glp_set_obj_dir(p.lp, GLP_MIN);
  std::vector<int> r_col;
  for (const Offer* o : reserved) {
    const double fees = o->MonthlyFixedFees() * T / kHoursPerMonth;
    r_col.push_back(p.AddCol(ReservedTraceCost(*o, T) + fees, true, "r_" + o->id));
  }
  // Peak on-demand GPUs per offer, for the stopped-instance retention fee.
  std::vector<int> peak_col(on_demand.size(), 0);
  for (std::size_t j = 0; j < on_demand.size(); ++j) {
    const Offer* o = on_demand[j];
    if (o->stopped_fee_ratio > 0 && opt.retain_idle) {
      peak_col[j] = p.AddCol(o->stopped_fee_ratio * o->price / o->gpus_per_instance * T, false, "peak_" + o->id);
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
      const double price = o->HourlyPrice(un.hod) / o->gpus_per_instance;
      double cost = un.weight * price;
      if (peak_col[j] != 0) {
        cost -= un.weight * o->stopped_fee_ratio * o->price / o->gpus_per_instance;  // used hours are not idle
      }
      const int c = p.AddCol(cost, false, "od_" + o->id + "_" + std::to_string(u));
      cols[u].od.push_back(c);
      p.Set(cover_row[u], c, 1.0);
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
        const double cost = un.weight * o->HourlyPrice(un.hod) / o->gpus_per_instance * (1.0 + rework);
        const int c = p.AddCol(cost, false, "sp_" + o->id + "_" + std::to_string(u));
        cols[u].sp.push_back(c);
        p.Set(cover_row[u], c, 1.0);
        if (limit != 0) {
          p.Set(limit, c, 1.0);
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
  for (std::size_t u = 0; u < units.size(); ++u) {
    for (std::size_t j = 0; j < on_demand.size(); ++j) {
      const double v = glp_mip_col_val(p.lp, cols[u].od[j]);
      if (v > 1e-9) {
        plan.on_demand_gpu_hours[on_demand[j]->id] += units[u].weight * v;
        plan.cost.on_demand += units[u].weight * v * on_demand[j]->HourlyPrice(units[u].hod) /
                               on_demand[j]->gpus_per_instance;
      }
    }
    for (std::size_t q = 0; q < spot.size(); ++q) {
      const double v = glp_mip_col_val(p.lp, cols[u].sp[q]);
      if (v > 1e-9) {
        const double rework = spot[q]->spot ? SpotReworkFraction(*spot[q]->spot) : 0.0;
        plan.spot_gpu_hours[spot[q]->id] += units[u].weight * v;
        plan.cost.spot += units[u].weight * v * spot[q]->HourlyPrice(units[u].hod) / spot[q]->gpus_per_instance *
                          (1.0 + rework);
      }
    }
  }
  for (std::size_t j = 0; j < on_demand.size(); ++j) {
    if (peak_col[j] != 0) {
      const double peak = glp_mip_col_val(p.lp, peak_col[j]);
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
