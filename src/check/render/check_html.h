// HTML form of `gpuplan check` results (docs/check-report-formats.md): one self-contained file
// to send to a provider.
//
// In: a `CheckReport` (check/report.h), a `ComparisonResult` or a `MergeResult` (check/compare.h).
// Out: one HTML document written to a std::ostream, with the same content as the Markdown form
// (check_markdown.h, whose check_cells give both the same values) as tables. Self-contained:
// an inline <style> and nothing else, no scripts, links, fonts, images or network (a
// Content-Security-Policy meta tag forbids them too). Every string from the model is
// HTML-escaped.
//
// Hooks for tools and tests: the verdict is the element id="verdict" data-verdict="PASS|WARN|
// FAIL|ERROR"; the inventory is table id="gpus", the results table id="tests", each result a
// <tr class="result" data-status="..." data-test="name">; a status is coloured by its CSS class
// status-pass, status-warn, status-fail, status-error or status-skip.
#pragma once

#include <ostream>
#include <string_view>

#include "check/compare.h"
#include "check/report.h"

namespace gpuplan {

void CheckReportToHtml(const CheckReport& r, std::ostream& out);
void ComparisonToHtml(const ComparisonResult& c, std::ostream& out);
void MergeToHtml(const MergeResult& m, std::ostream& out);

// `s` with & < > " ' as character references, for text and attribute values alike.
void HtmlEscape(std::ostream& out, std::string_view s);

}  // namespace gpuplan
