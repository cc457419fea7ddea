#include "meter/alerts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/error.h"
#include "format/money.h"
#include "format/times.h"
#include "read/time_text.h"
#include "read/yaml_fields.h"
#include "telemetry/snapshot.h"

namespace gpuplan {

const char* ToString(AlertKind k) {
  switch (k) {
    case AlertKind::kIdleNoProcess:
      return "idle_no_process";
    case AlertKind::kLowUtilization:
      return "low_utilization";
    case AlertKind::kBudget:
      return "budget";
    case AlertKind::kEcc:
      return "ecc";
    case AlertKind::kXid:
      return "xid";
    case AlertKind::kThrottling:
      return "throttling";
  }
  return "?";
}

namespace {

// Clock events that mean the card is held back by heat or by the board (docs/meter-alerts.md):
// hardware slowdown, software and hardware thermal, power brake. The software power cap is how a
// busy card normally runs at its limit, and idle / application clocks are not problems.
constexpr uint64_t kThrottleBits =
    kClockEventHwSlowdown | kClockEventSwThermal | kClockEventHwThermal | kClockEventHwPowerBrake;

std::string PerHour(const std::optional<Money>& m) {
  if (!m) {
    return "price unknown (no --offers)";
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f %s/h", m->amount, m->currency.c_str());
  return buf;
}

}  // namespace

const uint64_t kAlertThrottleReasons = kThrottleBits;

AlertEngine::AlertEngine(AlertRules rules) : rules_(std::move(rules)) {}

std::vector<Alert> AlertEngine::Track(Condition& c, bool holds, UtcMillis now, double after_minutes, Alert proto) {
  if (!holds) {
    c = Condition{};
    return {};
  }
  if (c.last && static_cast<double>((now - *c.last).count()) / kMillisecondsPerMinute > rules_.max_gap_minutes) {
    c = Condition{};  // not observed in between (the agent was down): that time is not counted
  }
  c.last = now;
  if (!c.since) {
    c.since = now;
  }
  const double held = static_cast<double>((now - *c.since).count()) / kMillisecondsPerMinute;
  if (held < after_minutes) {
    return {};
  }
  if (c.alerted &&
      static_cast<double>((now - *c.alerted).count()) / kMillisecondsPerMinute < rules_.repeat_minutes) {
    return {};
  }
  proto.repeat = c.alerted.has_value();
  c.alerted = now;
  proto.since = *c.since;
  proto.at = now;
  proto.minutes = held;
  return {std::move(proto)};
}

AlertGpuState AlertEngine::StateOf(const AlertGpuTick& t) const {
  const GpuSample& s = t.sample;
  AlertGpuState st;
  st.gpu = s.gpu;
  st.time = s.time;
  st.processes = t.processes;
  st.temperature = s.temperature;
  st.idle_no_process = t.billed && t.processes == 0;
  // Held by a process but barely used. Without a measured utilisation the rule cannot judge.
  st.low_utilization = t.billed && t.processes > 0 && s.utilization_gpu &&
                       static_cast<double>(*s.utilization_gpu) < rules_.low_util_percent;
  const bool busy = s.utilization_gpu && static_cast<double>(*s.utilization_gpu) >= rules_.low_util_percent;
  st.throttle_reasons = busy ? s.clock_event_reasons.value_or(0) & kThrottleBits : 0;
  return st;
}

std::optional<Money> AlertRules::GpuHourPriceAt(UtcMillis time) const {
  if (!gpu_hour_price) {
    return std::nullopt;
  }
  Money m = *gpu_hour_price;
  if (night) {
    if (night->Contains(HourOfDay(price_zone.LocalHourOf(time)))) {
      m.amount *= night->factor;
    }
  }
  return m;
}

std::optional<Money> AlertRules::GpuMoneyBetween(UtcMillis from, UtcMillis to) const {
  if (!gpu_hour_price) {
    return std::nullopt;
  }
  Money total{0, gpu_hour_price->currency};
  for (UtcMillis t = from; t < to;) {
    // The end of this local hour, or `to`.
    const UtcMillis end = std::min(price_zone.NextHourStart(t), to);
    total.amount += GpuHourPriceAt(t)->amount * static_cast<double>((end - t).count()) / kMillisecondsPerHour;
    t = end;
  }
  return total;
}

std::vector<Alert> AlertEngine::ObserveState(const AlertGpuState& st) {
  std::vector<Alert> out;
  const UtcMillis now = st.time;
  const std::string gpu = "GPU " + std::to_string(st.gpu);
  auto add = [&out](std::vector<Alert> a) {
    for (auto& x : a) {
      out.push_back(std::move(x));
    }
  };

  // Billed with no process.
  {
    Alert a;
    a.kind = AlertKind::kIdleNoProcess;
    a.gpu = st.gpu;
    a.severity = "warning";
    a.money_per_hour = rules_.GpuHourPriceAt(now);
    auto v = Track(conditions_[{st.gpu, a.kind}], st.idle_no_process, now, rules_.idle_minutes, a);
    for (auto& x : v) {
      if (x.money_per_hour) {
        // Each hour of the idle stretch at its own price (a night window halves some of them).
        x.money = rules_.GpuMoneyBetween(x.since, x.at);
      }
      x.summary = gpu + ": billed with no process for " + FormatMinutes(x.minutes) + ", " + PerHour(x.money_per_hour) +
                  (x.money ? " (" + FormatMoney(*x.money) + " so far)" : "");
    }
    add(std::move(v));
  }
  // Held by a process but barely used.
  {
    Alert a;
    a.kind = AlertKind::kLowUtilization;
    a.gpu = st.gpu;
    a.severity = "warning";
    a.money_per_hour = rules_.GpuHourPriceAt(now);
    auto v = Track(conditions_[{st.gpu, a.kind}], st.low_utilization, now, rules_.low_util_minutes, a);
    for (auto& x : v) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%g%%", rules_.low_util_percent);
      x.summary = gpu + ": under " + pct + " utilisation for " + FormatMinutes(x.minutes) + " with " +
                  std::to_string(st.processes) + (st.processes == 1 ? " process" : " processes") + ", " +
                  PerHour(x.money_per_hour);
    }
    add(std::move(v));
  }
  // Throttled while busy.
  {
    Alert a;
    a.kind = AlertKind::kThrottling;
    a.gpu = st.gpu;
    a.severity = "warning";
    const uint64_t bits = st.throttle_reasons & kThrottleBits;
    auto v = Track(conditions_[{st.gpu, a.kind}], bits != 0, now, rules_.throttle_minutes, a);
    for (auto& x : v) {
      std::string why;
      const std::pair<uint64_t, const char*> names[] = {{kClockEventHwSlowdown, "hardware slowdown"},
                                                        {kClockEventSwThermal, "software thermal"},
                                                        {kClockEventHwThermal, "hardware thermal"},
                                                        {kClockEventHwPowerBrake, "power brake"}};
      for (const auto& [bit, name] : names) {
        if (bits & bit) {
          why += (why.empty() ? "" : ", ") + std::string(name);
        }
      }
      x.summary = gpu + ": clocks held back (" + why + ") for " + FormatMinutes(x.minutes) + " while busy" +
                  (st.temperature ? ", " + std::to_string(*st.temperature) + " C" : "");
    }
    add(std::move(v));
  }
  return out;
}

std::vector<std::pair<int, UtcMillis>> AlertEngine::Holding() const {
  std::vector<std::pair<int, UtcMillis>> out;
  for (const auto& [key, c] : conditions_) {
    if (c.since) {
      out.emplace_back(std::get<0>(key), *c.since);
    }
  }
  return out;
}

bool AlertEngine::Holds(AlertKind kind, int gpu, UtcMillis since) const {
  const auto c = conditions_.find(std::make_tuple(gpu, kind));
  return c != conditions_.end() && c->second.since == since;
}

std::vector<Alert> AlertEngine::ObserveGpu(const AlertGpuTick& t) {
  std::vector<Alert> out = ObserveState(StateOf(t));
  const GpuSample& s = t.sample;
  const UtcMillis now = s.time;
  const std::string gpu = "GPU " + std::to_string(s.gpu);
  // Health events alert at once, each time.
  if (t.ecc_uncorrected) {
    const auto it = ecc_seen_.find(s.gpu);
    if (it != ecc_seen_.end() && *t.ecc_uncorrected > it->second) {
      Alert a;
      a.kind = AlertKind::kEcc;
      a.gpu = s.gpu;
      a.severity = "critical";
      a.since = a.at = now;
      a.summary = gpu + ": uncorrected ECC errors rose from " + std::to_string(it->second) + " to " +
                  std::to_string(*t.ecc_uncorrected) + " (gpuplan check; ask the provider for a replacement)";
      out.push_back(std::move(a));
    }
    ecc_seen_[s.gpu] = *t.ecc_uncorrected;
  }
  for (int xid : t.xids) {
    Alert a;
    a.kind = AlertKind::kXid;
    a.gpu = s.gpu;
    a.severity = "critical";
    a.since = a.at = now;
    a.summary = gpu + ": XID " + std::to_string(xid) + " reported by the driver";
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<Alert> AlertEngine::ObserveBudget(UtcMillis time, const std::string& month, const Money& spent,
                                              const Money& projected) {
  std::vector<Alert> out;
  if (!rules_.monthly_budget || rules_.monthly_budget->amount <= 0) {
    return out;
  }
  const Money& budget = *rules_.monthly_budget;
  double& done = budget_alerted_[month];
  for (double f : rules_.budget_fractions) {
    if (f <= done || projected.amount < f * budget.amount) {
      continue;
    }
    done = f;
    Alert a;
    a.kind = AlertKind::kBudget;
    a.severity = f >= 1 ? "critical" : "warning";
    a.since = a.at = time;
    a.money = projected;
    char pct[32];
    std::snprintf(pct, sizeof pct, "%.0f%%", 100 * f);
    a.summary = "budget " + month + ": projected " + FormatMoney(projected) + " reaches " + pct + " of " +
                FormatMoney(budget) + " (spent so far " + FormatMoney(spent) + ")";
    out.push_back(std::move(a));
  }
  return out;
}

AlertRules AlertRulesFromYaml(const std::string& text, const std::string& file) {
  const YAML::Node root = ParseYamlText(text, file);
  if (!root.IsMap()) {
    throw InputError("expected a mapping with `rules:` and `webhooks:` (docs/meter-alerts.md)", file, YamlLine(root));
  }
  AlertRules r;
  const YamlMap top(root, "", file);
  top.Only({"rules", "webhooks"});
  const auto rules = top.Map("rules", "a mapping of rule: value");
  if (!rules) {
    return r;
  }
  constexpr double kWeek = 7 * 24 * 60;
  const char* known[] = {"idle_minutes",    "low_util_percent", "low_util_minutes", "throttle_minutes",
                         "repeat_minutes",  "gpu_hour_price",   "monthly_budget",   "currency",
                         "budget_fractions"};
  for (const auto& kv : root["rules"]) {
    if (!kv.first.IsScalar()) {  // `? {a: 1}: x`: a key that is a mapping or list
      throw InputError("a rule's name must be a plain word, not a mapping or list", file, YamlLine(kv.first), "rules");
    }
    const std::string key = kv.first.Scalar();
    bool ok = false;
    for (const char* k : known) {
      ok = ok || key == k;
    }
    if (!ok) {
      throw InputError("unknown rule '" + key + "' (docs/meter-alerts.md lists them)", file, YamlLine(kv.first),
                       "rules." + key);
    }
  }
  r.idle_minutes = rules->Num("idle_minutes", false, r.idle_minutes, 1, kWeek);
  r.low_util_percent = rules->Num("low_util_percent", false, r.low_util_percent, 0, 100);
  r.low_util_minutes = rules->Num("low_util_minutes", false, r.low_util_minutes, 1, kWeek);
  r.throttle_minutes = rules->Num("throttle_minutes", false, r.throttle_minutes, 0, kWeek);
  r.repeat_minutes = rules->Num("repeat_minutes", false, r.repeat_minutes, 1, kWeek);
  const std::string currency = rules->Str("currency", false, "CNY");
  if (const auto p = rules->Number("gpu_hour_price", false, 0, std::numeric_limits<double>::max())) {
    r.gpu_hour_price = Money{*p, currency};
  }
  if (const auto b = rules->Number("monthly_budget", false, 0, std::numeric_limits<double>::max())) {
    r.monthly_budget = Money{*b, currency};
  }
  if (rules->Has("budget_fractions")) {
    r.budget_fractions.clear();
    const YAML::Node list = rules->Node("budget_fractions");
    if (!list.IsSequence()) {
      rules->Fail("budget_fractions", "expected a list of fractions such as [0.8, 1.0]");
    }
    for (const auto& f : list) {
      double v = 0;
      try {
        v = f.as<double>();
      } catch (const YAML::Exception&) {
        throw InputError("expected a number", file, YamlLine(f), "rules.budget_fractions");
      }
      if (!(v > 0 && v <= 10)) {
        throw InputError("a fraction of the budget must be in (0, 10]", file, YamlLine(f), "rules.budget_fractions");
      }
      r.budget_fractions.push_back(v);
    }
    std::sort(r.budget_fractions.begin(), r.budget_fractions.end());
  }
  return r;
}

namespace {

int SeverityRank(const std::string& s) { return s == "critical" ? 2 : s == "warning" ? 1 : 0; }

}  // namespace

bool SendAndUpdate(const Alert& a, IncidentState& s) {
  const int rank = SeverityRank(a.severity);
  bool send = !s.seen || rank > s.rank;
  if (s.seen && (a.kind == AlertKind::kIdleNoProcess || a.kind == AlertKind::kLowUtilization)) {
    for (const double mark : {240.0, 1440.0}) {
      send = send || (s.minutes < mark && a.minutes >= mark);
    }
  }
  s.seen = true;
  s.rank = std::max(s.rank, rank);
  s.minutes = std::max(s.minutes, a.minutes);
  return send;
}

namespace {

AlertNotification Notification(const std::string& type, const Alert& a) {
  AlertNotification n;
  n.type = type;
  n.at = a.at;
  n.kind = a.kind;
  n.gpu = a.gpu;
  n.since = a.since;
  n.severity = a.severity;
  n.minutes = a.minutes;
  n.money = a.money;
  n.summary = a.summary;
  return n;
}

bool UseKind(AlertKind k) { return k == AlertKind::kIdleNoProcess || k == AlertKind::kLowUtilization; }

}  // namespace

AlertNotification IncidentEnd(const Alert& first, const Alert& last, UtcMillis end, bool exact,
                              const AlertRules& rules, const Zone& zone) {
  AlertNotification n = Notification("end", last);
  n.at = end;
  if (exact) {
    n.minutes = static_cast<double>((end - first.since).count()) / 60000.0;
    if (const auto m = rules.GpuMoneyBetween(first.since, end)) {
      n.money = m;
    }
  }
  const std::string at = FormatZonedMinute(zone, end);
  const std::string what = first.kind == AlertKind::kIdleNoProcess ? "billed with no process" : "low utilisation";
  const std::string where = last.gpu >= 0 ? fmt::format("GPU {}", last.gpu) : "machine";
  n.summary = exact ? fmt::format("{}: {} ended at {} after {}{}", where, what, at, FormatMinutes(n.minutes),
                                  n.money ? ", " + FormatMoney(*n.money) + " lost" : std::string())
                    : fmt::format("{}: {} ended by {} after at least {}{}", where, what, at, FormatMinutes(n.minutes),
                                  n.money ? ", at least " + FormatMoney(*n.money) + " lost" : std::string());
  return n;
}

AlertNotification DayDigest(LocalDay day, const std::vector<const Alert*>& list, UtcMillis at) {
  std::map<std::tuple<int, int, UtcMillis>, const Alert*> latest;
  int started = 0;
  for (const Alert* a : list) {
    auto& l = latest[std::make_tuple(static_cast<int>(a->kind), a->gpu, a->since)];
    if (l == nullptr || a->at > l->at) {
      l = a;
    }
    started += a->repeat ? 0 : 1;
  }
  std::optional<Money> lost;
  for (const auto& [k, a] : latest) {
    if (a->money && UseKind(a->kind)) {
      lost = Money{(lost ? lost->amount : 0.0) + a->money->amount, a->money->currency};
    }
  }
  AlertNotification d;
  d.type = "digest";
  d.at = at;
  d.money = lost;
  d.summary = fmt::format("digest {}: {} incident{} with alerts, {} new{}", FormatLocalHour(LocalHour{day}).substr(0, 10),
                          latest.size(), latest.size() == 1 ? "" : "s", started,
                          lost ? ", " + FormatMoney(*lost) + " lost to idle and low use so far" : std::string());
  return d;
}

Alert NoticeAlert(const AlertNotification& n) {
  Alert a;
  a.kind = n.kind.value_or(AlertKind::kBudget);
  a.gpu = n.gpu;
  a.since = n.since;
  a.at = n.at;
  a.minutes = n.minutes;
  a.money = n.money;
  a.severity = n.type == "digest" ? "info" : n.severity;
  a.summary = n.summary;
  a.notice = n.type;
  return a;
}

std::vector<AlertNotification> GroupAlertNotifications(const std::vector<Alert>& alerts, UtcMillis to,
                                                       const AlertRules& rules, const Zone& zone) {
  std::map<std::tuple<int, int, UtcMillis>, std::vector<const Alert*>> incidents;
  std::vector<std::tuple<int, int, UtcMillis>> order;
  for (const Alert& a : alerts) {
    const auto key = std::make_tuple(static_cast<int>(a.kind), a.gpu, a.since);
    if (incidents.count(key) == 0) {
      order.push_back(key);
    }
    incidents[key].push_back(&a);
  }
  std::vector<AlertNotification> out;
  const std::chrono::milliseconds repeat{static_cast<int64_t>(rules.repeat_minutes * 60000.0)};
  for (const auto& key : order) {
    auto& list = incidents[key];
    std::stable_sort(list.begin(), list.end(), [](const Alert* x, const Alert* y) { return x->at < y->at; });
    IncidentState state;
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (SendAndUpdate(*list[i], state)) {
        out.push_back(Notification(i == 0 ? "start" : "escalation", *list[i]));
      }
    }
    const Alert& last = *list.back();
    // A condition still held would have been reminded again by last + repeat: if that is before
    // `to`, it cleared in between (the budget and one-off events have no reminders: no end).
    if (UseKind(list.front()->kind) && repeat.count() > 0 && last.at + repeat <= to) {
      out.push_back(IncidentEnd(*list.front(), last, last.at + repeat, /*exact=*/false, rules, zone));
    }
  }
  // A digest at the end of each local day that saw an alert: incidents open, new, and the money
  // lost so far by the incidents of the day (their latest figure by the day's end).
  std::map<LocalDay, std::vector<const Alert*>> by_day;
  for (const Alert& a : alerts) {
    by_day[zone.LocalDayOf(a.at)].push_back(&a);
  }
  for (const auto& [day, list] : by_day) {
    const UtcMillis day_end = zone.StartOf(day + date::days{1});
    out.push_back(DayDigest(day, list, std::min(day_end, to)));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const AlertNotification& a, const AlertNotification& b) { return a.at < b.at; });
  return out;
}

nlohmann::json AlertFieldsJson(const Alert& a) {
  using nlohmann::json;
  return {{"kind", ToString(a.kind)},
          {"severity", a.severity},
          {"gpu", a.gpu >= 0 ? json(a.gpu) : json(nullptr)},
          {"since_ms", UnixMillis(a.since)},
          {"at_ms", UnixMillis(a.at)},
          {"minutes", a.minutes},
          {"money_per_hour", MoneyToJson(a.money_per_hour)},
          {"money", MoneyToJson(a.money)},
          {"summary", a.summary},
          {"repeat", a.repeat}};
}

}  // namespace gpuplan
