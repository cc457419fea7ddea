#include "plan/plan_request.h"

#include <algorithm>
#include <set>

#include "core/error.h"
#include "meter/report.h"
#include "plan/against.h"
#include "read/time_text.h"

namespace gpuplan {

const OptionTable<PlanRequest>& PlanOptionTable() {
  static const OptionTable<PlanRequest> table = [] {
    using R = PlanRequest;
    OptionTable<R> t;
    t.push_back(Option<R>("--offers", "offers", "offers files (YAML, docs/offers.md), one or more: merged, one currency and time zone", &R::offers)
                    .Required());
    t.push_back(Option<R>("--usage-out", "usage_out", "write the hourly usage the plan priced as CSV (cost optimize --usage reads it; one file per card, the card's name before the extension when the plan rents several)", &R::usage_out)
                    .Unset("none"));
    t.push_back(Option<R>("--alerts-out", "alerts_out", "write the alerts file for meter run --alerts: idle and low-use rules, the plan's monthly budget (docs/meter-alerts.md)", &R::alerts_out)
                    .Unset("none"));
    t.push_back(Option<R>("--against", "against", "a gpuplan meter database: hold the plan against the use measured so far and say when to re-plan (docs/plan.md §7)", &R::against)
                    .Unset("none"));
    t.push_back(Option<R>("--replan-share", "replan_share", "with --against: a month's busy GPU-hours this far from the plan's (either way) says re-plan", &R::replan_share)
                    .Min(0, true).Max(10));
    t.push_back(Option<R>("--markdown", "markdown", "write the plan as Markdown to this file (- for standard output)", &R::markdown)
                    .Unset("none"));
    return t;
  }();
  return table;
}

OfferSet MergeOffers(const std::vector<OfferSet>& sets) {
  if (sets.empty()) {
    throw InputError::Option("offers", "no offers file given");
  }
  OfferSet out = sets.front();
  std::set<std::string> ids;
  for (const Offer& o : out.offers) {
    ids.insert(o.id);
  }
  for (std::size_t i = 1; i < sets.size(); ++i) {
    const OfferSet& s = sets[i];
    if (s.currency != out.currency) {
      throw InputError("its currency " + s.currency + " differs from " + out.currency + " in " + out.file, s.file, 0,
                       "currency");
    }
    if (!(s.zone == out.zone)) {
      throw InputError("its time zone " + s.zone.Name() + " differs from " + out.zone.Name() + " in " + out.file, s.file,
                       0, "timezone");
    }
    for (const Offer& o : s.offers) {
      if (!ids.insert(o.id).second) {
        throw InputError("offer id '" + o.id + "' is also in an earlier offers file; ids must be unique", s.file, o.line,
                         "offers[" + o.id + "].id");
      }
      out.offers.push_back(o);
    }
    out.subsidies.insert(out.subsidies.end(), s.subsidies.begin(), s.subsidies.end());
    out.file += ", " + s.file;
  }
  return out;
}

PlanResult RunPlanRequest(const PlanRequest& q, const GpuCatalog& catalog, const std::string& data_dir) {
  CheckGivenOptions(PlanOptionTable(), q, q.given);
  if (q.offers.empty() && q.offers_text.empty()) {
    throw InputError::Option("offers", "no offers file given");
  }
  PlanWorkload w = q.workload_text ? ParseWorkload(*q.workload_text, q.workload.empty() ? "workload" : q.workload)
                                   : LoadWorkload(q.workload);
  if (q.presets_only) {
    const auto server_safe = [&](FitRequest& f, const std::string& where, int line) {
      f.presets_only = true;
      if (!f.check_report.empty()) {
        throw InputError("a job sent to the server cannot name a file on it", w.file, line, where + "check_report");
      }
    };
    for (auto& j : w.training) {
      server_safe(j.fit, "training[" + j.id + "].", j.line);
    }
    for (auto& v : w.serving) {
      server_safe(v.fit, "serving[" + v.id + "].", v.line);
    }
  }
  std::vector<OfferSet> sets;
  if (!q.offers_text.empty()) {
    for (std::size_t i = 0; i < q.offers_text.size(); ++i) {
      sets.push_back(ParseOffers(q.offers_text[i], "offers[" + std::to_string(i) + "]", catalog));
    }
  } else {
    for (const std::string& f : q.offers) {
      sets.push_back(LoadOffers(f, catalog));
    }
  }
  const OfferSet offers = MergeOffers(sets);
  PlanResult r = RunPlan(w, offers, catalog, data_dir);
  if (!q.against.empty() && r.feasible) {
    // The busy GPUs each hour the database has (its first to its last hour with data, at most
    // now), on the offers' wall clock; the comparison keeps the plan's months. Hours outside the
    // data are not exported, so they never read as zero use.
    if (q.offers.empty() || !q.offers_text.empty()) {
      throw InputError::Option("against", "needs the offers as files (their time zone places the measured hours)");
    }
    MeterExportRequest e;
    e.db = q.against;
    e.offers = q.offers.front();
    e.basis = "busy";
    e.now = q.now;
    const MeterExport m = RunMeterExport(e, catalog);
    UsageTrace measured = m.trace;
    PlanComparison c = ComparePlanWithMeasured(r, measured, offers, q.replan_share);
    c.db = q.against;
    r.against = std::move(c);
  }
  r.offers_files.clear();
  for (const OfferSet& s : sets) {
    r.offers_files.push_back(s.file);
  }
  return r;
}

std::vector<std::pair<std::string, std::string>> PlanUsageFiles(const PlanResult& r, const std::string& path) {
  std::vector<const Gpu*> cards;
  for (const PlanMonth& m : r.months) {
    for (const PlanCardMonth& c : m.cards) {
      if (std::find(cards.begin(), cards.end(), c.gpu) == cards.end()) {
        cards.push_back(c.gpu);
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const Gpu* g : cards) {
    std::string file = path;
    if (cards.size() > 1) {
      std::string slug;
      for (char ch : g->name) {
        slug += (std::isalnum(static_cast<unsigned char>(ch)) != 0) ? ch : '-';
      }
      const auto dot = path.rfind('.');
      const auto slash = path.rfind('/');
      const bool ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
      file = ext ? path.substr(0, dot) + "-" + slug + path.substr(dot) : path + "-" + slug;
    }
    out.emplace_back(file, PlanUsageCsv(r, g));
  }
  return out;
}

}  // namespace gpuplan
