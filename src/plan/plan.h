// `gpuplan plan`: from a workload over months to one rental plan (docs/plan.md). Every training
// job and service is sized on every offered card with fit's search (memory and time), the hourly
// usage each choice implies is built per card and month, and the rental optimiser prices each
// card's usage month by month; the card of every job is chosen jointly (the jobs on one card
// share its instances), starting from each job's cheapest card alone and moving one job at a time
// while the total falls. The result says per month what runs where, what to rent and every fee,
// the alternatives (fastest to finish, one provider) and what each gives up.
//
// Lifetime: the result's Gpu pointers point into `catalog`.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/offer.h"
#include "cost/optimizer.h"
#include "cost/usage.h"
#include "fit/accuracy.h"
#include "fit/search.h"
#include "plan/workload.h"

namespace gpuplan {

// A job or service on one card: how it is laid out and what it holds.
struct PlanSizing {
  const Gpu* gpu = nullptr;
  int64_t gpus = 0;               // training: the job's GPUs; serving: one replica's
  Layout layout;
  Workload workload;              // micro-batch, recomputation as sized
  double hours = 0;               // training: hours to finish one run
  double tokens_per_second = 0;   // training
  double requests_per_second = 0; // serving: one replica's
  std::array<int64_t, 24> gpus_by_hour{};  // serving: GPUs at each hour of the day
  // Training: the hour of its window's first day the run starts, 0 or the opening of a night
  // window of the card's offers, whichever makes its rental alone cheaper (docs/plan.md §2).
  int start_hour_of_day = 0;
  // Training: the days after its window's first day it starts (the joint placement moves a run
  // off another's hours when that is cheaper or needed: an offer's stock, a reserved term).
  int start_day = 0;
  bool moe = false;  // training: the model routes tokens to experts (its time's accuracy is of MoE runs)
  std::string family;  // the framework profile's family (its time's accuracy is quoted for it too)
};

// What runs in a month: a job's run or a service.
struct PlanRun {
  std::string id;
  bool serving = false;
  PlanSizing sizing;
  LocalHour start{};   // training: the hour it starts (offers' wall clock)
  LocalHour end{};     // training: the hour after it ends
  bool interruptible = false;
  bool continued = false;  // training: a run started in an earlier month (its window crosses the month's end)
  double gpu_hours = 0;  // in the month
  double share = 0;      // of its card's rental money in the month, by GPU-hours
  // The billing modes of its card's rental that month ("monthly", "on_demand", "spot"): the runs on
  // a card share its instances, so a run is billed by its pool's modes (spot only for work that
  // may be interrupted).
  std::vector<std::string> billed_by;
};

// One card's rental in one month: the usage of the runs on it and the optimiser's plan.
struct PlanCardMonth {
  const Gpu* gpu = nullptr;
  UsageTrace usage;
  Plan rental;
};

struct PlanMonth {
  LocalDay month{};
  std::vector<PlanRun> runs;
  std::vector<PlanCardMonth> cards;
  CostItems cost;       // the cards' items summed
  double total = 0;
  double peak_gpus = 0;  // GPUs in use at the busiest hour, every card
  std::optional<bool> within_budget;
};

struct PlanAlternative {
  std::string name;        // "fastest", "single_provider"
  std::string provider;    // single_provider: which
  bool feasible = false;
  double total = 0;
  double hours_to_finish = 0;  // the training runs' hours, summed over jobs and months
  std::string gives_up;        // one sentence, against the plan
};

// What to run when a rented machine type is delivered (docs/plan.md §5).
struct PlanCheck {
  std::string gpu;
  int gpus_per_instance = 1;
  // The storage the training runs on such a machine read at (its share of the fastest run's
  // tokens per second as sequences, each seq x 4 bytes of int32 token ids); 0: no training on it.
  double samples_per_second = 0;
  int64_t bytes_per_sample = 0;
  std::string command;  // gpuplan check --expect "Nx CARD" [--samples-per-second S --bytes-per-sample B]
};

// The plan against measured use (plan/against.h, docs/plan.md §7).
struct PlanMonthAgainst {
  LocalDay month{};
  int64_t hours = 0;               // the month's hours with measurements
  bool whole = false;              // measured from its first hour to its last
  double planned_gpu_hours = 0;    // over those hours
  double measured_gpu_hours = 0;
  std::optional<double> off;       // (measured - planned) / planned; unset when nothing was planned
  bool off_too_much = false;       // |off| > share, or use where none was planned
  // A whole month of one card: the cheapest rental of the measured use, and whether its reserved
  // instances differ from the plan's.
  std::optional<double> measured_optimum;
  double planned_total = 0;
  bool other_mix = false;
  std::string mix;                 // the measured optimum's reserved terms, "2 x nj-monthly"; "none"
  std::string planned_mix;
  // Per billing mode ("monthly", "on_demand", "spot", ...): the GPU-hours the plan's rental buys
  // in it against those the measured use's cheapest rental would, in the same month.
  struct Mode {
    std::string mode;
    double planned_gpu_hours = 0;
    double measured_gpu_hours = 0;
    std::optional<double> off;  // (measured - planned) / planned; unset when none was planned
    bool off_too_much = false;
  };
  std::vector<Mode> modes;
};

struct PlanComparison {
  std::string db;
  double share = 0.2;
  std::vector<PlanMonthAgainst> months;
  bool replan = false;
  std::vector<std::string> reasons;  // one sentence each
  std::string note;                  // what could not be compared
};

struct PlanResult {
  std::string workload_file;
  std::vector<std::string> offers_files;
  std::string currency = "CNY";
  Zone zone = DefaultZone();
  bool feasible = false;
  std::vector<PlanMonth> months;
  double total = 0;
  double hours_to_finish = 0;
  std::optional<double> budget_per_month;
  std::vector<PlanAlternative> alternatives;
  std::vector<PlanCheck> checks;
  std::map<std::string, std::string> assignment;  // job or service id -> card name
  std::vector<std::string> notes;                 // cards a job cannot use and why, limits
  std::string unserved;                           // when not feasible: why
  std::optional<PlanComparison> against;          // --against METER_DB
  // How far the time model behind the training hours and the serving sizes came from published
  // runs on the cards the plan rents (data/accuracy.yaml, as `fit` prints it); empty without runs
  // of that kind or without the file.
  std::vector<AccuracyNote> training_accuracy, serving_accuracy;
  std::vector<AccuracyNote> training_moe_accuracy;  // the cards of training jobs on mixture-of-experts models
  int rentals_solved = 0;                         // optimiser runs (cache misses)
};

struct PlanOptions {
  bool fastest = false;                 // each training job on its fastest card and count
  std::vector<std::string> providers;   // restrict the offers to these (empty: the workload's limits)
};

// Throws InputError for offers that cannot be combined (currencies, zones) or a workload the
// offers cannot size at all.
PlanResult RunPlan(const PlanWorkload& w, const OfferSet& offers, const GpuCatalog& catalog, const std::string& data_dir,
                   const PlanOptions& o = {});

// The hourly usage the plan priced for one card over all its months, in the CSV `cost optimize
// --usage` reads (timestamp,gpus,class), so that cost optimize on one month of it gives that
// month's money.
std::string PlanUsageCsv(const PlanResult& r, const Gpu* gpu);

// The alerts file for `meter run --alerts` (docs/meter-alerts.md): the idle and low-use rules at
// their defaults and the plan's monthly budget (the workload's, else its dearest month).
std::string PlanAlertsYaml(const PlanResult& r);

}  // namespace gpuplan
