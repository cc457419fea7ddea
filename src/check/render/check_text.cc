#include "check/render/check_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <string_view>

#include "check/cells.h"
#include "check/render/check_markdown.h"
#include "format/money.h"
#include "format/numbers.h"
#include "format/shown.h"
#include "format/table.h"
#include "format/text_lang.h"

namespace gpuplan {
namespace {

// A number with its unit; the unit's words (GPUs, lanes, errors...) in the text language. The
// number is written as every check renderer writes it (check_cells::Number: 24564, not 2.456e+04).
std::string SaidWithUnit(double v, const std::string& unit) {
  return check_cells::Number(v) + (unit.empty() ? "" : " " + SayMessage(unit));
}

// A measured or expected cell of the cell model (check/cells.h) in the text language: a
// number keeps its figure and says its unit, a text is said whole; empty when there is nothing.
std::string Said(const check_cells::Figure& f, const std::string& unit) {
  if (f.value.empty()) {
    return {};
  }
  return f.number ? f.value + (unit.empty() ? "" : " " + SayMessage(unit)) : SayMessage(f.value);
}

// A test of the suite by its name in the text language (the name itself is what --tests takes).
std::string TestName(const std::string& test) { return Say("check.test." + test, test); }

std::string Where(const CheckResult& r) {
  std::string w = r.node.empty() ? "" : r.node + " ";
  return w + (r.gpu >= 0 ? fmt::format("GPU {}", r.gpu) : Say("cli.check.host", "host"));
}

// The columns a status takes: the widest of the five in the text language (5 in English).
int64_t StatusWidth() {
  int64_t w = 0;
  for (const char* s : {"PASS", "WARN", "FAIL", "SKIP", "ERROR"}) {
    w = std::max(w, DisplayWidth(SayStatus(s)));
  }
  return w;
}

}  // namespace

std::string CheckResultLine(const CheckResult& r) {
  const check_cells::ResultCells c = check_cells::CellsOf(r);
  std::string line = PadRight(SayStatus(c.status), StatusWidth()) + " " + PadRight(Shown(c.test), 24) + " " +
                     PadRight(Shown(Where(r)), 8);
  const std::string m = Shown(Said(c.measured, c.unit));
  const std::string e = Shown(Said(c.expected, c.unit));
  if (!m.empty()) {
    line += " " + m;
  }
  if (!e.empty()) {
    line += SayFormat("cli.check.expected", " (expected {})", {e});
  }
  if (!c.evidence.empty()) {
    line += "  " + Shown(SayMessage(c.evidence));
  }
  if (!c.advice.empty() && (r.status == CheckStatus::kFail || r.status == CheckStatus::kWarn || r.status == CheckStatus::kError)) {
    line += "\n      -> " + Shown(SayMessage(c.advice));
  }
  return line;
}

void CheckLiveView::OnStart(const CheckReport& report, const std::vector<std::string>& tests) {
  out_ << SayFormat("cli.check.start", "gpuplan check ({}): {}",
                    {Say("cli.check.mode." + report.mode, report.mode),
                     report.source.empty() ? Say("cli.check.no_source", "no GPU source")
                                           : Shown(SayMessage(report.source))})
       << "\n";
  if (!report.expect.empty()) {
    out_ << (report.offer_id.empty() ? SayFormat("cli.check.ordered", "ordered: {}", {Shown(report.expect)})
                                     : SayFormat("cli.check.ordered_offer", "ordered: {} (offer {})",
                                                 {Shown(report.expect), Shown(report.offer_id)}))
         << "\n";
  }
  for (const auto& n : report.notes) {
    out_ << Say("cli.note", "note: ") << Shown(SayMessage(n)) << "\n";
  }
  std::string names;
  for (const auto& t : tests) {
    names += (names.empty() ? "" : Say("cli.list_sep", ", ")) + TestName(t);
  }
  out_ << Say("cli.check.tests", "tests: ") << names << "\n";
  // Results known before any test ran (no driver).
  for (; printed_ < report.tests.size(); ++printed_) {
    out_ << "  " << CheckResultLine(report.tests[printed_]) << "\n";
  }
  out_.flush();
}

void CheckLiveView::OnTestStart(const std::string& test, int index, int total) {
  ClearProgress();
  out_ << fmt::format("[{}/{}] {}\n", index + 1, total, TestName(test));
  out_.flush();
  last_percent_ = -1;
}

void CheckLiveView::OnProgress(const std::string& test, double fraction) {
  if (!tty_) {
    return;
  }
  const int percent = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 100);
  if (percent == last_percent_) {
    return;
  }
  last_percent_ = percent;
  const int filled = percent * 30 / 100;
  out_ << "\r  " << TestName(test) << " [" << std::string(static_cast<std::size_t>(filled), '#')
       << std::string(static_cast<std::size_t>(30 - filled), '.') << "] " << percent << "%";
  out_.flush();
  progress_shown_ = true;
}

void CheckLiveView::ClearProgress() {
  if (progress_shown_) {
    out_ << "\r\033[K";
    progress_shown_ = false;
  }
}

void CheckLiveView::OnTestDone(const CheckReport& report, const std::string& /*test*/) {
  ClearProgress();
  for (; printed_ < report.tests.size(); ++printed_) {
    out_ << "  " << CheckResultLine(report.tests[printed_]) << "\n";
  }
  out_.flush();
}

void CheckLiveView::OnFinish(const CheckReport& report) {
  ClearProgress();
  OnTestDone(report, "");
  CheckSummaryToText(report, out_);
  out_.flush();
}

void CheckSummaryToText(const CheckReport& report, std::ostream& out) {
  std::map<CheckStatus, int> n;
  for (const auto& t : report.tests) {
    ++n[t.status];
  }
  out << SayFormat("cli.check.summary", "verdict: {} ({} PASS, {} WARN, {} FAIL, {} SKIP, {} ERROR; exit {})",
                   {SayStatus(ToString(report.verdict)), std::to_string(n[CheckStatus::kPass]),
                    std::to_string(n[CheckStatus::kWarn]), std::to_string(n[CheckStatus::kFail]),
                    std::to_string(n[CheckStatus::kSkip]), std::to_string(n[CheckStatus::kError]),
                    std::to_string(report.ExitCode())})
      << "\n";
}

void ComparisonToText(const ComparisonResult& c, std::ostream& out) {
  std::vector<Column> cols = {Column("", 26)};
  for (std::size_t i = 0; i < c.machines.size(); ++i) {
    cols.emplace_back(fmt::format("#{}", i + 1), 22, Align::kLeft, "  ");
  }
  const Table t(cols);
  auto row = [&](const std::string& head, auto cell) {
    std::vector<std::string> cells = {head};
    for (const auto& m : c.machines) {
      cells.push_back(cell(m));
    }
    t.PrintRow(out, cells);
  };
  t.PrintHeader(out);
  row(Say("cli.check.cmp.machine", "machine"), [](const ComparedMachine& m) { return Shown(m.label); });
  row(Say("cli.check.cmp.file", "file"), [](const ComparedMachine& m) { return Shown(m.file); });
  row(Say("cli.check.cmp.card", "card"),
      [](const ComparedMachine& m) { return fmt::format("{} x {}", m.gpus, m.card.empty() ? "?" : Shown(m.card)); });
  row(Say("cli.check.cmp.verdict", "verdict"), [](const ComparedMachine& m) { return SayStatus(ToString(m.verdict)); });
  row(Say("cli.check.cmp.complete", "complete"), [](const ComparedMachine& m) {
    return m.incomplete.empty() ? Say("cli.check.cmp.complete_yes", "yes") : Say("cli.check.cmp.complete_no", "NO (see notes)");
  });
  row(Say("cli.check.cmp.offer", "offer"),
      [](const ComparedMachine& m) { return m.offer_id.empty() ? std::string("-") : m.offer_id; });
  auto money = [&](const std::optional<double>& v) {
    return OptionalText(v, [&](double x) { return FormatMoneyCents(x, c.currency); });
  };
  row(Say("cli.check.cmp.price_per_hour", "price per hour"),
      [&](const ComparedMachine& m) { return money(m.price_per_hour); });
  row(Say("cli.check.cmp.per_pflop_hour", "per bf16 PFLOP-hour"),
      [&](const ComparedMachine& m) { return money(m.per_bf16_pflop_hour); });
  row(Say("cli.check.cmp.per_storage_hour", "per storage TB/s-hour"),
      [&](const ComparedMachine& m) { return money(m.per_storage_tb_s_hour); });
  row(Say("cli.check.cmp.rank", "rank"),
      [](const ComparedMachine& m) { return m.rank > 0 ? std::to_string(m.rank) : std::string("-"); });
  out << "\n";
  t.PrintHeader(out);
  for (const auto& r : c.rows) {
    std::vector<std::string> cells = {r.test};
    for (const auto& cell : r.cells) {
      if (!cell) {
        cells.push_back(Say("cli.check.cmp.not_run", "not run"));
        continue;
      }
      std::string v = cell->measured ? SaidWithUnit(*cell->measured, r.unit) : Shown(SayMessage(cell->text));
      if (DisplayWidth(v) > 14) {
        v = CutToWidth(v, 13) + "~";
      }
      cells.push_back(fmt::format("{} {}", SayStatus(ToString(cell->status)), v));
    }
    t.PrintRow(out, cells);
  }
  if (!c.rank_basis.empty()) {
    out << "\n" << SayFormat("cli.check.cmp.ranked_by", "ranked by {} (lower is better)", {SayMessage(c.rank_basis)})
        << "\n";
  }
  for (const auto& n : c.notes) {
    out << Say("cli.note", "note: ") << Shown(SayMessage(n)) << "\n";
  }
}

void MergeToText(const MergeResult& m, std::ostream& out) {
  std::size_t gpus = 0;
  for (const auto& n : m.merged.nodes) {
    gpus += n.gpus.size();
  }
  out << SayFormat("cli.check.merge.summary", "{} nodes, {} GPUs, {} results; outliers at |modified z| > {}: {}",
                   {std::to_string(m.nodes), std::to_string(gpus), std::to_string(m.merged.tests.size()),
                    fmt::format("{:g}", m.outlier_z), std::to_string(m.outliers.size())})
      << "\n";
  for (const auto& i : m.incomplete) {
    out << SayFormat("cli.check.merge.incomplete", "incomplete node report: {} ({}): {}",
                     {Shown(i.label), Shown(i.file), Shown(SayMessage(i.reason))})
        << "\n";
  }
  for (const auto& o : m.outliers) {
    out << "  "
        << SayFormat("cli.check.merge.outlier", "{} {}{}: {} {} against a median of {} over {} (z = {})",
                     {Shown(o.test), Shown(o.node), o.gpu >= 0 ? fmt::format(" GPU {}", o.gpu) : std::string(),
                      check_cells::Number(o.value), o.unit, check_cells::Number(o.median), std::to_string(o.peers),
                      fmt::format("{:.1f}", o.z)})
        << "\n";
  }
  for (const auto& t : m.merged.tests) {
    if (t.status == CheckStatus::kFail || t.status == CheckStatus::kError ||
        (t.status == CheckStatus::kWarn && t.name.rfind("outlier_", 0) != 0)) {
      out << "  " << CheckResultLine(t) << "\n";
    }
  }
  CheckSummaryToText(m.merged, out);
}

}  // namespace gpuplan
