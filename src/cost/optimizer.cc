// Rental mix as a MILP on the calendar (docs/cost-model.md §4), solved by GLPK's branch-and-cut
// (glp_intopt).
#include "cost/optimizer.h"

#include <fmt/format.h>
#include <glpk.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <tuple>

#include "core/error.h"
#include "core/work_budget.h"
#include "cost/billing.h"

namespace gpuplan {
namespace {

// One row block of the program: an hour, or a group of interchangeable hours (same calendar
// terms, demand, minutes and hourly prices, untouched by deferral) counted `weight` times.
struct Unit {
  double weight = 1;
  int hod = 0;
  double firm = 0;
  double inter = 0;
  double minutes = 60;
  int hour = -1;  // trace hour when the unit is a single hour (deferral, day billing)
  int sig = 0;    // calendar signature: which term of every reserved grid holds it
};

struct Problem {
  glp_prob* lp = glp_create_prob();
  std::vector<int> ia{0};
  std::vector<int> ja{0};
  std::vector<double> ar{0};
  Problem() = default;
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;
  ~Problem() { glp_delete_prob(lp); }
  int AddCol(double cost, bool integer) {
    const int c = glp_add_cols(lp, 1);
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

// One reserved offer's columns: instances per term of its calendar grid (terms after the trace
// exist only to honour minimum terms).
struct ReservedVars {
  const Offer* o = nullptr;
  std::size_t grid = 0;
  int64_t terms_in_trace = 0;
  std::vector<LocalHour> start;  // term starts, one more than columns
  std::vector<int> col;
};

// An hourly offer as the program sees it.
struct HourlyVars {
  const Offer* o = nullptr;
  bool whole = false;     // integer instances (several GPUs each)
  bool by_day = false;    // billed in whole days
  bool hold_peak = false; // cannot be released: retention approximated by the peak held all trace
  double rework = 0;
  int peak_col = 0;
  std::vector<int> col;   // per unit (0 = no column: a cheaper interchangeable offer serves it)
};

// Egress (docs/cost-model.md §9): the usage's GB leaving the data centre at the highest price
// per GB among the offers the plan holds instances of (which instance's traffic it is is not
// known, so the dearest is taken).
void PriceEgress(const OfferSet& set, const UsageTrace& usage, Plan& plan) {
  if (!(usage.egress_gb > 0)) {
    return;
  }
  double price = 0;
  for (const Offer& o : set.offers) {
    const auto held = [&o](const auto& m) {
      const auto it = m.find(o.id);
      return it != m.end() && it->second > 0;
    };
    const bool used = held(plan.reserved) || held(plan.on_demand_gpu_hours) || held(plan.spot_gpu_hours);
    if (used) {
      price = std::max(price, o.egress_price_per_gb);
    }
  }
  plan.egress_gb = usage.egress_gb;
  plan.egress_price_per_gb = price;
  plan.cost.egress = usage.egress_gb * price;
}

Plan Solve(const OfferSet& set, const UsageTrace& usage, const OptimizeOptions& opt) {
  Plan plan;
  plan.currency = set.currency;
  const std::size_t N = usage.hours.size();
  const LocalHour T0 = usage.start_hour;
  auto hour_at = [&](std::size_t t) { return T0 + std::chrono::hours{static_cast<int64_t>(t)}; };
  std::vector<const Offer*> reserved, hourly;
  const Gpu* gpu = nullptr;
  for (const auto& o : set.offers) {
    if (!opt.only_offers.empty() &&
        std::find(opt.only_offers.begin(), opt.only_offers.end(), o.id) == opt.only_offers.end()) {
      continue;
    }
    if (gpu != nullptr && o.gpu != gpu) {
      throw InputError("offers for different GPUs (" + gpu->name + ", " + o.gpu->name + "): choose one with `gpu`",
                       set.file, o.line, "offers[" + o.id + "].gpu");
    }
    gpu = o.gpu;
    if (IsReserved(o.mode)) {
      if (opt.allow_reserved) reserved.push_back(&o);
    } else if ((o.mode == BillingMode::kOnDemand && opt.allow_on_demand) ||
               (o.mode == BillingMode::kSpot && opt.allow_spot)) {
      hourly.push_back(&o);
    }
  }
  if (reserved.empty() && hourly.empty()) {
    if (set.offers.empty()) {
      throw InputError("no offers to choose from", set.file, 0, "offers");
    }
    plan.solver_status = "no offer can serve the demand";
    return plan;
  }
  if (N == 0) {
    plan.feasible = true;
    plan.solver_status = "no usage";
    return plan;
  }

  // Calendar grids of the reserved offers, anchored at the trace's start; an hour's signature
  // changes whenever any grid enters a new term.
  std::vector<TermUnit> grids;
  std::vector<ReservedVars> rv;
  for (const Offer* o : reserved) {
    const TermUnit u = TermUnitOf(o->mode);
    auto it = std::find(grids.begin(), grids.end(), u);
    ReservedVars v;
    v.o = o;
    v.grid = static_cast<std::size_t>(it - grids.begin());
    if (it == grids.end()) {
      grids.push_back(u);
    }
    rv.push_back(v);
  }
  std::vector<std::vector<int>> term_of_hour(grids.size(), std::vector<int>(N, 0));
  std::vector<int> sig(N, 0);
  for (std::size_t g = 0; g < grids.size(); ++g) {
    int64_t k = 0;
    LocalHour next = TermStart(grids[g], T0, 1);
    for (std::size_t t = 0; t < N; ++t) {
      const LocalHour h = hour_at(t);
      while (h >= next) {
        ++k;
        next = TermStart(grids[g], T0, k + 1);
      }
      term_of_hour[g][t] = static_cast<int>(k);
    }
  }
  // Subsidies that apply to an offer here: an hour's state for each is its cap period when the
  // subsidy covers it, else -1; the signature changes with it too, so a unit never spans two.
  std::vector<const Subsidy*> subs;
  for (const auto& s : set.subsidies) {
    const bool any = std::any_of(reserved.begin(), reserved.end(), [&s](const Offer* o) { return s.Applies(*o); }) ||
                     std::any_of(hourly.begin(), hourly.end(), [&s](const Offer* o) {
                       return s.Applies(*o);
                     });
    if (any) {
      subs.push_back(&s);
    }
  }
  auto sub_state = [&](const Subsidy& s, LocalHour local_hour) -> int64_t {
    return s.Covers(local_hour) ? s.PeriodOf(local_hour) : -1;
  };
  for (std::size_t t = 1; t < N; ++t) {
    bool changed = false;
    for (std::size_t g = 0; g < grids.size(); ++g) {
      changed |= term_of_hour[g][t] != term_of_hour[g][t - 1];
    }
    for (const Subsidy* s : subs) {
      const LocalHour h = hour_at(t);
      changed |= sub_state(*s, h) != sub_state(*s, h - std::chrono::hours{1});
    }
    sig[t] = sig[t - 1] + (changed ? 1 : 0);
  }
  std::vector<LocalHour> hour_of_sig(static_cast<std::size_t>(sig[N - 1]) + 1, T0);  // a local hour of each
  for (std::size_t t = N; t-- > 0;) {
    hour_of_sig[static_cast<std::size_t>(sig[t])] = hour_at(t);
  }

  // Hourly offers: multi-GPU, day-billed and unreleasable ones get their own columns; the other
  // on-demand (and spot) offers are interchangeable per hour, so only the cheapest of each kind
  // at each hour needs a column (their price classes below make that exact).
  std::vector<HourlyVars> hv;
  for (const Offer* o : hourly) {
    HourlyVars v;
    v.o = o;
    v.whole = o->gpus_per_instance > 1;
    v.by_day = o->granularity == Granularity::kDay;
    v.hold_peak = o->mode == BillingMode::kOnDemand && !o->releasable && RetentionPerHour(*o) > 0;
    v.rework = o->mode == BillingMode::kSpot && o->spot ? SpotReworkFraction(*o->spot) : 0.0;
    hv.push_back(v);
  }
  // A stocked offer gets its own columns too: its bound must not cap the interchangeable others.
  auto own_columns = [](const HourlyVars& v) { return v.whole || v.by_day || v.hold_peak || v.o->stock.has_value(); };
  // Price class of an hour of the day: the vector of every hourly offer's price then.
  std::vector<int> price_class(24, 0);
  {
    std::map<std::vector<double>, int> classes;
    for (int h = 0; h < 24; ++h) {
      std::vector<double> key;
      for (const auto& v : hv) {
        key.push_back(v.o->HourlyPrice(h));
      }
      price_class[static_cast<std::size_t>(h)] = classes.emplace(key, static_cast<int>(classes.size())).first->second;
    }
  }
  bool day_billed = false;
  for (const auto& v : hv) {
    day_billed |= v.by_day;
  }
  std::vector<bool> single(N, day_billed);
  for (std::size_t t = 0; t < N; ++t) {
    const auto& h = usage.hours[t];
    if (h.deferrable > 0) {
      const std::size_t end = std::min(N, t + static_cast<std::size_t>(std::max(1, h.deadline_hours)));
      for (std::size_t k = t; k < end; ++k) {
        single[k] = true;
      }
    }
  }
  std::vector<Unit> units;
  std::map<std::tuple<int, double, double, int, double>, std::size_t> groups;
  std::vector<int> unit_of_hour(N, -1);
  for (std::size_t t = 0; t < N; ++t) {
    const auto& h = usage.hours[t];
    if (single[t]) {
      unit_of_hour[t] = static_cast<int>(units.size());
      units.push_back({1, h.hour_of_day, h.firm, h.interruptible, h.minutes, static_cast<int>(t), sig[t]});
      continue;
    }
    if (h.firm == 0 && h.interruptible == 0) {
      continue;
    }
    const auto key = std::make_tuple(sig[t], h.firm, h.interruptible, price_class[static_cast<std::size_t>(h.hour_of_day)],
                                     h.minutes);
    auto it = groups.find(key);
    if (it == groups.end()) {
      it = groups.emplace(key, units.size()).first;
      units.push_back({1, h.hour_of_day, h.firm, h.interruptible, h.minutes, -1, sig[t]});
    } else {
      units[it->second].weight += 1;
    }
    unit_of_hour[t] = static_cast<int>(it->second);
  }
  // Term of each grid for a signature.
  std::vector<std::vector<int>> term_of_sig(grids.size(), std::vector<int>(static_cast<std::size_t>(sig[N - 1]) + 1, 0));
  for (std::size_t t = 0; t < N; ++t) {
    for (std::size_t g = 0; g < grids.size(); ++g) {
      term_of_sig[g][static_cast<std::size_t>(sig[t])] = term_of_hour[g][t];
    }
  }
  std::vector<int> day_of_hour(N, 0);
  for (std::size_t t = 1; t < N; ++t) {
    day_of_hour[t] = day_of_hour[t - 1] + (usage.hours[t].hour_of_day == 0 ? 1 : 0);
  }

  Problem p;
  glp_set_obj_dir(p.lp, GLP_MIN);
  // Each subsidy and cap period: a column s (objective -1) with s <= cap and
  // s - share x (eligible spend of the columns in that period) <= 0, so the program takes back
  // min(cap, share x eligible spend) and chooses the offers with it in view.
  struct SubsidyVar {
    const Subsidy* s;
    int64_t period;
    int col;
    int row;
  };
  std::vector<SubsidyVar> sub_vars;
  auto subsidy_row = [&](const Subsidy& s, int64_t period) {
    for (const auto& v : sub_vars) {
      if (v.s == &s && v.period == period) {
        return v.row;
      }
    }
    const int c = p.AddCol(-1.0, false);
    if (s.cap) {
      glp_set_col_bnds(p.lp, c, *s.cap > 0 ? GLP_DB : GLP_FX, 0.0, *s.cap);
    }
    const int r = p.AddRow(GLP_UP, 0.0, 0.0);
    p.Set(r, c, 1.0);
    sub_vars.push_back({&s, period, c, r});
    return r;
  };
  // Adds a column's eligible spend (compute: the price without add-ons; all: everything the
  // column costs) to every subsidy that covers it at `local_hour`.
  auto subsidize = [&](const Offer& o, int col, LocalHour local_hour, double compute, double all) {
    for (const Subsidy* s : subs) {
      if (!s->Applies(o) || !s->Covers(local_hour)) {
        continue;
      }
      const double eligible = s->covers_all ? all : compute;
      if (eligible > 0) {
        p.Set(subsidy_row(*s, s->PeriodOf(local_hour)), col, -s->share * eligible);
      }
    }
  };
  // Reserved: instances per term; with a minimum of L terms, starts s_m commit the next L terms.
  for (auto& v : rv) {
    const int64_t M = term_of_hour[v.grid][N - 1] + 1;
    const int L = std::max(1, v.o->min_terms);
    v.terms_in_trace = M;
    const int64_t total = M + L - 1;
    for (int64_t m = 0; m <= total; ++m) {
      v.start.push_back(TermStart(grids[v.grid], T0, m));
    }
    for (int64_t m = 0; m < total; ++m) {
      const auto i = static_cast<std::size_t>(m);
      const double term_cost = ReservedTermCost(*v.o, v.start[i], v.start[i + 1]);
      v.col.push_back(p.AddCol(term_cost, true));
      if (v.o->stock) {  // the provider's stock: at most that many instances in any term
        glp_set_col_bnds(p.lp, v.col.back(), *v.o->stock > 0 ? GLP_DB : GLP_FX, 0.0, *v.o->stock);
      }
      subsidize(*v.o, v.col.back(), v.start[i], v.o->price, term_cost);  // a term counts where it starts
    }
    if (L > 1) {
      std::vector<int> s;
      for (int64_t m = 0; m < M; ++m) {
        s.push_back(p.AddCol(0.0, true));
      }
      for (int64_t m = 0; m < total; ++m) {
        const auto i = static_cast<std::size_t>(m);
        // Held at least what was started in the last L terms.
        const int commit = p.AddRow(GLP_LO, 0.0, 0.0);
        p.Set(commit, v.col[i], 1.0);
        for (int64_t q = std::max<int64_t>(0, m - L + 1); q <= std::min<int64_t>(m, M - 1); ++q) {
          p.Set(commit, s[static_cast<std::size_t>(q)], -1.0);
        }
        // No more held than last term plus what starts now.
        const int grow = p.AddRow(GLP_UP, 0.0, 0.0);
        p.Set(grow, v.col[i], 1.0);
        if (m > 0) {
          p.Set(grow, v.col[i - 1], -1.0);
        }
        if (m < M) {
          p.Set(grow, s[i], -1.0);
        }
      }
    }
  }
  // Hourly: capacity columns per unit.
  std::map<std::pair<std::size_t, int>, int> day_col;  // (hourly offer, day) -> instances billed that day
  for (std::size_t j = 0; j < hv.size(); ++j) {
    auto& v = hv[j];
    if (v.hold_peak) {
      v.peak_col = p.AddCol(RetentionPerHour(*v.o) / (v.whole ? 1.0 : v.o->gpus_per_instance) * static_cast<double>(N),
                            v.whole);
    }
  }
  // Cost of one capacity column value in a unit (instance-hours at the hour's price, fixed fees:
  // the hour rule of billing.h, which the meter's bill of observed use calls too).
  auto use_cost = [&](const HourlyVars& v, const Unit& un) {
    const InstanceHourCharge c = ChargeInstanceHour(*v.o, un.hod, un.minutes, 1.0 + v.rework);
    return un.weight * c.billed_hours * c.Rate() / (v.whole ? 1.0 : v.o->gpus_per_instance);
  };
  std::vector<int> cover_row(units.size());
  // The cap on GPUs held at once (OptimizeOptions::max_gpus), one row per unit.
  std::optional<double> cap = opt.max_gpus;
  const bool any_deferrable = std::any_of(usage.hours.begin(), usage.hours.end(),
                                          [](const UsageHour& h) { return h.deferrable > 0; });
  if (!cap && any_deferrable) {
    double need = 0;
    for (const Offer* o : reserved) {
      need = std::max(need, std::ceil(usage.Peak() / o->gpus_per_instance - 1e-9) * o->gpus_per_instance);
    }
    for (const Offer* o : hourly) {
      need = std::max(need, std::ceil(usage.Peak() / o->gpus_per_instance - 1e-9) * o->gpus_per_instance);
    }
    cap = need;
  }
  plan.max_gpus = cap;
  std::vector<int> cap_row(units.size(), 0);
  bool any_spot = false;
  for (const auto& v : hv) {
    any_spot |= v.o->mode == BillingMode::kSpot;
  }
  for (std::size_t u = 0; u < units.size(); ++u) {
    const Unit& un = units[u];
    cover_row[u] = p.AddRow(GLP_LO, un.firm + un.inter, 0.0);
    if (cap) {
      cap_row[u] = p.AddRow(GLP_UP, 0.0, *cap);
    }
    for (const auto& v : rv) {
      const int m = term_of_sig[v.grid][static_cast<std::size_t>(un.sig)];
      p.Set(cover_row[u], v.col[static_cast<std::size_t>(m)], v.o->gpus_per_instance);
      if (cap) {
        p.Set(cap_row[u], v.col[static_cast<std::size_t>(m)], v.o->gpus_per_instance);
      }
    }
    const int spot_limit = any_spot && !opt.spot_for_all ? p.AddRow(GLP_UP, 0.0, un.inter) : 0;
    // The cheapest interchangeable on-demand and spot offer for this unit.
    int cheapest_od = -1, cheapest_sp = -1;
    for (std::size_t j = 0; j < hv.size(); ++j) {
      if (own_columns(hv[j])) {
        continue;
      }
      int& best = hv[j].o->mode == BillingMode::kSpot ? cheapest_sp : cheapest_od;
      if (best < 0 || use_cost(hv[j], un) < use_cost(hv[static_cast<std::size_t>(best)], un)) {
        best = static_cast<int>(j);
      }
    }
    for (std::size_t j = 0; j < hv.size(); ++j) {
      auto& v = hv[j];
      v.col.resize(units.size(), 0);
      if (!own_columns(v) && static_cast<int>(j) != cheapest_od && static_cast<int>(j) != cheapest_sp) {
        continue;
      }
      double cost = v.by_day ? 0.0 : use_cost(v, un);
      if (v.hold_peak) {  // used hours are not idle: no retention for them
        cost -= un.weight * un.minutes / 60.0 * RetentionPerHour(*v.o) / (v.whole ? 1.0 : v.o->gpus_per_instance);
      }
      const int c = p.AddCol(cost, v.whole);
      v.col[u] = c;
      if (v.o->stock) {  // instances held at once: columns count instances (whole) or GPUs
        const double most = *v.o->stock * (v.whole ? 1.0 : v.o->gpus_per_instance);
        glp_set_col_bnds(p.lp, c, most > 0 ? GLP_DB : GLP_FX, 0.0, most);
      }
      if (!v.by_day && !subs.empty()) {
        const InstanceHourCharge ch = ChargeInstanceHour(*v.o, un.hod, un.minutes, 1.0 + v.rework);
        const double per_col = un.weight * ch.billed_hours / (v.whole ? 1.0 : v.o->gpus_per_instance);
        subsidize(*v.o, c, hour_of_sig[static_cast<std::size_t>(un.sig)],
                  per_col * ch.price * ch.work / (1.0 + v.o->addon_fee_ratio), per_col * ch.Rate());
      }
      const double g = v.whole ? v.o->gpus_per_instance : 1.0;
      p.Set(cover_row[u], c, g);
      if (cap) {
        p.Set(cap_row[u], c, g);
      }
      if (spot_limit != 0 && v.o->mode == BillingMode::kSpot) {
        p.Set(spot_limit, c, g);
      }
      if (v.hold_peak) {
        const int row = p.AddRow(GLP_LO, 0.0, 0.0);  // peak - n >= 0
        p.Set(row, v.peak_col, 1.0);
        p.Set(row, c, -1.0);
      }
      if (v.by_day) {
        const int day = day_of_hour[static_cast<std::size_t>(un.hour)];
        auto key = std::make_pair(j, day);
        auto it = day_col.find(key);
        if (it == day_col.end()) {
          const double per_col = v.whole ? 1.0 : 1.0 / v.o->gpus_per_instance;
          const double per_day = InstanceDayCharge(*v.o, 1.0 + v.rework) * per_col;
          it = day_col.emplace(key, p.AddCol(per_day, v.whole)).first;
          // A subsidy covers a day-billed instance's day where the day starts: compute is 24 h at
          // the price (no add-ons or fixed fees), all is the day's charge.
          const LocalHour day_start{date::floor<date::days>(hour_at(un.hour))};
          subsidize(*v.o, it->second, day_start, 24.0 * v.o->price * (1.0 + v.rework) * per_col, per_day);
        }
        const int row = p.AddRow(GLP_LO, 0.0, 0.0);  // the day's instances >= this hour's use
        p.Set(row, it->second, 1.0);
        p.Set(row, c, -1.0);
      }
    }
  }
  // Re-creation in the program (issue 25 req. 3): where work may move between hours (deferral
  // makes those hours units of their own), each rise of an on-demand offer's instances from one
  // hour to the next pays one re-creation. Priced only after the solve, the program spread night
  // work over more hours than the obvious shift and paid for every extra gap (tests/scenarios/
  // cost/night-shift-month.yaml). After the solve the gaps are priced exactly as before
  // (IdleInstanceCosts: a gap costs the cheaper of keeping stopped and one re-creation).
  for (auto& v : hv) {
    if (v.o->mode != BillingMode::kOnDemand || v.by_day || !v.o->releasable || v.col.size() != units.size()) {
      continue;
    }
    const double recreate = RecreateCost(*v.o);
    if (recreate <= 0) {
      continue;
    }
    const double inst = v.whole ? 1.0 : 1.0 / v.o->gpus_per_instance;
    for (std::size_t t = 1; t < N; ++t) {
      const int a = unit_of_hour[t - 1], b = unit_of_hour[t];
      if (a < 0 || b < 0 || units[static_cast<std::size_t>(a)].hour < 0 || units[static_cast<std::size_t>(b)].hour < 0) {
        continue;
      }
      const int ca = v.col[static_cast<std::size_t>(a)], cb = v.col[static_cast<std::size_t>(b)];
      if (ca == 0 || cb == 0) {
        continue;
      }
      const int rise = p.AddCol(recreate, false);
      const int row = p.AddRow(GLP_LO, 0.0, 0.0);  // rise >= instances(t) - instances(t - 1)
      p.Set(row, rise, 1.0);
      p.Set(row, cb, -inst);
      p.Set(row, ca, inst);
    }
  }
  // Deferrable work at hour t may run at any hour t .. t + deadline - 1 of the trace.
  std::vector<std::pair<int, int>> deferral_cols;  // (column, shift in hours)
  for (std::size_t t = 0; t < N; ++t) {
    const auto& h = usage.hours[t];
    if (h.deferrable <= 0) {
      continue;
    }
    const int row = p.AddRow(GLP_FX, h.deferrable, h.deferrable);
    const std::size_t end = std::min(N, t + static_cast<std::size_t>(std::max(1, h.deadline_hours)));
    for (std::size_t k = t; k < end; ++k) {
      const int c = p.AddCol(0.0, false);
      p.Set(row, c, 1.0);
      p.Set(cover_row[static_cast<std::size_t>(unit_of_hour[k])], c, -1.0);
      deferral_cols.emplace_back(c, static_cast<int>(k - t));
    }
  }
  glp_load_matrix(p.lp, static_cast<int>(p.ia.size()) - 1, p.ia.data(), p.ja.data(), p.ar.data());
  plan.variables = glp_get_num_cols(p.lp);
  plan.integer_variables = glp_get_num_int(p.lp);
  plan.constraints = glp_get_num_rows(p.lp);
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.presolve = GLP_ON;
  parm.msg_lev = GLP_MSG_OFF;
  // A server's per-request budget (core/work_budget.h) bounds the search: GLPK's tm_lim (ms).
  CheckWorkBudget();
  if (const auto left = WorkBudgetSecondsLeft()) {
    parm.tm_lim = static_cast<int>(std::clamp(*left * 1000.0, 1.0, 2.0e9));
  }
  const int rc = glp_intopt(p.lp, &parm);
  if (rc == GLP_ETMLIM) {
    CheckWorkBudget();  // past the deadline: the budget's error, not "no optimum"
  }
  const int status = rc == 0 ? glp_mip_status(p.lp) : GLP_UNDEF;
  const SolverOutcome outcome = ReadGlpkOutcome(rc, status);
  if (outcome == SolverOutcome::kFailed) {
    throw std::runtime_error(fmt::format("the MILP solver stopped without an optimum (glp_intopt returned {}, "
                                         "glp_mip_status {}) on a model of {} variables and {} constraints",
                                         rc, status, plan.variables, plan.constraints));
  }
  if (outcome == SolverOutcome::kInfeasible) {
    const bool spot_only = reserved.empty() && std::all_of(hourly.begin(), hourly.end(), [](const Offer* o) {
                             return o->mode == BillingMode::kSpot;
                           });
    plan.solver_status = std::string("no feasible plan: the offers cannot serve the usage") +
                         (spot_only && !opt.spot_for_all
                              ? " (they are all spot, and only interruptible work may run on spot; "
                                "--spot-for-all lets all work run there)"
                              : "");
    return plan;
  }
  plan.feasible = true;
  plan.solver_status = "optimal";
  for (const auto& v : rv) {
    for (std::size_t m = 0; m < v.col.size(); ++m) {
      const auto n = static_cast<int64_t>(std::llround(glp_mip_col_val(p.lp, v.col[m])));
      if (n <= 0) {
        continue;
      }
      plan.reserved_terms.push_back(
          {v.o->id, v.start[m], v.start[m + 1], n, static_cast<int64_t>(m) >= v.terms_in_trace});
      plan.reserved[v.o->id] = std::max(plan.reserved[v.o->id], n);
      plan.cost.reserved += static_cast<double>(n) * ReservedTermPrice(*v.o);
      plan.cost.addons_included += static_cast<double>(n) * v.o->price * v.o->addon_fee_ratio;
      const double fixed = static_cast<double>(n) * ReservedTermFixedFees(*v.o, v.start[m], v.start[m + 1]);
      plan.cost.fixed_fees += fixed;
      plan.cost.link_upgrades_included += fixed * LinkUpgradeShare(*v.o);
    }
  }
  std::stable_sort(plan.reserved_terms.begin(), plan.reserved_terms.end(),
                   [](const ReservedTerm& a, const ReservedTerm& b) { return std::tie(a.start, a.offer) < std::tie(b.start, b.offer); });
  for (std::size_t j = 0; j < hv.size(); ++j) {
    const auto& v = hv[j];
    const double per = v.whole ? v.o->gpus_per_instance : 1.0;  // GPUs per column unit
    const double inst = v.whole ? 1.0 : 1.0 / v.o->gpus_per_instance;  // instances per column unit
    double& item = v.o->mode == BillingMode::kSpot ? plan.cost.spot : plan.cost.on_demand;
    auto& hours = v.o->mode == BillingMode::kSpot ? plan.spot_gpu_hours : plan.on_demand_gpu_hours;
    std::vector<int64_t> instances(N, 0);
    bool used = false;
    for (std::size_t u = 0; u < units.size(); ++u) {
      if (v.col[u] == 0) {
        continue;
      }
      const double x = glp_mip_col_val(p.lp, v.col[u]);
      if (x <= 1e-9) {
        continue;
      }
      used = true;
      hours[v.o->id] += units[u].weight * x * per * units[u].minutes / 60.0;
      if (!v.by_day) {
        const InstanceHourCharge c = ChargeInstanceHour(*v.o, units[u].hod, units[u].minutes, 1.0 + v.rework);
        const double billed = units[u].weight * c.billed_hours * x * inst;
        item += billed * c.price * c.work;
        plan.cost.addons_included += billed * c.price * c.work * v.o->addon_fee_ratio / (1.0 + v.o->addon_fee_ratio);
        plan.cost.fixed_fees += billed * c.fixed_fee;
        plan.cost.link_upgrades_included += billed * c.fixed_fee * LinkUpgradeShare(*v.o);
      }
    }
    if (!used || v.by_day) {
      continue;
    }
    for (std::size_t t = 0; t < N; ++t) {
      const int u = unit_of_hour[t];
      if (u >= 0 && v.col[static_cast<std::size_t>(u)] != 0) {
        const double x = glp_mip_col_val(p.lp, v.col[static_cast<std::size_t>(u)]) * inst;
        instances[t] = static_cast<int64_t>(std::ceil(x - 1e-6));
      }
    }
    if (v.o->mode == BillingMode::kOnDemand) {
      const IdleCosts idle = IdleInstanceCosts(*v.o, instances, !opt.retain_idle);
      plan.cost.stopped += idle.retention;
      if (v.o->billing_starts != BillingStart::kTask) {  // retention: fixed fees while kept (RetentionPerHour)
        plan.cost.link_upgrades_included += idle.kept_instance_hours * HourlyFixedFee(*v.o) * LinkUpgradeShare(*v.o);
      }
      plan.cost.recreate += idle.recreate;
      if (idle.kept_instance_hours > 0) plan.kept_idle_instance_hours[v.o->id] = idle.kept_instance_hours;
      if (idle.releases > 0) plan.releases[v.o->id] = idle.releases;
    }
  }
  for (const auto& [key, c] : day_col) {
    const double x = glp_mip_col_val(p.lp, c);
    const double cost = x * glp_get_obj_coef(p.lp, c);
    (hv[key.first].o->mode == BillingMode::kSpot ? plan.cost.spot : plan.cost.on_demand) += cost;
    const Offer& o = *hv[key.first].o;
    const double r = o.addon_fee_ratio;
    const double fixed = x * 24.0 * HourlyFixedFee(o) * (hv[key.first].whole ? 1.0 : 1.0 / o.gpus_per_instance);
    plan.cost.addons_included += (cost - fixed) * r / (1.0 + r);
    plan.cost.link_upgrades_included += fixed * LinkUpgradeShare(o);
  }
  for (const auto& [c, shift] : deferral_cols) {
    if (shift > 0) {
      plan.deferred_gpu_hours += glp_mip_col_val(p.lp, c);
    }
  }
  for (const auto& v : sub_vars) {
    const double back = glp_mip_col_val(p.lp, v.col);
    if (back > 1e-9) {
      plan.cost.subsidies += back;
      plan.subsidies[v.s->id] += back;
    }
  }
  PriceEgress(set, usage, plan);
  return plan;
}

UsageTrace NoDeferral(const UsageTrace& usage) {
  UsageTrace u = usage;  // pure strategies run work when it arrives
  for (auto& h : u.hours) {
    h.firm += h.deferrable;
    h.deferrable = 0;
    h.deadline_hours = 0;
  }
  return u;
}

std::map<std::string, Plan> Pure(const OfferSet& set, const UsageTrace& usage, const OptimizeOptions& base) {
  std::map<std::string, Plan> out;
  const UsageTrace u = NoDeferral(usage);
  std::map<BillingMode, std::vector<std::string>> by_mode;
  for (const auto& o : set.offers) {
    if (base.only_offers.empty() ||
        std::find(base.only_offers.begin(), base.only_offers.end(), o.id) != base.only_offers.end()) {
      by_mode[o.mode].push_back(o.id);
    }
  }
  for (const auto& [mode, ids] : by_mode) {
    OptimizeOptions o;
    o.retain_idle = base.retain_idle;
    o.max_gpus = base.max_gpus;
    o.only_offers = ids;
    // All on spot serves only what spot may run: interruptible work, unless --spot-for-all (as
    // the optimiser rules); firm or deferrable work makes that strategy infeasible, with why.
    o.spot_for_all = base.spot_for_all;
    Plan p = Solve(set, u, o);
    if (mode == BillingMode::kSpot && !p.feasible && !base.spot_for_all) {
      double firm = 0;
      for (const auto& h : u.hours) {
        firm += (h.firm + h.deferrable) * h.minutes / 60.0;
      }
      if (firm > 0) {
        p.note = fmt::format(
            "spot may run only interruptible work, and {:.0f} GPU-hours of this usage are not (give them class "
            "interruptible in the usage file, or --spot-for-all if all of it checkpoints and can restart)",
            firm);
      }
    }
    out[ToString(mode)] = std::move(p);
  }
  return out;
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

SolverOutcome ReadGlpkOutcome(int rc, int mip_status) {
  if (rc == 0 && mip_status == GLP_OPT) {
    return SolverOutcome::kOptimal;
  }
  if (rc == GLP_ENOPFS || (rc == 0 && mip_status == GLP_NOFEAS)) {
    return SolverOutcome::kInfeasible;
  }
  return SolverOutcome::kFailed;
}

Plan OptimizeRental(const OfferSet& set, const UsageTrace& usage, const OptimizeOptions& opt,
                    const std::map<std::string, Plan>* pure) {
  Plan plan = Solve(set, usage, opt);
  // The program prices idle on-demand instances only approximately (keep-or-release is settled
  // per gap afterwards); when that makes a pure strategy cheaper, the pure strategy is the plan.
  if (plan.feasible && plan.cost.stopped + plan.cost.recreate > 0) {
    std::map<std::string, Plan> computed;
    if (pure == nullptr) {
      computed = Pure(set, usage, opt);
      pure = &computed;
    }
    for (const auto& [mode, p] : *pure) {
      const bool allowed = mode == "on_demand" ? opt.allow_on_demand
                           : mode == "spot"    ? opt.allow_spot && opt.spot_for_all
                                               : opt.allow_reserved;
      if (allowed && p.feasible && p.cost.Total() < plan.cost.Total() - 1e-6) {
        plan = p;
        plan.note = "all " + mode + " is cheaper once the keep-or-release costs of idle instances are counted";
      }
    }
  }
  return plan;
}

std::map<std::string, Plan> PureStrategies(const OfferSet& set, const UsageTrace& usage, const OptimizeOptions& base) {
  return Pure(set, usage, base);
}

}  // namespace gpuplan
