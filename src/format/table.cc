#include "format/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "format/text_lang.h"

namespace gpuplan {

std::string Table::Row(const std::vector<std::string>& cells) const {
  if (cells.size() != columns_.size()) {
    throw std::logic_error(fmt::format("table row of {} cells for {} columns", cells.size(), columns_.size()));
  }
  std::string out;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    const Column& c = columns_[i];
    if (i > 0) {
      out += c.gap;
    }
    // Padded by display columns (a CJK character takes two), never narrower than the header.
    const int64_t width = c.width <= 0 ? 0 : std::max<int64_t>(c.width, DisplayWidth(c.header));
    out += c.align == Align::kLeft ? PadRight(cells[i], width) : PadLeft(cells[i], width);
  }
  out += '\n';
  return out;
}

std::string Table::Header() const {
  std::vector<std::string> headers;
  headers.reserve(columns_.size());
  for (const Column& c : columns_) {
    headers.push_back(c.header);
  }
  return Row(headers);
}

}  // namespace gpuplan
