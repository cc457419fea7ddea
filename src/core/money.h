// An amount of money with its currency: every money figure gpuplan computes carries one, so a
// USD offers file is never printed as CNY.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>

namespace gpuplan {

struct Money {
  double amount = 0;
  std::string currency = "CNY";  // ISO 4217 code, as the offers file gives it

  // "1,234,567 CNY": rounded to whole units, thousands separated.
  std::string Format() const {
    const auto n = static_cast<int64_t>(std::llround(amount));
    const std::string digits = std::to_string(n < 0 ? -n : n);
    std::string out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
      if (i > 0 && (digits.size() - i) % 3 == 0) {
        out += ',';
      }
      out += digits[i];
    }
    return (n < 0 ? "-" : "") + out + " " + currency;
  }
};

}  // namespace gpuplan
