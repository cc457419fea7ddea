#include "cost/usage.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/names.h"
#include "read/csv.h"
#include "read/file_text.h"
#include "read/time_text.h"

#include <fmt/format.h>

namespace gpuplan {

const char* ToString(DemandClass c) {
  switch (c) {
    case DemandClass::kSteady: return "steady";
    case DemandClass::kBurst: return "burst";
    case DemandClass::kInterruptible: return "interruptible";
    case DemandClass::kDeferrable: return "deferrable";
  }
  return "?";
}

double UsageTrace::TotalGpuHours() const {
  double n = 0;
  for (const auto& h : hours) {
    n += h.GpuHours();
  }
  return n;
}

double UsageTrace::Peak() const {
  double p = 0;
  for (const auto& h : hours) {
    p = std::max(p, h.Total());
  }
  return p;
}

UsageTrace ParseUsageCsv(const std::string& text, const std::string& file, const Zone& zone) {
  std::stringstream in(text);
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.find_first_not_of(" \t\r") != std::string::npos) {
      header = SplitCsvLine(line);
      break;
    }
  }
  // Every column is one of these, each named once: a misspelt `deadline_hour` or a second `gpus`
  // would otherwise be a column nobody reads (names compared normalised, as everywhere).
  const std::vector<std::string> known = {"timestamp", "gpus", "class", "deadline_hours"};
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string name = NormalizeName(header[i]);
    if (std::none_of(known.begin(), known.end(), [&](const std::string& k) { return NormalizeName(k) == name; })) {
      throw InputError(name.empty() ? fmt::format("column {} has no name (a trailing comma in the header?)", i + 1)
                                    : fmt::format("unknown column '{}' (the columns are timestamp, gpus, class and "
                                                  "deadline_hours)",
                                                  header[i]),
                       file, std::max(line_no, 1), "header", ClosestNames(header[i], known));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (NormalizeName(header[j]) == name) {
        throw InputError(fmt::format("the column '{}' is named twice (columns {} and {})", header[i], j + 1, i + 1), file,
                         std::max(line_no, 1), "header");
      }
    }
  }
  auto column = [&](const std::string& name) -> int {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (NormalizeName(header[i]) == NormalizeName(name)) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  const int c_time = column("timestamp");
  const int c_gpus = column("gpus");
  const int c_class = column("class");
  const int c_deadline = column("deadline_hours");
  if (c_time < 0 || c_gpus < 0) {
    throw InputError("header must name the columns timestamp and gpus (optional: class, deadline_hours)", file,
                     std::max(line_no, 1), "header");
  }
  struct Row {
    LocalHour hour;
    DemandClass cls;
    double gpus;
    int deadline;
    std::optional<UtcMillis> instant;  // when the timestamp carries its offset
  };
  std::vector<Row> rows;
  std::map<std::pair<LocalHour, int>, int> seen;
  std::map<std::pair<LocalHour, int>, std::size_t> seen_row;
  std::string first;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const auto cells = SplitCsvLine(line);
    auto cell = [&](int c) { return c >= 0 && c < static_cast<int>(cells.size()) ? cells[static_cast<std::size_t>(c)] : std::string(); };
    Row r{};
    if (const auto h = ParseIsoHour(cell(c_time), zone)) {
      r.hour = *h;
      if (const auto iso = ParseIsoTime(cell(c_time)); iso && iso->offset) {
        r.instant = UtcMillis{iso->wall.time_since_epoch() - *iso->offset};
      }
    } else {
      throw InputError("expected an ISO 8601 hour such as 2026-01-05T09:00 (offsets in whole hours), got '" + cell(c_time) + "'", file, line_no,
                       "timestamp");
    }
    char* end = nullptr;
    const std::string g = cell(c_gpus);
    r.gpus = std::strtod(g.c_str(), &end);
    if (g.empty() || end == nullptr || *end != '\0' || !std::isfinite(r.gpus) || r.gpus < 0 || r.gpus > 1e6) {
      throw InputError("expected a number of GPUs (0 or more), got '" + g + "'", file, line_no, "gpus");
    }
    r.cls = DemandClass::kSteady;
    const std::string cls = NormalizeName(cell(c_class));
    if (!cls.empty()) {
      bool ok = false;
      for (DemandClass k : {DemandClass::kSteady, DemandClass::kBurst, DemandClass::kInterruptible,
                            DemandClass::kDeferrable}) {
        if (cls == ToString(k)) {
          r.cls = k;
          ok = true;
        }
      }
      if (!ok) {
        throw InputError("expected steady, burst, interruptible or deferrable, got '" + cell(c_class) + "'", file,
                         line_no, "class");
      }
    }
    const std::string dl = cell(c_deadline);
    if (r.cls == DemandClass::kDeferrable) {
      const long v = dl.empty() ? -1 : std::strtol(dl.c_str(), &end, 10);
      if (dl.empty() || *end != '\0' || v < 1 || v > 24 * 31) {
        throw InputError("deferrable rows need deadline_hours between 1 and 744, got '" + dl + "'", file, line_no,
                         "deadline_hours");
      }
      r.deadline = static_cast<int>(v);
    }
    const auto key = std::make_pair(r.hour, static_cast<int>(r.cls));
    if (const auto prev = seen_row.find(key); prev != seen_row.end()) {
      Row& p = rows[prev->second];
      if (p.instant && r.instant && *p.instant != *r.instant) {
        // The hour a zone's clock repeats when daylight saving ends (02:00+02:00 and 02:00+01:00
        // in Europe/Berlin): one wall-clock hour of the trace's grid, which keeps the larger of the
        // two (docs/cost-model.md §0: the grid counts wall-clock hours).
        p.gpus = std::max(p.gpus, r.gpus);
        continue;
      }
    }
    if (!seen.emplace(key, line_no).second) {
      throw InputError("a second row for this hour and class (first on line " +
                           std::to_string(seen[{r.hour, static_cast<int>(r.cls)}]) + ")",
                       file, line_no, "timestamp");
    }
    if (rows.empty()) {
      first = cell(c_time);
    }
    seen_row.emplace(key, rows.size());
    rows.push_back(r);
  }
  if (rows.empty()) {
    throw InputError("no usage rows after the header", file, line_no, "gpus");
  }
  LocalHour lo = rows.front().hour, hi = rows.front().hour;
  for (const auto& r : rows) {
    lo = std::min(lo, r.hour);
    hi = std::max(hi, r.hour);
  }
  if (HoursBetween(lo, hi) > 24 * 366 * 3) {
    throw InputError("the trace spans more than three years", file, 0, "timestamp");
  }
  UsageTrace t;
  t.source = file;
  t.start = first;
  t.start_hour = lo;
  t.zone = zone;
  t.hours.resize(static_cast<std::size_t>(HoursBetween(lo, hi) + 1));
  for (std::size_t i = 0; i < t.hours.size(); ++i) {
    t.hours[i].hour_of_day = HourOfDay(t.HourAt(i));
  }
  for (const auto& r : rows) {
    UsageHour& h = t.hours[static_cast<std::size_t>(HoursBetween(lo, r.hour))];
    switch (r.cls) {
      case DemandClass::kSteady:
      case DemandClass::kBurst: h.firm += r.gpus; break;
      case DemandClass::kInterruptible: h.interruptible += r.gpus; break;
      case DemandClass::kDeferrable:
        h.deferrable += r.gpus;
        h.deadline_hours = h.deadline_hours == 0 ? r.deadline : std::min(h.deadline_hours, r.deadline);
        break;
    }
  }
  return t;
}

UsageTrace LoadUsageCsv(const std::string& path, const Zone& zone) { return ParseUsageCsv(ReadFileText(path), path, zone); }

namespace {
UsageTrace Empty(LocalHour start_hour, std::size_t hours, const Zone& zone) {
  UsageTrace t;
  t.start_hour = start_hour;
  t.zone = zone;
  t.start = FormatLocalHour(start_hour) + FormatUtcOffsetAt(zone, start_hour);
  t.hours.resize(hours);
  for (std::size_t i = 0; i < hours; ++i) {
    t.hours[i].hour_of_day = HourOfDay(t.HourAt(i));
  }
  return t;
}
}  // namespace

UsageTrace UsageFromHoursPerMonth(double hours_per_month, double gpus, LocalHour month_start, const Zone& zone) {
  const LocalHour end = AddMonths(month_start, 1);
  const auto len = static_cast<double>(HoursBetween(month_start, end));
  const std::string month = date::format("%Y-%m", month_start);
  if (!(hours_per_month >= 0 && hours_per_month <= len)) {
    throw InputError::Option("hours_per_month", fmt::format("must be between 0 and {:g} (the hours of {})", len, month));
  }
  if (!(gpus > 0)) {
    throw InputError::Option("gpus", "must be positive");
  }
  UsageTrace t = Empty(month_start, static_cast<std::size_t>(len), zone);
  t.source = fmt::format("{:g} h per GPU in {}", hours_per_month, month);
  t.note = fmt::format("{:g} GPU{} busy {:g} h each in {} ({:g} h), from 09:00 each day", gpus, gpus == 1 ? "" : "s",
                       hours_per_month, month, len);
  // Fill working hours first (09:00 onwards each day), then the rest of each day.
  double left = hours_per_month;
  for (int pass = 0; pass < 24 && left > 0; ++pass) {
    const int hod = (9 + pass) % 24;
    for (std::size_t i = static_cast<std::size_t>(hod); i < t.hours.size() && left > 0; i += 24) {
      const double take = std::min(1.0, left);
      t.hours[i].firm = gpus;
      t.hours[i].minutes = 60.0 * take;
      left -= take;
    }
  }
  return t;
}

LocalHour NextMonthStart(UtcSeconds now, const Zone& zone) {
  return AddMonths(MonthStartOf(zone.LocalHourOf(now)), 1);
}

UsageTrace UsageFromJob(double gpus, double hours, LocalMinute start, const Zone& zone, bool interruptible) {
  if (!(gpus > 0) || !(hours > 0) || hours > 24 * 366 * 3) {
    throw InputError::Option("usage", "a job needs positive GPUs and hours (at most three years)");
  }
  const LocalHour first_hour = date::floor<std::chrono::hours>(start);
  // Minutes from the first hour's start: the job runs [lead, lead + hours x 60).
  const auto lead = static_cast<double>((start - LocalMinute{first_hour}).count());
  const double end = lead + hours * 60.0;
  const auto n = static_cast<std::size_t>(std::ceil(end / 60.0 - 1e-9));
  UsageTrace t = Empty(first_hour, n, zone);
  t.source = "job";
  t.from_job = true;
  for (std::size_t i = 0; i < n; ++i) {
    const double b = 60.0 * static_cast<double>(i);
    const double overlap = std::min(b + 60.0, end) - std::max(b, lead);
    (interruptible ? t.hours[i].interruptible : t.hours[i].firm) = gpus;
    t.hours[i].minutes = std::clamp(overlap, 0.0, 60.0);
  }
  return t;
}

UsageTrace Extrapolate(const UsageTrace& u, TermUnit period) {
  if (u.hours.empty()) {
    throw InputError::Option("extrapolate", "no usage to extrapolate", {}, u.source, 0);
  }
  const LocalHour day0{date::floor<date::days>(u.start_hour)};
  return ExtrapolateTo(u, TermStart(period, day0, 1), period == TermUnit::kYear ? "year" : "month");
}

UsageTrace ExtrapolateTo(const UsageTrace& u, LocalHour end, const std::string& what) {
  if (u.hours.empty()) {
    throw InputError::Option("extrapolate", "no usage to extrapolate", {}, u.source, 0);
  }
  // Whole days from the sample's first day. A trace has no rows for hours without use, so a
  // sample whose last row falls within two days of a week boundary (a Friday evening, say) is
  // taken to run to that boundary.
  const LocalHour day0{date::floor<date::days>(u.start_hour)};
  const int64_t days = (HoursBetween(day0, u.EndHour()) + 23) / 24;
  const int64_t weeks = days % 7 >= 5 ? days / 7 + 1 : days / 7;
  const int64_t sample_hours = weeks > 0 ? weeks * 168 : days * 24;
  if (u.EndHour() >= end) {
    UsageTrace same = u;
    same.note = fmt::format("not extrapolated: the trace already covers a {}", what);
    return same;
  }
  UsageTrace t = Empty(day0, static_cast<std::size_t>(HoursBetween(day0, end)), u.zone);
  t.source = u.source;
  for (std::size_t i = 0; i < t.hours.size(); ++i) {
    const LocalHour src = day0 + std::chrono::hours{static_cast<int64_t>(i) % sample_hours};
    if (src >= u.start_hour && src < u.EndHour()) {
      const UsageHour& h = u.hours[static_cast<std::size_t>(HoursBetween(u.start_hour, src))];
      const int hod = t.hours[i].hour_of_day;
      t.hours[i] = h;
      t.hours[i].hour_of_day = hod;
    }
  }
  std::string sample;
  if (weeks > 0) {
    sample = fmt::format("{} week{} measured ({} .. {})", weeks, weeks > 1 ? "s" : "", FormatLocalHour(day0).substr(0, 10),
                         FormatLocalHour(day0 + std::chrono::hours{sample_hours}).substr(0, 10));
    if (weeks * 7 < days) {
      sample += fmt::format(", the last {} day{} left out", days - weeks * 7, days - weeks * 7 > 1 ? "s" : "");
    }
  } else {
    sample = fmt::format("{} day{} measured, under a week: the weekday / weekend shape is unknown", days,
                         days > 1 ? "s" : "");
  }
  t.note = fmt::format("extrapolated to a {}: {} repeated to {} .. {} ({} days, x{:.2f})", what, sample,
                       FormatLocalHour(day0).substr(0, 10), FormatLocalHour(end).substr(0, 10),
                       HoursBetween(day0, end) / 24,
                       static_cast<double>(HoursBetween(day0, end)) / static_cast<double>(sample_hours));
  return t;
}

UsageTrace RepeatMonths(const UsageTrace& u, int64_t months) {
  const LocalHour end = AddMonths(u.start_hour, months);
  UsageTrace r = Empty(u.start_hour, static_cast<std::size_t>(HoursBetween(u.start_hour, end)), u.zone);
  r.source = u.source;
  r.note = u.note;
  if (u.hours.empty()) {
    return r;
  }
  // A trace of one month or less is that month: each later month starts again at its first hour
  // (a 30-day month takes its first 720 hours, a 31-day month of a 30-day trace wraps to its first
  // day), so month m + 1 begins on the same day of the month as the trace, not wherever hour
  // (m x 744) mod 744 falls. A longer trace repeats as a whole.
  const bool monthly = u.EndHour() <= AddMonths(u.start_hour, 1);
  int64_t month = 0;
  auto month_begin = static_cast<std::size_t>(0);
  auto next_month = static_cast<std::size_t>(HoursBetween(u.start_hour, AddMonths(u.start_hour, 1)));
  for (std::size_t i = 0; i < r.hours.size(); ++i) {
    while (monthly && i >= next_month) {
      ++month;
      month_begin = next_month;
      next_month = static_cast<std::size_t>(HoursBetween(u.start_hour, AddMonths(u.start_hour, month + 1)));
    }
    const int hod = r.hours[i].hour_of_day;
    r.hours[i] = u.hours[(i - month_begin) % u.hours.size()];
    r.hours[i].hour_of_day = hod;
  }
  return r;
}

UsageTrace PadToMonth(const UsageTrace& u) {
  const auto month = static_cast<std::size_t>(HoursBetween(u.start_hour, AddMonths(u.start_hour, 1)));
  if (u.hours.size() >= month) {
    return u;
  }
  UsageTrace r = u;
  const std::size_t given = r.hours.size();
  r.hours.resize(month);
  for (std::size_t i = given; i < month; ++i) {
    r.hours[i].hour_of_day = HourOfDay(r.HourAt(i));
  }
  return r;
}

}  // namespace gpuplan
