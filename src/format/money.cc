#include "format/money.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "format/numbers.h"

namespace gpuplan {

std::string FormatMoney(const Money& m) { return FormatMoney(m.amount, m.currency); }

std::string FormatMoney(double amount, const std::string& currency) {
  return GroupThousands(static_cast<int64_t>(std::llround(amount))) + " " + currency;
}

std::string FormatMoneyCents(double amount, const std::string& currency) {
  return fmt::format("{:.2f}", amount) + (currency.empty() ? "" : " " + currency);
}

nlohmann::json MoneyToJson(const std::optional<Money>& m) {
  return m ? nlohmann::json({{"amount", m->amount}, {"currency", m->currency}}) : nlohmann::json(nullptr);
}

}  // namespace gpuplan
