// Markdown form of `gpuplan check` results (docs/check-report-formats.md).
//
// In: a `CheckReport` (check/report.h), a `ComparisonResult` or a `MergeResult` (check/compare.h).
// Out: Markdown written to a std::ostream: the verdict, the run's facts, the problems (FAIL and
// ERROR, then WARN), the host, the GPU inventory, the events and every result as a table; the
// machines, provider terms and tests side by side for a comparison; the outliers and the merged
// report for a merge. Model text is escaped for Markdown: '|', '<' and newlines.
//
// The plain-text cells below (check_cells) are shared with the HTML form (check_html.h), so the
// two files always show the same values: "-" for anything not measured, numbers by
// check_cells::Number, memory in GiB with one decimal. A result's own row (status, measured,
// expected, ...) is the cell model of check/cells.h, which the terminal text uses too.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "check/cells.h"
#include "check/compare.h"
#include "check/report.h"
#include "telemetry/snapshot.h"

namespace gpuplan {

void CheckReportToMarkdown(const CheckReport& r, std::ostream& out);
void ComparisonToMarkdown(const ComparisonResult& c, std::ostream& out);
void MergeToMarkdown(const MergeResult& m, std::ostream& out);

namespace check_cells {

// Label and value of a fact shown as one line or one table row.
using Fact = std::pair<std::string, std::string>;

// The report's facts, in order: mode, source, ordered, card, offer, started, finished, tool,
// and the count of results by status. Empty facts are left out (finished: "(running)").
std::vector<Fact> Summary(const CheckReport& r);
// The host's fields, "-" for those not measured.
std::vector<Fact> Host(const HostInfo& h);
// The GPU inventory: a column's header and the cell of one GPU of a node.
struct InventoryColumn {
  const char* header;
  std::string (*cell)(const SystemSnapshot& node, const GpuSnapshot& gpu);
};
const std::vector<InventoryColumn>& InventoryColumns();
// A node's name in the inventory: its hostname, else "node N" (1-based).
std::string NodeName(const SystemSnapshot& node, std::size_t i);
// "field: reason (GPU 0, 1 of node-a)" lines for every field not measured, grouped by field
// and reason so a cluster of identical GPUs gives one line, not thousands.
std::vector<std::string> NotMeasured(const CheckReport& r);
// "GPU 3: XID 79 at 12.3 s".
std::string Event(const GpuEvent& e);
// "9 PASS, 1 WARN, 1 FAIL, 1 SKIP" (statuses with no result left out).
std::string Counts(const std::vector<CheckResult>& tests);

// Comparison: one row per fact of a machine (card, GPUs, offer, price ...; the label heads the
// column and the verdict, a status, is drawn by each renderer), one per provider term, and the
// value of a test's cell without its status.
struct MachineRow {
  const char* name;
  std::string (*cell)(const ComparedMachine& m, const std::string& currency);
};
const std::vector<MachineRow>& MachineRows();
struct TermRow {
  const char* name;
  std::string (*cell)(const ProviderTerms& t);  // "not stated" when absent
};
const std::vector<TermRow>& TermRows();
// A machine's term cell: "no offer" without one.
std::string Term(const ComparedMachine& m, const TermRow& row);
// "3350 GB/s", "x8", "-"; with "(1 of 8 failing)" when the cell covers several results.
std::string ComparedValue(const ComparedCell& cell, const std::string& unit);
// Whether any machine has an offer (the terms table is shown only then).
bool AnyOffer(const ComparisonResult& c);

// "node-b (b.json): REASON", one line per incomplete node report of a merge.
std::vector<std::string> IncompleteLines(const std::vector<IncompleteReport>& incomplete);

// The outlier table's header and the cells of one outlier.
const std::vector<std::string>& OutlierHeader();
std::vector<std::string> OutlierCells(const Outlier& o);

}  // namespace check_cells
}  // namespace gpuplan
