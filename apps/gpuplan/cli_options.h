// Registers a job's options table (read/options.h) as CLI11 flags: one loop for every
// subcommand. CLI11 converts each value to the option's type; the table's validation runs in
// the library (RunFit, the cost jobs: the options given, by key) or after parsing
// (CheckGivenFlags). The library names an option by its key; the CLI spells it as its flag
// (SpellFlags, read/options.h: the field and the message), so errors name the flag the user typed.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "read/options.h"

namespace gpuplan::cli {

// The validator's message for an empty number, which main turns into "expected a number".
inline constexpr const char* kEmptyNumber = "an empty value is not a number";
inline constexpr const char* kNumberOutOfRange = "a whole number beyond 64 bits";

// `table` and `r` must outlive `c` (tables are static; requests are held by the runner).
template <typename Req>
void AddOptions(CLI::App* c, const OptionTable<Req>& table, Req& r) {
  RegisterFlags(table);  // how SpellFlags names these options (read/options.h)
  for (const OptionSpec<Req>& o : table) {
    const OptionSpec<Req>* spec = &o;
    Req* req = &r;
    const std::string values = OptionCheckText(o.check, o.kind);
    const std::string help =
        o.help + (o.unit.empty() ? "" : " [" + o.unit + "]") + (values.empty() ? "" : " {" + values + "}");
    CLI::Option* opt = nullptr;
    switch (o.kind) {
      case OptionKind::kInt:
        opt = c->add_option_function<int64_t>(o.flag, [spec, req](const int64_t& v) { spec->set(*req, v); }, help);
        break;
      case OptionKind::kDouble:
        opt = c->add_option_function<double>(o.flag, [spec, req](const double& v) { spec->set(*req, v); }, help);
        break;
      case OptionKind::kString:
        opt = c->add_option_function<std::string>(o.flag, [spec, req](const std::string& v) { spec->set(*req, v); },
                                                  help);
        break;
      case OptionKind::kFlag:
        opt = c->add_flag_function(o.flag, [spec, req](int64_t n) { spec->set(*req, n > 0); }, help);
        break;
      case OptionKind::kStrings:
        opt = c->add_option_function<std::vector<std::string>>(
            o.flag, [spec, req](const std::vector<std::string>& v) { spec->set(*req, v); }, help);
        break;
    }
    if (o.kind == OptionKind::kInt || o.kind == OptionKind::kDouble) {
      // CLI11 reads an empty value as 0; it is not a number (main reports it as one).
      opt->check(CLI::Validator([](std::string& v) { return v.empty() ? std::string(kEmptyNumber) : std::string(); },
                                ""));
    }
    if (o.kind == OptionKind::kInt) {
      // CLI11 saturates a count beyond 64 bits to the largest one; it is out of range (main reports it).
      opt->check(CLI::Validator(
          [](std::string& v) {
            int64_t x = 0;
            const auto parsed = std::from_chars(v.data(), v.data() + v.size(), x);
            return parsed.ec == std::errc::result_out_of_range ? std::string(kNumberOutOfRange) : std::string();
          },
          ""));
    }
    if (o.required) {
      opt->required();
    } else if (o.kind != OptionKind::kFlag) {
      const std::string d = o.DefaultText();
      if (!d.empty()) {
        opt->default_str(d);
      }
    }
  }
}

// Validates the options given on `c`, naming them by flag. Throws InputError.
template <typename Req>
void CheckGivenFlags(const CLI::App* c, const OptionTable<Req>& table, const Req& r) {
  try {
    CheckGivenOptions(table, r, [c](const OptionSpec<Req>& o) { return c->count(o.flag) > 0; });
  } catch (const InputError& e) {
    throw SpellFlags(e);
  }
}

// The keys of the options given on `c` (a request's `given`: the library checks their values).
template <typename Req>
std::vector<std::string> GivenKeys(const CLI::App* c, const OptionTable<Req>& table) {
  std::vector<std::string> keys;
  for (const auto& o : table) {
    if (c->count(o.flag) > 0) {
      keys.push_back(o.key);
    }
  }
  return keys;
}

// Whether the option with JSON key `key` was given on `c` (GivenKeys; for MarkGivenFitOptions).
template <typename Req>
std::function<bool(const std::string&)> GivenByKey(const CLI::App* c, const OptionTable<Req>& table) {
  return [keys = GivenKeys(c, table)](const std::string& key) {
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  };
}

}  // namespace gpuplan::cli
