// A small table renderer on fmt: columns with a header, a width, an alignment and the gap that
// separates a column from the one before it; rows are cells already formatted as text. The text
// renderers of fit, cost and the catalog (fit_text.h, cost_text.h, catalog_text.h) draw their
// tables with it, so a column is declared once for its header and every row.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace gpuplan {

enum class Align { kLeft, kRight };

struct Column {
  Column(std::string h, int w = 0, Align a = Align::kLeft, std::string g = " ")
      : header(std::move(h)), width(w), align(a), gap(std::move(g)) {}

  std::string header;
  // The cell is padded to this many terminal columns (a CJK character takes two; at least the
  // header's own width, so a translated header keeps its column straight); 0 leaves it as it is.
  int width = 0;
  Align align = Align::kLeft;
  std::string gap = " ";  // printed before the column (not before the first)
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // The header line and one row, each ending in a newline; a row has one cell per column.
  std::string Header() const;
  std::string Row(const std::vector<std::string>& cells) const;

  void PrintHeader(std::ostream& os) const { os << Header(); }
  void PrintRow(std::ostream& os, const std::vector<std::string>& cells) const { os << Row(cells); }

 private:
  std::vector<Column> columns_;
};

}  // namespace gpuplan
