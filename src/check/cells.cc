// The cell model of a check result and its one number formatter (check/cells.h).
#include "check/cells.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuplan {
namespace check_cells {

std::string WithUnit(double v, const std::string& unit) { return unit.empty() ? Number(v) : Number(v) + " " + unit; }

std::string StatusClass(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "pass";
    case CheckStatus::kWarn: return "warn";
    case CheckStatus::kFail: return "fail";
    case CheckStatus::kSkip: return "skip";
    case CheckStatus::kError: return "error";
  }
  return "error";
}

std::string Figure::Cell(const std::string& unit) const {
  if (value.empty()) {
    return kNoValue;
  }
  return number && !unit.empty() ? value + " " + unit : value;
}

ResultCells CellsOf(const CheckResult& r) {
  ResultCells c;
  c.status = ToString(r.status);
  c.test = r.name;
  c.gpu = r.gpu >= 0 ? std::to_string(r.gpu) : "host";
  c.node = r.node;
  c.measured = r.measured ? Figure{Number(*r.measured), true} : Figure{r.measured_text, false};
  c.expected = !r.expected_text.empty() ? Figure{r.expected_text, false}
               : r.expected             ? Figure{Number(*r.expected), true}
                                        : Figure{};
  c.unit = r.unit;
  c.evidence = r.evidence;
  c.advice = r.advice;
  return c;
}

std::string Gpu(const CheckResult& r) { return CellsOf(r).gpu; }

std::string Measured(const CheckResult& r) { return CellsOf(r).MeasuredCell(); }

std::string Expected(const CheckResult& r) { return CellsOf(r).ExpectedCell(); }

std::string Where(const CheckResult& r, bool with_node) {
  std::string s = with_node && !r.node.empty() ? r.node + " " : "";
  return s + (r.gpu >= 0 ? fmt::format("GPU {}", r.gpu) : "host");
}

std::string Problem(const CheckResult& r) {
  std::string s = "measured " + Measured(r) + ", expected " + Expected(r);
  auto sentence = [&](const std::string& text) {
    if (text.empty()) {
      return;
    }
    const char last = s.back();
    s += last == '.' || last == '!' || last == '?' ? " " : ". ";
    s += text;
  };
  sentence(r.evidence);
  sentence(r.advice.empty() ? "" : "Advice: " + r.advice);
  return s;
}

}  // namespace check_cells
}  // namespace gpuplan
