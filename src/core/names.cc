#include "core/names.h"

#include <algorithm>
#include <cctype>
#include <utility>

namespace gpuplan {

std::string NormalizeName(std::string_view name) {
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      out.push_back(static_cast<char>(std::tolower(u)));
    }
  }
  return out;
}

namespace {

std::vector<std::string> ModelTokens(std::string_view name, bool* dropped) {
  if (const auto slash = name.rfind('/'); slash != std::string_view::npos) {
    name = name.substr(slash + 1);
    *dropped = true;
  }
  std::vector<std::string> tokens;
  std::string cur;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) != 0) {
      cur.push_back(static_cast<char>(std::tolower(u)));
    } else if (!cur.empty()) {
      tokens.push_back(std::move(cur));
      cur.clear();
    }
  }
  if (!cur.empty()) {
    tokens.push_back(std::move(cur));
  }
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    const bool variant = t == "instruct" || t == "chat" || t == "hf" || t == "base" || t == "it";
    const bool meta_prefix = i == 0 && t == "meta" && tokens.size() > 1 && tokens[1].rfind("llama", 0) == 0;
    if (variant || meta_prefix) {
      *dropped = true;
      continue;
    }
    kept.push_back(t);
  }
  return kept;
}

}  // namespace

std::string ModelStem(std::string_view name) {
  bool dropped = false;
  std::string out;
  for (const auto& t : ModelTokens(name, &dropped)) {
    out += t;
  }
  return out;
}

bool HasModelVariant(std::string_view name) {
  bool dropped = false;
  ModelTokens(name, &dropped);
  return dropped;
}

int EditDistance(std::string_view a, std::string_view b) {
  std::vector<int> prev(b.size() + 1);
  std::vector<int> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    prev[j] = static_cast<int>(j);
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const int substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> ClosestNames(std::string_view query, const std::vector<std::string>& candidates,
                                      std::size_t limit) {
  if (query.size() > kMaxSuggestedQuery) {
    return {};
  }
  const std::string q = NormalizeName(query);
  std::vector<std::pair<int, std::string>> scored;
  for (const auto& c : candidates) {
    const std::string n = NormalizeName(c);
    int d = EditDistance(q, n);
    // A candidate that contains the query (or the reverse) is a strong hint.
    if (!q.empty() && (n.find(q) != std::string::npos || q.find(n) != std::string::npos)) {
      d = std::min(d, 1);
    }
    scored.emplace_back(d, c);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, c] : scored) {
    if (out.size() >= limit) {
      break;
    }
    if (std::find(out.begin(), out.end(), c) == out.end()) {
      out.push_back(c);
    }
  }
  return out;
}

std::string JoinOr(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) {
      out += (i + 1 == items.size()) ? " or " : ", ";
    }
    out += items[i];
  }
  return out;
}

}  // namespace gpuplan
