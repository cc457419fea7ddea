#include "check/expect.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <memory>
#include <regex>
#include <sstream>
#include <system_error>
#include <vector>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.pop_back();
  }
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) {
    ++i;
  }
  return s.substr(i);
}

const Gpu* ResolveCard(const std::string& name, const GpuCatalog& catalog) {
  if (const Gpu* g = catalog.TryFind(name)) {
    return g;
  }
  // "H100 SXM" names no SKU exactly, but a single catalog card whose name starts with it.
  const Gpu* only = nullptr;
  int matches = 0;
  std::string want = name;
  std::transform(want.begin(), want.end(), want.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const Gpu& g : catalog.gpus()) {
    std::string n = g.name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
    if (n.rfind(want + " ", 0) == 0 || n == want) {
      only = &g;
      ++matches;
    }
  }
  return matches == 1 ? only : nullptr;
}

// The count of an --expect text (its digits): 1 to 1,024, else InputError (also for more digits
// than an int holds, which std::stoi threw as std::out_of_range, an internal error).
int ExpectCount(const std::string& digits) {
  int v = 0;
  const char* end = digits.data() + digits.size();
  const auto [p, ec] = std::from_chars(digits.data(), end, v);
  if (ec != std::errc() || p != end || v <= 0 || v > 1024) {
    throw InputError("expected a GPU count between 1 and 1024, got " + digits, "", 0, "--expect");
  }
  return v;
}

}  // namespace

Expectation ParseExpect(const std::string& text, const GpuCatalog& catalog) {
  Expectation e;
  e.text = text;
  e.source = "--expect \"" + text + "\"";
  std::string rest = Trim(text);
  if (rest.empty()) {  // nothing ordered: each card is judged by its own device id
    e.text.clear();
    e.source.clear();
    return e;
  }
  // A card name may itself end in digits ("RTX 4090", "A100 40GB"): the whole text first.
  if (const Gpu* whole = ResolveCard(rest, catalog); whole != nullptr) {
    e.gpu = whole;
    return e;
  }
  std::smatch m;
  static const std::regex kLeading(R"(^(\d+)\s*[xX×*]?\s+(.*)$)");
  static const std::regex kLeadingTight(R"(^(\d+)[xX×*](.+)$)");
  static const std::regex kTrailing(R"(^(.*?)\s*[xX×*]\s*(\d+)$)");
  static const std::regex kCountOnly(R"(^(\d+)\s*[xX×*]?$)");
  std::string card;
  if (std::regex_match(rest, m, kCountOnly)) {
    e.count = ExpectCount(m[1].str());
  } else if (std::regex_match(rest, m, kLeading) || std::regex_match(rest, m, kLeadingTight)) {
    e.count = ExpectCount(m[1].str());
    card = Trim(m[2].str());
  } else if (std::regex_match(rest, m, kTrailing)) {
    card = Trim(m[1].str());
    e.count = ExpectCount(m[2].str());
  } else {
    card = rest;
  }
  if (!card.empty()) {
    e.gpu = ResolveCard(card, catalog);
    if (e.gpu == nullptr) {
      throw InputError("'" + card + "' is not a card of the catalog (gpuplan gpus); write it as \"8x H100 SXM 80GB\"",
                       "", 0, "--expect", ClosestNames(card, catalog.AllNames()));
    }
  }
  if (!e.count && e.gpu == nullptr) {
    throw InputError("expected \"COUNT x CARD\", e.g. \"8x H100 SXM 80GB\", got '" + text + "'", "", 0, "--expect");
  }
  return e;
}

Expectation ExpectFromOffer(const OfferSet& offers, const std::string& offer_id) {
  std::vector<std::string> ids;
  for (const Offer& o : offers.offers) {
    ids.push_back(o.id);
    if (o.id == offer_id) {
      Expectation e;
      e.text = "offer " + o.id;
      e.gpu = o.gpu;
      e.count = o.gpus_per_instance;
      e.cpu_cores = o.cpu_cores;
      e.source = fmt::format("offer {} in {} (line {}): {}x {}", o.id, offers.file, o.line, o.gpus_per_instance,
                             o.gpu->name);
      return e;
    }
  }
  std::vector<std::string> close = ClosestNames(offer_id, ids);
  throw InputError("no offer '" + offer_id + "' in " + offers.file + (close.empty() ? "" : "; did you mean " + JoinOr(close) + "?"),
                   "", 0, "--offer", close);
}

std::optional<std::string> MinimumDriverForCuda(const std::string& cuda) {
  // CUDA Toolkit Release Notes, "CUDA Toolkit and Corresponding Driver Versions", Linux x86_64,
  // GA release of each minor version (docs/check.md §3.6 lists the source).
  static const std::array<std::pair<const char*, const char*>, 20> kTable = {{
      {"11.0", "450.36.06"}, {"11.1", "455.23"},    {"11.2", "460.27.03"}, {"11.3", "465.19.01"},
      {"11.4", "470.42.01"}, {"11.5", "495.29.05"}, {"11.6", "510.39.01"}, {"11.7", "515.43.04"},
      {"11.8", "520.61.05"}, {"12.0", "525.60.13"}, {"12.1", "530.30.02"}, {"12.2", "535.54.03"},
      {"12.3", "545.23.06"}, {"12.4", "550.54.14"}, {"12.5", "555.42.02"}, {"12.6", "560.28.03"},
      {"12.8", "570.26"},    {"12.9", "575.51.03"}, {"13.0", "580.65.06"}, {"10.2", "440.33"},
  }};
  // Only major.minor matters ("12.4.1" -> "12.4").
  std::string mm = cuda;
  if (auto p = mm.find('.'); p != std::string::npos) {
    if (auto q = mm.find('.', p + 1); q != std::string::npos) {
      mm = mm.substr(0, q);
    }
  }
  for (const auto& [v, d] : kTable) {
    if (mm == v) {
      return std::string(d);
    }
  }
  return std::nullopt;
}

int CompareVersions(const std::string& a, const std::string& b) {
  // Each part's leading digits without leading zeros ("" is 0), compared as numbers of any
  // length: the shorter is smaller, else digit by digit. (Reading a part into a long overflowed
  // on a driver version of 20 digits from a capture.)
  auto parts = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, '.')) {
      std::size_t end = 0;
      while (end < item.size() && std::isdigit(static_cast<unsigned char>(item[end]))) {
        ++end;
      }
      std::size_t begin = 0;
      while (begin < end && item[begin] == '0') {
        ++begin;
      }
      out.push_back(item.substr(begin, end - begin));
    }
    return out;
  };
  auto pa = parts(a);
  auto pb = parts(b);
  const std::size_t n = std::max(pa.size(), pb.size());
  pa.resize(n);
  pb.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (pa[i].size() != pb[i].size()) {
      return pa[i].size() < pb[i].size() ? -1 : 1;
    }
    if (pa[i] != pb[i]) {
      return pa[i] < pb[i] ? -1 : 1;
    }
  }
  return 0;
}

std::optional<std::pair<std::string, std::string>> DetectTorchCuda() {
  const char* cmd =
      "python3 -c \"import torch, os; print(torch.version.cuda or ''); print(torch.__version__); "
      "print(os.path.dirname(torch.__file__))\" 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd, "r"), pclose);
  if (!pipe) {
    return std::nullopt;
  }
  std::string out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), static_cast<int>(buf.size()), pipe.get()) != nullptr) {
    out += buf.data();
  }
  std::stringstream ss(out);
  std::string cuda, version, where;
  std::getline(ss, cuda);
  std::getline(ss, version);
  std::getline(ss, where);
  cuda = Trim(cuda);
  if (cuda.empty()) {
    return std::nullopt;
  }
  return std::make_pair(cuda, "PyTorch " + Trim(version) + " at " + Trim(where));
}

}  // namespace gpuplan
