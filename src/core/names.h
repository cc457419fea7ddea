// Name matching for catalogs: case- and punctuation-insensitive keys and "did you mean"
// suggestions by edit distance.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

// Lower-cases and keeps only [a-z0-9]: "NVIDIA A100-SXM4-80GB" -> "nvidiaa100sxm480gb".
std::string NormalizeName(std::string_view name);

// Levenshtein distance between two strings.
int EditDistance(std::string_view a, std::string_view b);

// Up to `limit` candidates closest to `query` (compared normalized), best first.
std::vector<std::string> ClosestNames(std::string_view query, const std::vector<std::string>& candidates,
                                      std::size_t limit = 3);

// "a, b or c"
std::string JoinOr(const std::vector<std::string>& items);

}  // namespace gpuplan
