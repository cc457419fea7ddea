#include "read/yaml_fields.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include <yaml-cpp/eventhandler.h>

#include "core/error.h"
#include "core/names.h"
#include "read/file_text.h"

namespace gpuplan {
namespace {

// The deepest nesting of mappings and sequences a YAML file may have. gpuplan's files nest about
// 5 deep; yaml-cpp parses recursively (it stops itself only at 2,000), so ParseYamlText reads the
// depth from yaml-cpp's events first, stopping at the first node past the limit, and only then
// loads the text. Deeper is InputError (file, line, field "(nesting)").
constexpr int kMaxYamlDepth = 128;

std::string Fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// Counts the nesting of yaml-cpp's events and stops at the first node past kMaxYamlDepth.
// Also stops where yaml-cpp 0.7 stops making progress: on a token no node can start with (a ','
// at the top, as in ",a: 1"), HandleNextDocument reports an empty document without consuming the
// token, and again at every call, so reading the documents to the end never ends (fixed upstream
// after 0.7: yaml-cpp PR #1319). Two documents cannot start at the same place of a text.
// And stops at a key given twice in one mapping: YAML 1.2 (§3.2.1.1, "the content of a mapping
// node is an unordered set of key/value node pairs, with the restriction that each of the keys is
// unique") forbids it, but yaml-cpp keeps both pairs and a lookup answers with the first, so the
// second value (a price, a fee) would be dropped without a word. Scalar keys are compared as
// written; a key that is itself a mapping or sequence is not compared.
class StructureCheck final : public YAML::EventHandler {
 public:
  struct TooDeep {
    int line;
  };
  struct Stuck {
    int line;
  };
  struct DuplicateKey {
    int line, first_line;
    std::string key;
    std::string field;  // where: the keys and list indices above it ("offers[0].price")
  };

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (last_document_pos_ && *last_document_pos_ == mark.pos) {
      throw Stuck{mark.line >= 0 ? mark.line + 1 : 0};
    }
    last_document_pos_ = mark.pos;
    open_.clear();
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { Child(mark, nullptr); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { Child(mark, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& value) override {
    Child(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    Enter(mark, false);
  }
  void OnSequenceEnd() override { Leave(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    Enter(mark, true);
  }
  void OnMapEnd() override { Leave(); }

 private:
  // A mapping or sequence being read; a mapping's children alternate key, value, key, ...
  struct Open {
    bool map = false;
    bool at_key = true;
    std::map<std::string, int> keys;  // scalar key -> its line
    std::string path;                 // this node's place ("offers[0]"; "" at the top)
    std::string last_key;             // a mapping's key whose value comes next
    std::size_t index = 0;            // a sequence's next item
  };
  static int Line(const YAML::Mark& mark) { return mark.line >= 0 ? mark.line + 1 : 0; }
  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }
  void Enter(const YAML::Mark& mark, bool map) {
    if (++depth_ > kMaxYamlDepth) {
      throw TooDeep{Line(mark)};
    }
    // Its place: the key it is the value of, or its index in a sequence (a mapping or sequence
    // used as a key stands at its mapping's place).
    std::string path;
    if (!open_.empty()) {
      const Open& up = open_.back();
      path = !up.map    ? up.path + "[" + std::to_string(up.index) + "]"
             : up.at_key ? up.path
                         : Join(up.path, up.last_key);
    }
    // The new node is a child of the one open above it (a key or value there); it completes at
    // its end, but only whether it stood for a key matters, and that is decided now.
    Child(mark, nullptr);
    open_.push_back(Open{map, true, {}, std::move(path), {}, 0});
  }
  void Leave() {
    --depth_;
    if (!open_.empty()) {
      open_.pop_back();
    }
  }
  // A child node of the innermost open mapping or sequence: `scalar` its text where it is one.
  void Child(const YAML::Mark& mark, const std::string* scalar) {
    if (open_.empty()) {
      return;
    }
    Open& m = open_.back();
    if (!m.map) {
      ++m.index;
      return;
    }
    if (m.at_key) {
      m.last_key = scalar ? *scalar : "?";
      if (scalar) {
        const auto [it, added] = m.keys.emplace(*scalar, Line(mark));
        if (!added) {
          throw DuplicateKey{Line(mark), it->second, *scalar, Join(m.path, *scalar)};
        }
      }
    }
    m.at_key = !m.at_key;
  }
  int depth_ = 0;
  std::optional<int> last_document_pos_;
  std::vector<Open> open_;
};

}  // namespace

int YamlLine(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

void YamlNumberRow(const YAML::Node& row, double* out, std::size_t n, const std::string& shape,
                   const std::string& file, const std::string& field) {
  if (!row.IsSequence() || row.size() != n) {
    throw InputError(shape, file, YamlLine(row), field);
  }
  for (std::size_t j = 0; j < n; ++j) {
    try {
      out[j] = row[j].as<double>();
    } catch (const YAML::Exception&) {
      throw InputError("expected a number", file, YamlLine(row[j]), field);
    }
  }
}

YAML::Node ParseYamlText(const std::string& text, const std::string& file) {
  // YAML is Unicode text (YAML 1.2 §5.2: UTF-8, UTF-16 or UTF-32, and every file gpuplan reads or
  // writes is UTF-8). yaml-cpp takes other bytes as they come, so a stray byte would otherwise
  // surface as "expected a mapping" or inside a value echoed in an error: refused here, at its line.
  if (const auto at = FirstNonUtf8(text)) {
    char what[96];
    std::snprintf(what, sizeof what, "not UTF-8 text (byte 0x%02X at offset %zu): YAML files are read as UTF-8",
                  static_cast<unsigned>(static_cast<unsigned char>(text[*at])), *at);
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*at), '\n');
    throw InputError(what, file, static_cast<int>(line));
  }
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    StructureCheck depth;
    while (parser.HandleNextDocument(depth)) {
    }
  } catch (const StructureCheck::TooDeep& e) {
    throw InputError("YAML nested deeper than " + std::to_string(kMaxYamlDepth) +
                         " mappings and sequences (gpuplan reads at most that depth)",
                     file, e.line, "(nesting)");
  } catch (const StructureCheck::Stuck& e) {
    throw InputError("YAML error: no value can start here (a stray ',', ']' or '}'?)", file, e.line);
  } catch (const StructureCheck::DuplicateKey& e) {
    // (A long key is cut in the middle by InputError, core/error.h BoundedErrorText.)
    throw InputError("the key '" + e.key + "' is given twice in one mapping (first at line " +
                         std::to_string(e.first_line) + "): YAML keys are unique, and the second value would be lost",
                     file, e.line, e.field);
  } catch (const YAML::Exception& e) {
    throw InputError("YAML error: " + e.msg, file, e.mark.line >= 0 ? e.mark.line + 1 : 0);
  }
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError("YAML error: " + e.msg, file, e.mark.line >= 0 ? e.mark.line + 1 : 0);
  }
}

YamlMap::YamlMap(const YAML::Node& map, std::string path, std::string file)
    : map_(map), path_(std::move(path)), file_(std::move(file)) {}

void YamlMap::Fail(const std::string& key, const std::string& message) const {
  const YAML::Node n = map_[key];
  throw InputError(message, file_, n ? YamlLine(n) : YamlLine(map_), path_ + key);
}

void YamlMap::Only(const std::vector<std::string>& known) const {
  if (!map_.IsMap()) {
    return;
  }
  for (const auto& kv : map_) {
    if (!kv.first.IsScalar()) {  // `? {a: 1}: x`: a key that is a mapping or list
      throw InputError("a key must be a plain word, not a mapping or list", file_, YamlLine(kv.first),
                       path_ + "(key)");
    }
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end()) {
      continue;
    }
    // Suggest only names a typo away (a third of the letters, at least 2, or one name inside the
    // other), nearest first; else list them all.
    std::vector<std::pair<int, std::string>> near;
    const std::string a = NormalizeName(key);
    for (const auto& c : known) {
      const std::string b = NormalizeName(c);
      const int d = EditDistance(a, b);
      const bool inside = !a.empty() && a.size() >= 2 && (a.find(b) != std::string::npos || b.find(a) != std::string::npos);
      if (d <= std::max<int>(2, static_cast<int>(std::max(a.size(), b.size()) / 3)) || inside) {
        near.emplace_back(d, c);
      }
    }
    std::stable_sort(near.begin(), near.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> close;
    for (std::size_t i = 0; i < near.size() && i < 3; ++i) {
      close.push_back(near[i].second);
    }
    std::string all;
    for (const auto& k : known) {
      all += (all.empty() ? "" : ", ") + k;
    }
    throw InputError("unknown key '" + key + "'" +
                         (close.empty() ? "; expected one of " + all : "; did you mean " + JoinOr(close) + "?"),
                     file_, YamlLine(kv.first), path_ + key, close);
  }
}

bool YamlMap::Has(const std::string& key) const {
  const YAML::Node n = map_[key];
  return n && !n.IsNull();
}

std::string YamlMap::Str(const std::string& key, bool required, const std::string& fallback) const {
  if (!Has(key)) {
    if (required) {
      Fail(key, "required field is missing");
    }
    return fallback;
  }
  if (!map_[key].IsScalar()) {
    Fail(key, "expected a text value");
  }
  return map_[key].Scalar();
}

std::optional<double> YamlMap::Number(const std::string& key, bool required, double min, double max) const {
  if (!Has(key)) {
    if (required) {
      Fail(key, "required field is missing");
    }
    return std::nullopt;
  }
  const YAML::Node v = map_[key];
  double d = 0;
  if (!v.IsScalar() || !YAML::convert<double>::decode(v, d) || !std::isfinite(d)) {
    Fail(key, "expected a number, got '" + (v.IsScalar() ? v.Scalar() : std::string("a structure")) + "'");
  }
  if (d < min || d > max) {
    Fail(key, "must be between " + Fmt(min) + " and " + Fmt(max) + ", got " + v.Scalar());
  }
  return d;
}

int64_t YamlMap::Count(const std::string& key, bool required, int64_t fallback, int64_t min, int64_t max) const {
  const std::optional<double> v = Number(key, required, static_cast<double>(min), static_cast<double>(max));
  if (!v) {
    return fallback;
  }
  if (*v != std::floor(*v)) {
    Fail(key, "expected a whole number, got " + map_[key].Scalar());
  }
  return static_cast<int64_t>(*v);
}

std::vector<std::string> YamlMap::Strings(const std::string& key) const {
  std::vector<std::string> out;
  if (!Has(key)) {
    return out;
  }
  const YAML::Node v = map_[key];
  if (!v.IsSequence()) {
    Fail(key, "expected a list");
  }
  for (const auto& e : v) {
    if (!e.IsScalar()) {
      Fail(key, "expected a list of text values");
    }
    out.push_back(e.Scalar());
  }
  return out;
}

std::optional<YamlMap> YamlMap::Map(const std::string& key, const std::string& expected) const {
  if (!Has(key)) {
    return std::nullopt;
  }
  if (!map_[key].IsMap()) {
    Fail(key, "expected " + expected);
  }
  return YamlMap(map_[key], path_ + key + ".", file_);
}

}  // namespace gpuplan
