#include "plan/fit_job.h"

#include <ctime>
#include <utility>

#include "core/error.h"
#include "fit/fit_options.h"
#include "catalog/calendar.h"
#include "catalog/offer.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

UtcSeconds Now(const FitRequest& r) { return r.now ? *r.now : UtcNow(); }

// The offers file, or its text when the request carries it (the serve API).
OfferSet OffersOf(const FitRequest& r, const GpuCatalog& catalog) {
  return r.offers_text ? ParseOffers(*r.offers_text, r.offers, catalog) : LoadOffers(r.offers, catalog);
}

void RunSearch(const FitRequest& r, const FitInputs& in, const GpuCatalog& catalog, FitJobResult& out) {
  SearchOptions so = SearchOptionsOf(r, in, catalog);
  std::optional<OfferSet> offers;
  if (!r.offers.empty()) {
    offers = OffersOf(r, catalog);
    so.price_per_card_hour = CardHourPrices(*offers);
    std::vector<const Gpu*> with_offers;
    for (const Gpu* gpu : so.gpus) {
      if (so.price_per_card_hour.count(gpu) != 0) {
        with_offers.push_back(gpu);
      }
    }
    if (with_offers.empty()) {
      throw InputError::Option("offers", "no offer is for any of the GPUs searched", {}, r.offers, 0);
    }
    so.gpus = with_offers;
    so.keep_extra = 3 * so.top;
  }
  FitSearch s = SearchFit(r, in, std::move(so));
  if (offers) {
    s.currency = offers->currency;
    if (s.inference) {  // a service on the file's cards, priced for next month around the clock
      const LocalHour month = NextMonthStart(Now(r), offers->zone);
      PricePlansWithOffers(s.inference->ranked, *offers, s.options.objective, month);
      PricePlansWithOffers(s.inference->best_per_gpu, *offers, s.options.objective, month);
    } else {
      out.search_start_minute = ParseJobStart(r.start, offers->zone, Now(r));
      PriceCandidatesWithOffers(*s.training, *offers, s.options.objective, in.tokens, s.options.top + 3,
                                out.search_start_minute, r.interruptible);
      for (Candidate& c : s.training->ranked) {
        c.cost_basis += std::string(r.interruptible ? "; interruptible (spot allowed)" : "") +
                        (r.start.empty() ? std::string(" (") + kDefaultJobStartText + ")" : "");
      }
    }
  }
  out.search = std::move(s);
}

// The job (training with tokens) or the serving plan, priced by the rental optimiser on the
// file's offers for this card.
void PriceSingle(const FitRequest& r, const GpuCatalog& catalog, FitJobResult& out) {
  FitSingle& s = *out.single;
  const OfferSet all = OffersOf(r, catalog);
  const OfferSet mine = OffersFor(all, s.gpu);
  if (mine.offers.empty()) {
    throw InputError::Option("offers", "no offer in " + r.offers + " is for " + s.gpu->name, {}, r.offers, 0);
  }
  if (s.training && s.training->total_hours) {
    // Spot rework with this job's own checkpoint: its blocking save time replaces the minutes
    // an offer types (docs/data-movement.md §3).
    OfferSet priced = mine;
    if (r.interruptible) {
      for (Offer& o : priced.offers) {
        if (o.spot) {
          o.spot->checkpoint_minutes = s.checkpoint.save_seconds / 60.0;
          out.spot_checkpoint_minutes = o.spot->checkpoint_minutes;
        }
      }
    }
    out.job = PriceJob(priced, static_cast<double>(s.layout.gpus), *s.training->total_hours,
                       ParseJobStart(r.start, mine.zone, Now(r)), r.interruptible);
  } else if (s.plan && s.plan->fits) {
    std::vector<InferencePlan> one{*s.plan};
    PricePlansWithOffers(one, mine, Objective::kTime, NextMonthStart(Now(r), mine.zone));
    if (!one.empty()) {
      s.plan = one.front();
    }
  } else if (s.training) {
    out.price_note = "give --tokens (or --epochs with --dataset-tokens) to price the job with " + r.offers;
  }
}

}  // namespace

std::string FitJobResult::JobBasis() const {
  return "cheapest rental from " + offers + " for " + std::to_string(single ? single->layout.gpus : 0) + " GPUs" +
         (job && job->interruptible ? ", interruptible (spot allowed)" : "") +
         (start_default ? std::string("; ") + kDefaultJobStartText : "");
}

FitJobResult RunFit(const FitRequest& r, const GpuCatalog& catalog, const std::string& data_dir) {
  CheckFitRequest(r, data_dir);
  FitInputs in = PrepareFit(r, data_dir);
  FitJobResult out;
  out.workload = in.workload;
  out.tokens = in.tokens;
  out.qps = r.qps;
  out.latency_ms = r.latency_ms;
  out.offers = r.offers;
  out.start_default = r.start.empty();
  out.interruptible = r.interruptible;
  if (r.IsSearch()) {
    RunSearch(r, in, catalog, out);
  } else {
    out.single = FitOnCard(r, in, catalog.Find(r.gpu), catalog);
    if (!r.offers.empty()) {
      PriceSingle(r, catalog, out);
    }
  }
  out.data = EstimateDataUpload(in.data);
  out.model = std::move(in.model);
  return out;
}

}  // namespace gpuplan
