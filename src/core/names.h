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

// Up to `limit` candidates closest to `query` (compared normalized), best first. None for a
// query longer than kMaxSuggestedQuery bytes: no name is that long, and the edit distance costs
// the query's length times each candidate's (a 15 MB `gpu` in a serve request took 49 s of CPU).
inline constexpr std::size_t kMaxSuggestedQuery = 256;
std::vector<std::string> ClosestNames(std::string_view query, const std::vector<std::string>& candidates,
                                      std::size_t limit = 3);

// The architecture key of a model name as people type it: the organisation prefix
// ("Qwen/", "meta-llama/") dropped, split into [a-z0-9] tokens, the variant tokens that do not
// change tensor shapes dropped (instruct, chat, hf, base, it) and a leading "meta" before "llama"
// dropped, the rest joined. "meta-llama/Llama-2-7b-chat-hf" -> "llama27b",
// "Qwen/Qwen2.5-7B-Instruct" -> "qwen257b", "internlm2-chat-7b" -> "internlm27b".
std::string ModelStem(std::string_view name);

// True when ModelStem dropped a variant token or an organisation prefix from `name`.
bool HasModelVariant(std::string_view name);

// "a, b or c"
std::string JoinOr(const std::vector<std::string>& items);

}  // namespace gpuplan
