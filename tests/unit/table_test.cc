// Table renderer (src/format/table.h): every expected line below is written out by hand, column by
// column, from the declared widths, alignments and gaps.
#include "format/table.h"

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace gpuplan {
namespace {

TEST(Table, PadsLeftAndRightAlignedColumnsWithTheirGaps) {
  const Table t({{"GPU", 6}, {"GiB", 5, Align::kRight, "  "}, {"note"}});
  // "GPU" + 3 spaces (width 6), gap of 2, "  GiB" (right in 5): 3 + 2 + 2 = 7 spaces; gap of 1,
  // "note" unpadded. "H100" + 2, gap 2, "   80": 7 spaces again.
  EXPECT_EQ(t.Header(), "GPU" + std::string(7, ' ') + "GiB note\n");
  EXPECT_EQ(t.Row({"H100", "80", "HBM3"}), "H100" + std::string(7, ' ') + "80 HBM3\n");
  EXPECT_EQ(t.Row({"A100", "40", ""}), "A100" + std::string(7, ' ') + "40 \n");
}

TEST(Table, LongerCellsAreNeverCut) {
  const Table t({{"a", 2}, {"b", 3, Align::kRight}});
  EXPECT_EQ(t.Row({"abcd", "12345"}), "abcd 12345\n");
}

TEST(Table, WideCharactersCountTwoColumns) {
  // Unicode UAX #11: CJK ideographs are East Asian Wide, two columns on a terminal, so "显存"
  // fills 4 of 6 columns and gets 2 spaces; the right-aligned "元" (2 columns) gets 3.
  const Table t({{"显存", 6}, {"元", 5, Align::kRight}});
  EXPECT_EQ(t.Header(), "显存      元\n");
}

TEST(Table, AColumnIsNeverNarrowerThanItsHeader) {
  // A translated header wider than the declared width widens its column for every row: "利用率"
  // takes 6 columns of the 4 declared, so "12" gets 4 spaces; the right-aligned "x" keeps 2.
  const Table t({{"利用率", 4}, {"x", 2, Align::kRight}});
  EXPECT_EQ(t.Header(), "利用率  x\n");
  EXPECT_EQ(t.Row({"12", "3"}), "12" + std::string(6, ' ') + "3\n");
}

TEST(Table, PrintsToAStream) {
  const Table t({{"x", 3}, {"y", 0, Align::kLeft, " | "}});
  std::ostringstream os;
  t.PrintHeader(os);
  t.PrintRow(os, {"1", "2"});
  EXPECT_EQ(os.str(), "x   | y\n1   | 2\n");
}

TEST(Table, ARowWithTheWrongNumberOfCellsIsABug) {
  const Table t({{"a"}, {"b"}});
  EXPECT_THROW((void)t.Row({"only one"}), std::logic_error);
}

}  // namespace
}  // namespace gpuplan
