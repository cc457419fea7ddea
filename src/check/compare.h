// Several check reports at once: `gpuplan check compare` (machines or providers side by side,
// test by test; with an offers file, the price and money per unit of measured work, and the
// provider terms beside the measured health) and `gpuplan check merge` (the nodes of one
// cluster in one report, outlier nodes and GPUs flagged by robust statistics, docs/check.md §7).
// The reports are read by check/render/check_json.h (ReportFromJson) and rendered there.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "check/report.h"
#include "catalog/offer.h"

namespace gpuplan {

struct NamedReport {
  std::string file;
  CheckReport report;
};

// A report that cannot stand for its machine or node (docs/check.md §7): its check did not reach
// its end (`"complete": false`, no `finished`: killed, or still running) or it holds no result.
// Such a report makes a comparison or a merge incomplete: named, exit 1, or 3 when the report
// itself says the driver or a device could not be read (`environment_problem`).
struct IncompleteReport {
  std::string file;
  std::string label;          // the machine or node as the outputs name it
  std::string reason;         // "the check did not finish ...", "no results ..."
  bool environment_problem = false;
};

// Why `r` cannot stand for its machine, or nullopt when it is complete and has results.
std::optional<IncompleteReport> IncompleteOf(const NamedReport& r, const std::string& label);
// The exit code the incomplete reports give: 0 when none, 3 when one was an environment
// problem, else 1.
int IncompleteExitCode(const std::vector<IncompleteReport>& incomplete);

struct CompareReportsRequest {
  std::vector<std::string> reports;   // report files (JSON of gpuplan check)
  std::string offers;                 // offers file: prices, terms
  std::vector<std::string> offer_of;  // "a.json=nj-h100" for reports that name no offer
  std::string json, markdown, html;   // output files ("-": stdout)
};

struct ComparedCell {
  CheckStatus status = CheckStatus::kSkip;  // worst over the report's GPUs
  std::optional<double> measured;           // the weakest GPU's value (lowest; highest for "lower is better")
  std::string text;                         // measured_text of that result when not numeric
  int results = 0;                          // how many results (GPUs) the cell covers
  int failing = 0;                          // of those, FAIL or ERROR
};

struct ComparedRow {
  std::string test;
  std::string unit;
  std::vector<std::optional<ComparedCell>> cells;  // one per machine; nullopt: the test is not in that report
};

struct ComparedMachine {
  std::string file;
  std::string label;  // hostname, else the file name
  std::string card;   // the catalog card judged against or the first GPU's name
  int gpus = 0;
  CheckStatus verdict = CheckStatus::kPass;
  std::string incomplete;  // why the report cannot stand for the machine (IncompleteReport), "" when it can
  std::string offer_id;
  std::optional<Offer> offer;     // the offer the machine was rented under, when known
  std::optional<double> price_per_hour;         // the instance's price per hour (reserved: per average-month hour)
  std::optional<double> bf16_tflops;            // measured, summed over the GPUs (test gemm_bf16)
  std::optional<double> storage_gb_s;           // measured sequential read (test storage_seq_read)
  std::optional<double> per_bf16_pflop_hour;    // price per hour / measured bf16 PFLOP/s
  std::optional<double> per_storage_tb_s_hour;  // price per hour / measured storage TB/s
  int rank = 0;                                 // 1 = best money per measured unit; 0 = not ranked (nor an incomplete report)
};

struct ComparisonResult {
  std::vector<ComparedMachine> machines;
  std::vector<ComparedRow> rows;
  std::string currency;
  std::string rank_basis;  // "price per measured bf16 PFLOP-hour", "price per measured storage TB/s-hour", ""
  std::vector<std::string> notes;
  std::vector<IncompleteReport> incomplete;  // the reports that were not complete or held no result

  // 0, or IncompleteExitCode(incomplete): a comparison is not a verdict, but a report that
  // cannot stand for its machine is not a clean comparison.
  int ExitCode() const { return IncompleteExitCode(incomplete); }
};

// An incomplete report's machine has the verdict FAIL (ERROR when it was an environment
// problem), a note naming it, and no rank.
// Throws InputError naming --offer-of or the offers file when a report's offer is unknown.
ComparisonResult CompareReports(const std::vector<NamedReport>& reports, const CompareReportsRequest& request,
                                const GpuCatalog& catalog);

struct MergeReportsRequest {
  std::vector<std::string> reports;
  // Iglewicz and Hoaglin (1993): |modified z| > 3.5 is a likely outlier.
  double outlier_z = 3.5;
  std::string json, markdown, html;
};

struct Outlier {
  std::string test;
  std::string node;
  int gpu = -1;
  double value = 0;
  double median = 0;
  double spread = 0;  // MAD, or 1.253314 x mean absolute deviation when the MAD is 0
  double z = 0;       // modified z-score: 0.6745 (x - median) / MAD
  std::string unit;
  int peers = 0;      // values the median was taken over
};

struct MergeResult {
  // Every node's inventory and results (node set on each), outliers as WARN, and a `node_report`
  // FAIL (ERROR when an environment problem) for each incomplete node report; with one of those
  // the merged report is itself incomplete (no `finished`, "complete": false).
  CheckReport merged;
  std::vector<Outlier> outliers;
  std::vector<IncompleteReport> incomplete;
  int nodes = 0;
  double outlier_z = 0;
};

MergeResult MergeReports(const std::vector<NamedReport>& reports, const MergeReportsRequest& request);

// The median of `v` (copied); NaN for an empty vector.
double Median(std::vector<double> v);

}  // namespace gpuplan
