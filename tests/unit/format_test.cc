// The shared formatters of src/format (numbers.h, money.h, times.h). Every expected text below is
// worked out by hand from the rule the header states, not copied from a run.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "core/error.h"
#include "format/money.h"
#include "format/numbers.h"
#include "format/shown.h"
#include "format/times.h"
#include "read/time_text.h"

namespace gpuplan {
namespace {

// Shown (shown.h): C0 controls and DEL as \xNN, the C1 controls (UTF-8 C2 80 .. C2 9F) as
// \u00NN, other UTF-8 untouched; a cut at the limit backs off to a character boundary and says
// the whole length.
TEST(FormatShown, EscapesControlsAndCutsLongTexts) {
  EXPECT_EQ(Shown("plain text, caf\xc3\xa9"), "plain text, caf\xc3\xa9");
  EXPECT_EQ(Shown(std::string("a\x1b[2J\r\a") + std::string(1, '\0') + "\x7f" "b"), "a\\x1b[2J\\x0d\\x07\\x00\\x7fb");
  EXPECT_EQ(Shown("\xc2\x9b" "31m\xc2\x80\xc2\xa0"), "\\u009b31m\\u0080\xc2\xa0");  // U+00A0 is no control
  EXPECT_EQ(Shown("\t\n"), "\\x09\\x0a");
  EXPECT_EQ(Shown(std::string(2000, 'x')), std::string(2000, 'x'));
  EXPECT_EQ(Shown(std::string(2001, 'x')), std::string(2000, 'x') + "... (2001 bytes in all)");
  // "\xc3\xa9" (e acute) straddles byte 5 of a 5-byte limit: the cut keeps 4 bytes, not half of it.
  EXPECT_EQ(Shown("abcd\xc3\xa9" "fg", 5), "abcd... (8 bytes in all)");
  EXPECT_EQ(Shown("abc\xc3\xa9" "fg", 5), "abc\xc3\xa9... (7 bytes in all)");
  // The limit counts input bytes: a cut piece's escapes may make it longer, never its input.
  EXPECT_EQ(Shown("\x1b\x1b\x1b", 2), "\\x1b\\x1b... (3 bytes in all)");
}

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
  const auto z = [](int minutes) { return Zone::FixedOffset(std::chrono::minutes{minutes}); };
  EXPECT_EQ(FormatZonedHour(z(8 * 60), FromUnixMillis(kDec3At1315Utc)), "2026-12-03T21:00+08:00");
  EXPECT_EQ(FormatZonedMinute(z(8 * 60), FromUnixMillis(kDec3At1315Utc)), "2026-12-03T21:15+08:00");
  EXPECT_EQ(FormatZonedHour(z(0), FromUnixMillis(kDec3At1315Utc)), "2026-12-03T13:00+00:00");
  EXPECT_EQ(FormatZonedHour(z(-5 * 60), FromUnixMillis(kDec3At1315Utc + 59 * 1000)), "2026-12-03T08:00-05:00");
  EXPECT_EQ(FormatZonedMinute(z(-5 * 60), FromUnixMillis(kDec3At1315Utc + 59 * 1000)), "2026-12-03T08:15-05:00");  // its minute
  // Before the epoch the hour is floored, not truncated toward zero: 1 ms before is 23:00 the day before.
  EXPECT_EQ(FormatZonedHour(z(0), FromUnixMillis(int64_t{-1})), "1969-12-31T23:00+00:00");
  EXPECT_EQ(FormatZonedMinute(z(0), FromUnixMillis(int64_t{-1})), "1969-12-31T23:59+00:00");
}

// Real zones from the system's tz database (Debian's tzdata). Europe/Berlin moves from +01:00 to
// +02:00 at 01:00 UTC on the last Sunday of March (EU summer time, Directive 2000/84/EC): in 2027
// that is 28 March (1 March 2027 is a Monday, so the Sundays are the 7th, 14th, 21st and 28th).
TEST(FormatTimes, ANamedZoneFollowsItsDaylightSaving) {
  const auto berlin = ParseZone("Europe/Berlin");
  ASSERT_TRUE(berlin.has_value());
  // Not a fixed offset: its winter and summer offsets differ.
  EXPECT_NE(berlin->OffsetAt(berlin->StartOf(CivilHour(2027, 1, 15))),
            berlin->OffsetAt(berlin->StartOf(CivilHour(2027, 7, 15))));
  EXPECT_EQ(berlin->Name(), "Europe/Berlin");
  const int64_t switch_ms = (CivilDay(2027, 3, 28).time_since_epoch().count() * 24 + 1) * int64_t{3600000};
  EXPECT_EQ(FormatZonedMinute(*berlin, FromUnixMillis(switch_ms - 30 * 60000)), "2027-03-28T01:30+01:00");
  EXPECT_EQ(FormatZonedMinute(*berlin, FromUnixMillis(switch_ms + 30 * 60000)), "2027-03-28T03:30+02:00");  // 02:xx is skipped
  // The instant of a wall-clock time: 09:00 in Berlin is 08:00Z in winter, 07:00Z in summer.
  EXPECT_EQ(FormatUtcIso(date::floor<std::chrono::seconds>(berlin->StartOf(CivilHour(2027, 3, 27, 9)))),
            "2027-03-27T08:00:00Z");
  EXPECT_EQ(FormatUtcIso(date::floor<std::chrono::seconds>(berlin->StartOf(CivilHour(2027, 3, 29, 9)))),
            "2027-03-29T07:00:00Z");
  // The skipped hour 02:00 starts at the end of the gap (01:00Z), the day is 23 h long.
  EXPECT_EQ(FormatUtcIso(date::floor<std::chrono::seconds>(berlin->StartOf(CivilHour(2027, 3, 28, 2)))),
            "2027-03-28T01:00:00Z");
  EXPECT_EQ(berlin->StartOf(CivilDay(2027, 3, 29)) - berlin->StartOf(CivilDay(2027, 3, 28)), std::chrono::hours{23});
  // Asia/Shanghai has kept +08:00 since 1991: the same clock as the fixed default.
  const auto shanghai = ParseZone("Asia/Shanghai");
  ASSERT_TRUE(shanghai.has_value());
  EXPECT_EQ(FormatZonedHour(*shanghai, FromUnixMillis(kDec3At1315Utc)), "2026-12-03T21:00+08:00");
  // Half-hour zones and unknown names are refused (bills are in whole local hours).
  EXPECT_FALSE(ParseZone("Asia/Kolkata").has_value());
  EXPECT_FALSE(ParseZone("+05:30").has_value());
  EXPECT_FALSE(ParseZone("Mars/Olympus_Mons").has_value());
}

TEST(FormatTimes, TheOneIsoReaderTakesItsVariantsAndRefusesTheRest) {
  const Zone cst = ChinaStandardTime();
  // 01:00Z is 09:00 in Shanghai; without an offset the text is the zone's own clock.
  EXPECT_EQ(ParseIsoHour("2027-03-01T01:00Z", cst), CivilHour(2027, 3, 1, 9));
  EXPECT_EQ(ParseIsoHour("2027-03-01 09:00:00+08:00", cst), CivilHour(2027, 3, 1, 9));
  EXPECT_EQ(ParseIsoHour("2027-03-01T09:00", cst), CivilHour(2027, 3, 1, 9));
  EXPECT_FALSE(ParseIsoHour("2027-03-01T09:30", cst).has_value());  // not on the hour
  EXPECT_FALSE(ParseIsoHour("2027-02-29T09:00", cst).has_value());  // 2027 is not a leap year
  EXPECT_FALSE(ParseIsoHour("2027-03-01T09:00+8", cst).has_value());
  EXPECT_FALSE(ParseIsoHour("2027-03-01T24:00", cst).has_value());
  EXPECT_EQ(ParseYearMonth("2027-03"), CivilHour(2027, 3, 1));
  EXPECT_FALSE(ParseYearMonth("2027-13").has_value());
  EXPECT_EQ(ParseIsoDay("2028-02-29"), CivilDay(2028, 2, 29));
  EXPECT_EQ(ParseTimeOfDay("22:00"), std::chrono::minutes{22 * 60});
  EXPECT_EQ(ParseTimeOfDay("24:00"), std::chrono::minutes{24 * 60});
  EXPECT_FALSE(ParseTimeOfDay("24:30").has_value());
  // Minutes are range-checked (a bare duration would take 09:75 as 10:15), and fields need not
  // be zero-padded, as the readers always took them.
  EXPECT_FALSE(ParseTimeOfDay("09:75").has_value());
  EXPECT_FALSE(ParseTimeOfDay("21:60").has_value());
  EXPECT_EQ(ParseTimeOfDay("9:30"), std::chrono::minutes{9 * 60 + 30});
  EXPECT_EQ(ParseIsoHour("2027-3-1T9:00", cst), CivilHour(2027, 3, 1, 9));
  EXPECT_EQ(ParseIsoDay("2027-3-1"), CivilDay(2027, 3, 1));
  const UtcSeconds now{std::chrono::seconds{kDec3At1315Utc / 1000}};
  EXPECT_EQ(ParseJobStart("2027-05-02T9:00", cst, now), LocalMinute{CivilDay(2027, 5, 2)} + std::chrono::hours{9});
  EXPECT_EQ(ParseJobStart("9:30", cst, now), LocalMinute{CivilDay(2026, 12, 3)} + std::chrono::minutes{9 * 60 + 30});
  EXPECT_THROW(ParseJobStart("09:75", cst, now), InputError);
  // Asia/Shanghai is China Standard Time, printed as +08:00 as before.
  EXPECT_EQ(ParseZone("Asia/Shanghai")->Name(), "+08:00");
  EXPECT_EQ(FormatTimeOfDay(std::chrono::minutes{8 * 60 + 5}), "08:05");
  EXPECT_EQ(FormatUtcIso(FromUnixMillis(kDec3At1315Utc + 250)), "2026-12-03T13:15:00.250Z");
  EXPECT_EQ(FormatUtcIso(FromUnixMillis(kDec3At1315Utc)), "2026-12-03T13:15:00Z");
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
