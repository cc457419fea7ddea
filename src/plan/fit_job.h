// The fit job, request to result, with its prices: `gpuplan fit` (and the serve API) fill a
// FitRequest (fit/fit_request.h) and call RunFit; fit/render/fit_json.h maps the result to JSON. It
// lives in src/cost because an offers file prices the job, the serving plan or the search.
//
// Lifetime: the result's Gpu pointers (and offers) point into `catalog`, which the caller owns
// and keeps alive as long as the result.
#pragma once

#include <optional>
#include <string>

#include "catalog/gpu_catalog.h"
#include "cost/job_pricing.h"
#include "fit/fit_request.h"

namespace gpuplan {

struct FitJobResult : FitResult {
  std::string offers;             // the offers file the request named (empty: none)
  std::optional<JobPrice> job;    // single training job with tokens, priced on the offers
  std::string price_note;         // why a single training job could not be priced
  bool start_default = false;     // the job's start is DefaultJobStart (no --start given)
  bool interruptible = false;     // the request let spot run the job
  std::optional<double> spot_checkpoint_minutes;  // the job's save time, used for the spot offers' rework
  // A faster link an offer of the job's plan sells, against what it saves in lost time
  // (docs/data-movement.md §2): "is the 10 Gbps upgrade worth it".
  struct LinkUpgradeValue {
    std::string offer;
    double from_gbps = 0;
    double gbps = 0;
    double price_per_month = 0;
    int64_t instances = 0;
    double cost = 0;               // over the job's wall hours, per instance-month
    double sync_seconds = 0;       // a checkpoint's sync with the upgrade
    double lost_hours_saved = 0;
    double value = 0;              // the hours saved at the job's price per wall hour
    bool worth_it = false;
  };
  std::vector<LinkUpgradeValue> link_upgrades;
  double egress_gb = 0;  // priced in job->plan.cost.egress
  // The checkpoint's lost hours at the job's price per hour of compute (priced jobs).
  std::optional<double> lost_cost;
  // When the plan runs work on spot: the Young interval at the spot offer's interruption rate
  // with this job's save time, and the rework share it prices (cost/billing.h).
  struct SpotCheckpoint {
    std::string offer;
    double interruptions_per_hour = 0;
    double interval_seconds = 0;
    double rework_fraction = 0;
  };
  std::vector<SpotCheckpoint> spot_checkpoints;
  // A training search: each ranked layout's checkpoint (search->training->ranked, same order), with
  // the layout's own hours for its lost time.
  std::vector<CheckpointPlan> candidate_checkpoints;
  std::optional<LocalMinute> search_start_minute;  // a training search priced from this start (offers' clock)
  std::string JobBasis() const;   // "cheapest rental from <offers> for <n> GPUs"
  // fits (single) or found (search), and a job that was priced could be served: exit 0, else 1
  bool Positive() const { return FitResult::Positive() && (!job || job->plan.feasible); }
};

// Single fit or search (FitRequest::IsSearch). With r.offers: a search ranks only the file's
// cards at their cheapest rental (an inference one priced for the month after `now`); one card
// prices the training job (with tokens, from `start`) or the serving plan. Throws InputError
// naming the flag, or what LoadModel throws.
FitJobResult RunFit(const FitRequest& r, const GpuCatalog& catalog, const std::string& data_dir);

}  // namespace gpuplan
