// One options table per job: each option's flag, JSON key, help, unit, validation and where it
// goes in the request, in one place. The table feeds the CLI's flags (apps/gpuplan registers
// them in a loop), the JSON request readers (ReadJsonOptions; ApplyJsonOptions also checks the
// values) and the generated option tables of docs/cli.md (OptionsMarkdown). Defaults are not
// restated: they are read from a default-constructed request. Errors name the option by its key
// (InputError::Option, core/error.h); each front end spells it the way its user wrote it
// (SpellOptions): the flag on the command line (SpellFlags, below), the key in JSON (the HTTP
// server's ErrorResponse, http/http_server.cc).
#pragma once

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/error.h"

namespace gpuplan {

// What an option holds: an integer, a number, a string, an on/off flag (a bare CLI flag,
// a JSON boolean), or a list of strings (several values after the flag, a JSON array).
enum class OptionKind { kInt, kDouble, kString, kFlag, kStrings };

// A value of an option; monostate: an optional field left unset.
using OptionValue = std::variant<std::monostate, int64_t, double, std::string, bool, std::vector<std::string>>;

// Validation: a range for numbers, a list of choices for strings (empty: anything).
struct OptionCheck {
  std::optional<double> min;
  bool min_exclusive = false;
  std::optional<double> max;
  bool max_exclusive = false;
  std::vector<std::string> choices;  // for a string: the canonical values (shown in the docs)
  // For a string: the domain's parser, which may accept aliases ("adam"); its InputError is
  // rethrown naming the option as written. Without it the value must be one of `choices`.
  std::function<void(const std::string&)> parse;
};

// Throws InputError::Option(key) when `v` breaks the check.
void CheckOptionValue(const OptionCheck& check, const OptionValue& v, const std::string& key);
// "1", "0.05", "mixed", "on"/"off"; "" for an unset or empty value.
std::string OptionValueText(const OptionValue& v);
// The check in words for the docs: "> 0", "0 to 1", "a | b | c"; "" when none.
std::string OptionCheckText(const OptionCheck& check, OptionKind kind);
// Throws InputError for an unknown JSON key, with the closest known keys as suggestions.
[[noreturn]] void FailUnknownKey(const std::string& key, const std::vector<std::string>& known);
[[noreturn]] void FailMissingKey(const std::string& key);
[[noreturn]] void FailNotObject();
// A cell of a Markdown table: '|' escaped.
std::string MarkdownCell(const std::string& text);
// The JSON value as an option value of `kind`; throws InputError naming `key` on a wrong type.
OptionValue OptionValueOfJson(const nlohmann::json& j, OptionKind kind, const std::string& key);

template <typename Req>
struct OptionSpec {
  std::string flag;  // "--tp"
  std::string key;   // "tp"
  std::string help;
  OptionKind kind = OptionKind::kString;
  std::string unit;        // "MiB", "tokens"; empty when none
  bool required = false;
  std::string unset_text;  // the default in words when the request leaves it unset or empty
  OptionCheck check;
  std::function<OptionValue(const Req&)> get;
  std::function<void(Req&, const OptionValue&)> set;  // a value of `kind` (CheckOptionValue first)

  OptionSpec& Unit(std::string u) { unit = std::move(u); return *this; }
  OptionSpec& Required() { required = true; return *this; }
  OptionSpec& Unset(std::string text) { unset_text = std::move(text); return *this; }
  OptionSpec& Min(double v, bool exclusive = false) { check.min = v; check.min_exclusive = exclusive; return *this; }
  OptionSpec& Max(double v, bool exclusive = false) { check.max = v; check.max_exclusive = exclusive; return *this; }
  OptionSpec& Choices(std::vector<std::string> c, std::function<void(const std::string&)> parse = {}) {
    check.choices = std::move(c);
    check.parse = std::move(parse);
    return *this;
  }

  // The default: the value in a default-constructed request, in words.
  std::string DefaultText() const {
    if (required) {
      return "(required)";
    }
    const std::string t = OptionValueText(get(Req{}));
    return t.empty() || (!unset_text.empty() && kind != OptionKind::kString && t == "0") ? unset_text : t;
  }
};

template <typename Req>
using OptionTable = std::vector<OptionSpec<Req>>;

namespace option_detail {

template <typename T>
struct Traits;
template <>
struct Traits<int64_t> {
  static constexpr OptionKind kind = OptionKind::kInt;
  static OptionValue Get(const int64_t& v) { return v; }
  static void Set(int64_t& f, const OptionValue& v) { f = std::get<int64_t>(v); }
};
template <>
struct Traits<int> {
  static constexpr OptionKind kind = OptionKind::kInt;
  static OptionValue Get(const int& v) { return static_cast<int64_t>(v); }
  // A value beyond 32 bits is held at the nearest end, never wrapped (4294967298 would become 2):
  // every int option's bounds lie well inside, so the table's check refuses it.
  static void Set(int& f, const OptionValue& v) {
    f = static_cast<int>(std::clamp<int64_t>(std::get<int64_t>(v), std::numeric_limits<int>::min(),
                                             std::numeric_limits<int>::max()));
  }
};
template <>
struct Traits<double> {
  static constexpr OptionKind kind = OptionKind::kDouble;
  static OptionValue Get(const double& v) { return v; }
  static void Set(double& f, const OptionValue& v) { f = std::get<double>(v); }
};
template <>
struct Traits<std::string> {
  static constexpr OptionKind kind = OptionKind::kString;
  static OptionValue Get(const std::string& v) { return v; }
  static void Set(std::string& f, const OptionValue& v) { f = std::get<std::string>(v); }
};
template <>
struct Traits<bool> {
  static constexpr OptionKind kind = OptionKind::kFlag;
  static OptionValue Get(const bool& v) { return v; }
  static void Set(bool& f, const OptionValue& v) { f = std::get<bool>(v); }
};
template <>
struct Traits<std::vector<std::string>> {
  static constexpr OptionKind kind = OptionKind::kStrings;
  static OptionValue Get(const std::vector<std::string>& v) { return v; }
  static void Set(std::vector<std::string>& f, const OptionValue& v) { f = std::get<std::vector<std::string>>(v); }
};
template <typename T>
struct Traits<std::optional<T>> {
  static constexpr OptionKind kind = Traits<T>::kind;
  static OptionValue Get(const std::optional<T>& v) { return v ? Traits<T>::Get(*v) : OptionValue{}; }
  static void Set(std::optional<T>& f, const OptionValue& v) {
    if (std::holds_alternative<std::monostate>(v)) {
      f.reset();
      return;
    }
    T t{};
    Traits<T>::Set(t, v);
    f = t;
  }
};

}  // namespace option_detail

// An option stored at `access(request)` (a nested field: [](TcoRequest& r) -> double& { ... }).
template <typename Req, typename T, typename Access>
OptionSpec<Req> OptionAt(std::string flag, std::string key, std::string help, Access access) {
  using Tr = option_detail::Traits<T>;
  OptionSpec<Req> o;
  o.flag = std::move(flag);
  o.key = std::move(key);
  o.help = std::move(help);
  o.kind = Tr::kind;
  o.get = [access](const Req& r) { return Tr::Get(access(const_cast<Req&>(r))); };  // read only
  o.set = [access](Req& r, const OptionValue& v) { Tr::Set(access(r), v); };
  return o;
}

// An option stored in a field of the request (or of one of its bases).
template <typename Req, typename Base, typename T>
OptionSpec<Req> Option(std::string flag, std::string key, std::string help, T Base::*member) {
  static_assert(std::is_base_of_v<Base, Req>);
  return OptionAt<Req, T>(std::move(flag), std::move(key), std::move(help),
                          [member](Req& r) -> T& { return r.*member; });
}

// Reads a JSON object into `r`: each key sets its option. An unknown key, a value of the wrong
// type, a required key missing: InputError naming the key (the JSON front end's own errors, as
// CLI11's are the command line's). Values are not checked against the table's rules here: that
// is CheckGivenOptions, in the table's order on every front end. Returns the keys set, in the
// object's order.
template <typename Req>
std::vector<std::string> ReadJsonOptions(const OptionTable<Req>& table, const nlohmann::json& j, Req& r) {
  if (!j.is_object()) {
    FailNotObject();
  }
  std::vector<std::string> known;
  for (const auto& o : table) {
    known.push_back(o.key);
  }
  std::vector<std::string> given;
  for (const auto& [key, value] : j.items()) {
    const OptionSpec<Req>* spec = nullptr;
    for (const auto& o : table) {
      if (o.key == key) {
        spec = &o;
      }
    }
    if (spec == nullptr) {
      FailUnknownKey(key, known);
    }
    spec->set(r, OptionValueOfJson(value, spec->kind, key));
    given.push_back(key);
  }
  for (const auto& o : table) {
    if (o.required && !j.contains(o.key)) {
      FailMissingKey(o.key);
    }
  }
  return given;
}

// Validates the options `given(spec)` says were set, in the table's order; an error names the
// option by its key (InputError::Option).
template <typename Req, typename Given>
void CheckGivenOptions(const OptionTable<Req>& table, const Req& r, Given given) {
  for (const auto& o : table) {
    if (given(o)) {
      CheckOptionValue(o.check, o.get(r), o.key);
    }
  }
}

// Validates the options whose keys are in `keys`.
template <typename Req>
void CheckGivenOptions(const OptionTable<Req>& table, const Req& r, const std::vector<std::string>& keys) {
  CheckGivenOptions(table, r, [&keys](const OptionSpec<Req>& o) {
    return std::find(keys.begin(), keys.end(), o.key) != keys.end();
  });
}

// ReadJsonOptions, then CheckGivenOptions over the keys read.
template <typename Req>
void ApplyJsonOptions(const OptionTable<Req>& table, const nlohmann::json& j, Req& r) {
  CheckGivenOptions(table, r, ReadJsonOptions(table, j, r));
}

// The command line's spelling of options: the flag registered for each option key (the CLI
// registers every table's flags as it adds them, RegisterFlags; one flag per key across the
// tables), else DefaultOptionFlag (an option of no registered table).
void RegisterFlag(const std::string& key, const std::string& flag);
template <typename Req>
void RegisterFlags(const OptionTable<Req>& table) {
  for (const auto& o : table) {
    RegisterFlag(o.key, o.flag);
  }
}
std::string FlagOfOption(const std::string& key);
// `e` as the command line reports it: each option key spelled as its flag (FlagOfOption).
InputError SpellFlags(const InputError& e);

// The table as Markdown for docs/cli.md: option, JSON key, default, unit, values, meaning.
template <typename Req>
std::string OptionsMarkdown(const OptionTable<Req>& table) {
  std::string out = "| option | JSON key | default | unit | values | meaning |\n|---|---|---|---|---|---|\n";
  for (const auto& o : table) {
    out += "| " + o.flag + " | " + o.key + " | " + MarkdownCell(o.DefaultText()) + " | " + o.unit + " | " +
           MarkdownCell(OptionCheckText(o.check, o.kind)) + " | " + MarkdownCell(o.help) + " |\n";
  }
  return out;
}

}  // namespace gpuplan
