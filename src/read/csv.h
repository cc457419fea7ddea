// Splitting CSV text: one line into trimmed cells (no quoting; gpuplan's CSV inputs are plain
// numbers, names and ISO timestamps).
#pragma once

#include <string>
#include <vector>

namespace gpuplan {

// "a, b ,c" -> {"a", "b", "c"}: cells split at commas, spaces, tabs and carriage returns trimmed
// at both ends; a trailing comma gives a last empty cell.
std::vector<std::string> SplitCsvLine(const std::string& line);

}  // namespace gpuplan
