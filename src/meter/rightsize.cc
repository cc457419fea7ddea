#include "meter/rightsize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "cost/billing.h"
#include "format/money.h"
#include "meter/report.h"

namespace gpuplan {

std::optional<MigProfile> ParseMigProfile(const std::string& name) {
  int g = 0;
  double gb = 0;
  char tail[8] = {};
  // "1g.10gb", "1g.5gb+me" (media extensions: same memory).
  if (std::sscanf(name.c_str(), "%dg.%lf%2s", &g, &gb, tail) < 3 || g < 1 || g > 7 || gb <= 0 ||
      std::string(tail) != "gb") {
    return std::nullopt;
  }
  return MigProfile{g, gb * 1e9};
}

namespace {

std::optional<double> DensePeak(const Gpu& g) {
  if (g.tflops.bf16) return g.tflops.bf16;
  if (g.tflops.fp16) return g.tflops.fp16;
  return g.tflops.fp32;
}

}  // namespace

double OfferGpuHourPrice(const Offer& o, LocalHour local_hour) {
  const int hour_of_day = HourOfDay(local_hour);
  const double instance_hour = o.mode == BillingMode::kOnDemand || o.mode == BillingMode::kSpot
                                   ? o.HourlyPrice(hour_of_day)
                                   : ReservedCostPerHour(o, local_hour);
  return instance_hour / std::max(1, o.gpus_per_instance);
}

double OfferMeanGpuHourPrice(const Offer& o, const TimeRange& range, const Zone& zone) {
  // Every hour the range touches, each at its own wall-clock hour (counted as hours since the
  // epoch in this loop).
  const int64_t first = FloorDiv(UnixMillis(range.from), kMillisecondsPerHour);
  const int64_t last =
      std::max(first + 1, FloorDiv(UnixMillis(range.to) + kMillisecondsPerHour - 1, kMillisecondsPerHour));
  double sum = 0;
  for (int64_t h = first; h < last; ++h) {
    sum += OfferGpuHourPrice(o, zone.LocalHourOf(FromUnixMillis(h * kMillisecondsPerHour)));
  }
  return sum / static_cast<double>(last - first);
}

std::vector<RightSizing> FindRightSizing(const MeterStore& store, const TimeRange& range, 
                                         const OfferSet* offers, const Offer* offer, const RightSizingRules& rules) {
  std::vector<RightSizing> out;
  if (offers == nullptr || offer == nullptr || offer->gpu == nullptr) {
    return out;
  }
  const Gpu& card = *offer->gpu;
  // Prices over the range's hours, night hours at their price: the jobs ran across the day.
  const double price = OfferMeanGpuHourPrice(*offer, range, offers->zone);

  Resolution res = Resolution::kMinute;
  std::vector<ProcessUse> procs = store.ProcessesSeen(res, range);
  if (procs.empty()) {
    res = Resolution::kHour;  // older than the minute roll-ups kept
    procs = store.ProcessesSeen(res, range);
  }
  struct Acc {
    std::chrono::milliseconds observed{};
    UtcMillis from{}, to{};
    uint64_t peak = 0;
  };
  std::map<std::pair<std::string, int>, Acc> jobs;
  for (const ProcessUse& p : procs) {
    Acc& a = jobs[{MeterGroupKey(MeterGroupBy::kJob, p), p.gpu}];
    a.from = a.observed.count() == 0 ? p.from : std::min(a.from, p.from);
    a.to = std::max(a.to, p.to);
    a.observed += p.observed;
    a.peak = std::max<uint64_t>(a.peak, p.gpu_memory_max.value_or(0));
  }
  const std::optional<double> card_peak = DensePeak(card);
  for (const auto& [key, a] : jobs) {
    const double hours = static_cast<double>(a.observed.count()) / kMillisecondsPerHour;
    if (hours < rules.min_hours || a.peak == 0) {
      continue;
    }
    RightSizing r;
    r.job = key.first;
    r.gpu = key.second;
    r.card = card.name;
    r.hours = hours;
    r.peak_memory = a.peak;
    r.gpu_hour_price = price;
    double sum = 0;
    int64_t n = 0;
    for (const GpuRollup& g : store.GpuRollups(res, {a.from, std::max(a.to, a.from + std::chrono::milliseconds{1})}, key.second)) {
      if (const auto m = g.UtilizationGpuMean()) {
        r.peak_utilisation = std::max(r.peak_utilisation, *m);
      }
      sum += static_cast<double>(g.utilization_gpu_sum);
      n += g.utilization_gpu_n;
    }
    r.mean_utilisation = n > 0 ? sum / static_cast<double>(n) : 0;
    const double need_memory = static_cast<double>(a.peak) * rules.memory_margin;
    const double need_share = r.peak_utilisation / 100 * rules.compute_margin;

    // The smallest MIG slice of the same card that holds the job.
    std::optional<RightSizingOption> mig;
    int mig_sevenths = 0;
    for (const auto& name : card.mig_profiles) {
      const auto p = ParseMigProfile(name);
      if (!p || p->sevenths == 7 || p->memory_bytes < need_memory || p->sevenths / 7.0 < need_share) {
        continue;
      }
      if (mig && (p->sevenths > mig_sevenths || (p->sevenths == mig_sevenths && p->memory_bytes >= mig->memory_bytes))) {
        continue;  // keep the smallest slice: fewest sevenths, then least memory
      }
      RightSizingOption o;
      o.kind = "mig";
      o.target = "MIG " + name + " of " + card.name;
      o.memory_bytes = p->memory_bytes;
      o.compute_share = p->sevenths / 7.0;
      // A slice costs its share of the card when the provider rents slices by their share, or
      // when 7/g such jobs are packed on one card (docs/meter.md).
      o.gpu_hour_price = price * o.compute_share;
      o.money_saved = (price - *o.gpu_hour_price) * hours;
      mig = o;
      mig_sevenths = p->sevenths;
    }
    if (mig) {
      r.options.push_back(*mig);
    }
    // Smaller cards with an offer in the file that is cheaper per GPU-hour.
    std::vector<RightSizingOption> cards;
    if (card_peak) {
      for (const Offer& o : offers->offers) {
        if (o.gpu == nullptr || o.gpu == &card || o.gpu->name == card.name) {
          continue;
        }
        // The slower of arithmetic and memory bandwidth: a job's utilisation may come from either,
        // and on a card with a tenth of the bandwidth a memory-bound kernel runs ten times longer.
        const auto peak = DensePeak(*o.gpu);
        if (!peak || card.memory_bandwidth_gb_s <= 0) {
          continue;
        }
        const double share = std::min(*peak / *card_peak, o.gpu->memory_bandwidth_gb_s / card.memory_bandwidth_gb_s);
        if (static_cast<double>(o.gpu->memory_bytes) < need_memory || share < need_share) {
          continue;
        }
        const double p = OfferMeanGpuHourPrice(o, range, offers->zone);
        if (p >= price) {
          continue;
        }
        RightSizingOption c;
        c.kind = "card";
        c.target = o.gpu->name;
        c.memory_bytes = static_cast<double>(o.gpu->memory_bytes);
        c.compute_share = share;
        c.gpu_hour_price = p;
        c.offer_id = o.id;
        c.money_saved = (price - p) * hours;
        cards.push_back(c);
      }
    }
    std::sort(cards.begin(), cards.end(),
              [](const RightSizingOption& x, const RightSizingOption& y) { return *x.money_saved > *y.money_saved; });
    for (std::size_t i = 0; i < cards.size() && i < 3; ++i) {
      r.options.push_back(cards[i]);
    }
    if (r.options.empty()) {
      continue;
    }
    char head[256];
    std::snprintf(head, sizeof head, "%s on GPU %d (%s, %.0f h): peak %.1f GB, peak utilisation %.0f%%", r.job.c_str(),
                  r.gpu, card.name.c_str(), r.hours, static_cast<double>(r.peak_memory) / 1e9, r.peak_utilisation);
    const RightSizingOption& best = r.options.front();
    r.line = std::string(head) + " -> " + best.target + ", saves " + FormatMoney(*best.money_saved, offers->currency);
    out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const RightSizing& x, const RightSizing& y) {
    return x.options.front().money_saved.value_or(0) > y.options.front().money_saved.value_or(0);
  });
  return out;
}

}  // namespace gpuplan
