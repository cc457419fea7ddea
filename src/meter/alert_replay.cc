// Alerts of a stored period: the store's samples and minute roll-ups through the AlertEngine
// (alert_replay.h, docs/meter-alerts.md).
#include "meter/alert_replay.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <utility>

#include "core/error.h"
#include "meter/monitor.h"
#include "meter/observed.h"
#include "meter/report.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

constexpr std::chrono::milliseconds kDay = std::chrono::hours{24};
constexpr std::chrono::milliseconds kHour = std::chrono::hours{1};
// The first look back before the range (a day), and the factor it grows by while a condition
// holds from the first tick replayed.
constexpr std::chrono::milliseconds kFirstLookBack = kDay;
constexpr int64_t kLookBackGrowth = 4;

// What the store holds that can be replayed: minute ticks in [data_from, raw_from), raw ticks
// from raw_from on.
struct Sources {
  std::optional<UtcMillis> data_from;  // none: nothing to replay
  UtcMillis raw_from = UtcMillis::max();
  std::optional<UtcMillis> raw_first;  // the first raw sample (for the notes)
};

Sources SourcesOf(const StoreExtent& e) {
  constexpr std::chrono::milliseconds kMinute = std::chrono::minutes{1};
  Sources s;
  if (e.raw_from) {
    // Raw ticks from the first whole minute of raw samples, or from where the minutes are rolled
    // up to when that is earlier; the minute rows cover the part before.
    const UtcMillis first_whole = CeilTo(*e.raw_from, kMinute);
    s.raw_from = e.minutes_done && e.minute_from ? std::min(first_whole, *e.minutes_done)
                                                 : FloorTo(*e.raw_from, kMinute);
    s.raw_first = e.raw_from;
  } else if (e.minutes_done) {
    s.raw_from = *e.minutes_done;
  }
  if (e.minute_from) {
    s.data_from = *e.minute_from;
  }
  if (e.raw_from) {
    const UtcMillis raw = FloorTo(*e.raw_from, kMinute);
    s.data_from = s.data_from ? std::min(*s.data_from, raw) : raw;
  }
  return s;
}

// One replay: an engine fed the store's ticks in time order, remembering each GPU's first tick.
class Replayer {
 public:
  Replayer(const MeterStore& store, const AlertRules& rules, const Sources& sources)
      : store_(store), rules_(rules), sources_(sources), engine_(rules) {}

  // Feeds the ticks of [from, to); the alerts raised go to `out` (none when null).
  void Run(UtcMillis from, UtcMillis to, std::vector<Alert>* out) {
    const UtcMillis minutes_to = std::min(to, sources_.raw_from);
    for (UtcMillis c = from; c < minutes_to; c += kDay) {
      Minutes({c, std::min(c + kDay, minutes_to)}, out);
    }
    for (UtcMillis c = std::max(from, sources_.raw_from); c < to; c += kHour) {
      Raw({c, std::min(c + kHour, to)}, out);
    }
  }

  // A condition holds from a GPU's first tick: it may have begun before the replay did.
  bool HeldFromTheStart() const {
    for (const auto& [gpu, since] : engine_.Holding()) {
      const auto it = first_tick_.find(gpu);
      if (it != first_tick_.end() && since <= it->second) {
        return true;
      }
    }
    return false;
  }

 private:
  void Take(std::vector<Alert> alerts, std::vector<Alert>* out) {
    if (out != nullptr) {
      for (Alert& a : alerts) {
        out->push_back(std::move(a));
      }
    }
  }

  // One tick per GPU and minute, at the minute's start; a condition counts when it held all the
  // minute (alert_replay.h).
  void Minutes(const TimeRange& r, std::vector<Alert>* out) {
    const std::vector<GpuRollup> gpus = store_.GpuRollups(Resolution::kMinute, r);
    const std::vector<ProcessUse> procs = store_.ProcessRollups(Resolution::kMinute, r);  // by bucket, GPU
    std::size_t k = 0;
    for (const GpuRollup& g : gpus) {
      while (k < procs.size() && std::make_pair(procs[k].from, procs[k].gpu) < std::make_pair(g.bucket, g.gpu)) {
        ++k;
      }
      int processes = 0;
      int64_t most_samples = 0;
      for (std::size_t m = k; m < procs.size() && procs[m].from == g.bucket && procs[m].gpu == g.gpu; ++m) {
        ++processes;
        most_samples = std::max(most_samples, procs[m].samples);
      }
      const bool measured = g.samples > 0 && g.utilization_gpu_n == g.samples;
      AlertGpuState st;
      st.gpu = g.gpu;
      st.time = g.bucket;
      st.processes = processes;
      st.temperature = g.temperature_max;
      st.idle_no_process = processes == 0;
      st.low_utilization = processes > 0 && most_samples >= g.samples && measured && g.utilization_gpu_max &&
                           static_cast<double>(*g.utilization_gpu_max) < rules_.low_util_percent;
      const bool busy = measured && g.utilization_gpu_min &&
                        static_cast<double>(*g.utilization_gpu_min) >= rules_.low_util_percent;
      st.throttle_reasons = busy ? g.clock_event_reasons & kAlertThrottleReasons : 0;
      first_tick_.try_emplace(g.gpu, g.bucket);
      Take(engine_.ObserveState(st), out);
    }
  }

  // The raw samples, each with the processes stored at its time: the agent's own ticks.
  void Raw(const TimeRange& r, std::vector<Alert>* out) {
    const std::vector<GpuSample> samples = store_.GpuSamples(r);           // by time, GPU
    const std::vector<ProcessSample> procs = store_.ProcessSamples(r);     // by time, GPU
    std::size_t k = 0;
    for (const GpuSample& s : samples) {
      while (k < procs.size() && std::make_pair(procs[k].time, procs[k].gpu) < std::make_pair(s.time, s.gpu)) {
        ++k;
      }
      AlertGpuTick t;
      t.sample = s;
      for (std::size_t m = k; m < procs.size() && procs[m].time == s.time && procs[m].gpu == s.gpu; ++m) {
        ++t.processes;
      }
      first_tick_.try_emplace(s.gpu, s.time);
      Take(engine_.ObserveGpu(t), out);
    }
  }

  const MeterStore& store_;
  const AlertRules& rules_;
  const Sources& sources_;
  AlertEngine engine_;
  std::map<int, UtcMillis> first_tick_;
};

// The month's projection at each whole hour from the start of the month holding range.from;
// the alerts at hours in the range.
std::vector<Alert> BudgetAlerts(const MeterStore& store, const AlertRules& rules, const TimeRange& range,
                                const Offer& offer, const OfferSet& offers) {
  std::vector<Alert> out;
  const std::optional<UtcMillis> first = StoreFirst(store);
  if (!first) {
    return out;
  }
  const UtcMillis start = ProjectMonthFrom(first, offers, range.from + kHour);
  if (start >= range.to) {
    return out;
  }
  const ObservedUse use = ReadObservedUse(store, {start, range.to});
  AlertEngine engine(rules);
  for (UtcMillis h = start + kHour; h < range.to; h += kHour) {
    const std::optional<MonthProjection> p = ProjectMonthOf(use, first, offer, offers, h);
    if (!p) {
      continue;
    }
    for (Alert& a : engine.ObserveBudget(h, p->month, Money{p->so_far, offers.currency},
                                         Money{p->projected, offers.currency})) {
      if (a.at >= range.from) {
        out.push_back(std::move(a));
      }
    }
  }
  return out;
}

}  // namespace

AlertReplay ReplayStoredAlerts(const MeterStore& store, const AlertRules& rules, const TimeRange& range,
                               const Offer* offer, const OfferSet* offers) {
  AlertReplay result;
  const Sources sources = SourcesOf(store.Extent());
  result.data_from = sources.data_from;
  if (sources.raw_from < range.to && sources.raw_first) {
    result.raw_from = std::max(sources.raw_from, range.from);
  }
  if (sources.data_from && *sources.data_from < range.to) {
    const UtcMillis data_from = *sources.data_from;
    // Look back until no condition open at range.from holds from the first tick replayed.
    std::chrono::milliseconds look_back = kFirstLookBack;
    for (;;) {
      const UtcMillis start = std::max(data_from, range.from - look_back);
      auto replayer = std::make_unique<Replayer>(store, rules, sources);
      replayer->Run(start, range.from, nullptr);
      if (start > data_from && replayer->HeldFromTheStart()) {
        look_back *= kLookBackGrowth;
        continue;
      }
      result.replayed_from = std::min(start, std::max(range.from, data_from));
      replayer->Run(std::max(range.from, data_from), range.to, &result.alerts);
      break;
    }
  }
  if (offer != nullptr && offers != nullptr && rules.monthly_budget && rules.monthly_budget->amount > 0) {
    for (Alert& a : BudgetAlerts(store, rules, range, *offer, *offers)) {
      result.alerts.push_back(std::move(a));
    }
  }
  std::stable_sort(result.alerts.begin(), result.alerts.end(), [](const Alert& a, const Alert& b) {
    return std::make_pair(a.at, a.gpu) < std::make_pair(b.at, b.gpu);
  });
  return result;
}

MeterAlerts RunMeterAlerts(const MeterAlertsRequest& r, const GpuCatalog& catalog) {
  const MeterPricedRange priced = ResolveMeterPricedRange(r.db, r.offers, r.offer, r.from, r.to, r.now, catalog);
  MeterAlerts out;
  out.db = r.db;
  if (!r.alerts.empty()) {
    out.rules = LoadMeterMonitorOptions(r.alerts).rules;  // the webhooks are checked, not sent
  }
  const std::optional<OfferSet>& offers = priced.offers;
  const Offer* offer = priced.offer;
  out.zone = priced.zone;
  if (offer != nullptr) {
    out.offer = offer->id;
  }
  const Zone& zone = out.zone;
  const TimeRange range = priced.range;
  out.from = range.from;
  out.to = range.to;
  if (offer != nullptr) {
    out.rules = PricedAlertRules(out.rules, *offer, *offers, range.from);
  }
  StoreOptions so;
  so.read_only = true;
  const MeterStore store = MeterStore::Open(r.db, so);
  AlertReplay replay = ReplayStoredAlerts(store, out.rules, range, offer, offers ? &*offers : nullptr);
  out.alerts = std::move(replay.alerts);
  out.notifications = GroupAlertNotifications(out.alerts, range.to, out.rules, zone);
  out.replayed_from = replay.replayed_from;
  out.raw_from = replay.raw_from;
  if (!replay.data_from || *replay.data_from >= range.to) {
    out.notes.push_back("nothing to replay from " + FormatZonedMinute(zone, range.from) + " to " +
                        FormatZonedMinute(zone, range.to) + ": the store holds no raw samples or 1-minute roll-ups there");
  } else if (*replay.data_from > range.from) {
    out.notes.push_back("nothing before " + FormatZonedMinute(zone, *replay.data_from) +
                        " is replayed: the store's raw samples and 1-minute roll-ups start there");
  }
  if (out.raw_from && out.replayed_from && *out.raw_from > *out.replayed_from) {
    out.notes.push_back("replayed from the 1-minute roll-ups up to " + FormatZonedMinute(zone, *out.raw_from) +
                        " (a condition counts when it held the whole minute), from the raw samples after");
  } else if (!out.raw_from && out.replayed_from) {
    out.notes.push_back("replayed from the 1-minute roll-ups (a condition counts when it held the whole minute)");
  }
  if (!out.rules.gpu_hour_price) {
    out.notes.push_back("no --offers and no gpu_hour_price in the alerts file: the alerts name no money");
  }
  if (out.rules.monthly_budget && offer == nullptr) {
    out.notes.push_back("the monthly budget needs --offers (the month's projection): no budget alerts");
  }
  return out;
}

}  // namespace gpuplan
