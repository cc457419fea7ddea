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

constexpr int64_t kDayMs = 24 * kMillisecondsPerHour;
// The first look back before the range (a day), and the factor it grows by while a condition
// holds from the first tick replayed.
constexpr int64_t kFirstLookBackMs = kDayMs;
constexpr int64_t kLookBackGrowth = 4;

// What the store holds that can be replayed: minute ticks in [data_from, raw_from), raw ticks
// from raw_from on.
struct Sources {
  std::optional<int64_t> data_from;  // none: nothing to replay
  int64_t raw_from = std::numeric_limits<int64_t>::max();
  std::optional<int64_t> raw_first;  // the first raw sample (for the notes)
};

Sources SourcesOf(const StoreExtent& e) {
  Sources s;
  if (e.raw_from_ms) {
    // Raw ticks from the first whole minute of raw samples, or from where the minutes are rolled
    // up to when that is earlier; the minute rows cover the part before.
    const int64_t first_whole = CeilTo(*e.raw_from_ms, kMillisecondsPerMinute);
    s.raw_from = e.minutes_done_ms && e.minute_from_ms ? std::min(first_whole, *e.minutes_done_ms)
                                                       : FloorTo(*e.raw_from_ms, kMillisecondsPerMinute);
    s.raw_first = e.raw_from_ms;
  } else if (e.minutes_done_ms) {
    s.raw_from = *e.minutes_done_ms;
  }
  if (e.minute_from_ms) {
    s.data_from = *e.minute_from_ms;
  }
  if (e.raw_from_ms) {
    const int64_t raw = FloorTo(*e.raw_from_ms, kMillisecondsPerMinute);
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
  void Run(int64_t from, int64_t to, std::vector<Alert>* out) {
    const int64_t minutes_to = std::min(to, sources_.raw_from);
    for (int64_t c = from; c < minutes_to; c += kDayMs) {
      Minutes({c, std::min(c + kDayMs, minutes_to)}, out);
    }
    for (int64_t c = std::max(from, sources_.raw_from); c < to; c += kMillisecondsPerHour) {
      Raw({c, std::min(c + kMillisecondsPerHour, to)}, out);
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
      while (k < procs.size() && std::make_pair(procs[k].from_ms, procs[k].gpu) < std::make_pair(g.bucket_ms, g.gpu)) {
        ++k;
      }
      int processes = 0;
      int64_t most_samples = 0;
      for (std::size_t m = k; m < procs.size() && procs[m].from_ms == g.bucket_ms && procs[m].gpu == g.gpu; ++m) {
        ++processes;
        most_samples = std::max(most_samples, procs[m].samples);
      }
      const bool measured = g.samples > 0 && g.utilization_gpu_n == g.samples;
      AlertGpuState st;
      st.gpu = g.gpu;
      st.time_ms = g.bucket_ms;
      st.processes = processes;
      st.temperature = g.temperature_max;
      st.idle_no_process = processes == 0;
      st.low_utilization = processes > 0 && most_samples >= g.samples && measured && g.utilization_gpu_max &&
                           static_cast<double>(*g.utilization_gpu_max) < rules_.low_util_percent;
      const bool busy = measured && g.utilization_gpu_min &&
                        static_cast<double>(*g.utilization_gpu_min) >= rules_.low_util_percent;
      st.throttle_reasons = busy ? g.clock_event_reasons & kAlertThrottleReasons : 0;
      first_tick_.try_emplace(g.gpu, g.bucket_ms);
      Take(engine_.ObserveState(st), out);
    }
  }

  // The raw samples, each with the processes stored at its time: the agent's own ticks.
  void Raw(const TimeRange& r, std::vector<Alert>* out) {
    const std::vector<GpuSample> samples = store_.GpuSamples(r);           // by time, GPU
    const std::vector<ProcessSample> procs = store_.ProcessSamples(r);     // by time, GPU
    std::size_t k = 0;
    for (const GpuSample& s : samples) {
      while (k < procs.size() && std::make_pair(procs[k].time_ms, procs[k].gpu) < std::make_pair(s.time_ms, s.gpu)) {
        ++k;
      }
      AlertGpuTick t;
      t.sample = s;
      for (std::size_t m = k; m < procs.size() && procs[m].time_ms == s.time_ms && procs[m].gpu == s.gpu; ++m) {
        ++t.processes;
      }
      first_tick_.try_emplace(s.gpu, s.time_ms);
      Take(engine_.ObserveGpu(t), out);
    }
  }

  const MeterStore& store_;
  const AlertRules& rules_;
  const Sources& sources_;
  AlertEngine engine_;
  std::map<int, int64_t> first_tick_;
};

// The month's projection at each whole hour from the start of the month holding range.from_ms;
// the alerts at hours in the range.
std::vector<Alert> BudgetAlerts(const MeterStore& store, const AlertRules& rules, const TimeRange& range,
                                const Offer& offer, const OfferSet& offers) {
  std::vector<Alert> out;
  const std::optional<int64_t> first = StoreFirstMs(store);
  if (!first) {
    return out;
  }
  const int64_t start = ProjectMonthFrom(first, offers, range.from_ms + kMillisecondsPerHour);
  if (start >= range.to_ms) {
    return out;
  }
  const ObservedUse use = ReadObservedUse(store, {start, range.to_ms});
  AlertEngine engine(rules);
  for (int64_t h = start + kMillisecondsPerHour; h < range.to_ms; h += kMillisecondsPerHour) {
    const std::optional<MonthProjection> p = ProjectMonthOf(use, first, offer, offers, h);
    if (!p) {
      continue;
    }
    for (Alert& a : engine.ObserveBudget(h, p->month, Money{p->so_far, offers.currency},
                                         Money{p->projected, offers.currency})) {
      if (a.at_ms >= range.from_ms) {
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
  result.data_from_ms = sources.data_from;
  if (sources.raw_from < range.to_ms && sources.raw_first) {
    result.raw_from_ms = std::max(sources.raw_from, range.from_ms);
  }
  if (sources.data_from && *sources.data_from < range.to_ms) {
    const int64_t data_from = *sources.data_from;
    // Look back until no condition open at range.from_ms holds from the first tick replayed.
    int64_t look_back = kFirstLookBackMs;
    for (;;) {
      const int64_t start = std::max(data_from, range.from_ms - look_back);
      auto replayer = std::make_unique<Replayer>(store, rules, sources);
      replayer->Run(start, range.from_ms, nullptr);
      if (start > data_from && replayer->HeldFromTheStart()) {
        look_back *= kLookBackGrowth;
        continue;
      }
      result.replayed_from_ms = std::min(start, std::max(range.from_ms, data_from));
      replayer->Run(std::max(range.from_ms, data_from), range.to_ms, &result.alerts);
      break;
    }
  }
  if (offer != nullptr && offers != nullptr && rules.monthly_budget && rules.monthly_budget->amount > 0) {
    for (Alert& a : BudgetAlerts(store, rules, range, *offer, *offers)) {
      result.alerts.push_back(std::move(a));
    }
  }
  std::stable_sort(result.alerts.begin(), result.alerts.end(), [](const Alert& a, const Alert& b) {
    return std::make_pair(a.at_ms, a.gpu) < std::make_pair(b.at_ms, b.gpu);
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
  out.from_ms = range.from_ms;
  out.to_ms = range.to_ms;
  if (offer != nullptr) {
    out.rules = PricedAlertRules(out.rules, *offer, *offers, range.from_ms);
  }
  StoreOptions so;
  so.read_only = true;
  const MeterStore store = MeterStore::Open(r.db, so);
  AlertReplay replay = ReplayStoredAlerts(store, out.rules, range, offer, offers ? &*offers : nullptr);
  out.alerts = std::move(replay.alerts);
  out.notifications = GroupAlertNotifications(out.alerts, range.to_ms, out.rules, zone);
  out.replayed_from_ms = replay.replayed_from_ms;
  out.raw_from_ms = replay.raw_from_ms;
  if (!replay.data_from_ms || *replay.data_from_ms >= range.to_ms) {
    out.notes.push_back("nothing to replay from " + FormatZonedMinute(zone, FromUnixMillis(range.from_ms)) + " to " +
                        FormatZonedMinute(zone, FromUnixMillis(range.to_ms)) + ": the store holds no raw samples or 1-minute roll-ups there");
  } else if (*replay.data_from_ms > range.from_ms) {
    out.notes.push_back("nothing before " + FormatZonedMinute(zone, FromUnixMillis(*replay.data_from_ms)) +
                        " is replayed: the store's raw samples and 1-minute roll-ups start there");
  }
  if (out.raw_from_ms && out.replayed_from_ms && *out.raw_from_ms > *out.replayed_from_ms) {
    out.notes.push_back("replayed from the 1-minute roll-ups up to " + FormatZonedMinute(zone, FromUnixMillis(*out.raw_from_ms)) +
                        " (a condition counts when it held the whole minute), from the raw samples after");
  } else if (!out.raw_from_ms && out.replayed_from_ms) {
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
