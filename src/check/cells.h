// The cell model of a check result: what a row of every renderer shows (status, test, GPU,
// node, measured, expected, unit, evidence, advice), with the one number formatter all of them use.
// Text, Markdown, HTML and the JSON's prose all take their figures from here.
#pragma once

#include <string>

#include "check/report.h"
#include "format/numbers.h"

namespace gpuplan {
namespace check_cells {

// `digits` significant digits ("3350", "0.9124", "1.52e-05" at 4); never an exponent for a
// magnitude below 10^15 that the digits cannot hold: 98900 reads "98900", not "9.89e+04".
// Every figure of a check result goes through this: the cells below and the numbers the
// verdicts of src/check write into their expected and evidence texts.
inline std::string Number(double v, int digits = 4) { return FormatNumber(v, digits); }  // format/numbers.h
// "3350 GB/s"; the number alone when the unit is empty.
std::string WithUnit(double v, const std::string& unit);
// A status in lower case, "pass" ... "error" (the HTML form's CSS class suffix).
std::string StatusClass(CheckStatus s);

// A measured or expected cell: a number in the result's unit, or a text ("x8", ">= 0.9 x 3350
// GB/s"), or nothing.
struct Figure {
  std::string value;    // "98900" (Number), "x8"; empty when there is nothing
  bool number = false;  // `value` is a number; the unit follows it
  // "98900 GB/s", "x8", "-" when empty.
  std::string Cell(const std::string& unit) const;
};

// The cells of one result's row, in English; the text renderer translates the words.
struct ResultCells {
  std::string status;  // "PASS" ... "ERROR"
  std::string test;    // "stream_copy"
  std::string gpu;     // "0", "host" (gpu < 0)
  std::string node;    // "" when the result names none
  Figure measured;     // the number (measured), else measured_text
  Figure expected;     // expected_text, else the number (expected)
  std::string unit;
  std::string evidence;
  std::string advice;
  std::string MeasuredCell() const { return measured.Cell(unit); }
  std::string ExpectedCell() const { return expected.Cell(unit); }
};
ResultCells CellsOf(const CheckResult& r);

// The results table's cells of one result (CellsOf, one at a time).
std::string Gpu(const CheckResult& r);       // "0", "host" (gpu < 0)
std::string Measured(const CheckResult& r);  // number with unit, else measured_text, else "-"
std::string Expected(const CheckResult& r);  // expected_text, else number with unit, else "-"
// Where a problem is: "GPU 1", "host", with "node-a " in front when `with_node`.
std::string Where(const CheckResult& r, bool with_node);
// A problem's line after its status, test and place: "measured x8, expected x16. EVIDENCE.
// Advice: ADVICE" (a sentence's full stop added where the text has none).
std::string Problem(const CheckResult& r);

}  // namespace check_cells
}  // namespace gpuplan
