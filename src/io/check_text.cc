#include "io/check_text.h"

#include <fmt/format.h>

#include <map>

#include "io/table.h"

namespace gpuplan {
namespace {

std::string Number(double v) { return fmt::format("{:.4g}", v); }

std::string Measured(const CheckResult& r) {
  if (r.measured) {
    return Number(*r.measured) + (r.unit.empty() ? "" : " " + r.unit);
  }
  return r.measured_text;
}

std::string Expected(const CheckResult& r) {
  if (!r.expected_text.empty()) {
    return r.expected_text;
  }
  if (r.expected) {
    return Number(*r.expected) + (r.unit.empty() ? "" : " " + r.unit);
  }
  return {};
}

std::string Where(const CheckResult& r) {
  std::string w = r.node.empty() ? "" : r.node + " ";
  return w + (r.gpu >= 0 ? fmt::format("GPU {}", r.gpu) : std::string("host"));
}

}  // namespace

std::string CheckResultLine(const CheckResult& r) {
  std::string line = fmt::format("{:<5} {:<24} {:<8}", ToString(r.status), r.name, Where(r));
  const std::string m = Measured(r);
  const std::string e = Expected(r);
  if (!m.empty()) {
    line += " " + m;
  }
  if (!e.empty()) {
    line += " (expected " + e + ")";
  }
  if (!r.evidence.empty()) {
    line += "  " + r.evidence;
  }
  if (!r.advice.empty() && (r.status == CheckStatus::kFail || r.status == CheckStatus::kWarn || r.status == CheckStatus::kError)) {
    line += "\n      -> " + r.advice;
  }
  return line;
}

void CheckLiveView::OnStart(const CheckReport& report, const std::vector<std::string>& tests) {
  out_ << fmt::format("gpuplan check ({}): {}\n", report.mode, report.source.empty() ? "no GPU source" : report.source);
  if (!report.expect.empty()) {
    out_ << "ordered: " << report.expect << (report.offer_id.empty() ? "" : " (offer " + report.offer_id + ")") << "\n";
  }
  for (const auto& n : report.notes) {
    out_ << "note: " << n << "\n";
  }
  std::string names;
  for (const auto& t : tests) {
    names += (names.empty() ? "" : ", ") + t;
  }
  out_ << "tests: " << names << "\n";
  // Results known before any test ran (no driver).
  for (; printed_ < report.tests.size(); ++printed_) {
    out_ << "  " << CheckResultLine(report.tests[printed_]) << "\n";
  }
  out_.flush();
}

void CheckLiveView::OnTestStart(const std::string& test, int index, int total) {
  ClearProgress();
  out_ << fmt::format("[{}/{}] {}\n", index + 1, total, test);
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
  out_ << "\r  " << test << " [" << std::string(static_cast<std::size_t>(filled), '#')
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
  out << fmt::format("verdict: {} ({} PASS, {} WARN, {} FAIL, {} SKIP, {} ERROR; exit {})\n", ToString(report.verdict),
                     n[CheckStatus::kPass], n[CheckStatus::kWarn], n[CheckStatus::kFail], n[CheckStatus::kSkip],
                     n[CheckStatus::kError], report.ExitCode());
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
  row("machine", [](const ComparedMachine& m) { return m.label; });
  row("file", [](const ComparedMachine& m) { return m.file; });
  row("card", [](const ComparedMachine& m) { return fmt::format("{} x {}", m.gpus, m.card.empty() ? "?" : m.card); });
  row("verdict", [](const ComparedMachine& m) { return std::string(ToString(m.verdict)); });
  row("offer", [](const ComparedMachine& m) { return m.offer_id.empty() ? std::string("-") : m.offer_id; });
  const std::string cur = c.currency.empty() ? "" : " " + c.currency;
  auto money = [&](const std::optional<double>& v) { return v ? fmt::format("{:.2f}{}", *v, cur) : std::string("-"); };
  row("price per hour", [&](const ComparedMachine& m) { return money(m.price_per_hour); });
  row("per bf16 PFLOP-hour", [&](const ComparedMachine& m) { return money(m.per_bf16_pflop_hour); });
  row("per storage TB/s-hour", [&](const ComparedMachine& m) { return money(m.per_storage_tb_s_hour); });
  row("rank", [](const ComparedMachine& m) { return m.rank > 0 ? std::to_string(m.rank) : std::string("-"); });
  out << "\n";
  t.PrintHeader(out);
  for (const auto& r : c.rows) {
    std::vector<std::string> cells = {r.test};
    for (const auto& cell : r.cells) {
      if (!cell) {
        cells.push_back("not run");
        continue;
      }
      std::string v = cell->measured ? Number(*cell->measured) + (r.unit.empty() ? "" : " " + r.unit) : cell->text;
      if (v.size() > 14) {
        v = v.substr(0, 13) + "~";
      }
      cells.push_back(fmt::format("{} {}", ToString(cell->status), v));
    }
    t.PrintRow(out, cells);
  }
  if (!c.rank_basis.empty()) {
    out << "\nranked by " << c.rank_basis << " (lower is better)\n";
  }
  for (const auto& n : c.notes) {
    out << "note: " << n << "\n";
  }
}

void MergeToText(const MergeResult& m, std::ostream& out) {
  out << fmt::format("{} nodes, {} GPUs, {} results; outliers at |modified z| > {:g}: {}\n", m.nodes,
                     [&] {
                       std::size_t g = 0;
                       for (const auto& n : m.merged.nodes) {
                         g += n.gpus.size();
                       }
                       return g;
                     }(),
                     m.merged.tests.size(), m.outlier_z, m.outliers.size());
  for (const auto& o : m.outliers) {
    out << fmt::format("  {} {}{}: {:.4g} {} against a median of {:.4g} over {} (z = {:.1f})\n", o.test, o.node,
                       o.gpu >= 0 ? fmt::format(" GPU {}", o.gpu) : std::string(), o.value, o.unit, o.median, o.peers, o.z);
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
