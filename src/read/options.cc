#include "read/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

std::string Number(double v) { return fmt::format("{:g}", v); }

}  // namespace

void CheckOptionValue(const OptionCheck& c, const OptionValue& v, const std::string& name) {
  double x = 0;
  if (const auto* i = std::get_if<int64_t>(&v)) {
    x = static_cast<double>(*i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    x = *d;
  } else if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    for (const auto& item : *list) {
      CheckOptionValue(c, OptionValue(item), name);
    }
    return;
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    if (c.parse) {
      try {
        c.parse(*s);
      } catch (const InputError& e) {
        throw InputError::Option(name, e.message(), e.suggestions(), e.file(), e.line());
      }
      return;
    }
    if (!c.choices.empty() && std::find(c.choices.begin(), c.choices.end(), *s) == c.choices.end()) {
      std::string names;
      for (const auto& choice : c.choices) {
        names += (names.empty() ? "" : ", ") + choice;
      }
      throw InputError::Option(name, "expected one of " + names + ", got '" + *s + "'", ClosestNames(*s, c.choices));
    }
    return;
  } else {
    return;
  }
  const bool below = c.min && (c.min_exclusive ? x <= *c.min : x < *c.min);
  const bool above = c.max && (c.max_exclusive ? x >= *c.max : x > *c.max);
  if (below || above || std::isnan(x)) {
    const std::string got = std::holds_alternative<int64_t>(v) ? std::to_string(std::get<int64_t>(v)) : Number(x);
    const std::string rule = OptionCheckText(c, OptionKind::kDouble);
    const std::string must = rule.empty() ? std::string("a number") : rule == "positive" ? std::string("a positive number") : rule;
    throw InputError::Option(name, "must be " + must + ", got " + got);
  }
}

std::string OptionValueText(const OptionValue& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return Number(*d);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? "on" : "off";
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&v)) {
    std::string out;
    for (const auto& item : *list) {
      out += (out.empty() ? "" : " ") + item;
    }
    return out;
  }
  return "";
}

std::string OptionCheckText(const OptionCheck& c, OptionKind kind) {
  if (!c.choices.empty()) {
    std::string out;
    for (const auto& choice : c.choices) {
      out += (out.empty() ? "" : " | ") + choice;
    }
    return out;
  }
  if (kind == OptionKind::kString || kind == OptionKind::kFlag || kind == OptionKind::kStrings) {
    return "";
  }
  if (c.min && c.max) {
    return fmt::format("in {}{}, {}{}", c.min_exclusive ? "(" : "[", Number(*c.min), Number(*c.max),
                       c.max_exclusive ? ")" : "]");
  }
  if (c.min) {
    if (*c.min == 0 && c.min_exclusive) {
      return "positive";
    }
    return fmt::format("{} {}", c.min_exclusive ? ">" : ">=", Number(*c.min));
  }
  if (c.max) {
    return fmt::format("{} {}", c.max_exclusive ? "<" : "<=", Number(*c.max));
  }
  return "";
}

void FailUnknownKey(const std::string& key, const std::vector<std::string>& known) {
  std::vector<std::string> close = ClosestNames(key, known);
  std::string message = "unknown key '" + key + "'";
  if (!close.empty()) {
    message += "; did you mean";
    for (std::size_t i = 0; i < close.size(); ++i) {
      message += (i == 0 ? " " : ", ") + close[i];
    }
    message += "?";
  }
  throw InputError(message, "", 0, key, std::move(close));
}

void FailMissingKey(const std::string& key) { throw InputError("required", "", 0, key); }

void FailNotObject() { throw InputError("a request must be a JSON object"); }

namespace {

std::map<std::string, std::string>& FlagsByKey() {
  static std::map<std::string, std::string> flags;
  return flags;
}

}  // namespace

void RegisterFlag(const std::string& key, const std::string& flag) { FlagsByKey()[key] = flag; }

std::string FlagOfOption(const std::string& key) {
  const auto it = FlagsByKey().find(key);
  return it != FlagsByKey().end() ? it->second : DefaultOptionFlag(key);
}

InputError SpellFlags(const InputError& e) { return SpellOptions(e, FlagOfOption); }

std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') {
      out += '\\';
    }
    out += ch;
  }
  return out;
}

OptionValue OptionValueOfJson(const nlohmann::json& j, OptionKind kind, const std::string& key) {
  switch (kind) {
    case OptionKind::kInt:
      if (j.is_number_integer()) {
        return j.get<int64_t>();
      }
      if (j.is_number_float() && std::floor(j.get<double>()) == j.get<double>() && std::fabs(j.get<double>()) < 9e15) {
        return static_cast<int64_t>(j.get<double>());
      }
      throw InputError("expected an integer, got " + j.dump(), "", 0, key);
    case OptionKind::kDouble:
      if (j.is_number()) {
        return j.get<double>();
      }
      throw InputError("expected a number, got " + j.dump(), "", 0, key);
    case OptionKind::kString:
      if (j.is_string()) {
        return j.get<std::string>();
      }
      throw InputError("expected a string, got " + j.dump(), "", 0, key);
    case OptionKind::kFlag:
      if (j.is_boolean()) {
        return j.get<bool>();
      }
      throw InputError("expected true or false, got " + j.dump(), "", 0, key);
    case OptionKind::kStrings:
      if (j.is_string()) {
        return std::vector<std::string>{j.get<std::string>()};
      }
      if (j.is_array() && std::all_of(j.begin(), j.end(), [](const nlohmann::json& e) { return e.is_string(); })) {
        return j.get<std::vector<std::string>>();
      }
      throw InputError("expected a string or an array of strings, got " + j.dump(), "", 0, key);
  }
  throw InputError("unknown option kind", "", 0, key);
}

}  // namespace gpuplan
