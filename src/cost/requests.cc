#include "cost/requests.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <set>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"
#include "cost/cost_options.h"
#include "catalog/calendar.h"
#include "fit/fit_request.h"
#include "read/file_text.h"
#include "read/json_fields.h"
#include "read/time_text.h"

namespace gpuplan {

OptimizeOptions RentalRequest::Options() const {
  OptimizeOptions o;
  o.spot_for_all = spot_for_all;
  o.retain_idle = !release_idle;
  o.max_gpus = max_gpus;
  return o;
}

bool CompareResult::AnyFeasible() const {
  if (!by.empty()) {
    return std::any_of(groups.begin(), groups.end(), [](const GroupPlan& g) { return g.plan.feasible; });
  }
  return std::any_of(strategies.begin(), strategies.end(), [](const auto& kv) { return kv.second.feasible; });
}

LocalHour RequestedMonthStart(const CostRequest& r, const Zone& zone) {
  if (r.month.empty()) {
    return NextMonthStart(r.now ? *r.now : UtcNow(), zone);
  }
  const auto h = ParseYearMonth(r.month);
  if (!h) {
    throw InputError::Option("month", "expected a calendar month YYYY-MM, got '" + r.month + "'");
  }
  return *h;
}

OfferSet SelectOffers(const CostRequest& r, const GpuCatalog& cat) {
  if (r.offers.empty()) {
    throw InputError::Option("offers", "an offers file is required");
  }
  OfferSet s = r.offers_text ? ParseOffers(*r.offers_text, r.offers, cat) : LoadOffers(r.offers, cat);
  if (!r.gpu.empty()) {
    const std::string want = cat.Find(r.gpu).name;
    std::vector<Offer> keep;
    for (auto& off : s.offers) {
      if (off.gpu->name == want) {
        keep.push_back(off);
      }
    }
    if (keep.empty()) {
      throw InputError::Option("gpu", "no offer in " + r.offers + " is for " + want);
    }
    s.offers = std::move(keep);
  }
  return s;
}

OfferSet RequireLink(OfferSet set, double gbps, LinkRequirement& out) {
  out.gbps = gbps;
  std::vector<Offer> keep;
  for (Offer& o : set.offers) {
    if (!o.link_gbps) {
      out.left_out.push_back({o.id, std::nullopt, "states no link speed (link.gbps)"});
      continue;
    }
    if (*o.link_gbps >= gbps) {
      keep.push_back(std::move(o));
      continue;
    }
    const LinkUpgrade* best = nullptr;
    for (const LinkUpgrade& u : o.link_upgrades) {
      if (u.gbps >= gbps && (best == nullptr || u.price_per_month < best->price_per_month)) {
        best = &u;
      }
    }
    if (best == nullptr) {
      out.left_out.push_back({o.id, o.link_gbps,
                              fmt::format("its link is {:g} Gbit/s and it sells no upgrade to {:g}", *o.link_gbps, gbps)});
      continue;
    }
    out.bought.push_back({o.id, *o.link_gbps, best->gbps, best->price_per_month});
    o.link_upgrade_bought = *best;
    keep.push_back(std::move(o));
  }
  if (keep.empty()) {
    throw InputError::Option("link_gbps",
                             fmt::format("no offer states a link of at least {:g} Gbit/s or sells an upgrade to it", gbps));
  }
  set.offers = std::move(keep);
  return set;
}

namespace {

// The request's offers, with the link it needs (RentalRequest::link_gbps) bought where needed.
OfferSet SelectRentalOffers(const RentalRequest& r, const GpuCatalog& catalog, std::optional<LinkRequirement>& link) {
  OfferSet set = SelectOffers(r, catalog);
  if (r.link_gbps) {
    link.emplace();
    set = RequireLink(std::move(set), *r.link_gbps, *link);
  }
  return set;
}

UsageTrace LoadUsageAsGiven(const CostRequest& r, const Zone& zone) {
  if (!r.usage.empty() && r.hours_per_month) {
    throw InputError::Option("usage", "give either `usage` or `hours_per_month`");
  }
  if (r.hours_per_month) {
    // A rate per average month (730 h = every hour), scaled to the calendar month's length: 730
    // is every hour of February (672) and of March (744) alike, 365 half of either.
    const double h = *r.hours_per_month;
    if (!(h >= 0 && h <= kHoursPerMonth)) {
      throw InputError::Option("hours_per_month", fmt::format("hours per average month ({:g} h = every hour; scaled to each calendar month's "
                                   "length) must be between 0 and {:g}, got {:g}",
                                   kHoursPerMonth, kHoursPerMonth, h));
    }
    const LocalHour month = RequestedMonthStart(r, zone);
    const auto len = static_cast<double>(HoursBetween(month, AddMonths(month, 1)));
    UsageTrace t = UsageFromHoursPerMonth(std::min(len, h * len / kHoursPerMonth), r.gpus, month, zone);
    if (len != kHoursPerMonth) {
      t.note += fmt::format(" ({:g} h per average month of 730 h, x{:.4f} for this month's {:g} h)", h,
                            len / kHoursPerMonth, len);
    }
    return t;
  }
  if (r.usage.empty()) {
    throw InputError::Option("usage", "usage is required: `usage` FILE (CSV or gpuplan fit --json) or `hours_per_month` H");
  }
  const std::string text = r.usage_text ? *r.usage_text : ReadFileText(r.usage);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    const nlohmann::json j = ParseJsonText(text, r.usage);
    const auto* gpus = j.contains("layout") && j["layout"].contains("gpus") ? &j["layout"]["gpus"] : nullptr;
    const auto* hours = j.contains("time") && j["time"].contains("total_hours") ? &j["time"]["total_hours"] : nullptr;
    if (gpus == nullptr || !gpus->is_number() || hours == nullptr || !hours->is_number()) {
      throw InputError("a gpuplan fit --json result with layout.gpus and time.total_hours (run fit with `tokens`)",
                       r.usage, 0, "time.total_hours");
    }
    // The job as fit priced it: from its start, interruptible or not (fit --json's cost.start,
    // cost.interruptible); a result priced without offers starts at the first hour of the month
    // (the requested or the next one).
    LocalMinute start_minute{RequestedMonthStart(r, zone)};
    bool interruptible = false;
    std::optional<double> spot_minutes;
    double egress_gb = 0;
    if (j.contains("cost") && j["cost"].is_object()) {
      const nlohmann::json& c = j["cost"];
      if (c.contains("start") && c["start"].is_string()) {
        const std::string s = c["start"].get<std::string>();
        try {
          if (s.size() != 16 || s[10] != 'T') {
            throw InputError(s);
          }
          start_minute = ParseJobStart(s, zone, UtcSeconds{});
        } catch (const InputError&) {
          throw InputError("expected YYYY-MM-DDTHH:MM", r.usage, 0, "cost.start");
        }
      }
      if (c.contains("egress_gb")) {
        const nlohmann::json& g = c["egress_gb"];
        if (!g.is_number() || !(g.get<double>() >= 0 && g.get<double>() <= 1e9)) {
          throw InputError("expected GB between 0 and 1e9", r.usage, 0, "cost.egress_gb");
        }
        egress_gb = g.get<double>();
      }
      if (c.contains("spot_checkpoint_minutes")) {
        const nlohmann::json& m = c["spot_checkpoint_minutes"];
        if (!m.is_number() || !(m.get<double>() >= 0 && m.get<double>() <= 10080)) {
          throw InputError("expected minutes between 0 and 10080", r.usage, 0, "cost.spot_checkpoint_minutes");
        }
        spot_minutes = m.get<double>();
      }
      if (c.contains("interruptible")) {
        if (!c["interruptible"].is_boolean()) {
          throw InputError("expected true or false", r.usage, 0, "cost.interruptible");
        }
        interruptible = c["interruptible"].get<bool>();
      }
    }
    UsageTrace t = UsageFromJob(gpus->get<double>(), hours->get<double>(), start_minute, zone, interruptible);
    t.source = r.usage;
    t.spot_checkpoint_minutes = spot_minutes;
    t.egress_gb = egress_gb;
    return t;
  }
  return ParseUsageCsv(text, r.usage, zone);
}

}  // namespace

namespace {

// --extrapolate month|year applied to a trace already loaded.
UsageTrace ExtrapolateAsAsked(const UsageTrace& u, const std::string& extrapolate) {
  if (extrapolate != "month" && extrapolate != "year") {
    throw InputError::Option("extrapolate", "expected month or year, got '" + extrapolate + "'");
  }
  return Extrapolate(u, extrapolate == "year" ? TermUnit::kYear : TermUnit::kMonth);
}

}  // namespace

namespace {
// The spot offers priced with the job's own checkpoint save time when the usage carries one
// (a fit --json job), as fit priced them.
OfferSet WithJobCheckpoint(OfferSet set, const UsageTrace& u) {
  if (u.spot_checkpoint_minutes) {
    for (Offer& o : set.offers) {
      if (o.spot) {
        o.spot->checkpoint_minutes = *u.spot_checkpoint_minutes;
      }
    }
  }
  return set;
}
}  // namespace

namespace {
// The usage as given (CSV, fit --json job or hours per month), extrapolated when asked.
UsageTrace LoadRequestedUsageShape(const CostRequest& r, const Zone& zone) {
  UsageTrace u = LoadUsageAsGiven(r, zone);
  if (r.extrapolate.empty()) {
    // A measured sample shorter than the month it starts in is priced as given; say so.
    if (!r.usage.empty() && !u.from_job && !u.hours.empty()) {
      const LocalHour day0{date::floor<date::days>(u.start_hour)};
      const int64_t days = (HoursBetween(day0, u.EndHour()) + 23) / 24;
      if (days < HoursBetween(day0, AddMonths(day0, 1)) / 24) {  // fewer days than the month
        u.note += std::string(u.note.empty() ? "" : "; ") +
                  fmt::format("a sample of {} days, shorter than a month: priced as given (--extrapolate month "
                              "repeats its weeks over the month)",
                              days);
      }
    }
    return u;
  }
  return ExtrapolateAsAsked(u, r.extrapolate);
}
}  // namespace

UsageTrace LoadRequestedUsage(const CostRequest& r, const Zone& zone) {
  UsageTrace u = LoadRequestedUsageShape(r, zone);
  if (r.egress_gb_per_month > 0) {  // over the trace's hours, per average month of 730 h
    u.egress_gb += r.egress_gb_per_month * static_cast<double>(u.hours.size()) / kHoursPerMonth;
  }
  return u;
}


std::string CheaperSide(const BreakevenPair& p, double hours_per_month) {
  if (!p.hours_per_month) {
    return p.note.substr(0, p.note.find(' '));
  }
  return hours_per_month >= *p.hours_per_month ? p.to->id : p.from->id;
}

// The table's checks of the options given, in the one order every front end reports them: an
// error in the offers file (SelectOffers) comes before the table's, as cost always reported it.
template <typename Req>
void CheckCostRequest(const OptionTable<Req>& table, const Req& r, const GpuCatalog& catalog) {
  try {
    CheckGivenOptions(table, r, r.given);
  } catch (const InputError&) {
    SelectOffers(r, catalog);
    throw;
  }
}

BreakevenResult RunBreakeven(const BreakevenRequest& r, const GpuCatalog& catalog) {
  CheckCostRequest(BreakevenOptionTable(), r, catalog);
  BreakevenResult b;
  b.offers = SelectOffers(r, catalog);
  const Zone& zone = b.offers.zone;
  std::optional<MeasuredBreakeven> measured;
  if (!r.usage.empty()) {
    MeasuredBreakeven m;
    // Hours per month always come from the calendar: a measured sample is repeated over the
    // month it starts in, week by week (as --extrapolate month does; the note gives the measured
    // span, the month and the factor), so breakeven answers what compare and optimize answer
    // with --extrapolate month. One job (a fit result) is the month's usage as it is.
    // The file is read once: the trace as given, then extrapolated.
    UsageTrace given = LoadUsageAsGiven(r, zone);
    const std::string extrapolate =
        !r.extrapolate.empty() ? r.extrapolate : (given.from_job || r.hours_per_month ? "" : "month");
    m.usage = extrapolate.empty() ? std::move(given) : ExtrapolateAsAsked(given, extrapolate);
    measured = std::move(m);
  }
  // The month the break-evens are for: --month, else the measured usage's own month (the same
  // answer whenever it is run), else the month after now.
  b.month_start = !r.month.empty() || !measured || measured->usage.hours.empty()
                      ? RequestedMonthStart(r, zone)
                      : MonthStartOf(measured->usage.start_hour);
  b.month = FormatLocalHour(b.month_start).substr(0, 7);
  b.month_hours = HoursBetween(b.month_start, AddMonths(b.month_start, 1));
  b.pairs = Breakeven(b.offers, b.month_start);
  // A cap per year or in total is the lab's, spread over months and GPUs the break-even does not
  // know: the share is taken in full (the break-even a GPU sees before the cap binds), said so.
  for (const auto& s : b.offers.subsidies) {
    if (s.cap && s.per != CapPeriod::kMonth && s.Covers(b.month_start)) {
      b.notes.push_back(fmt::format(
          "subsidy {}: its cap of {:.0f} {} {} is not applied to one GPU's month: the share ({:.0f}%) is taken "
          "in full, as before the cap is reached; compare and optimize apply the cap over the lab's usage",
          s.id, *s.cap, b.offers.currency, s.per == CapPeriod::kYear ? "a year" : "in total", s.share * 100));
    }
  }
  if (measured) {
    measured->levels = LevelHoursPerMonth(measured->usage, b.month_hours, &measured->scaled);
    // An offer billed by the day pays every day the k-th GPU is used, whole: its break-even (one
    // block of hours a month) does not say which side a measured GPU falls on when its hours are
    // spread over days (10 h on each of 31 days is 744 billed hours, not 310). For such a pair
    // each GPU's month is priced on both offers, at the hours each bills.
    const UsageTrace& u = measured->usage;
    const double scale = measured->scaled && !u.hours.empty()
                             ? static_cast<double>(b.month_hours) / static_cast<double>(u.hours.size())
                             : 1.0;
    const auto days_used = [&u](std::size_t k) {  // days with the k-th GPU (1-based) busy at some hour
      std::set<int64_t> days;
      for (std::size_t i = 0; i < u.hours.size(); ++i) {
        if (u.hours[i].Total() > static_cast<double>(k - 1) + 1e-9) {
          days.insert(date::floor<date::days>(u.HourAt(i)).time_since_epoch().count());
        }
      }
      return static_cast<double>(days.size());
    };
    const auto month_cost = [&b](const Offer& o, double hours) {
      return MonthlyCostPerGpu(o, hours, b.month_start) - MonthlySubsidyPerGpu(b.offers, o, hours, b.month_start);
    };
    for (const auto& p : b.pairs) {
      const bool by_day = p.hours_per_month && (p.from->granularity == Granularity::kDay ||
                                                p.to->granularity == Granularity::kDay);
      std::vector<std::string> sides;
      for (std::size_t k = 0; k < measured->levels.size(); ++k) {
        const double level = measured->levels[k];
        if (!by_day) {
          sides.push_back(CheaperSide(p, level));
          continue;
        }
        const double day_hours = std::min(static_cast<double>(b.month_hours), days_used(k + 1) * 24 * scale);
        const auto billed = [&](const Offer& o) { return o.granularity == Granularity::kDay ? day_hours : level; };
        sides.push_back(month_cost(*p.from, billed(*p.from)) <= month_cost(*p.to, billed(*p.to)) ? p.from->id
                                                                                                : p.to->id);
      }
      measured->cheaper.push_back(std::move(sides));
    }
    b.measured = std::move(measured);
  }
  // Each offer's monthly cost per GPU every 10 used hours, and at the month's length.
  for (const auto& off : b.offers.offers) {
    CostCurve c;
    c.offer = &off;
    const int64_t len = b.month_hours;
    // Every 10 hours, and the month's last hour.
    for (int64_t h = 0; h < len; h += 10) {
      c.points.push_back({h, MonthlyCostPerGpu(off, static_cast<double>(h), b.month_start) -
                                 MonthlySubsidyPerGpu(b.offers, off, static_cast<double>(h), b.month_start)});
    }
    c.points.push_back({len, MonthlyCostPerGpu(off, static_cast<double>(len), b.month_start) -
                                 MonthlySubsidyPerGpu(b.offers, off, static_cast<double>(len), b.month_start)});
    b.curves.push_back(std::move(c));
  }
  return b;
}

CompareResult RunCompare(const CompareRequest& r, const GpuCatalog& catalog) {
  CheckCostRequest(CompareOptionTable(), r, catalog);
  CompareResult c;
  OfferSet set = SelectRentalOffers(r, catalog, c.link);
  c.currency = set.currency;
  c.usage = LoadRequestedUsage(r, set.zone);
  set = WithJobCheckpoint(set, c.usage);
  if (r.by.empty()) {
    c.strategies = PureStrategies(set, c.usage, r.Options());
    return c;
  }
  if (r.by != "provider" && r.by != "region" && r.by != "offer") {
    throw InputError::Option("by", "expected provider, region or offer, got '" + r.by + "'");
  }
  c.by = r.by;
  std::map<std::string, std::vector<std::string>> members;  // key -> offer ids, in file order
  std::vector<std::string> order;
  for (const auto& o : set.offers) {
    std::string key = r.by == "provider" ? o.provider : r.by == "region" ? o.region : o.id;
    if (key.empty()) {
      key = "(none)";
    }
    if (members.count(key) == 0) {
      order.push_back(key);
    }
    members[key].push_back(o.id);
  }
  for (const auto& key : order) {
    OptimizeOptions opt = r.Options();
    opt.only_offers = members[key];
    c.groups.push_back({key, members[key], OptimizeRental(set, c.usage, opt)});
  }
  std::stable_sort(c.groups.begin(), c.groups.end(), [](const GroupPlan& a, const GroupPlan& b) {
    if (a.plan.feasible != b.plan.feasible) {
      return a.plan.feasible;
    }
    return a.plan.feasible && a.plan.cost.Total() < b.plan.cost.Total();
  });
  return c;
}

OptimizeResult RunOptimize(const OptimizeRequest& r, const GpuCatalog& catalog) {
  CheckCostRequest(OptimizeOptionTable(), r, catalog);
  const OptimizeOptions oo = r.Options();
  OptimizeResult o;
  OfferSet set = SelectRentalOffers(r, catalog, o.link);
  o.currency = set.currency;
  o.usage = LoadRequestedUsage(r, set.zone);
  set = WithJobCheckpoint(set, o.usage);
  o.pure = PureStrategies(set, o.usage, oo);
  o.plan = OptimizeRental(set, o.usage, oo, &o.pure);
  for (const auto& [mode, p] : o.pure) {
    if (p.feasible) {
      o.savings[mode] = o.plan.feasible && p.cost.Total() > 0
                            ? std::optional<double>(1.0 - o.plan.cost.Total() / p.cost.Total())
                            : std::nullopt;
    }
  }
  o.usage_minus = OptimizeRental(set, ScaleUsage(o.usage, kUsageMinusFactor), oo);
  o.usage_plus = OptimizeRental(set, ScaleUsage(o.usage, kUsagePlusFactor), oo);
  return o;
}

namespace {

// The best training throughput per GPU of the task on one card: fit's search over up to one
// 8-GPU node, ranked by GPU-hours (the layout that does the most work per GPU-hour).
double TokensPerGpuSecond(const TcoRequest& r, const Gpu& gpu, const GpuCatalog& catalog, const std::string& data_dir) {
  FitRequest f;
  f.model = r.model;
  f.task = r.task;
  f.gpu = gpu.name;
  f.max_gpus = 8;
  f.max_gpus_given = true;
  f.objective = "gpu-hours";
  f.presets_only = r.presets_only;
  const FitInputs in = PrepareFit(f, data_dir);
  const FitSearch search = SearchFit(f, in, SearchOptionsOf(f, in, catalog));
  if (!search.training || search.training->ranked.empty()) {
    throw InputError::Option("model", "the " + r.task + " job of " + r.model + " fits on no layout of up to 8 x " + gpu.name +
                         ": no speed ratio (give `speed_ratio`)");
  }
  const Candidate& c = search.training->ranked.front();
  return c.time.tokens_per_second / static_cast<double>(c.layout.gpus);
}

}  // namespace

TcoJobResult RunTco(const TcoRequest& r, const GpuCatalog& catalog, const std::string& data_dir) {
  CheckCostRequest(TcoOptionTable(), r, catalog);
  TcoJobResult t;
  OfferSet set = SelectRentalOffers(r, catalog, t.link);
  t.currency = set.currency;
  t.usage = LoadRequestedUsage(r, set.zone);
  // The horizon repeats the usage (§7): a usage shorter than a month is completed first, so that
  // repeating it does not run its hours back to back (a 2.4-hour fit job repeated hour after hour
  // was a GPU busy all year, 273,600 CNY to rent; two weeks of weekdays without their last weekend
  // lost every weekend). One job is a month's use, the rest of the month idle; a measured
  // sample's whole weeks are repeated over the whole horizon, Mondays on Mondays, as
  // --extrapolate does over a month (the note says so).
  if (!t.usage.hours.empty() && t.usage.EndHour() < AddMonths(t.usage.start_hour, 1)) {
    if (t.usage.from_job) {
      t.usage = PadToMonth(t.usage);
      t.usage.note += std::string(t.usage.note.empty() ? "" : "; ") +
                      "one run of the job a month, the rest of each month idle";
    } else {
      CheckHorizonMonths(r.horizon_months);
      const LocalHour day0{date::floor<date::days>(t.usage.start_hour)};
      const auto months = static_cast<int64_t>(r.horizon_months);
      t.usage = ExtrapolateTo(t.usage, AddMonths(day0, months), fmt::format("{}-month horizon", months));
    }
  }
  set = WithJobCheckpoint(set, t.usage);
  for (const auto& [v, field] : {std::pair{r.own.card_price, "card_price"},
                                 std::pair{r.own.depreciation_years, "depreciation_years"}}) {
    if (!(v > 0)) {
      throw InputError::Option(field, "must be positive");
    }
  }
  for (const auto& [v, field] : {std::pair{r.own.server_per_gpu, "server_per_gpu"},
                                 std::pair{r.own.network_per_gpu, "network_per_gpu"},
                                 std::pair{r.own.room_per_gpu_month, "room_per_gpu_month"},
                                 std::pair{r.own.power_price_kwh, "power_price"},
                                 std::pair{r.own.ops_per_month, "ops_per_month"},
                                 std::pair{r.own.failure_rate_per_year, "failure_rate"}}) {
    if (!(v >= 0)) {
      throw InputError::Option(field, "must be zero or positive");
    }
  }
  if (!(r.own.pue >= 1)) {
    throw InputError::Option("pue", "must be at least 1 (facility power / IT power, The Green Grid)");
  }
  if (r.own.resale_fraction < 0 || r.own.resale_fraction > 1) {
    throw InputError::Option("resale", "must be between 0 and 1");
  }
  OwnershipCosts own = r.own;
  if (!r.buy_gpu_name.empty()) {
    try {
      own.buy_gpu = &catalog.Find(r.buy_gpu_name);
    } catch (const InputError& e) {
      throw InputError::Option("buy_gpu", e.message(), e.suggestions());
    }
    if (!(own.buy_gpu->tdp_watts > 0)) {
      throw InputError::Option("buy_gpu", "the catalog has no TDP for " + own.buy_gpu->name + " (its power cannot be priced)");
    }
  }
  t.speed_basis = own.speed_ratio == 1.0 ? "" : "--speed-ratio";
  if (!r.model.empty()) {
    if (r.task == "infer") {
      throw InputError::Option("task", "the speed ratio is taken from training throughput: give a training task, or `speed_ratio`");
    }
    const Gpu& rented = *set.offers.front().gpu;
    const Gpu& bought = own.buy_gpu != nullptr ? *own.buy_gpu : rented;
    const double mine = TokensPerGpuSecond(r, bought, catalog, data_dir);
    const double theirs = TokensPerGpuSecond(r, rented, catalog, data_dir);
    own.speed_ratio = mine / theirs;
    t.speed_basis = fmt::format("fit: {} {} at {:.0f} tokens/s per {} and {:.0f} per {}", r.model, r.task, mine,
                                bought.name, theirs, rented.name);
  }
  t.tco = BuyVersusRent(set, t.usage, own, r.horizon_months, r.Options());
  return t;
}

}  // namespace gpuplan
