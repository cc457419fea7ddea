#include "io/table.h"

#include <fmt/format.h>

#include <stdexcept>

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
    if (c.width <= 0) {
      out += cells[i];
    } else if (c.align == Align::kLeft) {
      out += fmt::format("{:<{}}", cells[i], c.width);
    } else {
      out += fmt::format("{:>{}}", cells[i], c.width);
    }
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
