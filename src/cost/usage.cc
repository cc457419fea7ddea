#include "cost/usage.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "catalog/json_source.h"
#include "core/error.h"
#include "core/names.h"

namespace gpuplan {
namespace {

// Days since 1970-01-01 for a civil date (H. Hinnant's days_from_civil algorithm).
int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Hours since the epoch of an ISO 8601 timestamp on the hour.
bool ParseHour(const std::string& s, int64_t* hour, int* hour_of_day) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char sep = 0;
  int consumed = 0;
  if (std::sscanf(s.c_str(), "%4d-%2d-%2d%c%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &consumed) < 6) {
    return false;
  }
  std::string rest = s.substr(static_cast<std::size_t>(consumed));
  if (!rest.empty() && rest[0] == ':') {
    int more = 0;
    if (std::sscanf(rest.c_str(), ":%2d%n", &sec, &more) != 1) {
      return false;
    }
    rest = rest.substr(static_cast<std::size_t>(more));
  }
  if (!(rest.empty() || rest == "Z" || ((rest[0] == '+' || rest[0] == '-') && rest.size() == 6 && rest[3] == ':'))) {
    return false;
  }
  if ((sep != 'T' && sep != ' ') || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi != 0 || sec != 0) {
    return false;
  }
  *hour = DaysFromCivil(y, mo, d) * 24 + h;  // local time as written; the offset only labels it
  *hour_of_day = h;
  return true;
}

std::vector<std::string> SplitCsv(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ',')) {
    const auto b = cell.find_first_not_of(" \t\r");
    const auto e = cell.find_last_not_of(" \t\r");
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  if (!line.empty() && line.back() == ',') {
    out.emplace_back();
  }
  return out;
}

}  // namespace

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
    n += h.Total();
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

UsageTrace ParseUsageCsv(const std::string& text, const std::string& file) {
  std::stringstream in(text);
  std::string line;
  int line_no = 0;
  std::vector<std::string> header;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.find_first_not_of(" \t\r") != std::string::npos) {
      header = SplitCsv(line);
      break;
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
    int64_t hour;
    int hod;
    DemandClass cls;
    double gpus;
    int deadline;
  };
  std::vector<Row> rows;
  std::map<std::pair<int64_t, int>, int> seen;
  std::string first;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const auto cells = SplitCsv(line);
    auto cell = [&](int c) { return c >= 0 && c < static_cast<int>(cells.size()) ? cells[static_cast<std::size_t>(c)] : std::string(); };
    Row r{};
    if (!ParseHour(cell(c_time), &r.hour, &r.hod)) {
      throw InputError("expected an ISO 8601 hour such as 2026-01-05T09:00, got '" + cell(c_time) + "'", file, line_no,
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
    if (!seen.emplace(std::make_pair(r.hour, static_cast<int>(r.cls)), line_no).second) {
      throw InputError("a second row for this hour and class (first on line " +
                           std::to_string(seen[{r.hour, static_cast<int>(r.cls)}]) + ")",
                       file, line_no, "timestamp");
    }
    if (rows.empty()) {
      first = cell(c_time);
    }
    rows.push_back(r);
  }
  if (rows.empty()) {
    throw InputError("no usage rows after the header", file, line_no, "gpus");
  }
  int64_t lo = rows.front().hour, hi = rows.front().hour;
  for (const auto& r : rows) {
    lo = std::min(lo, r.hour);
    hi = std::max(hi, r.hour);
  }
  if (hi - lo > 24 * 366 * 3) {
    throw InputError("the trace spans more than three years", file, 0, "timestamp");
  }
  UsageTrace t;
  t.source = file;
  t.start = first;
  t.hours.resize(static_cast<std::size_t>(hi - lo + 1));
  for (std::size_t i = 0; i < t.hours.size(); ++i) {
    t.hours[i].hour_of_day = static_cast<int>(((lo + static_cast<int64_t>(i)) % 24 + 24) % 24);
  }
  for (const auto& r : rows) {
    UsageHour& h = t.hours[static_cast<std::size_t>(r.hour - lo)];
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

UsageTrace LoadUsageCsv(const std::string& path) { return ParseUsageCsv(ReadFileText(path), path); }

UsageTrace UsageFromHoursPerMonth(double hours_per_month, double gpus) {
  if (!(hours_per_month >= 0 && hours_per_month <= 730)) {
    throw InputError("must be between 0 and 730", "", 0, "--hours-per-month");
  }
  if (!(gpus > 0)) {
    throw InputError("must be positive", "", 0, "--gpus");
  }
  UsageTrace t;
  t.source = "hours-per-month";
  t.hours.resize(730);
  for (std::size_t i = 0; i < t.hours.size(); ++i) {
    t.hours[i].hour_of_day = static_cast<int>(i % 24);
  }
  // Fill working hours first (09:00 onwards each day), then the rest of each day.
  double left = hours_per_month;
  for (int pass = 0; pass < 24 && left > 0; ++pass) {
    const int hod = (9 + pass) % 24;
    for (std::size_t i = static_cast<std::size_t>(hod); i < t.hours.size() && left > 0; i += 24) {
      const double take = std::min(1.0, left);
      t.hours[i].firm = gpus * take;
      left -= take;
    }
  }
  return t;
}

UsageTrace UsageFromJob(double gpus, double hours) {
  if (!(gpus > 0) || !(hours > 0) || hours > 24 * 366 * 3) {
    throw InputError("a job needs positive GPUs and hours (at most three years)", "", 0, "--usage");
  }
  UsageTrace t;
  t.source = "job";
  t.hours.resize(static_cast<std::size_t>(std::ceil(hours)));
  for (std::size_t i = 0; i < t.hours.size(); ++i) {
    t.hours[i].hour_of_day = static_cast<int>(i % 24);
    t.hours[i].firm = gpus * std::min(1.0, hours - static_cast<double>(i));
  }
  return t;
}

}  // namespace gpuplan
