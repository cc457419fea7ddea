// Numbers, hours and optional values as every renderer writes them: one formatter each, so a
// figure reads the same in the terminal, Markdown, HTML and JSON texts.
#pragma once

#include <nlohmann/json.hpp>

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>

namespace gpuplan {

// `digits` significant digits, without an exponent for ordinary magnitudes: %g turns to an
// exponent once the digits cannot hold the whole part (98900 at 4 digits), and such a number
// is written in full instead (98900, not 9.89e+04), which is more readable and not less exact.
// Below 1e-4 or from 1e15 on, %g's exponent stays (1.52e-05, 3e+15).
std::string FormatNumber(double v, int digits = 4);

// Hours as the meter's tables show them: whole hours from 9.95 on (and 0), one decimal below.
std::string FormatHours(double h);

// An integer with its thousands separated by commas: 8030261248 -> "8,030,261,248",
// -1234 -> "-1,234".
std::string GroupThousands(int64_t n);

// What a text cell shows for a value that is not there.
inline constexpr const char* kNoValue = "-";

// An optional value as text: `format(*v)`, or "-" when there is none.
template <typename T, typename Format>
std::string OptionalText(const std::optional<T>& v, Format format) {
  return v ? std::string(format(*v)) : std::string(kNoValue);
}

// An optional integer in decimal ("16"), or "-".
template <std::integral T>
  requires(!std::same_as<T, bool>)
std::string OptionalText(const std::optional<T>& v) {
  return v ? std::to_string(*v) : std::string(kNoValue);
}

// An optional text, or "-" when there is none or it is empty.
std::string OptionalText(const std::optional<std::string>& v);

// An optional value in JSON: the value, or null.
template <typename T>
nlohmann::json OptionalToJson(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace gpuplan
