#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

#include "core/error.h"
#include "cost/job_pricing.h"
#include "fit/fit_options.h"
#include "fit/fit_request.h"
#include "format/money.h"
#include "format/numbers.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

constexpr double kInfeasible = std::numeric_limits<double>::infinity();
constexpr int64_t kDefaultMaxGpus = 64;
constexpr int kDescentPasses = 4;

// GPU counts a job is sized at: 1, 2, 4, 8, then whole 8-GPU nodes (16, 24, ... 64), then about
// half as many again each step in whole nodes (96, 144, 216, ...), up to `max`: a few dozen
// searches even at max_gpus 100,000.
std::vector<int64_t> Counts(int64_t max) {
  std::vector<int64_t> out;
  for (int64_t g = 1; g <= std::min<int64_t>(max, 8); g *= 2) {
    out.push_back(g);
  }
  for (int64_t g = 16; g <= std::min<int64_t>(max, 64); g += 8) {
    out.push_back(g);
  }
  for (int64_t g = 96; g <= max; g = (g * 3 / 2 + 7) / 8 * 8) {
    out.push_back(g);
  }
  return out;
}

int DaysIn(LocalDay month) {
  const date::year_month_day ymd{month};
  return DaysInMonth(static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()));
}

// The days a job may run in `month` (both included), or nullopt when it does not run then.
std::optional<std::pair<LocalDay, LocalDay>> RunDays(const PlanTrainingJob& j, LocalDay month, LocalDay first_month) {
  const LocalDay last = month + date::days{DaysIn(month) - 1};
  if (j.every == JobRepeat::kOnce) {
    const LocalDay in = j.window_from ? *j.window_from : first_month;
    if (in < month || in > last) {
      return std::nullopt;
    }
    return std::pair{j.window_from.value_or(month), j.window_to.value_or(last)};
  }
  if (!j.window_from) {
    return std::pair{month, last};
  }
  // A monthly window repeats its days of the month (the 31st in a 30-day month: the 30th).
  const auto day_of = [&](LocalDay d) {
    const unsigned dd = static_cast<unsigned>(date::year_month_day{d}.day());
    return month + date::days{std::min<int>(static_cast<int>(dd), DaysIn(month)) - 1};
  };
  return std::pair{day_of(*j.window_from), day_of(*j.window_to)};
}

struct Item {
  std::string id;
  const PlanTrainingJob* job = nullptr;
  const PlanService* service = nullptr;
  std::map<const Gpu*, PlanSizing> cheapest;  // training: the count with the cheapest rental alone
  std::map<const Gpu*, PlanSizing> fastest;   // training: the fewest hours
  std::map<const Gpu*, std::string> why_not;  // cards it cannot use
  double window_hours = 0;                    // training: its shortest window
};

class Planner {
 public:
  Planner(const PlanWorkload& w, const OfferSet& offers, const GpuCatalog& catalog, const std::string& data_dir)
      : w_(w), offers_(offers), catalog_(catalog), data_dir_(data_dir), months_(w.Months()) {
    for (const auto& o : offers_.offers) {
      if (std::find(cards_.begin(), cards_.end(), o.gpu) == cards_.end()) {
        cards_.push_back(o.gpu);
      }
    }
    for (const Gpu* g : cards_) {
      card_offers_[g] = OffersFor(offers_, g);
    }
  }

  const std::vector<const Gpu*>& cards() const { return cards_; }
  const std::vector<LocalDay>& months() const { return months_; }
  int solved() const { return solved_; }

  void Size(std::vector<Item>& items) {
    for (auto& it : items) {
      it.job ? SizeTraining(it) : SizeService(it);
    }
  }

  // The runs of `item` in month `mi` with the given sizing (none: it does not run then).
  std::optional<PlanRun> RunOf(const Item& item, const PlanSizing& s, std::size_t mi) const {
    const LocalDay month = months_[mi];
    PlanRun r;
    r.id = item.id;
    r.sizing = s;
    if (item.service) {
      r.serving = true;
      r.start = LocalHour{month};
      r.end = LocalHour{month + date::days{DaysIn(month)}};
      for (int d = 0; d < DaysIn(month); ++d) {
        for (int h = 0; h < 24; ++h) {
          r.gpu_hours += static_cast<double>(s.gpus_by_hour[static_cast<std::size_t>(h)]);
        }
      }
      return r;
    }
    // The run that starts in this month, or one started earlier that runs into it (a job run once
    // whose window crosses the month's end).
    const LocalHour month_start{month};
    const LocalHour month_end{month + date::days{DaysIn(month)}};
    for (std::size_t k = 0; k <= mi; ++k) {
      const auto days = RunDays(*item.job, months_[k], w_.first_month);
      if (!days) {
        continue;
      }
      const LocalHour start =
          LocalHour{days->first + date::days{s.start_day}} + std::chrono::hours{s.start_hour_of_day};
      const LocalHour end = start + std::chrono::hours{static_cast<int64_t>(std::ceil(s.hours - 1e-9))};
      if (start >= month_end || end <= month_start) {
        continue;
      }
      r.interruptible = item.job->interruptible;
      r.start = start;
      r.end = end;
      r.continued = start < month_start;
      // Its GPU-hours in the month: [start, start + hours) within the month, the last part-hour
      // as the part it runs (RunMinutes).
      double held = 0;
      for (LocalHour h = std::max(start, month_start); h < std::min(end, month_end); h += std::chrono::hours{1}) {
        held += RunMinutes(r, h) / 60.0;
      }
      r.gpu_hours = static_cast<double>(s.gpus) * held;
      return r;
    }
    return std::nullopt;
  }

  // The minutes of the hour from `h` a run holds its GPUs: a service and a training run's whole
  // hours 60, a training run's last part-hour the part it runs (a 9.74 h run from 00:00 holds
  // 09:00-10:00 for 44.4 minutes), as `fit --offers` prices the run (UsageFromJob).
  static double RunMinutes(const PlanRun& r, LocalHour h) {
    if (r.serving) {
      return 60;
    }
    const double left = r.sizing.hours * 60.0 - 60.0 * static_cast<double>((h - r.start).count());
    return std::clamp(left, 0.0, 60.0);
  }

  // One card's usage in month `mi` from its runs: each hour a run holds its GPUs (training: from
  // its start for its hours, the last part-hour for the minutes it runs; serving: its GPUs at that
  // hour of the day). An hour has one `minutes` for all its demand: where runs of different minutes
  // share an hour, the longest (the others' GPUs counted for it: more than they run, never less),
  // or with `shortest` the shortest (exact only where reserved instances hold the GPUs of the
  // longer runs: Rental checks that). `longer`: per hour, the GPUs of runs holding more than the
  // hour's shortest part (0 where all share one part).
  UsageTrace UsageOf(std::size_t mi, const std::vector<PlanRun>& runs, bool shortest = false,
                     std::vector<double>* longer = nullptr) const {
    const LocalDay month = months_[mi];
    UsageTrace u;
    u.start_hour = LocalHour{month};
    u.zone = offers_.zone;
    u.start = FormatLocalHour(u.start_hour);
    u.source = w_.file;
    u.hours.resize(static_cast<std::size_t>(DaysIn(month) * 24));
    std::vector<double> minutes(u.hours.size(), 0.0);   // the longest run's minutes of each hour
    std::vector<double> least(u.hours.size(), 60.0);    // the shortest run's
    std::vector<std::vector<std::pair<double, double>>> parts(u.hours.size());  // (minutes, GPUs)
    for (std::size_t i = 0; i < u.hours.size(); ++i) {
      u.hours[i].hour_of_day = static_cast<int>(i % 24);
    }
    for (const PlanRun& r : runs) {
      for (LocalHour h = std::max(r.start, u.start_hour); h < r.end; h += std::chrono::hours{1}) {
        const auto i = static_cast<std::size_t>((h - u.start_hour).count());
        if (i >= u.hours.size()) {
          break;  // the rest is the next month's
        }
        const double m = RunMinutes(r, h);
        minutes[i] = std::max(minutes[i], m);
        least[i] = std::min(least[i], m);
        parts[i].emplace_back(m, r.serving ? static_cast<double>(r.sizing.gpus_by_hour[static_cast<std::size_t>(HourOfDay(h))])
                                           : static_cast<double>(r.sizing.gpus));
        if (r.serving) {
          u.hours[i].firm += static_cast<double>(r.sizing.gpus_by_hour[static_cast<std::size_t>(HourOfDay(h))]);
        } else if (r.interruptible) {
          u.hours[i].interruptible += static_cast<double>(r.sizing.gpus);
        } else {
          u.hours[i].firm += static_cast<double>(r.sizing.gpus);
        }
      }
    }
    if (longer) {
      longer->assign(u.hours.size(), 0.0);
    }
    for (std::size_t i = 0; i < u.hours.size(); ++i) {
      if (minutes[i] > 0) {
        u.hours[i].minutes = shortest ? least[i] : minutes[i];
      }
      if (longer) {
        for (const auto& [m, g] : parts[i]) {
          (*longer)[i] += m > least[i] + 1e-9 ? g : 0.0;
        }
      }
    }
    return u;
  }

  // The cheapest rental of `runs` on `gpu` in month `mi` (cached by the runs' ids and sizes), and
  // the usage it priced. Where runs of different parts share an hour (a run's last part-hour
  // beside a service), the hour priced at the shortest part is exact when the rental's reserved
  // instances hold the GPUs of every longer run that hour (they pay by the calendar; the rest run
  // the shortest part on demand or spot): taken then, when cheaper; else each such hour at its
  // longest part (never less than the bill).
  struct Priced {
    Plan plan;
    bool shortest = false;  // UsageOf(..., shortest)
  };
  const Priced& Rental(const Gpu* gpu, std::size_t mi, const std::vector<PlanRun>& runs) {
    std::string key = gpu->name + "|" + std::to_string(mi);
    for (const PlanRun& r : runs) {
      key += fmt::format("|{}:{}:{}:{}", r.id, r.sizing.gpus, (r.start - LocalHour{months_[mi]}).count(),
                         r.sizing.hours);  // exact hours: the last part-hour's minutes are priced
    }
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      ++solved_;
      Priced p;
      if (!runs.empty()) {
        std::vector<double> longer;
        const UsageTrace safe = UsageOf(mi, runs, false, &longer);
        if (std::any_of(longer.begin(), longer.end(), [](double g) { return g > 0; })) {
          const UsageTrace u = UsageOf(mi, runs, true);
          Plan s = OptimizeRental(card_offers_.at(gpu), u);
          if (s.feasible && ReservedHold(gpu, s, u, longer)) {
            p.plan = std::move(s);
            p.shortest = true;
          }
        }
        if (!p.shortest) {
          p.plan = OptimizeRental(card_offers_.at(gpu), safe);
        }
      } else {
        p.plan.feasible = true;
        p.plan.currency = offers_.currency;
      }
      it = cache_.emplace(key, std::move(p)).first;
    }
    return it->second;
  }

  // Whether `p`'s reserved instances hold `longer[i]` GPUs at every hour i of `u`.
  bool ReservedHold(const Gpu* gpu, const Plan& p, const UsageTrace& u, const std::vector<double>& longer) const {
    std::vector<double> held(longer.size(), 0.0);
    for (const ReservedTerm& t : p.reserved_terms) {
      int per = 0;
      for (const Offer& o : card_offers_.at(gpu).offers) {
        if (o.id == t.offer) {
          per = o.gpus_per_instance;
        }
      }
      for (std::size_t i = 0; i < held.size(); ++i) {
        const LocalHour h = u.HourAt(i);
        if (t.start <= h && h < t.end) {
          held[i] += static_cast<double>(t.instances * per);
        }
      }
    }
    for (std::size_t i = 0; i < longer.size(); ++i) {
      if (longer[i] > held[i] + 1e-9) {
        return false;
      }
    }
    return true;
  }

  // The runs an assignment puts on card `g` in month `mi`.
  std::vector<PlanRun> RunsOn(const std::vector<Item>& items, const std::vector<const PlanSizing*>& pick, const Gpu* g,
                              std::size_t mi) const {
    std::vector<PlanRun> runs;
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (pick[i]->gpu == g) {
        if (auto r = RunOf(items[i], *pick[i], mi)) {
          runs.push_back(std::move(*r));
        }
      }
    }
    return runs;
  }

  // The total of an assignment (item index -> card and sizing), every month, every card.
  double Total(const std::vector<Item>& items, const std::vector<const PlanSizing*>& pick) {
    double total = 0;
    for (std::size_t mi = 0; mi < months_.size(); ++mi) {
      for (const Gpu* g : cards_) {
        std::vector<PlanRun> runs = RunsOn(items, pick, g, mi);
        if (runs.empty()) {
          continue;
        }
        const Plan& p = Rental(g, mi, runs).plan;
        if (!p.feasible) {
          return kInfeasible;
        }
        total += p.cost.Total();
      }
    }
    return total;
  }

  // Chooses a card per item: each item's cheapest card alone, then one item at a time to another
  // card while the total falls (the items on one card share its instances).
  std::vector<const PlanSizing*> Assign(const std::vector<Item>& items, bool fastest) {
    std::vector<const PlanSizing*> pick(items.size(), nullptr);
    for (std::size_t i = 0; i < items.size(); ++i) {
      const auto& options = fastest && items[i].job ? items[i].fastest : items[i].cheapest;
      double best = kInfeasible;
      for (const auto& [g, s] : options) {
        double alone;
        if (fastest && items[i].job) {
          alone = s.hours;  // the fastest card and count
        } else {
          std::vector<const PlanSizing*> one{&s};
          alone = Total(std::vector<Item>{items[i]}, one);
        }
        if (alone < best) {
          best = alone;
          pick[i] = &s;
        }
      }
      if (!pick[i]) {
        return {};
      }
    }
    if (fastest) {
      return pick;  // the cards are fixed by speed; only the rental is priced
    }
    double total = Total(items, pick);
    for (int pass = 0; pass < kDescentPasses; ++pass) {
      bool moved = false;
      for (std::size_t i = 0; i < items.size(); ++i) {
        for (const auto& [g, s] : items[i].cheapest) {
          if (g == pick[i]->gpu) {
            continue;
          }
          const PlanSizing* was = pick[i];
          pick[i] = &s;
          const double t = Total(items, pick);
          if (t < total - 0.005) {
            total = t;
            moved = true;
          } else {
            pick[i] = was;
          }
        }
      }
      // Where each training run starts in its window: its first day, a week, two and three weeks
      // later or the last day it still fits, at midnight or a night window's opening; the
      // cheapest total (runs on one card share its instances: moving one off another's hours can
      // save a term, or be needed under an offer's stock).
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (!items[i].job) {
          continue;
        }
        const PlanSizing base = *pick[i];
        const double room = items[i].window_hours - std::ceil(base.hours - 1e-9);
        const int last_day = room >= 0 ? static_cast<int>(std::floor(room / 24.0)) : 0;
        std::set<int> days{0, 7, 14, 21, last_day};
        for (int d : days) {
          for (int h : StartHours(base.gpu)) {
            if (d > last_day || (d == base.start_day && h == base.start_hour_of_day) ||
                24.0 * d + h + std::ceil(base.hours - 1e-9) > items[i].window_hours) {
              continue;
            }
            PlanSizing z = base;
            z.start_day = d;
            z.start_hour_of_day = h;
            placed_.push_back(z);
            const PlanSizing* was = pick[i];
            pick[i] = &placed_.back();
            const double t = Total(items, pick);
            if (t < total - 0.005) {
              total = t;
              moved = true;
            } else {
              pick[i] = was;
            }
          }
        }
      }
      if (!moved) {
        break;
      }
    }
    return pick;
  }

  // The months of an assignment, with every card's rental and the runs.
  std::vector<PlanMonth> Months(const std::vector<Item>& items, const std::vector<const PlanSizing*>& pick) {
    std::vector<PlanMonth> out;
    for (std::size_t mi = 0; mi < months_.size(); ++mi) {
      PlanMonth m;
      m.month = months_[mi];
      std::vector<double> busy(static_cast<std::size_t>(DaysIn(m.month) * 24), 0.0);
      for (const Gpu* g : cards_) {
        std::vector<PlanRun> runs = RunsOn(items, pick, g, mi);
        if (runs.empty()) {
          continue;
        }
        PlanCardMonth c;
        c.gpu = g;
        const Priced& priced = Rental(g, mi, runs);
        c.usage = UsageOf(mi, runs, priced.shortest);
        c.rental = priced.plan;
        const double card_total = c.rental.cost.Total();
        const double hours = c.usage.TotalGpuHours();
        std::vector<std::string> modes;  // of the pool, in the order reserved, on demand, spot
        const auto mode_of = [&](const std::string& id) {
          for (const Offer& o : card_offers_.at(g).offers) {
            if (o.id == id) {
              return std::string(ToString(o.mode));
            }
          }
          return std::string();
        };
        const auto add_mode = [&](const std::string& mode_name) {
          if (!mode_name.empty() && std::find(modes.begin(), modes.end(), mode_name) == modes.end()) {
            modes.push_back(mode_name);
          }
        };
        for (const auto& t : c.rental.reserved_terms) add_mode(mode_of(t.offer));
        for (const auto& [id, h] : c.rental.on_demand_gpu_hours) if (h > 0) add_mode(mode_of(id));
        for (const auto& [id, h] : c.rental.spot_gpu_hours) if (h > 0) add_mode(mode_of(id));
        for (PlanRun& r : runs) {
          r.share = hours > 0 ? card_total * r.gpu_hours / hours : 0;
          for (const std::string& mode : modes) {
            if (mode != "spot" || r.interruptible) {
              r.billed_by.push_back(mode);
            }
          }
          m.runs.push_back(r);
        }
        for (std::size_t h = 0; h < busy.size() && h < c.usage.hours.size(); ++h) {
          busy[h] += c.usage.hours[h].Total();
        }
        m.cards.push_back(std::move(c));
      }
      m.peak_gpus = busy.empty() ? 0 : *std::max_element(busy.begin(), busy.end());
      out.push_back(std::move(m));
    }
    return out;
  }

 private:
  // The hours of the day a run may start at: midnight and each night window's opening (its first
  // whole hour) among the card's offers.
  std::vector<int> StartHours(const Gpu* g) const {
    std::vector<int> out{0};
    for (const Offer& o : card_offers_.at(g).offers) {
      if (o.night) {
        const int h = static_cast<int>((o.night->from_minute.count() + 59) / 60);
        if (h > 0 && h < 24 && std::find(out.begin(), out.end(), h) == out.end()) {
          out.push_back(h);
        }
      }
    }
    return out;
  }

  FitRequest Base(const FitRequest& job, const Gpu* g) const {
    FitRequest r = job;
    r.gpu = g->name;
    r.objective = "gpu-hours";
    r.top = 1;
    r.offers.clear();
    return r;
  }

  void SizeTraining(Item& it) {
    const PlanTrainingJob& j = *it.job;
    const FitInputs in = PrepareFit(Base(j.fit, cards_.front()), data_dir_);
    const int64_t max = w_.limits.max_gpus.value_or(kDefaultMaxGpus);
    // The shortest window it has in any month: a run must finish inside it.
    double window_hours = kInfeasible;
    for (std::size_t mi = 0; mi < months_.size(); ++mi) {
      if (const auto d = RunDays(j, months_[mi], w_.first_month)) {
        window_hours = std::min(window_hours, 24.0 * static_cast<double>((d->second - d->first).count() + 1));
      }
    }
    it.window_hours = window_hours;
    for (const Gpu* g : cards_) {
      std::optional<PlanSizing> cheapest, fastest;
      double cheapest_money = kInfeasible;
      std::string slowest_note;
      for (int64_t count : Counts(max)) {
        FitRequest r = Base(j.fit, g);
        r.gpus = count;
        r.pinned.gpus = count;
        r.max_gpus = count;
        r.max_gpus_given = true;
        const FitSearch s = SearchFit(r, in, SearchOptionsOf(r, in, catalog_));
        if (!s.training || s.training->ranked.empty()) {
          continue;
        }
        const Candidate& c = s.training->ranked.front();
        PlanSizing z;
        z.gpu = g;
        z.gpus = c.layout.gpus;
        z.layout = c.layout;
        z.workload = c.workload;
        z.hours = c.time.total_hours.value_or(0);
        z.tokens_per_second = c.time.tokens_per_second;
        z.moe = IsMoe(in.model.spec);
        z.family = in.overhead.framework.family;
        if (!(z.hours > 0)) {
          continue;
        }
        if (!fastest || z.hours < fastest->hours) {
          fastest = z;
        }
        // The run must end inside the window: it starts on the hour, so its hours rounded up fit.
        const double whole = std::ceil(z.hours - 1e-9);
        if (whole > window_hours) {
          slowest_note = fmt::format("{} x {} needs {:.0f} h, longer than its window ({:.0f} h)", count, g->name, z.hours,
                                     window_hours);
          continue;
        }
        // Where it starts: the window's first hour, or a night window's opening on its first day
        // when the run still ends inside the window; the cheaper alone (the earlier on a tie).
        for (int start : StartHours(g)) {
          if (whole + start > window_hours) {
            continue;
          }
          PlanSizing zs = z;
          zs.start_hour_of_day = start;
          Item alone = it;
          alone.cheapest = {{g, zs}};
          const double money = Total(std::vector<Item>{alone}, {&alone.cheapest.at(g)});
          if (money < cheapest_money - 0.005) {
            cheapest_money = money;
            cheapest = zs;
          }
        }
      }
      if (cheapest) {
        it.cheapest[g] = *cheapest;
      } else {
        it.why_not[g] = !fastest               ? "does not fit at up to " + std::to_string(max) + " GPUs"
                        : !slowest_note.empty() ? "no count finishes within its window (" + slowest_note + ")"
                                                : "no offer of the card can run it";
      }
      if (fastest && cheapest) {
        it.fastest[g] = *fastest;
      }
    }
  }

  void SizeService(Item& it) {
    const PlanService& v = *it.service;
    FitRequest base = Base(v.fit, cards_.front());
    base.qps = v.PeakQps();
    const FitInputs in = PrepareFit(base, data_dir_);
    const int64_t max = w_.limits.max_gpus.value_or(kDefaultMaxGpus);
    for (const Gpu* g : cards_) {
      FitRequest r = Base(v.fit, g);
      r.qps = v.PeakQps();
      r.max_gpus = max;
      r.max_gpus_given = true;
      const FitSearch s = SearchFit(r, in, SearchOptionsOf(r, in, catalog_));
      if (!s.inference || s.inference->ranked.empty()) {
        it.why_not[g] = s.inference && !s.inference->closest.empty() ? s.inference->closest
                                                                      : "no replica meets the rate and latency";
        continue;
      }
      const InferencePlan& p = s.inference->ranked.front();
      PlanSizing z;
      z.gpu = g;
      z.gpus = p.layout.gpus;
      z.layout = p.layout;
      z.workload = p.workload;
      z.family = in.overhead.framework.family;
      z.requests_per_second = p.time.requests_per_second;
      if (!(z.requests_per_second > 0)) {
        it.why_not[g] = "no request rate could be estimated";
        continue;
      }
      bool too_many = false;
      for (int h = 0; h < 24 && !too_many; ++h) {
        // At least one replica all day: a service stays up when no one asks.
        const double replicas = std::max(1.0, std::ceil(v.QpsAt(h) / z.requests_per_second - 1e-9));
        too_many = replicas * static_cast<double>(z.gpus) > static_cast<double>(max);
        z.gpus_by_hour[static_cast<std::size_t>(h)] = static_cast<int64_t>(replicas) * z.gpus;
      }
      if (too_many) {
        it.why_not[g] = "does not fit at up to " + std::to_string(max) + " GPUs";
        continue;
      }
      it.cheapest[g] = z;
    }
  }

  const PlanWorkload& w_;
  const OfferSet& offers_;
  const GpuCatalog& catalog_;
  std::string data_dir_;
  std::vector<LocalDay> months_;
  std::vector<const Gpu*> cards_;
  std::map<const Gpu*, OfferSet> card_offers_;
  std::map<std::string, Priced> cache_;
  std::deque<PlanSizing> placed_;  // sizings moved in their windows (stable addresses for the picks)
  int solved_ = 0;
};

// Subsidy caps hold across cards and months: each month's rentals are solved apart, so a cap
// per month, year or in total is applied here in time order, and money beyond it is not paid
// back (the bill can only rise: never an understated cost).
void ApplySubsidyCaps(const OfferSet& offers, std::vector<PlanMonth>& months) {
  std::map<std::pair<std::string, int64_t>, double> used;
  for (PlanMonth& m : months) {
    for (PlanCardMonth& c : m.cards) {
      for (auto& entry : c.rental.subsidies) {  // not a structured binding: clang 14 cannot capture one
        const std::string& id = entry.first;
        double& money = entry.second;
        const auto s = std::find_if(offers.subsidies.begin(), offers.subsidies.end(),
                                    [&](const Subsidy& x) { return x.id == id; });
        if (s == offers.subsidies.end() || !s->cap) {
          continue;
        }
        double& u = used[{id, s->PeriodOf(LocalHour{m.month})}];
        const double take = std::min(money, std::max(0.0, *s->cap - u));
        c.rental.cost.subsidies -= money - take;
        money = take;
        u += take;
      }
    }
  }
}

void SumMonth(PlanMonth& m, std::optional<double> budget) {
  m.cost = {};
  for (const PlanCardMonth& c : m.cards) {
    const CostItems& x = c.rental.cost;
    m.cost.reserved += x.reserved;
    m.cost.on_demand += x.on_demand;
    m.cost.spot += x.spot;
    m.cost.stopped += x.stopped;
    m.cost.recreate += x.recreate;
    m.cost.fixed_fees += x.fixed_fees;
    m.cost.addons_included += x.addons_included;
    m.cost.link_upgrades_included += x.link_upgrades_included;
    m.cost.subsidies += x.subsidies;
    m.cost.egress += x.egress;
  }
  m.total = m.cost.Total();
  if (budget) {
    m.within_budget = m.total <= *budget + 0.005;
  }
}

double TrainingHours(const std::vector<PlanMonth>& months) {
  double h = 0;
  for (const PlanMonth& m : months) {
    for (const PlanRun& r : m.runs) {
      if (!r.serving && !r.continued) {
        h += r.sizing.hours;
      }
    }
  }
  return h;
}

OfferSet OnlyProviders(const OfferSet& offers, const std::vector<std::string>& providers) {
  if (providers.empty()) {
    return offers;
  }
  OfferSet out = offers;
  out.offers.clear();
  for (const Offer& o : offers.offers) {
    if (std::find(providers.begin(), providers.end(), o.provider) != providers.end()) {
      out.offers.push_back(o);
    }
  }
  return out;
}

struct Solved {
  bool feasible = false;
  std::string unserved;
  std::vector<PlanMonth> months;
  double total = 0;
  std::map<std::string, std::string> assignment;
  std::vector<std::string> notes;
  int solved = 0;
};

Solved Solve(const PlanWorkload& w, const OfferSet& offers, const GpuCatalog& catalog, const std::string& data_dir,
             bool fastest) {
  Solved out;
  if (offers.offers.empty()) {
    out.unserved = "no offer is left to rent from";
    return out;
  }
  Planner p(w, offers, catalog, data_dir);
  std::vector<Item> items;
  for (const auto& j : w.training) {
    items.push_back(Item{j.id, &j, nullptr, {}, {}, {}, 0});
  }
  for (const auto& v : w.serving) {
    items.push_back(Item{v.id, nullptr, &v, {}, {}, {}, 0});
  }
  p.Size(items);
  for (const Item& it : items) {
    for (const auto& [g, why] : it.why_not) {
      out.notes.push_back(fmt::format("{} cannot use {}: {}", it.id, g->name, why));
    }
    if (it.cheapest.empty()) {
      out.unserved = fmt::format("{} cannot run on any offered card", it.id);
      out.solved = p.solved();
      return out;
    }
  }
  const std::vector<const PlanSizing*> pick = p.Assign(items, fastest);
  if (pick.empty()) {
    out.unserved = "no card can serve every job";
    out.solved = p.solved();
    return out;
  }
  out.months = p.Months(items, pick);
  for (const PlanMonth& m : out.months) {
    for (const PlanCardMonth& c : m.cards) {
      if (!c.rental.feasible) {
        out.unserved = fmt::format("the offers of {} cannot serve {}'s usage: {}", c.gpu->name,
                                   FormatLocalHour(LocalHour{m.month}).substr(0, 7), c.rental.note);
        out.solved = p.solved();
        return out;
      }
    }
  }
  ApplySubsidyCaps(offers, out.months);
  for (PlanMonth& m : out.months) {
    SumMonth(m, w.limits.budget_per_month);
    out.total += m.total;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    out.assignment[items[i].id] = pick[i]->gpu->name;
  }
  out.feasible = true;
  out.solved = p.solved();
  return out;
}

}  // namespace

PlanResult RunPlan(const PlanWorkload& w, const OfferSet& all_offers, const GpuCatalog& catalog,
                   const std::string& data_dir, const PlanOptions& o) {
  PlanResult r;
  r.workload_file = w.file;
  r.offers_files = {all_offers.file};
  r.currency = all_offers.currency;
  r.zone = all_offers.zone;
  r.budget_per_month = w.limits.budget_per_month;
  if (all_offers.currency != w.currency) {
    throw InputError("the workload is in " + w.currency + " but the offers are in " + all_offers.currency, w.file, 0,
                     "currency");
  }
  // Each job's fit options checked as fit checks them (the model found, values in bounds), the
  // error placed at the job in the workload file.
  const auto check = [&](const FitRequest& fit, const std::string& where, int line) {
    try {
      CheckFitRequest(fit, data_dir);
      PrepareFit(fit, data_dir);  // the checks of the model and the workload
    } catch (const InputError& e) {
      throw InputError(e.message(), w.file, line, where + e.field(), e.suggestions());
    }
  };
  for (const auto& j : w.training) {
    check(j.fit, "training[" + j.id + "].", j.line);
  }
  for (const auto& v : w.serving) {
    check(v.fit, "serving[" + v.id + "].", v.line);
  }
  const OfferSet offers = OnlyProviders(all_offers, o.providers.empty() ? w.limits.providers : o.providers);
  if (offers.offers.empty()) {
    throw InputError("no offer is from the providers the workload allows", w.file, 0, "limits.providers");
  }
  Solved s = Solve(w, offers, catalog, data_dir, o.fastest);
  r.rentals_solved = s.solved;
  r.notes = s.notes;
  if (!s.feasible) {
    r.unserved = s.unserved;
    return r;
  }
  r.feasible = true;
  r.months = std::move(s.months);
  r.total = s.total;
  r.assignment = s.assignment;
  r.hours_to_finish = TrainingHours(r.months);
  if (w.limits.max_gpus) {
    for (const PlanMonth& m : r.months) {
      if (m.peak_gpus > static_cast<double>(*w.limits.max_gpus) + 1e-9) {
        r.notes.push_back(fmt::format("{}: {:.0f} GPUs at the busiest hour, above max_gpus {}",
                                      FormatLocalHour(LocalHour{m.month}).substr(0, 7), m.peak_gpus,
                                      *w.limits.max_gpus));
      }
    }
  }
  // What the time model behind the hours and sizes is worth on each card rented (fit's line).
  if (const auto accuracy = LoadTimeAccuracyIn(data_dir)) {
    std::set<std::tuple<bool, bool, const Gpu*, bool, std::string>> seen;
    for (const PlanMonth& m : r.months) {
      for (const PlanRun& x : m.runs) {
        const bool moe = !x.serving && x.sizing.moe;
        const Workload& run_workload = x.sizing.workload;
        const AccuracySetup setup{run_workload.fp8 || (x.serving && run_workload.weight_dtype == WeightDtype::kFp8), x.sizing.family};
        if (!seen.insert({x.serving, moe, x.sizing.gpu, setup.fp8, setup.family}).second) {
          continue;
        }
        if (auto note = AccuracyFor(accuracy.get(), !x.serving, *x.sizing.gpu, moe, &setup)) {
          (x.serving ? r.serving_accuracy : moe ? r.training_moe_accuracy : r.training_accuracy)
              .push_back(std::move(*note));
        }
      }
    }
  }
  // One check per machine type rented: its GPUs per instance, as `check --expect` reads them, and
  // the storage rate its training runs read at (check's --samples-per-second, --bytes-per-sample).
  std::set<std::pair<std::string, int>> types;
  for (const PlanMonth& m : r.months) {
    for (const PlanCardMonth& c : m.cards) {
      std::set<std::string> used;
      for (const auto& t : c.rental.reserved_terms) used.insert(t.offer);
      for (const auto& [id, h] : c.rental.on_demand_gpu_hours) if (h > 0) used.insert(id);
      for (const auto& [id, h] : c.rental.spot_gpu_hours) if (h > 0) used.insert(id);
      for (const Offer& x : offers.offers) {
        if (used.count(x.id) && types.insert({x.gpu->name, x.gpus_per_instance}).second) {
          r.checks.push_back({x.gpu->name, x.gpus_per_instance, 0, 0, ""});
        }
      }
    }
  }
  for (PlanCheck& c : r.checks) {
    for (const PlanMonth& m : r.months) {
      for (const PlanRun& x : m.runs) {
        if (x.serving || x.sizing.gpu->name != c.gpu || x.sizing.workload.seq <= 0) {
          continue;
        }
        // A machine holds gpus_per_instance of the run's GPUs: that share of its sequences a second.
        const double share = std::min(1.0, static_cast<double>(c.gpus_per_instance) / static_cast<double>(x.sizing.gpus));
        const double sps = x.sizing.tokens_per_second / static_cast<double>(x.sizing.workload.seq) * share;
        if (sps > c.samples_per_second) {
          c.samples_per_second = sps;
          c.bytes_per_sample = x.sizing.workload.seq * 4;
        }
      }
    }
    c.command = fmt::format("gpuplan check --expect \"{}x {}\"", c.gpus_per_instance, c.gpu);
    if (c.samples_per_second > 0) {
      c.command += fmt::format(" --samples-per-second {} --bytes-per-sample {}", FormatNumber(c.samples_per_second, 4),
                               c.bytes_per_sample);
    }
  }
  if (o.fastest || !o.providers.empty()) {
    return r;  // an alternative itself
  }
  // Fastest to finish: every training job on its fastest card and count.
  if (!w.training.empty()) {
    const Solved f = Solve(w, offers, catalog, data_dir, /*fastest=*/true);
    PlanAlternative a;
    a.name = "fastest";
    a.feasible = f.feasible;
    if (f.feasible) {
      a.total = f.total;
      a.hours_to_finish = TrainingHours(f.months);
      a.gives_up = fmt::format("{} more for {} training hours fewer", FormatMoney(a.total - r.total, r.currency),
                               FormatNumber(r.hours_to_finish - a.hours_to_finish, 3));
    } else {
      a.gives_up = f.unserved;
    }
    r.alternatives.push_back(std::move(a));
  }
  // One provider: the cheapest plan that rents from a single provider.
  std::set<std::string> providers;
  for (const Offer& x : offers.offers) {
    providers.insert(x.provider);
  }
  if (providers.size() > 1) {
    std::optional<PlanAlternative> best;
    for (const std::string& prov : providers) {
      const Solved f = Solve(w, OnlyProviders(offers, {prov}), catalog, data_dir, false);
      if (!f.feasible || (best && f.total >= best->total)) {
        continue;
      }
      PlanAlternative a;
      a.name = "single_provider";
      a.provider = prov;
      a.feasible = true;
      a.total = f.total;
      a.hours_to_finish = TrainingHours(f.months);
      a.gives_up = a.total <= r.total + 0.005 ? fmt::format("nothing: the plan already rents from {} alone", prov)
                                              : fmt::format("{} more to deal with {} alone",
                                                            FormatMoney(a.total - r.total, r.currency), prov);
      best = std::move(a);
    }
    if (best) {
      r.alternatives.push_back(std::move(*best));
    } else {
      r.alternatives.push_back({"single_provider", "", false, 0, 0, "no single provider can serve the workload"});
    }
  }
  return r;
}

std::string PlanAlertsYaml(const PlanResult& r) {
  double budget = r.budget_per_month.value_or(0);
  std::string whose = "the workload's budget_per_month";
  if (!r.budget_per_month) {
    for (const PlanMonth& m : r.months) {
      budget = std::max(budget, m.total);
    }
    budget = std::ceil(budget);
    whose = "the plan's dearest month (the workload gives no budget_per_month)";
  }
  return fmt::format(
      "# Alerts for gpuplan meter run --alerts (docs/meter-alerts.md), from gpuplan plan {}.\n"
      "# monthly_budget: {},\n"
      "# for everything the plan rents; on one machine of several, give it that machine's share.\n"
      "# Add webhooks: to be told in a chat group.\n"
      "rules:\n"
      "  idle_minutes: 30\n"
      "  low_util_percent: 5\n"
      "  low_util_minutes: 30\n"
      "  monthly_budget: {}\n"
      "  currency: {}\n"
      "  budget_fractions: [0.8, 1.0]\n",
      r.workload_file, whose, FormatNumber(budget, 12), r.currency);
}

std::string PlanUsageCsv(const PlanResult& r, const Gpu* gpu) {
  std::string out = "timestamp,gpus,class\n";
  for (const PlanMonth& m : r.months) {
    for (const PlanCardMonth& c : m.cards) {
      if (c.gpu != gpu) {
        continue;
      }
      for (std::size_t i = 0; i < c.usage.hours.size(); ++i) {
        const UsageHour& h = c.usage.hours[i];
        const std::string ts = FormatLocalHour(c.usage.HourAt(i));
        if (h.firm > 0) {
          out += fmt::format("{},{},steady\n", ts, h.firm);
        }
        if (h.interruptible > 0) {
          out += fmt::format("{},{},interruptible\n", ts, h.interruptible);
        }
      }
    }
  }
  return out;
}

}  // namespace gpuplan
