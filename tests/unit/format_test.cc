// The shared formatters of src/format (numbers.h, money.h, times.h). Every expected text below is
// worked out by hand from the rule the header states, not copied from a run.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "format/money.h"
#include "format/numbers.h"
#include "format/times.h"

namespace gpuplan {
namespace {

TEST(FormatNumbers, FourSignificantDigitsWithoutAnExponentForOrdinaryMagnitudes) {
  EXPECT_EQ(FormatNumber(3350), "3350");
  EXPECT_EQ(FormatNumber(0.91237), "0.9124");  // 4 digits: 0.9123|7 rounds up
  EXPECT_EQ(FormatNumber(98900), "98900");     // %.4g would say 9.89e+04
  EXPECT_EQ(FormatNumber(1234567.891), "1234568");  // written whole, to the unit
  EXPECT_EQ(FormatNumber(1.52e-5), "1.52e-05");     // below 1e-4 the exponent stays
  EXPECT_EQ(FormatNumber(3e15), "3e+15");           // and from 1e15 on
  EXPECT_EQ(FormatNumber(2.46, 2), "2.5");
}

TEST(FormatNumbers, HoursAreWholeFromNinePointNineFiveOnAndOneDecimalBelow) {
  EXPECT_EQ(FormatHours(0), "0");
  EXPECT_EQ(FormatHours(0.26), "0.3");
  EXPECT_EQ(FormatHours(9.94), "9.9");
  EXPECT_EQ(FormatHours(9.95), "10");
  EXPECT_EQ(FormatHours(12.4), "12");
  EXPECT_EQ(FormatHours(730), "730");
}

TEST(FormatNumbers, ThousandsAreSeparatedByCommas) {
  EXPECT_EQ(GroupThousands(0), "0");
  EXPECT_EQ(GroupThousands(999), "999");
  EXPECT_EQ(GroupThousands(1000), "1,000");
  EXPECT_EQ(GroupThousands(8030261248), "8,030,261,248");
  EXPECT_EQ(GroupThousands(-999), "-999");
  EXPECT_EQ(GroupThousands(-1234), "-1,234");
  EXPECT_EQ(GroupThousands(std::numeric_limits<int64_t>::min()), "-9,223,372,036,854,775,808");
}

TEST(FormatNumbers, AnOptionalValueIsItsTextOrADash) {
  EXPECT_EQ(OptionalText(std::optional<int>()), "-");
  EXPECT_EQ(OptionalText(std::optional<int>(16)), "16");
  EXPECT_EQ(OptionalText(std::optional<int64_t>(-3)), "-3");
  EXPECT_EQ(OptionalText(std::optional<uint64_t>(std::numeric_limits<uint64_t>::max())), "18446744073709551615");
  EXPECT_EQ(OptionalText(std::optional<std::string>()), "-");
  EXPECT_EQ(OptionalText(std::optional<std::string>("")), "-");  // an empty text is none too
  EXPECT_EQ(OptionalText(std::optional<std::string>("Ubuntu 24.04")), "Ubuntu 24.04");
  const auto watts = [](double w) { return FormatNumber(w) + " W"; };
  EXPECT_EQ(OptionalText(std::optional<double>(700), watts), "700 W");
  EXPECT_EQ(OptionalText(std::optional<double>(), watts), "-");
}

TEST(FormatNumbers, AnOptionalValueInJsonIsTheValueOrNull) {
  EXPECT_EQ(OptionalToJson(std::optional<double>()).dump(), "null");
  EXPECT_EQ(OptionalToJson(std::optional<double>(2.5)).dump(), "2.5");
  EXPECT_EQ(OptionalToJson(std::optional<int>(7)).dump(), "7");
  EXPECT_EQ(OptionalToJson(std::optional<std::string>("GPU-1")).dump(), "\"GPU-1\"");
}

TEST(FormatMoney, WholeUnitsWithThousandsSeparatedAndTheCurrency) {
  EXPECT_EQ(FormatMoney(1234567.891, "CNY"), "1,234,568 CNY");  // .891 rounds up to the unit
  EXPECT_EQ(FormatMoney(Money{1234567.891, "USD"}), "1,234,568 USD");
  EXPECT_EQ(FormatMoney(999.5, "CNY"), "1,000 CNY");  // half a unit rounds away from zero
  EXPECT_EQ(FormatMoney(12.5, "EUR"), "13 EUR");
  EXPECT_EQ(FormatMoney(-1234.4, "CNY"), "-1,234 CNY");
  EXPECT_EQ(FormatMoney(-0.4, "CNY"), "0 CNY");  // rounds to 0: no minus sign
  EXPECT_EQ(FormatMoney(0, "CNY"), "0 CNY");
  EXPECT_EQ(FormatMoney(1000, ""), "1,000 ");  // the space stays without a currency
}

TEST(FormatMoney, CentsWithoutSeparatorsAndTheCurrencyWhenThereIsOne) {
  EXPECT_EQ(FormatMoneyCents(1234567.891, "CNY"), "1234567.89 CNY");
  EXPECT_EQ(FormatMoneyCents(12.5, "USD"), "12.50 USD");
  EXPECT_EQ(FormatMoneyCents(12.5, ""), "12.50");
  // 2.675 is 2.67499999999999982236431605997495353221893310546875 in binary: down to 2.67.
  EXPECT_EQ(FormatMoneyCents(2.675, "CNY"), "2.67 CNY");
  EXPECT_EQ(FormatMoneyCents(0, "CNY"), "0.00 CNY");
}

TEST(FormatMoney, MoneyInJsonIsAnAmountWithItsCurrencyOrNull) {
  EXPECT_EQ(MoneyToJson(Money{12.5, "CNY"}).dump(), R"({"amount":12.5,"currency":"CNY"})");
  EXPECT_EQ(MoneyToJson(std::nullopt).dump(), "null");
}

// 2026-12-03T13:15:00Z: 20790 days after 1970-01-01 (56 years with 14 leap days to 2026-01-01 =
// 20454 days, then 334 days of January to November, then 2 more), 13 h 15 min into the day.
constexpr int64_t kDec3At1315Utc = (20790 * int64_t{86400} + 13 * 3600 + 15 * 60) * 1000;

TEST(FormatTimes, AnInstantAsItsLocalHourAndMinuteWithTheZone) {
  EXPECT_EQ(LocalHourText(kDec3At1315Utc, 8 * 60), "2026-12-03T21:00+08:00");
  EXPECT_EQ(LocalMinuteText(kDec3At1315Utc, 8 * 60), "2026-12-03T21:15+08:00");
  EXPECT_EQ(LocalHourText(kDec3At1315Utc, 0), "2026-12-03T13:00+00:00");
  EXPECT_EQ(LocalHourText(kDec3At1315Utc + 59 * 1000, -5 * 60), "2026-12-03T08:00-05:00");
  EXPECT_EQ(LocalMinuteText(kDec3At1315Utc + 59 * 1000, -5 * 60), "2026-12-03T08:15-05:00");  // the minute it falls in
  // Before the epoch the hour is floored, not truncated toward zero: 1 ms before is 23:00 the day before.
  EXPECT_EQ(LocalHourText(-1, 0), "1969-12-31T23:00+00:00");
  EXPECT_EQ(LocalMinuteText(-1, 0), "1969-12-31T23:59+00:00");
}

TEST(FormatTimes, MinutesBelowTwoHoursThenHoursToOneDecimal) {
  EXPECT_EQ(FormatMinutes(0), "0 min");
  EXPECT_EQ(FormatMinutes(45), "45 min");
  EXPECT_EQ(FormatMinutes(119.4), "119 min");
  EXPECT_EQ(FormatMinutes(120), "2.0 h");
  EXPECT_EQ(FormatMinutes(150), "2.5 h");
  EXPECT_EQ(FormatMinutes(1441), "24.0 h");  // 24.0166... h
}

}  // namespace
}  // namespace gpuplan
