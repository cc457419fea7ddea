// Observed use from the store's roll-ups, and its money under an offer through the billing
// rules of src/cost/billing.h (docs/meter.md).
#include "meter/observed.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <tuple>

#include "core/error.h"
#include "core/names.h"
#include "catalog/calendar.h"
#include "meter/rollup.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

void AddUtilisation(GpuHourUse& h, const GpuRollup& r, std::chrono::milliseconds span) {
  if (span.count() <= 0) {
    return;
  }
  if (r.utilization_gpu_n > 0) {
    const double mean = static_cast<double>(r.utilization_gpu_sum) / static_cast<double>(r.utilization_gpu_n);
    h.utilisation[UtilisationBucket(mean)] += span;
  } else {
    h.utilisation_unmeasured += span;
  }
}

void AddTotals(GpuHourUse& h, const GpuRollup& r) {
  h.observed += r.observed;
  h.busy += r.busy;
  h.active += r.active;
  if (r.energy_mj) {
    h.energy_mj = rollup::SaturatingAdd(h.energy_mj, *r.energy_mj);
    h.energy_measured = true;
  }
}

}  // namespace

std::string_view UtilisationBucketName(std::size_t bucket) {
  static constexpr std::string_view kNames[kUtilisationBuckets] = {"0", "1-25", "26-50", "51-75", "76-100"};
  return bucket < kUtilisationBuckets ? kNames[bucket] : "?";
}

std::size_t UtilisationBucket(double mean) {
  if (!(mean > 0)) {
    return 0;
  }
  if (mean <= 25) return 1;
  if (mean <= 50) return 2;
  if (mean <= 75) return 3;
  return 4;
}

std::optional<std::pair<std::size_t, std::size_t>> ObservedUse::ObservedHours() const {
  std::optional<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t t = 0; t < up.size(); ++t) {
    if (up[t].count() > 0) {
      if (!out) {
        out = std::make_pair(t, t + 1);
      }
      out->second = t + 1;
    }
  }
  return out;
}

ObservedUse ReadObservedUse(const MeterStore& store, const TimeRange& range) {
  ObservedUse u;
  const UtcMillis start = FloorHour(range.from);
  u.from = start;
  const UtcMillis to = std::max(start, CeilHour(range.to));
  u.hours = static_cast<std::size_t>((to - start) / std::chrono::hours{1});
  if (u.hours == 0) {
    return u;
  }
  // The parts of the range each table holds completely: hours before the hours watermark,
  // minutes before the minutes watermark, raw samples after it.
  const StoreExtent e = store.Extent();
  const UtcMillis hours_done = std::clamp(e.hours_done.value_or(start), start, to);
  const UtcMillis minutes_done = std::clamp(e.minutes_done.value_or(start), hours_done, to);
  const std::vector<GpuRollup> hour_rows = store.GpuRollups(Resolution::kHour, {start, hours_done});
  // Minute rows of the whole rolled-up part: totals for [hours_done, minutes_done), and the
  // utilisation distribution everywhere they are still kept.
  const std::vector<GpuRollup> minute_rows = store.GpuRollups(Resolution::kMinute, {start, minutes_done});
  const std::vector<GpuRollup> raw_rows = store.GpuRollups(Resolution::kRaw, {minutes_done, to});

  std::map<int, std::optional<std::string>> seen;
  for (const auto* rows : {&hour_rows, &minute_rows, &raw_rows}) {
    for (const GpuRollup& r : *rows) {
      auto& uuid = seen[r.gpu];
      if (r.uuid) {
        uuid = r.uuid;
      }
    }
  }
  std::map<int, std::size_t> position;
  for (const auto& [gpu, uuid] : seen) {
    position[gpu] = u.gpus.size();
    u.gpus.push_back(gpu);
    u.uuids.push_back(uuid);
  }
  u.use.assign(u.gpus.size(), std::vector<GpuHourUse>(u.hours));
  // The index of the hour holding `t` (a huge one for a time before the range).
  auto hour_of = [&](UtcMillis t) { return static_cast<std::size_t>((FloorHour(t) - start) / std::chrono::hours{1}); };
  auto cell = [&](const GpuRollup& r) -> GpuHourUse& { return u.use[position.at(r.gpu)][hour_of(r.bucket)]; };
  // Fine data first: minute rows (all of them for the distribution, the unrolled hours' also for
  // the totals) and raw rows (both).
  std::vector<std::vector<std::chrono::milliseconds>> fine(u.gpus.size(),
                                                         std::vector<std::chrono::milliseconds>(u.hours));
  for (const GpuRollup& r : minute_rows) {
    GpuHourUse& h = cell(r);
    ++h.rows;
    AddUtilisation(h, r, r.observed);
    fine[position.at(r.gpu)][hour_of(r.bucket)] += r.observed;
    if (r.bucket >= hours_done) {
      AddTotals(h, r);
    }
  }
  for (const GpuRollup& r : raw_rows) {
    GpuHourUse& h = cell(r);
    ++h.rows;
    AddUtilisation(h, r, r.observed);
    AddTotals(h, r);
  }
  // Hour rows: the totals of the rolled-up hours, and the distribution of the time the minute
  // rows no longer cover (retention), at the hour's mean.
  for (const GpuRollup& r : hour_rows) {
    GpuHourUse& h = cell(r);
    ++h.rows;
    AddTotals(h, r);
    const auto i = position.at(r.gpu);
    const auto t = static_cast<std::size_t>((r.bucket - start) / std::chrono::hours{1});
    const std::chrono::milliseconds rest = r.observed - fine[i][t];
    if (rest.count() > 0) {
      AddUtilisation(h, r, rest);
      if (fine[i][t].count() == 0) {
        ++u.utilisation_from_hour_means;
        h.utilisation_from_hour_mean = true;
      }
    }
  }
  u.up.assign(u.hours, std::chrono::milliseconds{0});
  for (const auto& gpu : u.use) {
    for (std::size_t t = 0; t < u.hours; ++t) {
      u.up[t] = std::max(u.up[t], gpu[t].observed);
    }
  }

  // Processes, from the same tables over the same parts.
  std::map<std::tuple<std::size_t, int, ProcessIdentity>, std::chrono::milliseconds> procs;
  auto add_processes = [&](Resolution res, UtcMillis a, UtcMillis b) {
    if (a >= b) {
      return;
    }
    for (const ProcessUse& p : store.ProcessRollups(res, {a, b})) {
      if (!position.count(p.gpu)) {
        continue;  // a process on a GPU with no GPU sample: no GPU-hour to attribute
      }
      const auto t = hour_of(p.from);
      if (t >= u.hours) {
        continue;
      }
      procs[{t, p.gpu, static_cast<const ProcessIdentity&>(p)}] += p.observed;
    }
  };
  add_processes(Resolution::kHour, start, hours_done);
  add_processes(Resolution::kMinute, hours_done, minutes_done);
  add_processes(Resolution::kRaw, minutes_done, to);
  u.processes.reserve(procs.size());
  for (const auto& [key, observed] : procs) {
    u.processes.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), observed});
  }
  return u;
}

ObservedUse SliceObservedUse(const ObservedUse& use, std::size_t first_hour, std::size_t hours) {
  ObservedUse u;
  first_hour = std::min(first_hour, use.hours);
  hours = std::min(hours, use.hours - first_hour);
  u.from = use.from + std::chrono::hours{static_cast<int64_t>(first_hour)};
  u.hours = hours;
  std::map<int, bool> kept;
  for (std::size_t i = 0; i < use.gpus.size(); ++i) {
    bool seen = false;
    for (std::size_t t = first_hour; t < first_hour + hours && !seen; ++t) {
      seen = use.use[i][t].rows > 0;
    }
    kept[use.gpus[i]] = seen;
    if (!seen) {
      continue;
    }
    u.gpus.push_back(use.gpus[i]);
    u.uuids.push_back(use.uuids[i]);
    const auto begin = use.use[i].begin() + static_cast<std::ptrdiff_t>(first_hour);
    u.use.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(hours));
    for (const GpuHourUse& h : u.use.back()) {
      u.utilisation_from_hour_means += h.utilisation_from_hour_mean ? 1 : 0;
    }
  }
  u.up.assign(hours, std::chrono::milliseconds{0});
  for (const auto& gpu : u.use) {
    for (std::size_t t = 0; t < hours; ++t) {
      u.up[t] = std::max(u.up[t], gpu[t].observed);
    }
  }
  for (const ProcessHourUse& p : use.processes) {
    if (p.hour >= first_hour && p.hour < first_hour + hours && kept[p.gpu]) {
      ProcessHourUse q = p;
      q.hour -= first_hour;
      u.processes.push_back(std::move(q));
    }
  }
  return u;
}

double ObservedBill::Money() const {
  double s = 0;
  for (const auto& g : gpus) s += g.Money();
  return s;
}
double ObservedBill::IdleMoney() const {
  double s = 0;
  for (const auto& g : gpus) s += g.idle_money;
  return s;
}
double ObservedBill::BilledHours() const {
  double s = 0;
  for (const auto& g : gpus) s += g.billed_hours;
  return s;
}
double ObservedBill::IdleBilledHours() const {
  double s = 0;
  for (const auto& g : gpus) s += g.idle_billed_hours;
  return s;
}

ObservedBill BillObservedUse(const ObservedUse& use, const Offer& o, const OfferSet& offers) {
  ObservedBill bill;
  bill.offer = &o;
  bill.currency = offers.currency;
  bill.zone = offers.zone;
  const std::size_t n = use.hours;
  const std::size_t gpus = use.gpus.size();
  const LocalHour start = offers.zone.LocalHourOf(use.from);
  const auto per = static_cast<std::size_t>(std::max(1, o.gpus_per_instance));
  bill.gpus.resize(gpus);
  for (std::size_t i = 0; i < gpus; ++i) {
    GpuBill& g = bill.gpus[i];
    g.gpu = use.gpus[i];
    g.hour_cost.assign(n, 0.0);
    g.hour_billed.assign(n, 0.0);
    g.hour_idle_share.assign(n, 0.0);
  }
  if (gpus == 0 || n == 0) {
    return bill;
  }
  if (gpus % per != 0) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "the machine shows %zu GPUs but an instance of %s holds %zu: the last instance is billed whole, "
                  "split over the %zu GPUs seen in it",
                  gpus, o.id.c_str(), per, gpus % per);
    bill.notes.emplace_back(line);
  }
  // The share of an hour's billed time (card-hours x 1 h) in which GPU i was not busy.
  auto idle_share = [&](std::size_t i, std::size_t t, double billed_hours) {
    if (billed_hours <= 0) {
      return 0.0;
    }
    const double billed_ms = billed_hours * static_cast<double>(kMillisecondsPerHour);
    const double busy = std::min(static_cast<double>(use.use[i][t].busy.count()), billed_ms);
    return 1.0 - busy / billed_ms;
  };
  for (std::size_t first = 0; first < gpus; first += per) {
    const std::size_t last = std::min(gpus, first + per);
    const auto members = static_cast<double>(last - first);
    if (IsReserved(o.mode)) {
      // The term is paid whether the instance is used or not: every hour costs its share.
      for (std::size_t t = 0; t < n; ++t) {
        const double cost = ReservedCostPerHour(o, start + std::chrono::hours{static_cast<int64_t>(t)}) / members;
        for (std::size_t i = first; i < last; ++i) {
          GpuBill& g = bill.gpus[i];
          g.hour_cost[t] = cost;
          g.hour_billed[t] = 1.0;
          g.compute += cost;
        }
      }
    } else {
      // The instance's billed minutes: up time, or for task billing the time any of its GPUs
      // was busy.
      std::vector<double> minutes(n, 0.0);
      for (std::size_t t = 0; t < n; ++t) {
        std::chrono::milliseconds billed{0};
        if (o.billing_starts == BillingStart::kTask) {
          for (std::size_t i = first; i < last; ++i) {
            billed = std::max(billed, use.use[i][t].busy);
          }
        } else {
          billed = use.up[t];
        }
        minutes[t] = static_cast<double>(billed.count()) / static_cast<double>(kMillisecondsPerMinute);
      }
      const InstanceBill ib = BillInstanceHours(o, start, minutes, 1.0, false);
      for (std::size_t i = first; i < last; ++i) {
        GpuBill& g = bill.gpus[i];
        for (std::size_t t = 0; t < n; ++t) {
          g.hour_cost[t] = ib.hour_cost[t] / members;
          g.hour_billed[t] = ib.hour_billed[t];
        }
        g.compute += ib.compute / members;
        g.fixed_fees += ib.fixed_fees / members;
        g.stopped += ib.idle.retention / members;
        g.recreate += ib.idle.recreate / members;
      }
    }
  }
  for (std::size_t i = 0; i < gpus; ++i) {
    GpuBill& g = bill.gpus[i];
    for (std::size_t t = 0; t < n; ++t) {
      g.hour_idle_share[t] = idle_share(i, t, g.hour_billed[t]);
      g.billed_hours += g.hour_billed[t];
      g.idle_billed_hours += g.hour_billed[t] * g.hour_idle_share[t];
      g.idle_money += g.hour_cost[t] * g.hour_idle_share[t];
    }
  }
  if (o.mode == BillingMode::kSpot) {
    bill.notes.emplace_back("spot is billed for the time observed, without expected rework: the interruptions are in it");
  }
  if (!IsReserved(o.mode) && o.billing_starts != BillingStart::kTask) {
    bill.notes.emplace_back(
        std::string("billed from ") + ToString(o.billing_starts) +
        ": the machine's up time as the agent saw it (a stopped machine, or one whose agent was not running, "
        "is down: stopped-instance fee or release, whichever costs less)");
  }
  return bill;
}

std::optional<UtcMillis> StoreFirst(const MeterStore& store) {
  const StoreExtent e = store.Extent();
  std::optional<UtcMillis> first;
  for (const auto& v : {e.raw_from, e.minute_from, e.hour_from}) {
    if (v && (!first || *v < *first)) {
      first = *v;
    }
  }
  return first;
}

namespace {

// The local hours of the month a projection to `to` (a whole hour) covers.
std::pair<LocalHour, LocalHour> MonthOf(UtcMillis to, const Zone& zone) {
  const LocalHour last_hour = zone.LocalHourOf(to - std::chrono::hours{1});
  const LocalHour month_start = MonthStartOf(last_hour);
  return {month_start, AddMonths(month_start, 1)};
}

}  // namespace

UtcMillis ProjectMonthFrom(std::optional<UtcMillis> first, const OfferSet& offers, UtcMillis to) {
  const Zone& zone = offers.zone;
  const UtcMillis month_start = zone.StartOf(MonthOf(CeilHour(to), zone).first);
  return first ? std::max(month_start, FloorHour(*first)) : month_start;
}

std::optional<MonthProjection> ProjectMonthOf(const ObservedUse& month_use, std::optional<UtcMillis> first,
                                              const Offer& offer, const OfferSet& offers, UtcMillis to) {
  const Zone& zone = offers.zone;
  to = CeilHour(to);
  if (!first || FloorHour(*first) >= to) {
    return std::nullopt;
  }
  const auto [month_start, month_end] = MonthOf(to, zone);
  MonthProjection p;
  p.month = FormatLocalHour(month_start).substr(0, 7);
  p.from = ProjectMonthFrom(first, offers, to);
  p.to = to;
  p.month_end = zone.StartOf(month_end);
  if (p.from < month_use.from || p.to > month_use.To()) {
    throw std::logic_error("ProjectMonthOf: the use read does not hold the month so far");
  }
  const auto first_hour = static_cast<std::size_t>((p.from - month_use.from).count() / kMillisecondsPerHour);
  const auto hours = static_cast<std::size_t>((p.to - p.from).count() / kMillisecondsPerHour);
  std::optional<ObservedUse> part;
  if (first_hour != 0 || hours != month_use.hours) {
    part = SliceObservedUse(month_use, first_hour, hours);
  }
  p.so_far = BillObservedUse(part ? *part : month_use, offer, offers).Money();
  const double h = static_cast<double>((p.to - p.from).count()) / static_cast<double>(kMillisecondsPerHour);
  p.per_hour = h > 0 ? p.so_far / h : 0.0;
  p.remaining_hours = static_cast<double>(std::max<int64_t>(0, (p.month_end - p.to).count())) /
                      static_cast<double>(kMillisecondsPerHour);
  p.projected = p.so_far + p.per_hour * p.remaining_hours;
  if (IsReserved(offer.mode)) {
    p.whole_term = true;
    p.projected = p.per_hour * static_cast<double>(HoursBetween(month_start, month_end));
  }
  return p;
}

std::optional<MonthProjection> ProjectMonth(const MeterStore& store, const Offer& offer, const OfferSet& offers,
                                            UtcMillis to) {
  const std::optional<UtcMillis> first = StoreFirst(store);
  to = CeilHour(to);
  if (!first || FloorHour(*first) >= to) {
    return std::nullopt;
  }
  const UtcMillis from = ProjectMonthFrom(first, offers, to);
  return ProjectMonthOf(ReadObservedUse(store, {from, to}), first, offer, offers, to);
}

std::string_view ToString(UsageBasis b) { return b == UsageBasis::kBusy ? "busy" : "allocated"; }

UsageBasis ParseUsageBasis(const std::string& text, const std::string& field) {
  const std::string n = NormalizeName(text);
  if (n == "busy") return UsageBasis::kBusy;
  if (n == "allocated") return UsageBasis::kAllocated;
  throw InputError::Option(field, "expected busy or allocated, got '" + text + "'");
}

UsageTrace UsageTraceFromObserved(const ObservedUse& use, const Zone& zone, UsageBasis basis) {
  UsageTrace t;
  t.start_hour = zone.LocalHourOf(use.from);
  t.zone = zone;
  t.start = FormatZonedMinute(zone, use.from);
  t.source = "meter";
  t.note = std::string("measured: GPU-hours ") + (basis == UsageBasis::kBusy ? "busy" : "allocated (observed)") +
           " per hour";
  t.hours.resize(use.hours);
  for (std::size_t h = 0; h < use.hours; ++h) {
    UsageHour& u = t.hours[h];
    // The hour's own wall clock (across a daylight-saving change too).
    u.hour_of_day = HourOfDay(zone.LocalHourOf(use.from + std::chrono::hours{static_cast<int64_t>(h)}));
    std::chrono::milliseconds used{0};
    for (const auto& gpu : use.use) {
      used += basis == UsageBasis::kBusy ? gpu[h].busy : gpu[h].observed;
    }
    u.firm = static_cast<double>(used.count()) / static_cast<double>(kMillisecondsPerHour);
  }
  return t;
}

UsageTrace UsageTraceFromStore(const MeterStore& store, const TimeRange& range, const Zone& zone,
                               UsageBasis basis) {
  return UsageTraceFromObserved(ReadObservedUse(store, range), zone, basis);
}

std::string UsageTraceToCsv(const UsageTrace& trace) {
  std::string out = "timestamp,gpus\n";
  // Each hour as the instant it began, with the offset then in force (the trace's hours are
  // consecutive elapsed hours from its start).
  const UtcMillis start = trace.zone.StartOf(trace.start_hour);
  for (std::size_t h = 0; h < trace.hours.size(); ++h) {
    // GPU-hours to 1/10,000 (0.36 s of one GPU), trailing zeros dropped.
    char num[64];
    std::snprintf(num, sizeof num, "%.4f", trace.hours[h].Total());
    std::string v = num;
    while (!v.empty() && v.back() == '0') v.pop_back();
    if (!v.empty() && v.back() == '.') v.pop_back();
    if (v == "-0") v = "0";
    out += FormatZonedMinute(trace.zone, start + std::chrono::hours{static_cast<int64_t>(h)}) + "," + v + "\n";
  }
  return out;
}

}  // namespace gpuplan
