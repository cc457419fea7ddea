// The plan job's request (`gpuplan plan`, POST /api/plan): one options table (read/options.h)
// feeds the CLI's flags, the API's JSON keys and docs/cli.md. A front end fills a PlanRequest and
// calls RunPlanRequest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/offer.h"
#include "plan/plan.h"
#include "read/options.h"

namespace gpuplan {

struct PlanRequest {
  std::string workload;             // the workload file (CLI: the positional argument)
  std::vector<std::string> offers;  // offers files, merged (one currency and time zone)
  std::string usage_out;            // write the hourly usage the plan priced (one CSV per card)
  std::string alerts_out;           // write the alerts file for meter run (PlanAlertsYaml)
  std::string markdown;             // write the plan as Markdown ("-": standard output)
  std::string against;              // a meter database: the plan held against the measured use
  double replan_share = 0.2;        // use off by more than this share says re-plan
  std::optional<UtcSeconds> now;    // --against: measurements up to this (tests); unset: the clock
  std::vector<std::string> given;   // the options given, by key
  // The serve API never names a file on the server: the texts, the names only label them.
  std::optional<std::string> workload_text;
  std::vector<std::string> offers_text;
  // A network front end: every job's model must be a preset, and no job may name a file
  // (check_report) on the server.
  bool presets_only = false;
};

const OptionTable<PlanRequest>& PlanOptionTable();

// The offers of several files as one set: the same currency and time zone, offer ids unique
// across files. Throws InputError naming the file and the offer.
OfferSet MergeOffers(const std::vector<OfferSet>& sets);

// Checks the options given, reads the workload and the offers, and plans. Throws InputError.
PlanResult RunPlanRequest(const PlanRequest& q, const GpuCatalog& catalog, const std::string& data_dir);

// The files --usage-out writes: `path` when the plan rents one card, else `path` with the card's
// name before the extension ("usage.csv" -> "usage-A100-80GB-SXM.csv"), each with its CSV.
std::vector<std::pair<std::string, std::string>> PlanUsageFiles(const PlanResult& r, const std::string& path);

}  // namespace gpuplan
