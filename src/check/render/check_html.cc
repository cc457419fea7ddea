// HTML rendering of `gpuplan check` reports, comparisons and merges: one self-contained file,
// written straight to the stream (a merge of 1,000 nodes has 160,000 result rows).
#include "check/render/check_html.h"

#include <string>
#include <vector>

#include "check/cells.h"
#include "check/render/check_markdown.h"

namespace gpuplan {

void HtmlEscape(std::ostream& out, std::string_view s) {
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    const char* rep = nullptr;
    switch (ch) {
      case '&': rep = "&amp;"; break;
      case '<': rep = "&lt;"; break;
      case '>': rep = "&gt;"; break;
      case '"': rep = "&quot;"; break;
      case '\'': rep = "&#39;"; break;
      default:
        // Control characters other than tab and line breaks are not allowed in HTML text.
        if ((static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || ch == 0x7f) {
          rep = "\xEF\xBF\xBD";  // U+FFFD
        }
    }
    if (rep != nullptr) {
      out.write(s.data() + start, static_cast<std::streamsize>(i - start));
      out << rep;
      start = i + 1;
    }
  }
  out.write(s.data() + start, static_cast<std::streamsize>(s.size() - start));
}

namespace {

namespace cc = check_cells;

// Line breaks in model text are kept by `white-space: pre-line` on cells and list items.
constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #1a1a1a; line-height: 1.4; }
h1 { font-size: 1.6em; }
h2 { font-size: 1.25em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td, li { white-space: pre-line; }
table.facts th { font-weight: normal; color: #555; }
.status-pass, .status-warn, .status-fail, .status-error, .status-skip {
  font-weight: bold; padding: 0 0.35em; border-radius: 3px; }
.status-pass { background: #2e7d32; color: #fff; }
.status-warn { background: #f9a825; color: #000; }
.status-fail { background: #c62828; color: #fff; }
.status-error { background: #6d0000; color: #fff; }
.status-skip { background: #8a8a8a; color: #fff; }
tr.result[data-status="FAIL"], tr.result[data-status="ERROR"] { background: #fdecea; }
tr.result[data-status="WARN"] { background: #fff8e1; }
.not-run { color: #888; font-style: italic; }
@media print { body { margin: 0; } tr { break-inside: avoid; } }
)";

void H(std::ostream& out, std::string_view s) { HtmlEscape(out, s); }

void Head(std::ostream& out, std::string_view title) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>";
  H(out, title);
  out << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
}

void Tail(std::ostream& out) { out << "</body>\n</html>\n"; }

// <span class="status-fail">FAIL</span>
void Status(std::ostream& out, CheckStatus s) {
  out << "<span class=\"status-" << cc::StatusClass(s) << "\">" << ToString(s) << "</span>";
}

void Td(std::ostream& out, std::string_view text) {
  out << "<td>";
  H(out, text);
  out << "</td>";
}

void HeaderRow(std::ostream& out, const std::vector<std::string>& cells) {
  out << "<thead><tr>";
  for (const auto& c : cells) {
    out << "<th>";
    H(out, c);
    out << "</th>";
  }
  out << "</tr></thead>\n";
}

void Facts(std::ostream& out, const char* id, const std::vector<cc::Fact>& facts) {
  out << "<table class=\"facts\" id=\"" << id << "\"><tbody>\n";
  for (const auto& [label, value] : facts) {
    out << "<tr><th scope=\"row\">";
    H(out, label);
    out << "</th>";
    Td(out, value);
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

void List(std::ostream& out, const char* id, const std::vector<std::string>& lines) {
  out << "<ul id=\"" << id << "\">\n";
  for (const auto& l : lines) {
    out << "<li>";
    H(out, l);
    out << "</li>\n";
  }
  out << "</ul>\n";
}

bool IsProblem(CheckStatus s, bool warn) {
  return warn ? s == CheckStatus::kWarn : s == CheckStatus::kFail || s == CheckStatus::kError;
}

// <h1>TITLE<span id="verdict" ...>FAIL</span></h1>
void Verdict(std::ostream& out, std::string_view title, CheckStatus v) {
  out << "<h1>";
  H(out, title);
  out << "<span id=\"verdict\" class=\"status-" << cc::StatusClass(v) << "\" data-verdict=\"" << ToString(v) << "\">"
      << ToString(v) << "</span></h1>\n";
}

// Everything of a report below its title.
void ReportBody(const CheckReport& r, std::ostream& out) {
  const bool several = r.nodes.size() > 1;
  Facts(out, "summary", cc::Summary(r));

  if (!r.notes.empty()) {
    out << "<h2>Notes</h2>\n";
    List(out, "notes", r.notes);
  }

  out << "<h2>Problems</h2>\n";
  bool any = false;
  for (bool warn : {false, true}) {  // FAIL and ERROR first, then WARN, each in report order
    for (const auto& t : r.tests) {
      if (!IsProblem(t.status, warn)) {
        continue;
      }
      if (!any) {
        out << "<ul id=\"problems\">\n";
        any = true;
      }
      out << "<li>";
      Status(out, t.status);
      out << " <b>";
      H(out, t.name);
      out << "</b> (";
      H(out, cc::Where(t, several));
      out << "): ";
      H(out, cc::Problem(t));
      out << "</li>\n";
    }
  }
  out << (any ? "</ul>\n" : "<p>None: no result is FAIL, ERROR or WARN.</p>\n");

  out << "<h2>Host</h2>\n";
  Facts(out, "host", cc::Host(r.host));

  out << "<h2>GPUs</h2>\n";
  const auto& columns = cc::InventoryColumns();
  std::vector<std::string> header;
  if (several) {
    header.emplace_back("node");
  }
  for (const auto& c : columns) {
    header.emplace_back(c.header);
  }
  out << "<table id=\"gpus\">\n";
  HeaderRow(out, header);
  out << "<tbody>\n";
  for (std::size_t i = 0; i < r.nodes.size(); ++i) {
    for (const auto& g : r.nodes[i].gpus) {
      out << "<tr>";
      if (several) {
        Td(out, cc::NodeName(r.nodes[i], i));
      }
      for (const auto& c : columns) {
        Td(out, c.cell(r.nodes[i], g));
      }
      out << "</tr>\n";
    }
  }
  out << "</tbody></table>\n";
  const auto not_measured = cc::NotMeasured(r);
  if (!not_measured.empty()) {
    out << "<p>Not measured:</p>\n";
    List(out, "not-measured", not_measured);
  }

  if (!r.events.empty()) {
    out << "<h2>Events</h2>\n<ul id=\"events\">\n";
    for (const auto& e : r.events) {
      out << "<li>";
      H(out, cc::Event(e));
      out << "</li>\n";
    }
    out << "</ul>\n";
  }

  out << "<h2>Results</h2>\n<table id=\"tests\">\n";
  header = {"status", "test", "GPU"};
  if (several) {
    header.emplace_back("node");
  }
  for (const char* h : {"measured", "expected", "evidence", "advice"}) {
    header.emplace_back(h);
  }
  HeaderRow(out, header);
  out << "<tbody>\n";
  for (const auto& t : r.tests) {
    const cc::ResultCells c = cc::CellsOf(t);
    out << "<tr class=\"result\" data-status=\"" << c.status << "\" data-test=\"";
    H(out, c.test);
    out << "\"><td>";
    Status(out, t.status);
    out << "</td>";
    Td(out, c.test);
    Td(out, c.gpu);
    if (several) {
      Td(out, c.node.empty() ? "-" : c.node);
    }
    Td(out, c.MeasuredCell());
    Td(out, c.ExpectedCell());
    Td(out, c.evidence);
    Td(out, c.advice);
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

// The header row of a comparison table: a first header, then each machine's label.
void MachineHeader(std::ostream& out, const char* first, const ComparisonResult& c) {
  std::vector<std::string> header = {first};
  for (const auto& m : c.machines) {
    header.push_back(m.label);
  }
  HeaderRow(out, header);
}

void RowHead(std::ostream& out, std::string_view name) {
  out << "<tr><th scope=\"row\">";
  H(out, name);
  out << "</th>";
}

}  // namespace

void CheckReportToHtml(const CheckReport& r, std::ostream& out) {
  Head(out, std::string("GPU check: ") + ToString(r.verdict));
  Verdict(out, "GPU check: ", r.verdict);
  ReportBody(r, out);
  Tail(out);
}

void ComparisonToHtml(const ComparisonResult& c, std::ostream& out) {
  const std::string title = "GPU check comparison of " + std::to_string(c.machines.size()) + " machines";
  Head(out, title);
  out << "<h1>";
  H(out, title);
  out << "</h1>\n";

  out << "<h2>Machines</h2>\n<table id=\"machines\">\n";
  MachineHeader(out, "", c);
  out << "<tbody>\n";
  RowHead(out, "verdict");
  for (const auto& m : c.machines) {
    out << "<td data-verdict=\"" << ToString(m.verdict) << "\">";
    Status(out, m.verdict);
    out << "</td>";
  }
  out << "</tr>\n";
  for (const auto& row : cc::MachineRows()) {
    RowHead(out, row.name);
    for (const auto& m : c.machines) {
      Td(out, row.cell(m, c.currency));
    }
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
  if (!c.rank_basis.empty()) {
    out << "<p>Ranked by ";
    H(out, c.rank_basis);
    out << " (1 = the least money per measured unit).</p>\n";
  }

  if (cc::AnyOffer(c)) {
    out << "<h2>Provider terms</h2>\n<table id=\"terms\">\n";
    MachineHeader(out, "term", c);
    out << "<tbody>\n";
    for (const auto& row : cc::TermRows()) {
      RowHead(out, row.name);
      for (const auto& m : c.machines) {
        Td(out, cc::Term(m, row));
      }
      out << "</tr>\n";
    }
    out << "</tbody></table>\n";
  }

  out << "<h2>Tests</h2>\n";
  if (c.rows.empty()) {
    out << "<p>No results.</p>\n";
  } else {
    out << "<table id=\"tests\">\n";
    MachineHeader(out, "test", c);
    out << "<tbody>\n";
    for (const auto& row : c.rows) {
      out << "<tr class=\"compared\" data-test=\"";
      H(out, row.test);
      out << "\"><th scope=\"row\">";
      H(out, row.test);
      out << "</th>";
      for (const auto& cell : row.cells) {
        if (!cell) {
          out << "<td class=\"not-run\">not run</td>";
          continue;
        }
        out << "<td data-status=\"" << ToString(cell->status) << "\">";
        Status(out, cell->status);
        out << ' ';
        H(out, cc::ComparedValue(*cell, row.unit));
        out << "</td>";
      }
      out << "</tr>\n";
    }
    out << "</tbody></table>\n";
  }

  if (!c.notes.empty()) {
    out << "<h2>Notes</h2>\n";
    List(out, "notes", c.notes);
  }
  Tail(out);
}

void MergeToHtml(const MergeResult& m, std::ostream& out) {
  const std::string title = "GPU check of " + std::to_string(m.nodes) + " nodes: ";
  Head(out, title + ToString(m.merged.verdict));
  Verdict(out, title, m.merged.verdict);
  if (!m.incomplete.empty()) {
    out << "<h2>Incomplete node reports</h2>\n<p>The merge is incomplete: these nodes' reports did not finish or hold "
           "no result.</p>\n";
    List(out, "incomplete", cc::IncompleteLines(m.incomplete));
  }
  out << "<h2>Outliers</h2>\n<p>Outliers: |modified z| &gt; ";
  H(out, cc::Number(m.outlier_z));
  out << " against the median of every node's result (Iglewicz and Hoaglin), " << m.outliers.size()
      << " found.</p>\n";
  if (!m.outliers.empty()) {
    out << "<table id=\"outliers\">\n";
    HeaderRow(out, cc::OutlierHeader());
    out << "<tbody>\n";
    for (const auto& o : m.outliers) {
      out << "<tr>";
      for (const auto& cell : cc::OutlierCells(o)) {
        Td(out, cell);
      }
      out << "</tr>\n";
    }
    out << "</tbody></table>\n";
  }
  out << "<h2>Merged report</h2>\n";
  ReportBody(m.merged, out);
  Tail(out);
}

}  // namespace gpuplan
