// `gpuplan meter report` and `meter export` (docs/meter.md): request -> result.
#include "meter/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <utility>

#include "core/error.h"
#include "core/names.h"
#include "catalog/offer.h"
#include "format/money.h"
#include "format/numbers.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

constexpr double kMsPerHour = static_cast<double>(kMillisecondsPerHour);
constexpr double kMjPerKwh = 3.6e9;  // 1 kWh = 3.6 MJ = 3.6e9 mJ

UtcMillis NowTime(const std::optional<UtcSeconds>& now) { return UtcMillis{now ? *now : UtcNow()}; }

// The one offer a report is priced with.
const Offer& ChooseOffer(const OfferSet& set, const std::string& id) {
  if (set.offers.empty()) {
    throw InputError::Option("offers", "the offers file has no offers", {}, set.file, 0);
  }
  if (id.empty()) {
    if (set.offers.size() == 1) {
      return set.offers.front();
    }
    std::vector<std::string> ids;
    for (const auto& o : set.offers) ids.push_back(o.id);
    throw InputError::Option("offer", "the offers file has " + std::to_string(ids.size()) + " offers: name one with `offer` (" +
                         JoinOr(ids) + ")", {}, set.file, 0);
  }
  for (const auto& o : set.offers) {
    if (o.id == id) {
      return o;
    }
  }
  std::vector<std::string> ids;
  for (const auto& o : set.offers) ids.push_back(o.id);
  throw InputError::Option("offer", "no offer '" + id + "' in " + set.file, ClosestNames(id, ids), set.file, 0);
}

// The group a process belongs to.
std::string GroupKey(MeterGroupBy by, const ProcessIdentity& p) {
  switch (by) {
    case MeterGroupBy::kUser: return p.user && !p.user->empty() ? *p.user : "(unknown user)";
    case MeterGroupBy::kPod:
      if (p.pod_name) return (p.pod_namespace ? *p.pod_namespace + "/" : std::string()) + *p.pod_name;
      return p.pod_uid ? "uid:" + *p.pod_uid : "(no pod)";  // the agent sees the UID, not the name
    case MeterGroupBy::kJob: {
      if (p.slurm_job_id) return "slurm:" + *p.slurm_job_id;
      if (p.pod_name) return "pod:" + (p.pod_namespace ? *p.pod_namespace + "/" : std::string()) + *p.pod_name;
      if (p.pod_uid) return "pod:uid:" + *p.pod_uid;
      if (p.container_id) return "container:" + p.container_id->substr(0, 12);
      std::string cmd = p.command.value_or("");
      cmd = cmd.substr(0, cmd.find(' '));
      if (const auto slash = cmd.rfind('/'); slash != std::string::npos) cmd = cmd.substr(slash + 1);
      return "pid:" + std::to_string(p.pid) + (cmd.empty() ? "" : " " + cmd);
    }
    case MeterGroupBy::kGpu: break;
  }
  return "GPU";
}

const char* const kNoProcess = "(no process)";
const char* const kUnseenProcess = "(unseen process)";

struct GroupAcc {
  MeterGroup g;
  bool energy = false;
  double energy_mj = 0;
  std::set<ProcessIdentity> processes;
};

void AddHist(UtilisationDistribution& into, const std::array<double, kUtilisationBuckets>& ms, double unmeasured_ms,
             double factor) {
  for (std::size_t b = 0; b < kUtilisationBuckets; ++b) {
    into.hours[b] += ms[b] * factor / kMsPerHour;
  }
  into.unmeasured_hours += unmeasured_ms * factor / kMsPerHour;
}

// A reader-friendly range check; throws InputError for a range that is empty or reversed.
// The earliest time a range may start: 2000-01-01T00:00Z, as for the samples of a trace
// (meter/trace.cc), so no store holds anything earlier. A range is read as one row per GPU and
// hour; one from the year 401 (fuzz_serve_api's /api/meter/export?from=401-03-02) asked for 14
// million hours and ran the server out of memory.
constexpr UtcMillis kEarliestRange{std::chrono::milliseconds{946684800000}};
// The longest range one report, timeline or export reads: 1,100 days (three years and a few
// days). Each GPU costs about 1.4 MB of hour rows a year of range (the example week's store, 4
// GPUs over 26 years: 148 MB); 256 GPUs over three years stay near 1 GB, where 26 years would
// take 9 GB and half a minute (issue 26 req. 8: a work budget for every request).
constexpr std::chrono::milliseconds kLongestRange = std::chrono::hours{1100LL * 24};

void CheckRange(UtcMillis from, UtcMillis to, const Zone& zone) {
  if (from < kEarliestRange) {
    throw InputError::Option("from", "`from` (" + FormatZonedHour(zone, from) + ") must be 2000-01-01 or later (no meter holds earlier samples)");
  }
  if (from >= to) {
    throw InputError::Option("from", "`from` (" + FormatZonedHour(zone, from) + ") must be before `to` (" + FormatZonedHour(zone, to) + ")");
  }
  if (to - from > kLongestRange) {
    throw InputError::Option("from", "the range from " + FormatZonedHour(zone, from) + " to " + FormatZonedHour(zone, to) +
                         " is longer than 1,100 days, the most one report reads; report it in parts");
  }
}

// The store opened for reading, with the agent's sampling when the request gives it.
template <typename Request>
MeterStore OpenForReading(const Request& r) {
  StoreOptions so;
  so.read_only = true;
  if (r.sample_interval_seconds) so.sample_interval_seconds = *r.sample_interval_seconds;
  if (r.max_sample_gap_seconds) so.max_sample_gap_seconds = *r.max_sample_gap_seconds;
  return MeterStore::Open(r.db, so);
}

// The first sample's time and the end of the last, when the store holds any.
std::optional<std::pair<UtcMillis, UtcMillis>> StoreBounds(const MeterStore& store) {
  const StoreExtent e = store.Extent();
  std::optional<UtcMillis> first, last;
  for (const auto& v : {e.raw_from, e.minute_from, e.hour_from}) {
    if (v && (!first || *v < *first)) first = *v;
  }
  if (e.raw_to) last = *e.raw_to + std::chrono::milliseconds{1};
  else if (e.minutes_done) last = *e.minutes_done;
  if (!first || !last) {
    return std::nullopt;
  }
  return std::make_pair(*first, *last);
}

// What the store holds, for the note when a range holds nothing.
std::string StoreSpan(const MeterStore& store, const Zone& zone) {
  const auto b = StoreBounds(store);
  if (!b) {
    return "the store holds no samples";
  }
  return "the store holds samples from " + FormatZonedHour(zone, b->first) + " to " + FormatZonedHour(zone, CeilHour(b->second));
}

// The groups, total and idle lines of `rep` (by, priced, currency set) from the use of its range
// and, priced, its bill: the report's figures, one function for a report and for each slot of a
// timeline.
void FillGroups(MeterReport& rep, const ObservedUse& use, const ObservedBill* bill) {
  // Per GPU and hour: the figures, then who they go to.
  std::map<std::string, GroupAcc> groups;
  GroupAcc total;
  total.g.key = "total";
  std::vector<GroupAcc> per_gpu(use.gpus.size());
  std::size_t next_process = 0;  // use.processes is ordered by hour, then GPU
  for (std::size_t t = 0; t < use.hours; ++t) {
    const std::size_t first_process = next_process;
    while (next_process < use.processes.size() && use.processes[next_process].hour == t) {
      ++next_process;
    }
    for (std::size_t i = 0; i < use.gpus.size(); ++i) {
      const GpuHourUse& h = use.use[i][t];
      const double cost = bill ? bill->gpus[i].hour_cost[t] : 0.0;
      const double billed = bill ? bill->gpus[i].hour_billed[t] : 0.0;
      const double idle_share = bill ? bill->gpus[i].hour_idle_share[t] : 0.0;
      std::array<double, kUtilisationBuckets> hist{};
      for (std::size_t b = 0; b < kUtilisationBuckets; ++b) hist[b] = static_cast<double>(h.utilisation[b].count());
      double unmeasured = static_cast<double>(h.utilisation_unmeasured.count());
      // The GPU's own row and the total.
      for (GroupAcc* a : {&per_gpu[i], &total}) {
        MeterGroup& g = a->g;
        g.observed_hours += static_cast<double>(h.observed.count()) / kMsPerHour;
        g.busy_hours += static_cast<double>(h.busy.count()) / kMsPerHour;
        g.active_hours += static_cast<double>(h.active.count()) / kMsPerHour;
        g.idle_hours += static_cast<double>(h.Idle().count()) / kMsPerHour;
        AddHist(g.utilisation, hist, unmeasured, 1.0);
        if (h.energy_measured) {
          a->energy = true;
          a->energy_mj += static_cast<double>(h.energy_mj);
        }
        g.billed_hours += billed;
        g.idle_billed_hours += billed * idle_share;
        g.money += cost;
        g.idle_money += cost * idle_share;
      }
      if (rep.by == MeterGroupBy::kGpu) {
        continue;
      }
      // By user / job / pod. The idle time (no process, no utilisation) and the idle share of
      // the hour's money go to "(no process)"; its utilisation is taken from the 0 bucket first.
      const double observed = static_cast<double>(h.observed.count());
      const double busy = static_cast<double>(h.busy.count());
      double idle_left = static_cast<double>(h.Idle().count());
      std::array<double, kUtilisationBuckets> idle_hist{};
      double idle_unmeasured = 0;
      {
        const double take0 = std::min(idle_left, hist[0]);
        idle_hist[0] = take0;
        hist[0] -= take0;
        idle_left -= take0;
        const double take_u = std::min(idle_left, unmeasured);
        idle_unmeasured = take_u;
        unmeasured -= take_u;
        idle_left -= take_u;
        for (std::size_t b = 1; b < kUtilisationBuckets && idle_left > 0; ++b) {
          const double take = std::min(idle_left, hist[b]);
          idle_hist[b] += take;
          hist[b] -= take;
          idle_left -= take;
        }
      }
      const double energy = static_cast<double>(h.energy_mj);
      if (h.Idle().count() > 0 || billed * idle_share > 0) {
        GroupAcc& a = groups[kNoProcess];
        MeterGroup& g = a.g;
        g.observed_hours += static_cast<double>(h.Idle().count()) / kMsPerHour;
        g.idle_hours += static_cast<double>(h.Idle().count()) / kMsPerHour;
        AddHist(g.utilisation, idle_hist, idle_unmeasured, 1.0);
        if (h.energy_measured && observed > 0) {
          a.energy = true;
          a.energy_mj += energy * (observed - busy) / observed;
        }
        g.billed_hours += billed * idle_share;
        g.idle_billed_hours += billed * idle_share;
        g.money += cost * idle_share;
        g.idle_money += cost * idle_share;
      }
      if (h.busy.count() <= 0 && (billed * (1 - idle_share)) <= 0) {
        continue;
      }
      // The busy part, shared by the processes seen on the GPU in the hour in proportion to the
      // time each was seen (processes seen together all hour split it evenly).
      std::vector<const ProcessHourUse*> here;
      double seen_ms = 0;
      for (std::size_t k = first_process; k < next_process; ++k) {
        if (use.processes[k].gpu == use.gpus[i] && use.processes[k].observed.count() > 0) {
          here.push_back(&use.processes[k]);
          seen_ms += static_cast<double>(use.processes[k].observed.count());
        }
      }
      auto give = [&](GroupAcc& a, double share, const ProcessIdentity* who) {
        MeterGroup& g = a.g;
        g.observed_hours += busy * share / kMsPerHour;
        g.busy_hours += busy * share / kMsPerHour;
        g.active_hours += static_cast<double>(h.active.count()) * share / kMsPerHour;
        AddHist(g.utilisation, hist, unmeasured, share);
        if (h.energy_measured && observed > 0) {
          a.energy = true;
          a.energy_mj += energy * busy / observed * share;
        }
        g.billed_hours += billed * (1 - idle_share) * share;
        g.money += cost * (1 - idle_share) * share;
        if (who != nullptr) {
          a.processes.insert(*who);
        }
      };
      if (here.empty()) {
        give(groups[kUnseenProcess], 1.0, nullptr);
      } else {
        for (const ProcessHourUse* p : here) {
          give(groups[GroupKey(rep.by, p->who)], static_cast<double>(p->observed.count()) / seen_ms, &p->who);
        }
      }
    }
  }
  // Processes seen: per GPU and in all.
  {
    std::map<int, std::size_t> position;
    for (std::size_t i = 0; i < use.gpus.size(); ++i) position[use.gpus[i]] = i;
    for (const ProcessHourUse& p : use.processes) {
      per_gpu[position.at(p.gpu)].processes.insert(p.who);
      total.processes.insert(p.who);
    }
  }
  // Stopped-instance fees and re-creation: the GPU's, the total's, and "(no process)"'s.
  if (bill) {
    for (std::size_t i = 0; i < use.gpus.size(); ++i) {
      const double stopped = bill->gpus[i].stopped + bill->gpus[i].recreate;
      if (stopped <= 0) continue;
      for (GroupAcc* a : {&per_gpu[i], &total}) {
        a->g.stopped_money += stopped;
        a->g.money += stopped;
      }
      if (rep.by != MeterGroupBy::kGpu) {
        groups[kNoProcess].g.stopped_money += stopped;
        groups[kNoProcess].g.money += stopped;
      }
    }
  }
  auto finish = [](GroupAcc& a) {
    if (a.energy) a.g.energy_kwh = a.energy_mj / kMjPerKwh;
    a.g.processes = static_cast<int64_t>(a.processes.size());
    return a.g;
  };
  if (rep.by == MeterGroupBy::kGpu) {
    for (std::size_t i = 0; i < use.gpus.size(); ++i) {
      per_gpu[i].g.key = "GPU " + std::to_string(use.gpus[i]);
      per_gpu[i].g.gpu = use.gpus[i];
      per_gpu[i].g.uuid = use.uuids[i];
      rep.groups.push_back(finish(per_gpu[i]));
    }
  } else {
    for (auto& [key, a] : groups) {
      a.g.key = key;
      rep.groups.push_back(finish(a));
    }
    // Most money first (unpriced: most busy time), the two catch-all groups last.
    std::stable_sort(rep.groups.begin(), rep.groups.end(), [&](const MeterGroup& a, const MeterGroup& b) {
      const bool a_special = a.key == kNoProcess || a.key == kUnseenProcess;
      const bool b_special = b.key == kNoProcess || b.key == kUnseenProcess;
      if (a_special != b_special) return b_special;
      if (rep.priced && a.money != b.money) return a.money > b.money;
      return a.busy_hours > b.busy_hours;
    });
  }
  rep.total = finish(total);
  for (std::size_t i = 0; i < use.gpus.size(); ++i) {
    const MeterGroup& g = per_gpu[i].g;
    IdleSpend s;
    s.gpu = use.gpus[i];
    if (rep.priced) {
      s.hours = g.idle_billed_hours;
      s.money = g.idle_money;
      s.line = "GPU " + std::to_string(s.gpu) + ": " + FormatHours(s.hours) + " h billed with no process, " +
               FormatMoney(s.money, rep.currency);
    } else {
      s.hours = g.idle_hours;
      s.line = "GPU " + std::to_string(s.gpu) + ": " + FormatHours(s.hours) + " h allocated with no process";
    }
    if (s.hours > 0) {
      rep.idle.push_back(std::move(s));
    }
  }
  std::stable_sort(rep.idle.begin(), rep.idle.end(), [](const IdleSpend& a, const IdleSpend& b) {
    return a.money != b.money ? a.money > b.money : a.hours > b.hours;
  });
  }

}  // namespace

std::string MeterGroupKey(MeterGroupBy by, const ProcessIdentity& p) { return GroupKey(by, p); }

const Offer& ChooseMeterOffer(const OfferSet& set, const std::string& id) { return ChooseOffer(set, id); }

std::string_view ToString(MeterGroupBy by) {
  switch (by) {
    case MeterGroupBy::kGpu: return "gpu";
    case MeterGroupBy::kUser: return "user";
    case MeterGroupBy::kJob: return "job";
    case MeterGroupBy::kPod: return "pod";
  }
  return "?";
}

MeterGroupBy ParseMeterGroupBy(const std::string& text, const std::string& field) {
  const std::string n = NormalizeName(text);
  for (MeterGroupBy b : {MeterGroupBy::kGpu, MeterGroupBy::kUser, MeterGroupBy::kJob, MeterGroupBy::kPod}) {
    if (n == ToString(b)) {
      return b;
    }
  }
  throw InputError::Option(field, "expected gpu, user, job or pod, got '" + text + "'");
}

UtcMillis ParseMeterTime(const std::string& text, const Zone& zone, const std::string& field) {
  if (const auto month = ParseYearMonth(text)) {
    return zone.StartOf(*month);
  }
  if (const auto day = ParseIsoDay(text)) {
    return zone.StartOf(*day);
  }
  if (const auto hour = ParseIsoHour(text, zone)) {
    // A time written with its offset is an instant: taken as it is, not through the zone's
    // wall clock (which repeats an hour when daylight saving ends).
    if (const auto iso = ParseIsoTime(text); iso && iso->offset) {
      return UtcMillis{iso->wall.time_since_epoch() - *iso->offset};
    }
    return zone.StartOf(*hour);
  }
  throw InputError::Option(field, "expected an hour such as 2026-03-01T09:00 (a Z or +08:00 suffix accepted), a day 2026-03-01 or a "
                   "month 2026-03, got '" + text + "'");
}

double UtilisationDistribution::Total() const {
  double s = unmeasured_hours;
  for (double h : hours) s += h;
  return s;
}

MeterPricedRange ResolveMeterPricedRange(const std::string& db, const std::string& offers, const std::string& offer,
                                         const std::string& from, const std::string& to, std::optional<UtcSeconds> now,
                                         const GpuCatalog& catalog) {
  if (db.empty()) {
    throw InputError::Option("db", "a meter database is required");
  }
  MeterPricedRange p;
  if (!offers.empty()) {
    p.offers = LoadOffers(offers, catalog);
    p.offer = &ChooseOffer(*p.offers, offer);
    p.zone = p.offers->zone;
  } else if (!offer.empty()) {
    throw InputError::Option("offer", "`offer` needs `offers` FILE");
  }
  p.range = MeterReportRange(from, to, p.zone, now);
  return p;
}

MeterReport RunMeterReport(const MeterReportRequest& r, const GpuCatalog& catalog) {
  const MeterPricedRange priced = ResolveMeterPricedRange(r.db, r.offers, r.offer, r.from, r.to, r.now, catalog);
  MeterReport rep;
  rep.db = r.db;
  rep.by = ParseMeterGroupBy(r.by);
  const std::optional<OfferSet>& offers = priced.offers;
  const Offer* offer = priced.offer;
  rep.zone = priced.zone;
  const Zone& zone = rep.zone;
  const TimeRange range = priced.range;
  rep.from = range.from;
  rep.to = range.to;

  const MeterStore store = OpenForReading(r);
  if (const auto b = StoreBounds(store)) {
    rep.store_from = FloorHour(b->first);
    rep.store_to = CeilHour(b->second);
  }
  const ObservedUse use = ReadObservedUse(store, {rep.from, rep.to});
  rep.gpus = use.gpus;
  rep.utilisation_from_hour_means = use.utilisation_from_hour_means;
  std::optional<ObservedBill> bill;
  if (offer != nullptr) {
    bill = BillObservedUse(use, *offer, *offers);
    rep.priced = true;
    rep.currency = offers->currency;
    rep.offer = MeterOfferSummary{offer->id,
                                  offers->file,
                                  offer->gpu != nullptr ? offer->gpu->name : std::string(),
                                  ToString(offer->mode),
                                  ToString(offer->granularity),
                                  ToString(offer->billing_starts),
                                  offer->gpus_per_instance,
                                  offer->price,
                                  offer->price * (1.0 + offer->addon_fee_ratio),
                                  std::nullopt,
                                  ""};
    if (offer->night && !IsReserved(offer->mode)) {
      rep.offer->night_rate = offer->price * (1.0 + offer->addon_fee_ratio) * offer->night->factor;
      rep.offer->night_window =
          FormatTimeOfDay(offer->night->from_minute) + "-" + FormatTimeOfDay(offer->night->to_minute);
    }
    rep.notes.insert(rep.notes.end(), bill->notes.begin(), bill->notes.end());
    rep.projection = ProjectMonth(store, *offer, *offers, rep.to);
    rep.right_sizing = FindRightSizing(store, {rep.from, rep.to}, &*offers, offer);
  } else {
    rep.notes.push_back("right-sizing needs --offers and --offer (the card the jobs ran on and its price)");
  }
  if (!use.ObservedHours()) {
    rep.notes.push_back("nothing was observed from " + FormatZonedHour(zone, rep.from) + " to " +
                        FormatZonedHour(zone, rep.to) + "; " + StoreSpan(store, zone));
  }
  if (use.utilisation_from_hour_means > 0) {
    rep.notes.push_back(std::to_string(use.utilisation_from_hour_means) +
                        " GPU-hours are older than the minute roll-ups kept: their utilisation distribution uses "
                        "the hour's mean");
  }

  FillGroups(rep, use, bill ? &*bill : nullptr);
  return rep;
}

TimeRange MeterReportRange(const std::string& from, const std::string& to, const Zone& zone,
                           std::optional<UtcSeconds> now_s) {
  TimeRange range;
  const UtcMillis now = CeilHour(NowTime(now_s));
  range.to = to.empty() ? now : std::min(now, CeilHour(ParseMeterTime(to, zone, "to")));
  if (from.empty()) {
    range.from = zone.StartOf(MonthStartOf(zone.LocalHourOf(range.to - std::chrono::milliseconds{1})));
  } else {
    range.from = FloorHour(ParseMeterTime(from, zone, "from"));
  }
  CheckRange(range.from, range.to, zone);
  return range;
}

MeterTimeline RunMeterTimeline(const MeterTimelineRequest& r, const GpuCatalog& catalog) {
  const MeterPricedRange priced = ResolveMeterPricedRange(r.db, r.offers, r.offer, r.from, r.to, r.now, catalog);
  MeterTimeline tl;
  tl.db = r.db;
  const std::string step = NormalizeName(r.step);
  if (step != "hour" && step != "day") {
    throw InputError::Option("step", "expected hour or day, got '" + r.step + "'");
  }
  tl.step = step;
  const std::optional<OfferSet>& offers = priced.offers;
  const Offer* offer = priced.offer;
  tl.zone = priced.zone;
  if (offers) {
    tl.priced = true;
    tl.currency = offers->currency;
  }
  const TimeRange range = priced.range;
  tl.from = range.from;
  tl.to = range.to;
  const std::chrono::milliseconds width = std::chrono::hours{step == "day" ? 24 : 1};
  const auto slots = static_cast<std::size_t>((range.to - range.from + width - std::chrono::milliseconds{1}) / width);
  if (slots > kMaxMeterTimelineSlots) {
    throw InputError::Option("step", std::to_string(slots) + " slots of one " + step + " are over the " +
                         std::to_string(kMaxMeterTimelineSlots) + " a timeline holds: ask for a shorter range or step day");
  }
  StoreOptions so;
  so.read_only = true;
  if (r.sample_interval_seconds) so.sample_interval_seconds = *r.sample_interval_seconds;
  if (r.max_sample_gap_seconds) so.max_sample_gap_seconds = *r.max_sample_gap_seconds;
  const MeterStore store = MeterStore::Open(r.db, so);
  const ObservedUse use = ReadObservedUse(store, range);
  for (UtcMillis from = range.from; from < range.to; from += width) {
    MeterTimelineSlot slot;
    slot.from = from;
    slot.to = std::min(from + width, range.to);
    // The slot as its own report: its hours of the one read, billed alone.
    const ObservedUse part = SliceObservedUse(use, static_cast<std::size_t>((from - use.from) / std::chrono::hours{1}),
                                              static_cast<std::size_t>((slot.to - from) / std::chrono::hours{1}));
    MeterReport rep;
    rep.by = MeterGroupBy::kGpu;
    rep.priced = tl.priced;
    rep.currency = tl.currency;
    std::optional<ObservedBill> bill;
    if (offer != nullptr) {
      bill = BillObservedUse(part, *offer, *offers);
    }
    FillGroups(rep, part, bill ? &*bill : nullptr);
    slot.total = std::move(rep.total);
    tl.slots.push_back(std::move(slot));
  }
  return tl;
}

MeterExport RunMeterExport(const MeterExportRequest& r, const GpuCatalog& catalog) {
  if (r.db.empty()) {
    throw InputError::Option("db", "a meter database is required");
  }
  MeterExport x;
  x.basis = ParseUsageBasis(r.basis, "basis");
  Zone zone;  // UTC
  if (!r.offers.empty()) {
    zone = LoadOffers(r.offers, catalog).zone;
  }
  const MeterStore store = OpenForReading(r);
  const StoreExtent e = store.Extent();
  const UtcMillis now = CeilHour(NowTime(r.now));
  std::optional<UtcMillis> first, last;
  for (const auto& v : {e.raw_from, e.minute_from, e.hour_from}) {
    if (v && (!first || *v < *first)) first = *v;
  }
  if (e.raw_to) {
    last = *e.raw_to + std::chrono::milliseconds{1};
  } else {
    last = e.minutes_done ? e.minutes_done : e.hours_done;
  }
  UtcMillis from{}, to{};
  if (!r.from.empty()) {
    from = FloorHour(ParseMeterTime(r.from, zone, "from"));
  } else if (first) {
    from = FloorHour(*first);
  }
  if (!r.to.empty()) {
    to = std::min(now, CeilHour(ParseMeterTime(r.to, zone, "to")));
  } else if (last) {
    to = std::min(now, CeilHour(*last));
  }
  if (!first && r.from.empty()) {
    throw InputError::Option("db", "the meter database holds no samples to export", {}, r.db, 0);
  }
  CheckRange(from, to, zone);
  x.trace = UsageTraceFromStore(store, {from, to}, zone, x.basis);
  x.trace.source = r.db;
  x.csv = UsageTraceToCsv(x.trace);
  return x;
}

}  // namespace gpuplan
