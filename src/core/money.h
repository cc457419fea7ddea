// An amount of money with its currency: every money figure gpuplan computes carries one, so a
// USD offers file is never printed as CNY. Written as text by format/money.h (FormatMoney).
#pragma once

#include <string>

namespace gpuplan {

struct Money {
  double amount = 0;
  std::string currency = "CNY";  // ISO 4217 code, as the offers file gives it
};

}  // namespace gpuplan
