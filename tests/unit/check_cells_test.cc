// One figure, four renderers: a check result's numbers read the same in the terminal text, the
// Markdown and HTML reports and the JSON (check/cells.h), and the verdict helpers' boundaries
// (check/verdict.h). Expected strings are worked by hand from the inputs, not copied from output.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "check/cells.h"
#include "check/storage.h"
#include "check/thresholds.h"
#include "check/verdict.h"
#include "check/render/check_html.h"
#include "check/render/check_json.h"
#include "check/render/check_markdown.h"
#include "check/render/check_text.h"
#include "format/text_lang.h"

namespace gpuplan {
namespace {

// disk_free of a file system with 98,900 GB free (9.89e13 bytes) and a 16 GB checkpoint:
// 3 checkpoints = 48 GB wanted, so PASS; measured 98900 GB, expected 48 GB.
CheckResult DiskFree() {
  StorageResult s;
  s.dir = "/data";
  s.not_measured = "reads not run in this test";
  s.free_bytes = 98'900'000'000'000ull;
  const auto results = JudgeStorage(s, std::nullopt, 16'000'000'000ull, CheckThresholds{});
  for (const auto& r : results) {
    if (r.name == "disk_free") {
      return r;
    }
  }
  ADD_FAILURE() << "no disk_free result";
  return {};
}

TEST(CheckCells, NumberHasNoExponentForOrdinaryMagnitudes) {
  EXPECT_EQ(check_cells::Number(98900), "98900");
  EXPECT_EQ(check_cells::Number(98900.4), "98900");
  EXPECT_EQ(check_cells::Number(3350), "3350");
  EXPECT_EQ(check_cells::Number(0.91237), "0.9124");
  EXPECT_EQ(check_cells::Number(9999.7), "10000");  // %.4g would round up to 1e+04
  EXPECT_EQ(check_cells::Number(1234.4, 3), "1234");  // %.3g: 1.23e+03
  EXPECT_EQ(check_cells::Number(0.0000152), "1.52e-05");  // small numbers keep their exponent
  EXPECT_EQ(check_cells::Number(3e15), "3e+15");
}

TEST(CheckCells, ResultCellsOfANumberAndOfATextMeasurement) {
  CheckResult r = Make("pcie_link_width", 3, "node-a");
  r.status = CheckStatus::kFail;
  r.measured = 8;
  r.measured_text = "x8 (max x8)";
  r.expected_text = "x16";
  r.unit = "lanes";
  const auto c = check_cells::CellsOf(r);
  EXPECT_EQ(c.status, "FAIL");
  EXPECT_EQ(c.gpu, "3");
  EXPECT_EQ(c.node, "node-a");
  EXPECT_EQ(c.MeasuredCell(), "8 lanes");  // the number wins over the text
  EXPECT_EQ(c.ExpectedCell(), "x16");      // the text wins over the number
  CheckResult none = Make("cpu_model", -1, "");
  EXPECT_EQ(check_cells::CellsOf(none).gpu, "host");
  EXPECT_EQ(check_cells::CellsOf(none).MeasuredCell(), "-");
  EXPECT_EQ(check_cells::CellsOf(none).ExpectedCell(), "-");
}

TEST(CheckCells, TheSameFigureInTextMarkdownHtmlAndJson) {
  SetTextLanguage(Messages{}, Lang::kEn);
  const CheckResult r = DiskFree();
  ASSERT_EQ(r.status, CheckStatus::kPass);
  CheckReport report;
  report.mode = "quick";
  report.Add(r);

  const std::string text = CheckResultLine(r);
  EXPECT_NE(text.find(" 98900 GB (expected >= 3 checkpoints of 16 GB)"), std::string::npos) << text;
  EXPECT_NE(text.find("98900 GB free on the file system of /data"), std::string::npos) << text;
  EXPECT_EQ(text.find("e+"), std::string::npos) << text;

  std::ostringstream md;
  CheckReportToMarkdown(report, md);
  EXPECT_NE(md.str().find("| PASS | disk_free | host | 98900 GB | >= 3 checkpoints of 16 GB | 98900 GB free on"),
            std::string::npos)
      << md.str();

  std::ostringstream html;
  CheckReportToHtml(report, html);
  EXPECT_NE(html.str().find("<td>98900 GB</td><td>&gt;= 3 checkpoints of 16 GB</td><td>98900 GB free on"),
            std::string::npos)
      << html.str();

  const auto j = CheckResultToJson(r);
  EXPECT_EQ(j["measured"].get<double>(), 98900.0);
  EXPECT_EQ(j["expected"].get<double>(), 48.0);
  EXPECT_EQ(j["expected_text"].get<std::string>(), ">= 3 checkpoints of 16 GB");
  EXPECT_EQ(j["evidence"].get<std::string>().rfind("98900 GB free on the file system of /data", 0), 0u);
}

TEST(CheckVerdict, MakeStartsAsSkip) {
  const CheckResult r = Make("gpu_count", -1, "node-b");
  EXPECT_EQ(r.name, "gpu_count");
  EXPECT_EQ(r.gpu, -1);
  EXPECT_EQ(r.node, "node-b");
  EXPECT_EQ(r.status, CheckStatus::kSkip);
}

TEST(CheckVerdict, PassSkipWarnFailError) {
  CheckResult r = Make("t", 0, "");
  r.evidence = "read from NVML";
  Pass(r);
  EXPECT_EQ(r.status, CheckStatus::kPass);
  EXPECT_EQ(r.evidence, "read from NVML");  // kept when none is given
  Fail(r, "ask for another card");
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.advice, "ask for another card");
  Warn(r);
  EXPECT_EQ(r.status, CheckStatus::kWarn);
  EXPECT_EQ(r.advice, "ask for another card");  // kept when none is given
  Skip(r, "not measured: no samples");
  EXPECT_EQ(r.status, CheckStatus::kSkip);
  EXPECT_EQ(r.evidence, "not measured: no samples");
  Error(r, "the test stopped", "");
  EXPECT_EQ(r.status, CheckStatus::kError);
  EXPECT_EQ(r.evidence, "the test stopped");
  EXPECT_EQ(r.advice, "");
}

TEST(CheckVerdict, AtLeastPassesAtTheThresholdAndFailsJustBelow) {
  CheckResult r = Make("gpu_count", -1, "");
  EXPECT_TRUE(AtLeast(r, 8, 8, CheckStatus::kFail, "fewer GPUs"));
  EXPECT_EQ(r.status, CheckStatus::kPass);
  EXPECT_EQ(r.advice, "");
  EXPECT_FALSE(AtLeast(r, 7, 8, CheckStatus::kFail, "fewer GPUs"));
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.advice, "fewer GPUs");
  // 0.97 x 81559 MiB = 79112.23 MiB: 79112.2 is just below, 79113 above.
  CheckResult m = Make("gpu_memory_total", 0, "");
  EXPECT_FALSE(AtLeast(m, 79112.2, 0.97 * 81559, CheckStatus::kWarn));
  EXPECT_EQ(m.status, CheckStatus::kWarn);
  EXPECT_TRUE(AtLeast(m, 79113, 0.97 * 81559));
  EXPECT_EQ(m.status, CheckStatus::kPass);
}

TEST(CheckVerdict, AtMostPassesAtTheLimitAndWarnsJustAbove) {
  CheckResult r = Make("gpu_temperature", 0, "");
  EXPECT_TRUE(AtMost(r, 85, 85));
  EXPECT_EQ(r.status, CheckStatus::kPass);
  EXPECT_FALSE(AtMost(r, 86, 85, CheckStatus::kWarn, "hot before any load"));
  EXPECT_EQ(r.status, CheckStatus::kWarn);
  EXPECT_EQ(r.advice, "hot before any load");
  EXPECT_FALSE(AtMost(r, 85.5, 85, CheckStatus::kFail));
  EXPECT_EQ(r.status, CheckStatus::kFail);
}

TEST(CheckVerdict, FractionAgainstItsWarnAndFailShares) {
  // 3350 GB/s expected, WARN below 0.9 (3015 GB/s), FAIL below 0.7 (2345 GB/s).
  CheckResult r = Make("stream_copy", 0, "");
  EXPECT_DOUBLE_EQ(Fraction(r, 3015, 3350, 0.9, 0.7, "slow memory"), 0.9);
  EXPECT_EQ(r.status, CheckStatus::kPass);  // exactly at the warn share
  EXPECT_EQ(r.advice, "");
  EXPECT_NEAR(Fraction(r, 3000, 3350, 0.9, 0.7, "slow memory"), 0.8955, 1e-4);
  EXPECT_EQ(r.status, CheckStatus::kWarn);
  EXPECT_EQ(r.advice, "slow memory");
  EXPECT_DOUBLE_EQ(Fraction(r, 2345, 3350, 0.9, 0.7), 0.7);
  EXPECT_EQ(r.status, CheckStatus::kWarn);  // exactly at the fail share is not below it
  EXPECT_NEAR(Fraction(r, 2000, 3350, 0.9, 0.7), 0.5970, 1e-4);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(Fraction(r, 100, 0, 0.9, 0.7), 0);  // nothing expected: share 0
  EXPECT_EQ(r.status, CheckStatus::kFail);
}

// A capture's strings reach the evidence: control characters are written as escapes, never raw
// (a name holding ESC [2J would clear the terminal), and a huge one is cut.
TEST(CheckText, ControlCharactersAreEscapedAndLongTextIsCut) {
  SetTextLanguage(Messages{}, Lang::kEn);
  CheckResult r = Make("gpu_identity", 0, "");
  Skip(r, std::string("name 'A\x1b[2J\rB\aC") + std::string(1, '\0') + "D\x7f\xc2\x9b'");
  const std::string line = CheckResultLine(r);
  EXPECT_NE(line.find("name 'A\\x1b[2J\\x0dB\\x07C\\x00D\\x7f\\u009b'"), std::string::npos) << line;
  for (const char c : line) {
    EXPECT_FALSE(c == '\x1b' || c == '\r' || c == '\a' || c == '\0' || c == '\x7f') << line;
  }
  // 10,000 bytes of evidence: at most 2,000 of them are printed, and the line says how many there were.
  CheckResult big = Make("gpu_identity", 0, "");
  Skip(big, std::string(10000, 'N'));
  const std::string cut = CheckResultLine(big);
  EXPECT_LT(cut.size(), 2100u);
  EXPECT_NE(cut.find(std::string(2000, 'N') + "... (10000 bytes in all)"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
