// Money as every renderer writes it: whole units with thousands separated (tables, sentences),
// to the cent (hourly prices), and the JSON object of an amount with its currency.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

#include "core/money.h"

namespace gpuplan {

// "1,234,568 CNY": rounded to whole units, thousands separated; the currency always follows
// after a space.
std::string FormatMoney(const Money& m);
std::string FormatMoney(double amount, const std::string& currency);

// "1234567.89 CNY": to the cent, no separators; the number alone when the currency is empty.
std::string FormatMoneyCents(double amount, const std::string& currency);

// {"amount": 12.5, "currency": "CNY"}, or null when there is no money.
nlohmann::json MoneyToJson(const std::optional<Money>& m);

}  // namespace gpuplan
