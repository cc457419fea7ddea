// scenario_runner: runs one scenario file (tests/scenarios/README.md) against the gpuplan binary
// and checks its exit code, its output and the figures in its JSON.
//
// usage: scenario_runner --gpuplan BIN --data DIR [--keep] FILE.yaml
// exit:  0 every expectation holds; 1 one or more do not; 2 the scenario file is malformed or the
//        case could not be run; 77 a `pending:` case failed (ctest SKIP_RETURN_CODE), unless
//        GPUPLAN_SCENARIOS_STRICT=1, when it counts as a failure (1).
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kPass = 0;
constexpr int kFail = 1;
constexpr int kBadScenario = 2;
constexpr int kSkip = 77;

// A malformed scenario file: reported as FILE:LINE: message, exit 2.
struct ScenarioError : std::runtime_error {
  int line;
  ScenarioError(const std::string& what, int l) : std::runtime_error(what), line(l) {}
};

int LineOf(const YAML::Node& n) { return n.Mark().line >= 0 ? n.Mark().line + 1 : 0; }

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string ReplaceAll(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

struct Placeholders {
  std::string data, dir, scenario;
  std::string Apply(const std::string& s) const {
    return ReplaceAll(ReplaceAll(ReplaceAll(s, "{data}", data), "{dir}", dir), "{scenario}", scenario);
  }
};

// A YAML scalar as JSON: quoted scalars are strings; plain ones null, bool, integer, number or string.
json ScalarToJson(const YAML::Node& n) {
  if (n.IsNull()) {
    return nullptr;
  }
  if (!n.IsScalar()) {
    throw ScenarioError("expected a single value (string, number, true/false or null)", LineOf(n));
  }
  const std::string& s = n.Scalar();
  if (n.Tag() == "!") {
    return s;  // quoted: always a string
  }
  if (s == "true" || s == "True" || s == "TRUE") {
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    return false;
  }
  if (s == "null" || s == "~" || s.empty()) {
    return nullptr;
  }
  try {
    std::size_t used = 0;
    const long long i = std::stoll(s, &used);
    if (used == s.size()) {
      return i;
    }
  } catch (const std::exception&) {
  }
  try {
    std::size_t used = 0;
    const double d = std::stod(s, &used);
    if (used == s.size()) {
      return d;
    }
  } catch (const std::exception&) {
  }
  return s;
}

double NumberOf(const YAML::Node& n, const char* key) {
  const json j = ScalarToJson(n);
  if (!j.is_number()) {
    throw ScenarioError(std::string("'") + key + "' must be a number", LineOf(n));
  }
  return j.get<double>();
}

std::string StringOf(const YAML::Node& n, const char* key) {
  if (!n.IsScalar()) {
    throw ScenarioError(std::string("'") + key + "' must be a string", LineOf(n));
  }
  return n.Scalar();
}

// ------------------------------------------------------------------------------------------------
// Paths: a JSON pointer whose segments may carry selectors.
//   /pairs/0/hours_per_month           JSON pointer (RFC 6901; ~1 is '/', ~0 is '~')
//   /candidates[gpu=L40S]/gpus         the first element of the array whose field gpu is L40S
//   /pairs[from_mode=on_demand,to_mode=monthly]/hours_per_month   all conditions must hold
//   /[name=L20]/memory_bytes           selector on a top-level array
//   /candidates[*]/cost/currency       every element (the check must hold for each; none is a failure)
// A field matches when its value, written as text (numbers as JSON writes them, true/false),
// equals the given text, or when it is an array with such an item.

struct Hit {
  std::string where;  // the plain JSON pointer that was reached
  const json* value;
};

std::vector<std::string> SplitPath(const std::string& path) {
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (std::size_t i = 1; i < path.size(); ++i) {
    const char c = path[i];
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      --depth;
    }
    if (c == '/' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}

std::string Unescape(const std::string& s) { return ReplaceAll(ReplaceAll(s, "~1", "/"), "~0", "~"); }

std::string AsText(const json& v) {
  if (v.is_string()) {
    return v.get<std::string>();
  }
  return v.dump();
}

bool FieldMatches(const json& field, const std::string& want) {
  if (field.is_array()) {
    for (const auto& item : field) {
      if (!item.is_array() && FieldMatches(item, want)) {
        return true;
      }
    }
    return false;
  }
  if (AsText(field) == want) {
    return true;
  }
  if (field.is_number()) {  // 80 matches 80.0
    try {
      std::size_t used = 0;
      const double d = std::stod(want, &used);
      return used == want.size() && d == field.get<double>();
    } catch (const std::exception&) {
      return false;
    }
  }
  return false;
}

// Resolves `path` in `root`. Returns the values reached (several with [*]); on failure, an empty
// list and `err` saying where and why.
std::vector<Hit> Resolve(const json& root, const std::string& path, std::string& err) {
  std::vector<Hit> hits{{"", &root}};
  if (path.empty()) {
    return hits;
  }
  if (path[0] != '/') {
    err = "bad path: a path starts with '/'";
    return {};
  }
  for (const std::string& seg : SplitPath(path)) {
    const std::size_t bracket = seg.find('[');
    const std::string key = Unescape(seg.substr(0, bracket));
    std::vector<std::string> selectors;
    if (bracket != std::string::npos) {
      std::size_t pos = bracket;
      while (pos < seg.size()) {
        if (seg[pos] != '[') {
          err = "bad path: unexpected text after ']' in '" + seg + "'";
          return {};
        }
        const std::size_t close = seg.find(']', pos);
        if (close == std::string::npos) {
          err = "bad path: missing ']' in '" + seg + "'";
          return {};
        }
        selectors.push_back(seg.substr(pos + 1, close - pos - 1));
        pos = close + 1;
      }
    }
    std::vector<Hit> next;
    for (const Hit& h : hits) {
      Hit cur = h;
      const bool has_key = bracket != 0;
      if (has_key) {
        if (cur.value->is_object()) {
          if (!cur.value->contains(key)) {
            err = "no key '" + key + "' at " + (cur.where.empty() ? "/" : cur.where);
            return {};
          }
          cur.value = &(*cur.value)[key];
        } else if (cur.value->is_array() && !key.empty() &&
                   key.find_first_not_of("0123456789") == std::string::npos) {
          const std::size_t i = std::stoul(key);
          if (i >= cur.value->size()) {
            err = "index " + key + " is past the end of " + cur.where + " (" + std::to_string(cur.value->size()) +
                  " elements)";
            return {};
          }
          cur.value = &(*cur.value)[i];
        } else {
          err = "cannot take '" + key + "' of " + (cur.where.empty() ? "/" : cur.where) + ", which is " +
                cur.value->type_name();
          return {};
        }
        cur.where += "/" + key;
      }
      std::vector<Hit> expanded{cur};
      for (const std::string& sel : selectors) {
        std::vector<Hit> out;
        for (const Hit& e : expanded) {
          if (!e.value->is_array()) {
            err = "selector [" + sel + "] needs an array at " + (e.where.empty() ? "/" : e.where) + ", found " +
                  e.value->type_name();
            return {};
          }
          if (sel == "*") {
            if (e.value->empty()) {
              err = "[*]: the array at " + e.where + " is empty";
              return {};
            }
            for (std::size_t i = 0; i < e.value->size(); ++i) {
              out.push_back({e.where + "/" + std::to_string(i), &(*e.value)[i]});
            }
            continue;
          }
          std::vector<std::pair<std::string, std::string>> conds;
          std::stringstream ss(sel);
          std::string cond;
          while (std::getline(ss, cond, ',')) {
            const std::size_t eq = cond.find('=');
            if (eq == std::string::npos || eq == 0) {
              err = "bad path: selector [" + sel + "]: write [field=value], [a=1,b=2] or [*]";
              return {};
            }
            conds.emplace_back(cond.substr(0, eq), cond.substr(eq + 1));
          }
          bool found = false;
          for (std::size_t i = 0; i < e.value->size() && !found; ++i) {
            const json& el = (*e.value)[i];
            bool all = el.is_object();
            for (const auto& [field, want] : conds) {
              all = all && el.contains(field) && FieldMatches(el[field], want);
            }
            if (all) {
              out.push_back({e.where + "/" + std::to_string(i), &el});
              found = true;
            }
          }
          if (!found) {
            std::string seen;
            const std::string& f0 = conds.front().first;
            for (const auto& el : *e.value) {
              if (el.is_object() && el.contains(f0) && seen.size() < 300) {
                seen += (seen.empty() ? "" : ", ") + AsText(el[f0]);
              }
            }
            err = "no element of " + (e.where.empty() ? "/" : e.where) + " matches [" + sel + "]" +
                  (seen.empty() ? "" : " (" + f0 + " values: " + seen + ")");
            return {};
          }
        }
        expanded = std::move(out);
      }
      for (auto& e : expanded) {
        next.push_back(std::move(e));
      }
    }
    hits = std::move(next);
  }
  return hits;
}

// ------------------------------------------------------------------------------------------------
// Expectations.

struct Expectation {
  int line = 0;
  std::string label;  // how the failure report names it
  std::string hand;
  // JSON checks
  std::optional<std::string> path;
  std::optional<double> value, tol, rel, min, max;
  std::optional<json> equals;
  std::optional<bool> exists;
  std::optional<std::string> contains, not_contains;
  std::optional<double> length, min_length, max_length;
  // text checks
  std::optional<std::string> stdout_contains, stdout_not_contains, stderr_contains, stderr_not_contains;
};

const std::set<std::string> kExpectKeys = {"path",          "value",         "tol",
                                           "rel",           "min",           "max",
                                           "equals",        "exists",        "contains",
                                           "not_contains",  "length",        "min_length",
                                           "max_length",    "hand",          "stdout_contains",
                                           "stdout_not_contains", "stderr_contains", "stderr_not_contains"};

Expectation ParseExpectation(const YAML::Node& n, const Placeholders& ph) {
  if (!n.IsMap()) {
    throw ScenarioError("each expectation is a map (path: ... value: ... hand: ...)", LineOf(n));
  }
  Expectation e;
  e.line = LineOf(n);
  for (const auto& kv : n) {
    const std::string k = kv.first.Scalar();
    if (kExpectKeys.count(k) == 0) {
      throw ScenarioError("unknown expectation key '" + k + "' (see tests/scenarios/README.md)", LineOf(kv.first));
    }
  }
  auto str = [&](const char* k) -> std::optional<std::string> {
    if (!n[k]) {
      return std::nullopt;
    }
    return ph.Apply(StringOf(n[k], k));
  };
  auto num = [&](const char* k) -> std::optional<double> {
    if (!n[k]) {
      return std::nullopt;
    }
    return NumberOf(n[k], k);
  };
  e.path = n["path"] ? std::optional<std::string>(StringOf(n["path"], "path")) : std::nullopt;
  e.hand = n["hand"] ? StringOf(n["hand"], "hand") : "";
  e.value = num("value");
  e.tol = num("tol");
  e.rel = num("rel");
  e.min = num("min");
  e.max = num("max");
  if (n["equals"]) {
    e.equals = ScalarToJson(n["equals"]);
    if (e.equals->is_string()) {
      e.equals = ph.Apply(e.equals->get<std::string>());
    }
  }
  if (n["exists"]) {
    const json b = ScalarToJson(n["exists"]);
    if (!b.is_boolean()) {
      throw ScenarioError("'exists' is true or false", LineOf(n["exists"]));
    }
    e.exists = b.get<bool>();
  }
  e.contains = str("contains");
  e.not_contains = str("not_contains");
  e.length = num("length");
  e.min_length = num("min_length");
  e.max_length = num("max_length");
  e.stdout_contains = str("stdout_contains");
  e.stdout_not_contains = str("stdout_not_contains");
  e.stderr_contains = str("stderr_contains");
  e.stderr_not_contains = str("stderr_not_contains");

  const int text_checks = !!e.stdout_contains + !!e.stdout_not_contains + !!e.stderr_contains + !!e.stderr_not_contains;
  const int json_checks = !!e.value + !!e.min + !!e.max + !!e.equals + !!e.exists + !!e.contains + !!e.not_contains +
                          !!e.length + !!e.min_length + !!e.max_length;
  if (e.path) {
    if (json_checks == 0) {
      throw ScenarioError("'path' needs a check: value, min, max, equals, exists, contains, not_contains, length, "
                          "min_length or max_length",
                          e.line);
    }
    if (text_checks > 0) {
      throw ScenarioError("write stdout_/stderr_ checks as their own list item, not with 'path'", e.line);
    }
  } else {
    if (json_checks > 0) {
      throw ScenarioError("this check needs a 'path' into the JSON output", e.line);
    }
    if (text_checks != 1) {
      throw ScenarioError("an expectation without 'path' is one of stdout_contains, stdout_not_contains, "
                          "stderr_contains, stderr_not_contains",
                          e.line);
    }
  }
  if ((e.tol || e.rel) && !e.value) {
    throw ScenarioError("'tol' and 'rel' go with 'value'", e.line);
  }
  if (e.tol && e.rel) {
    throw ScenarioError("give either 'tol' (absolute) or 'rel' (relative), not both", e.line);
  }
  if ((e.tol && *e.tol < 0) || (e.rel && *e.rel < 0)) {
    throw ScenarioError("'tol' and 'rel' are not negative", e.line);
  }
  const bool figure = e.value || e.min || e.max || e.length || e.min_length || e.max_length;
  if (figure && e.hand.empty()) {
    throw ScenarioError("a figure (value, min, max, length) needs 'hand': the arithmetic that gives it", e.line);
  }
  if (e.path) {
    e.label = *e.path;
  } else if (e.stdout_contains) {
    e.label = "stdout contains \"" + *e.stdout_contains + "\"";
  } else if (e.stdout_not_contains) {
    e.label = "stdout does not contain \"" + *e.stdout_not_contains + "\"";
  } else if (e.stderr_contains) {
    e.label = "stderr contains \"" + *e.stderr_contains + "\"";
  } else {
    e.label = "stderr does not contain \"" + *e.stderr_not_contains + "\"";
  }
  return e;
}

std::string Num(double v) {
  std::ostringstream os;
  os.precision(12);
  os << v;
  return os.str();
}

std::string Short(const json& v) {
  std::string s = v.dump();
  if (s.size() > 400) {
    s = s.substr(0, 400) + "...";
  }
  return s;
}

// Checks one value; returns "" or what is wrong (expected / actual).
std::string CheckValue(const Expectation& e, const json& v) {
  std::ostringstream out;
  auto fail = [&](const std::string& expected, const std::string& actual) {
    out << "    expected: " << expected << "\n    actual:   " << actual << "\n";
  };
  if (e.value || e.min || e.max) {
    if (!v.is_number()) {
      fail(e.value ? Num(*e.value) : "a number", Short(v));
      return out.str();
    }
    const double a = v.get<double>();
    if (e.value) {
      const double bound = e.tol ? *e.tol : (e.rel ? *e.rel : 1e-9) * std::fabs(*e.value);
      if (!(std::fabs(a - *e.value) <= bound)) {
        const std::string tol = e.tol ? " +- " + Num(*e.tol)
                                      : (e.rel ? " +- " + Num(100 * *e.rel) + "% (" + Num(bound) + ")" : " (exact)");
        fail(Num(*e.value) + tol, Num(a) + " (off by " + Num(a - *e.value) + ")");
      }
    }
    if (e.min && !(a >= *e.min)) {
      fail(">= " + Num(*e.min), Num(a));
    }
    if (e.max && !(a <= *e.max)) {
      fail("<= " + Num(*e.max), Num(a));
    }
  }
  if (e.equals) {
    const bool same = (e.equals->is_number() && v.is_number()) ? e.equals->get<double>() == v.get<double>()
                                                                 : *e.equals == v;
    if (!same) {
      fail(e.equals->dump(), Short(v));
    }
  }
  if (e.contains || e.not_contains) {
    const std::string text = AsText(v);
    if (e.contains && text.find(*e.contains) == std::string::npos) {
      fail("text containing \"" + *e.contains + "\"", Short(v));
    }
    if (e.not_contains && text.find(*e.not_contains) != std::string::npos) {
      fail("text without \"" + *e.not_contains + "\"", Short(v));
    }
  }
  if (e.length || e.min_length || e.max_length) {
    if (!v.is_array() && !v.is_object() && !v.is_string()) {
      fail("an array, object or string", Short(v));
      return out.str();
    }
    const double n = v.is_string() ? static_cast<double>(v.get<std::string>().size()) : static_cast<double>(v.size());
    if (e.length && n != *e.length) {
      fail("length " + Num(*e.length), "length " + Num(n));
    }
    if (e.min_length && n < *e.min_length) {
      fail("length >= " + Num(*e.min_length), "length " + Num(n));
    }
    if (e.max_length && n > *e.max_length) {
      fail("length <= " + Num(*e.max_length), "length " + Num(n));
    }
  }
  return out.str();
}

std::string Excerpt(const std::string& s, std::size_t max_lines) {
  std::istringstream in(s);
  std::string line, out;
  std::size_t n = 0;
  while (std::getline(in, line)) {
    if (n++ == max_lines) {
      out += "      ...\n";
      break;
    }
    out += "      " + line + "\n";
  }
  return out.empty() ? "      (empty)\n" : out;
}

// ------------------------------------------------------------------------------------------------

struct TempDir {
  fs::path root;
  bool keep = false;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpuplan-scenario-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) {
      throw std::runtime_error("cannot create a temporary directory in " + fs::temp_directory_path().string());
    }
    root = tmpl;
  }
  ~TempDir() {
    if (keep) {
      std::cerr << "kept " << root.string() << "\n";
      return;
    }
    std::error_code ec;
    fs::remove_all(root, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

const std::set<std::string> kTopKeys = {"title", "source", "pending", "command", "files", "env", "exit", "expect"};

int Run(const std::string& gpuplan, const std::string& data, const fs::path& file, bool keep) {
  const bool strict = [] {
    const char* s = std::getenv("GPUPLAN_SCENARIOS_STRICT");
    return s != nullptr && std::string(s) == "1";
  }();
  YAML::Node doc;
  try {
    doc = YAML::LoadFile(file.string());
  } catch (const YAML::Exception& ex) {
    throw ScenarioError("not valid YAML: " + ex.msg, ex.mark.line >= 0 ? ex.mark.line + 1 : 0);
  }
  if (!doc.IsMap()) {
    throw ScenarioError("a scenario is a map with title, command, expect", 1);
  }
  for (const auto& kv : doc) {
    if (kTopKeys.count(kv.first.Scalar()) == 0) {
      throw ScenarioError("unknown key '" + kv.first.Scalar() + "' (allowed: title, source, pending, command, files, "
                          "env, exit, expect)",
                          LineOf(kv.first));
    }
  }
  for (const char* k : {"title", "command", "expect"}) {
    if (!doc[k]) {
      throw ScenarioError(std::string("missing '") + k + "'", 1);
    }
  }
  const std::string title = StringOf(doc["title"], "title");
  const std::optional<std::string> pending =
      doc["pending"] ? std::optional<std::string>(StringOf(doc["pending"], "pending")) : std::nullopt;
  int want_exit = 0;
  if (doc["exit"]) {
    const json x = ScalarToJson(doc["exit"]);
    if (!x.is_number_integer()) {
      throw ScenarioError("'exit' is an integer exit code", LineOf(doc["exit"]));
    }
    want_exit = x.get<int>();
  }

  TempDir tmp;
  tmp.keep = keep;
  const fs::path work = tmp.root / "case";
  fs::create_directories(work);
  Placeholders ph{data, work.string(), fs::absolute(file).parent_path().string()};

  if (!doc["expect"].IsSequence() || doc["expect"].size() == 0) {
    throw ScenarioError("'expect' is a non-empty list", LineOf(doc["expect"]));
  }
  std::vector<Expectation> expects;
  for (const auto& n : doc["expect"]) {
    expects.push_back(ParseExpectation(n, ph));
  }

  if (doc["files"]) {
    if (!doc["files"].IsMap()) {
      throw ScenarioError("'files' maps file names to their contents", LineOf(doc["files"]));
    }
    for (const auto& kv : doc["files"]) {
      const std::string name = kv.first.Scalar();
      const fs::path rel(name);
      if (name.empty() || rel.is_absolute() || name.find("..") != std::string::npos) {
        throw ScenarioError("file names in 'files' are relative to the case's directory, without '..'",
                            LineOf(kv.first));
      }
      const fs::path target = work / rel;
      fs::create_directories(target.parent_path());
      std::ofstream(target, std::ios::binary) << StringOf(kv.second, "files");
    }
  }

  std::string command = ph.Apply(StringOf(doc["command"], "command"));
  if (command.rfind("gpuplan ", 0) == 0) {
    command = command.substr(8);
  }
  std::string env;
  if (doc["env"]) {
    if (!doc["env"].IsMap()) {
      throw ScenarioError("'env' maps variable names to values", LineOf(doc["env"]));
    }
    for (const auto& kv : doc["env"]) {
      const std::string k = kv.first.Scalar();
      if (k.empty() || k.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") !=
                           std::string::npos) {
        throw ScenarioError("bad variable name '" + k + "'", LineOf(kv.first));
      }
      env += "export " + k + "=" + ShellQuote(ph.Apply(StringOf(kv.second, "env"))) + "; ";
    }
  }
  const fs::path out_path = tmp.root / "stdout";
  const fs::path err_path = tmp.root / "stderr";
  const std::string shown = "gpuplan --data-dir " + data + " " + command;
  const std::string line = "cd " + ShellQuote(work.string()) + " && " + env + ShellQuote(gpuplan) + " --data-dir " +
                           ShellQuote(data) + " " + command + " >" + ShellQuote(out_path.string()) + " 2>" +
                           ShellQuote(err_path.string()) + " </dev/null";
  std::cout.flush();
  const int status = std::system(line.c_str());
  if (status == -1) {
    std::cerr << "cannot run /bin/sh\n";
    return kBadScenario;
  }
  const std::string out = ReadFile(out_path);
  const std::string err = ReadFile(err_path);

  std::vector<std::string> failures;
  if (WIFSIGNALED(status)) {
    failures.push_back("  exit: killed by signal " + std::to_string(WTERMSIG(status)) + "\n");
  } else if (WEXITSTATUS(status) != want_exit) {
    failures.push_back("  exit code\n    expected: " + std::to_string(want_exit) +
                       "\n    actual:   " + std::to_string(WEXITSTATUS(status)) + "\n");
  }
  std::optional<json> parsed;
  std::string parse_error;
  bool parse_error_shown = false;
  for (std::size_t i = 0; i < expects.size(); ++i) {
    const Expectation& e = expects[i];
    std::string what;
    if (e.path) {
      if (!parsed && parse_error.empty()) {
        try {
          parsed = json::parse(out);
        } catch (const json::exception& ex) {
          parse_error = std::string("stdout is not JSON (") + ex.what() + "); did the command ask for --json?";
        }
      }
      if (!parsed) {
        what = parse_error_shown ? "    stdout is not JSON (see above)\n"
                                 : "    " + parse_error + "\n    stdout was:\n" + Excerpt(out, 10);
        parse_error_shown = true;
      } else {
        std::string perr;
        const std::vector<Hit> hits = Resolve(*parsed, *e.path, perr);
        if (hits.empty()) {
          if (!(e.exists && !*e.exists) || perr.rfind("bad path", 0) == 0) {
            what = "    not found: " + perr + "\n";
          }
        } else if (e.exists && !*e.exists) {
          what = "    expected: nothing at this path\n    actual:   " + Short(*hits.front().value) + "\n";
        } else {
          std::size_t bad = 0;
          for (const Hit& h : hits) {
            const std::string r = CheckValue(e, *h.value);
            if (!r.empty() && ++bad <= 5) {
              what += (hits.size() > 1 || h.where != *e.path ? "    at " + h.where + "\n" : "") + r;
            }
          }
          if (bad > 5) {
            what += "    ... and " + std::to_string(bad - 5) + " more of " + std::to_string(hits.size()) + " elements\n";
          }
        }
      }
    } else {
      auto has = [](const std::string& text, const std::string& s) { return text.find(s) != std::string::npos; };
      if (e.stdout_contains && !has(out, *e.stdout_contains)) {
        what = "    stdout was:\n" + Excerpt(out, 30);
      } else if (e.stdout_not_contains && has(out, *e.stdout_not_contains)) {
        what = "    stdout was:\n" + Excerpt(out, 30);
      } else if (e.stderr_contains && !has(err, *e.stderr_contains)) {
        what = "    stderr was:\n" + Excerpt(err, 30);
      } else if (e.stderr_not_contains && has(err, *e.stderr_not_contains)) {
        what = "    stderr was:\n" + Excerpt(err, 30);
      }
    }
    if (!what.empty()) {
      std::string f = "  expect #" + std::to_string(i + 1) + " (line " + std::to_string(e.line) + "): " + e.label +
                      "\n" + what;
      if (!e.hand.empty()) {
        f += "    hand:     " + e.hand + "\n";
      }
      failures.push_back(f);
    }
  }

  const std::string head = file.string() + ": " + title;
  if (failures.empty()) {
    std::cout << "PASS " << head << " (" << expects.size() << " expectations)\n";
    if (pending) {
      std::cout << "  note: this case is marked pending (" << *pending
                << ") but passes now: remove its 'pending:' line\n";
    }
    return kPass;
  }
  const bool skip = pending && !strict;
  std::cout << (skip ? "PENDING " : "FAIL ") << head << "\n";
  if (pending) {
    std::cout << "  pending: " << *pending
              << (skip ? " -- failures below are expected until then; skipped (GPUPLAN_SCENARIOS_STRICT=1 counts them)"
                       : " -- GPUPLAN_SCENARIOS_STRICT=1: counted as a failure")
              << "\n";
  }
  std::cout << "  command: " << shown << "\n";
  for (const auto& f : failures) {
    std::cout << f;
  }
  if (!err.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == want_exit)) {
    std::cout << "  stderr:\n" << Excerpt(err, 20);
  }
  std::cout << "  " << failures.size() << " of " << expects.size() + 1 << " checks failed (exit code included)\n";
  return skip ? kSkip : kFail;
}

}  // namespace

int main(int argc, char** argv) {
  std::string gpuplan, data, file;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--gpuplan" && i + 1 < argc) {
      gpuplan = argv[++i];
    } else if (a == "--data" && i + 1 < argc) {
      data = argv[++i];
    } else if (a == "--keep") {
      keep = true;
    } else if (!a.empty() && a[0] != '-' && file.empty()) {
      file = a;
    } else {
      file.clear();
      break;
    }
  }
  if (gpuplan.empty() || data.empty() || file.empty()) {
    std::cerr << "usage: scenario_runner --gpuplan BIN --data DATA_DIR [--keep] SCENARIO.yaml\n";
    return kBadScenario;
  }
  // The command runs in the case's own directory: make relative paths absolute first.
  if (gpuplan.find('/') != std::string::npos) {
    gpuplan = fs::absolute(gpuplan).string();
  }
  data = fs::absolute(data).string();
  try {
    return Run(gpuplan, data, file, keep);
  } catch (const ScenarioError& ex) {
    std::cout << "ERROR " << file << ":" << ex.line << ": " << ex.what() << "\n";
    return kBadScenario;
  } catch (const std::exception& ex) {
    std::cout << "ERROR " << file << ": " << ex.what() << "\n";
    return kBadScenario;
  }
}
