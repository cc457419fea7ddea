#include "plan/fit_job.h"

#include <ctime>
#include <utility>

#include <fmt/format.h>

#include "check/render/check_json.h"
#include "core/error.h"
#include "cost/billing.h"
#include "fit/fit_options.h"
#include "catalog/calendar.h"
#include "catalog/offer.h"
#include "read/json_fields.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

UtcSeconds Now(const FitRequest& r) { return r.now ? *r.now : UtcNow(); }

// The offers file, or its text when the request carries it (the serve API).
OfferSet OffersOf(const FitRequest& r, const GpuCatalog& catalog) {
  return r.offers_text ? ParseOffers(*r.offers_text, r.offers, catalog) : LoadOffers(r.offers, catalog);
}

DataMovementConfig WithLink(DataMovementConfig c, double gbps, const std::string& source) {
  c.sync_link = LinkRate{fmt::format("{:g}gbps", gbps), gbps * 1e9};
  c.sync_link_source = source;
  return c;
}

// What a card's offers state for its checkpoints, where the request does not say: without
// --sync-link the slowest link they state carries them; without --node-wait-minutes a failed node
// waits the longest replacement time they state (an upper bound: "replaced within").
DataMovementConfig OfferDataMovement(DataMovementConfig data, const OfferSet& card_offers) {
  const Offer* slowest = nullptr;
  const Offer* longest = nullptr;
  for (const Offer& o : card_offers.offers) {
    if (o.link_gbps && (slowest == nullptr || *o.link_gbps < *slowest->link_gbps)) {
      slowest = &o;
    }
    if (o.terms.node_replacement_hours &&
        (longest == nullptr || *o.terms.node_replacement_hours > *longest->terms.node_replacement_hours)) {
      longest = &o;
    }
  }
  if (!data.sync_link && slowest != nullptr) {
    data = WithLink(data, *slowest->link_gbps, "offer " + slowest->id);
  }
  if (!data.node_wait_seconds && longest != nullptr) {
    data.node_wait_seconds = *longest->terms.node_replacement_hours * 3600.0;
    data.node_wait_source = "offer " + longest->id + ": terms.node_replacement_hours, at most";
  }
  return data;
}

// A search layout's checkpoint with the request's data-movement settings (with offers: what its
// card's offers state where the request is silent, OfferDataMovement), its own hours for the lost
// time (0: none).
CheckpointPlan CandidateCheckpoint(const FitInputs& in, const Candidate& c, double hours,
                                   const OfferSet* offers = nullptr) {
  const DataMovementConfig data = offers ? OfferDataMovement(in.data, OffersFor(*offers, c.gpu)) : in.data;
  return EstimateCheckpoint(in.model.spec, c.workload, c.layout, *c.gpu, in.overhead.framework, c.memory, data, hours);
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
      // Each layout's spot rework with its own checkpoint's save time (docs/data-movement.md §3).
      const OfferSet& all = *offers;
      const auto minutes = [&in, &all](const Candidate& c) {
        return CandidateCheckpoint(in, c, 0.0, &all).save_seconds / 60.0;
      };
      PriceCandidatesWithOffers(*s.training, *offers, s.options.objective, in.tokens, s.options.top + 3,
                                out.search_start_minute, r.interruptible, minutes);
      for (Candidate& c : s.training->ranked) {
        c.cost_basis += std::string(r.interruptible ? "; interruptible (spot allowed)" : "") +
                        (r.start.empty() ? std::string(" (") + kDefaultJobStartText + ")" : "");
      }
    }
  }
  if (s.training) {
    for (const Candidate& c : s.training->ranked) {
      out.candidate_checkpoints.push_back(
          CandidateCheckpoint(in, c, c.time.total_hours.value_or(0.0), offers ? &*offers : nullptr));
    }
  }
  out.search = std::move(s);
}

// A check report's measured figures in place of the ones not given (docs/data-movement.md §2):
// the link test's client -> listener throughput (TCP payload, so the line rate is it / 94.1%) as
// the sync link, the storage test's sequential write as the save rate and its sequential read as
// the restore's. Returns what it took.
std::vector<std::string> ApplyCheckReport(const FitRequest& r, FitInputs& in) {
  std::vector<std::string> took;
  if (r.check_report.empty()) {
    return took;
  }
  const NamedReport rep =
      r.check_report_text
          ? NamedReport{r.check_report, ReportFromJson(ParseJsonText(*r.check_report_text, r.check_report), r.check_report)}
          : LoadReport(r.check_report);
  if (rep.report.net && r.sync_link.empty() && rep.report.net->throughput_gbps > 0) {
    const double goodput_gbps = rep.report.net->throughput_gbps;
    in.data.sync_link = LinkRate{fmt::format("{:.4g}gbps measured", goodput_gbps / kTcpGoodputShare),
                                 goodput_gbps * 1e9 / kTcpGoodputShare};
    in.data.sync_link_source = "check report " + r.check_report;
    took.push_back(fmt::format("sync link: {:.4g} Gbit/s measured to {} ({})", goodput_gbps, rep.report.net->host,
                               r.check_report));
  }
  if (!r.storage_gbps) {
    // Saves write (storage_seq_write); restores read (storage_seq_read). A report from before the
    // write test has only the read: it then stands for both, and the answer says so.
    const auto rate = [&rep](const char* name) -> std::optional<double> {
      for (const CheckResult& t : rep.report.tests) {
        if (t.name == name && t.measured && *t.measured > 0 && t.unit == "GB/s") {
          return *t.measured;
        }
      }
      return std::nullopt;
    };
    const auto write = rate("storage_seq_write");
    const auto read = rate("storage_seq_read");
    if (write) {
      in.data.storage_gbps = *write * 8.0;
      in.data.storage_given = true;
      took.push_back(fmt::format("storage: {:.4g} GB/s sequential write measured ({})", *write, r.check_report));
      if (read) {
        in.data.storage_read_gbps = *read * 8.0;
        took.push_back(fmt::format("restore: {:.4g} GB/s sequential read measured ({})", *read, r.check_report));
      }
    } else if (read) {
      in.data.storage_gbps = *read * 8.0;
      in.data.storage_given = true;
      took.push_back(fmt::format("storage: {:.4g} GB/s sequential read measured, for saves too: the report has "
                                 "no write test ({})",
                                 *read, r.check_report));
    }
  }
  if (took.empty()) {
    throw InputError::Option("check_report",
                             "the report has no link test (check --net) and no storage_seq_write or storage_seq_read to take "
                             "figures from",
                             {}, r.check_report, 0);
  }
  return took;
}

// The single fit's checkpoint again with other data-movement settings (an offer's stated link or
// one of its upgrades, its node replacement time).
CheckpointPlan CheckpointWith(const FitInputs& in, const FitSingle& s, const DataMovementConfig& c) {
  return EstimateCheckpoint(in.model.spec, s.workload, s.layout, *s.gpu, in.overhead.framework, s.memory, c,
                            s.training ? s.training->total_hours.value_or(0.0) : 0.0);
}

// Each link upgrade an offer of the plan sells, priced over the job's wall hours against the lost
// time it saves at the job's price per hour (docs/data-movement.md §2).
void ValueUpgrades(const FitInputs& in, const DataMovementConfig& data, const FitSingle& s, const OfferSet& offers,
                   FitJobResult& out) {
  const JobPrice& job = *out.job;
  const double hours = s.training->total_hours.value_or(0.0);
  if (!job.plan.feasible || !(hours > 0) || !s.checkpoint.lost_hours) {
    return;
  }
  const double per_hour = job.total.amount / hours;
  for (const Offer& o : offers.offers) {
    const auto held = [&o](const auto& m) {
      const auto it = m.find(o.id);
      return it != m.end() && it->second > 0;
    };
    if (!o.link_gbps || !(held(job.plan.reserved) || held(job.plan.on_demand_gpu_hours) || held(job.plan.spot_gpu_hours))) {
      continue;
    }
    for (const LinkUpgrade& u : o.link_upgrades) {
      const CheckpointPlan up = CheckpointWith(in, s, WithLink(data, u.gbps, "upgrade of " + o.id));
      FitJobResult::LinkUpgradeValue v;
      v.offer = o.id;
      v.from_gbps = *o.link_gbps;
      v.gbps = u.gbps;
      v.price_per_month = u.price_per_month;
      v.instances = (s.layout.gpus + o.gpus_per_instance - 1) / o.gpus_per_instance;
      const double wall = hours + *s.checkpoint.lost_hours;
      v.cost = u.price_per_month * static_cast<double>(v.instances) * wall / kHoursPerMonth;
      v.sync_seconds = up.sync_seconds.value_or(0.0);
      v.lost_hours_saved = *s.checkpoint.lost_hours - up.lost_hours.value_or(*s.checkpoint.lost_hours);
      v.value = v.lost_hours_saved * per_hour;
      v.worth_it = v.value > v.cost;
      out.link_upgrades.push_back(v);
    }
  }
}

// The job (training with tokens) or the serving plan, priced by the rental optimiser on the
// file's offers for this card.
void PriceSingle(const FitRequest& r, const FitInputs& in, const GpuCatalog& catalog, FitJobResult& out) {
  FitSingle& s = *out.single;
  const OfferSet all = OffersOf(r, catalog);
  const OfferSet mine = OffersFor(all, s.gpu);
  if (mine.offers.empty()) {
    throw InputError::Option("offers", "no offer in " + r.offers + " is for " + s.gpu->name, {}, r.offers, 0);
  }
  // What the card's offers state for the checkpoints where the request is silent (its slowest
  // link, its longest node replacement).
  DataMovementConfig data = in.data;
  if (s.training) {
    data = OfferDataMovement(in.data, mine);
    if (data.sync_link_source != in.data.sync_link_source || data.node_wait_source != in.data.node_wait_source) {
      s.checkpoint = CheckpointWith(in, s, data);
    }
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
    out.egress_gb = r.egress_gb.value_or(s.checkpoint.weights_bytes / 1e9);
    out.job = PriceJob(priced, static_cast<double>(s.layout.gpus), *s.training->total_hours,
                       ParseJobStart(r.start, mine.zone, Now(r)), r.interruptible, out.egress_gb);
    ValueUpgrades(in, data, s, mine, out);
    const JobPrice& job = *out.job;
    const double hours = *s.training->total_hours;
    if (job.plan.feasible && hours > 0 && s.checkpoint.lost_hours) {
      out.lost_cost = *s.checkpoint.lost_hours * job.total.amount / hours;
    }
    for (const Offer& o : priced.offers) {
      const auto it = job.plan.spot_gpu_hours.find(o.id);
      if (o.spot && it != job.plan.spot_gpu_hours.end() && it->second > 0) {
        out.spot_checkpoints.push_back({o.id, o.spot->interruptions_per_hour,
                                        YoungDalyIntervalHours(*o.spot) * 3600.0, SpotReworkFraction(*o.spot)});
      }
    }
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
  const std::vector<std::string> measured = ApplyCheckReport(r, in);
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
      PriceSingle(r, in, catalog, out);
    }
    for (const auto& m : measured) {
      out.single->checkpoint.notes.push_back(m);
    }
  }
  out.data = EstimateDataUpload(in.data);
  out.model = std::move(in.model);
  return out;
}

}  // namespace gpuplan
