#include "plan/workload.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.h"
#include "fit/fit_options.h"
#include "read/file_text.h"
#include "read/time_text.h"
#include "read/yaml_fields.h"

namespace gpuplan {
namespace {

constexpr int64_t kMaxPlanMonths = 36;
constexpr int64_t kMaxPlanGpus = 100000;

// Keys of fit's options the plan decides itself: a job names what it runs, the plan where.
const std::vector<std::string>& PlanDecides() {
  static const std::vector<std::string> keys = {"gpu", "gpus", "max_gpus", "offers", "start", "objective", "top"};
  return keys;
}

// A YAML scalar as the option kind wants it (the API's JSON types, here from YAML text).
OptionValue ValueOf(const YAML::Node& v, OptionKind kind, const YamlMap& m, const std::string& key) {
  try {
    switch (kind) {
      case OptionKind::kInt:
        if (!v.IsScalar()) break;
        return v.as<int64_t>();
      case OptionKind::kDouble:
        if (!v.IsScalar()) break;
        return v.as<double>();
      case OptionKind::kString:
        if (!v.IsScalar()) break;
        return v.Scalar();
      case OptionKind::kFlag:
        if (!v.IsScalar()) break;
        return v.as<bool>();
      case OptionKind::kStrings: {
        if (v.IsScalar()) return std::vector<std::string>{v.Scalar()};
        if (!v.IsSequence()) break;
        std::vector<std::string> out;
        for (const auto& x : v) {
          if (!x.IsScalar()) m.Fail(key, "must be a list of words");
          out.push_back(x.Scalar());
        }
        return out;
      }
    }
  } catch (const YAML::Exception&) {
  }
  const char* want = kind == OptionKind::kInt      ? "a whole number"
                     : kind == OptionKind::kDouble ? "a number"
                     : kind == OptionKind::kFlag   ? "true or false"
                     : kind == OptionKind::kStrings ? "a list of words"
                                                   : "a word";
  m.Fail(key, std::string("must be ") + want);
}

// The job's fit options: every key of the mapping but the plan's own, through fit's options table
// (its kinds, bounds and choices), as POST /api/fit reads a request.
FitRequest ReadFitKeys(const YamlMap& m, const YAML::Node& node, const std::vector<std::string>& own) {
  FitRequest r;
  std::vector<std::string> known = own;
  for (const auto& o : FitOptionTable()) {
    if (std::find(PlanDecides().begin(), PlanDecides().end(), o.key) == PlanDecides().end()) {
      known.push_back(o.key);
    }
  }
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) {
      continue;  // Only() below names it
    }
    const std::string key = kv.first.Scalar();
    if (std::find(PlanDecides().begin(), PlanDecides().end(), key) != PlanDecides().end()) {
      throw InputError("'" + key + "' is the plan's to choose (the card, the count, the start); a job names what it runs",
                       m.file(), YamlLine(kv.first), m.path() + key);
    }
  }
  m.Only(known);
  std::vector<std::string> given;
  for (const auto& o : FitOptionTable()) {
    if (!m.Has(o.key)) {
      continue;
    }
    const YAML::Node v = m.Node(o.key);
    o.set(r, ValueOf(v, o.kind, m, o.key));
    try {
      CheckOptionValue(o.check, o.get(r), o.key);
    } catch (const InputError& e) {
      throw InputError(e.message(), m.file(), YamlLine(v), m.path() + o.key, e.suggestions());
    }
    given.push_back(o.key);
  }
  MarkGivenFitOptions(r, [&given](const std::string& k) { return std::find(given.begin(), given.end(), k) != given.end(); });
  return r;
}

LocalDay Day(const YamlMap& m, const std::string& key) {
  const std::string s = m.Str(key, true);
  const auto d = ParseIsoDay(s);
  if (!d) {
    m.Fail(key, "'" + s + "' is not a day (YYYY-MM-DD)");
  }
  return *d;
}

LocalDay MonthOf(LocalDay d) {
  const date::year_month_day ymd{d};
  return LocalDay{ymd.year() / ymd.month() / date::day{1}};
}

}  // namespace

double PlanService::QpsAt(int hour_of_day) const {
  return qps_by_hour ? (*qps_by_hour)[static_cast<std::size_t>(hour_of_day)] : fit.qps;
}

double PlanService::PeakQps() const {
  return qps_by_hour ? *std::max_element(qps_by_hour->begin(), qps_by_hour->end()) : fit.qps;
}

std::vector<LocalDay> PlanWorkload::Months() const {
  std::vector<LocalDay> out;
  for (date::year_month ym{date::year_month_day{first_month}.year(), date::year_month_day{first_month}.month()};
       LocalDay{ym / date::day{1}} <= last_month; ym += date::months{1}) {
    out.push_back(LocalDay{ym / date::day{1}});
  }
  return out;
}

PlanWorkload ParseWorkload(const std::string& yaml_text, const std::string& file) {
  const YAML::Node root = ParseYamlText(yaml_text, file);
  if (!root.IsMap()) {
    throw InputError("a workload file is a mapping with months, training, serving and limits (docs/plan.md §1)", file, 1);
  }
  const YamlMap top(root, "", file);
  top.Only({"currency", "months", "training", "serving", "limits"});
  PlanWorkload w;
  w.file = file;
  w.currency = top.Str("currency", false, "CNY");
  const std::string months = top.Str("months", true);
  const auto dots = months.find("..");
  const auto first = ParseYearMonth(months.substr(0, dots));
  const auto last = dots == std::string::npos ? first : ParseYearMonth(months.substr(dots + 2));
  if (!first || !last) {
    top.Fail("months", "'" + months + "' is not a month range (YYYY-MM..YYYY-MM, or one YYYY-MM)");
  }
  w.first_month = date::floor<date::days>(*first);
  w.last_month = date::floor<date::days>(*last);
  if (w.last_month < w.first_month) {
    top.Fail("months", "the range ends before it starts: " + months);
  }
  if (static_cast<int64_t>(w.Months().size()) > kMaxPlanMonths) {
    top.Fail("months", fmt::format("{} months; a plan covers at most {}", w.Months().size(), kMaxPlanMonths));
  }
  const LocalDay plan_end = LocalDay{date::year_month_day{w.last_month}.year() /
                                     date::year_month_day{w.last_month}.month() / date::last} + date::days{1};
  std::set<std::string> ids;
  const auto take_id = [&](const YamlMap& m) {
    const std::string id = m.Str("id", true);
    if (!ids.insert(id).second) {
      m.Fail("id", "'" + id + "' names two jobs or services; each needs its own id");
    }
    return id;
  };
  if (const YAML::Node t = root["training"]; t && !t.IsNull()) {
    if (!t.IsSequence()) {
      throw InputError("training must be a list of jobs", file, YamlLine(t), "training");
    }
    for (std::size_t i = 0; i < t.size(); ++i) {
      const std::string path = "training[" + std::to_string(i) + "].";
      if (!t[i].IsMap()) {
        throw InputError("a training job is a mapping (id, model, task, tokens, ...)", file, YamlLine(t[i]), path);
      }
      const YamlMap m(t[i], path, file);
      PlanTrainingJob j;
      j.line = m.line();
      j.id = take_id(m);
      const YamlMap named(t[i], "training[" + j.id + "].", file);
      j.fit = ReadFitKeys(named, t[i], {"id", "every", "window"});
      if (!named.Has("model")) {
        named.Fail("model", "missing: the model the job trains (a preset, an HF id or a config path)");
      }
      if (!named.Has("task") || !IsTraining(ParseTask(j.fit.task))) {
        named.Fail("task", "a training job's task is pretrain, full, lora or qlora");
      }
      if (!(j.fit.tokens > 0) && !(j.fit.epochs > 0 && j.fit.dataset_tokens > 0)) {
        named.Fail("tokens", "missing: the tokens the job trains on (tokens, or epochs with dataset_tokens)");
      }
      const std::string every = named.Str("every", false, "once");
      if (every != "once" && every != "month") {
        named.Fail("every", "'" + every + "': once or month");
      }
      j.every = every == "month" ? JobRepeat::kMonth : JobRepeat::kOnce;
      j.interruptible = j.fit.interruptible;
      if (const auto win = named.Map("window", "a mapping {from: YYYY-MM-DD, to: YYYY-MM-DD}")) {
        win->Only({"from", "to"});
        j.window_from = Day(*win, "from");
        j.window_to = Day(*win, "to");
        if (*j.window_to < *j.window_from) {
          win->Fail("to", "the window ends before it starts");
        }
        if (*j.window_from < w.first_month || *j.window_to >= plan_end) {
          win->Fail("from", "the window lies outside the plan's months (" + months + ")");
        }
        if (j.every == JobRepeat::kMonth && MonthOf(*j.window_from) != MonthOf(*j.window_to)) {
          win->Fail("to", "a monthly job's window lies within one month (its days repeat every month)");
        }
      }
      w.training.push_back(std::move(j));
    }
  }
  if (const YAML::Node s = root["serving"]; s && !s.IsNull()) {
    if (!s.IsSequence()) {
      throw InputError("serving must be a list of services", file, YamlLine(s), "serving");
    }
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::string path = "serving[" + std::to_string(i) + "].";
      if (!s[i].IsMap()) {
        throw InputError("a service is a mapping (id, model, qps, ...)", file, YamlLine(s[i]), path);
      }
      const YamlMap m(s[i], path, file);
      PlanService v;
      v.line = m.line();
      v.id = take_id(m);
      const YamlMap named(s[i], "serving[" + v.id + "].", file);
      v.fit = ReadFitKeys(named, s[i], {"id", "qps_by_hour"});
      v.fit.task = "infer";
      if (!named.Has("model")) {
        named.Fail("model", "missing: the model the service runs");
      }
      if (named.Has("task") && named.Str("task", false) != "infer") {
        named.Fail("task", "a service's task is infer (leave it out)");
      }
      if (named.Has("qps_by_hour")) {
        if (named.Has("qps")) {
          named.Fail("qps_by_hour", "give qps or qps_by_hour, not both");
        }
        const YAML::Node q = named.Node("qps_by_hour");
        if (!q.IsSequence() || q.size() != 24) {
          named.Fail("qps_by_hour", "must be 24 numbers, one per hour of the day from 00:00");
        }
        std::array<double, 24> by{};
        for (std::size_t h = 0; h < 24; ++h) {
          try {
            by[h] = q[h].as<double>();
          } catch (const YAML::Exception&) {
            throw InputError("must be a number", file, YamlLine(q[h]), named.path() + "qps_by_hour[" + std::to_string(h) + "]");
          }
          if (!(by[h] >= 0 && by[h] <= 1e6)) {
            throw InputError("must be in [0, 1000000] requests per second", file, YamlLine(q[h]),
                             named.path() + "qps_by_hour[" + std::to_string(h) + "]");
          }
        }
        v.qps_by_hour = by;
      }
      if (!(v.PeakQps() > 0)) {
        named.Fail(named.Has("qps_by_hour") ? "qps_by_hour" : "qps", "a service needs a request rate above 0");
      }
      w.serving.push_back(std::move(v));
    }
  }
  if (w.training.empty() && w.serving.empty()) {
    top.Fail("training", "the workload has no training job and no service: nothing to plan");
  }
  if (const auto lim = top.Map("limits", "a mapping {budget_per_month, max_gpus, providers}")) {
    lim->Only({"budget_per_month", "max_gpus", "providers"});
    w.limits.budget_per_month = lim->Number("budget_per_month", false, 0, 1e12);
    if (lim->Has("max_gpus")) {
      w.limits.max_gpus = lim->Count("max_gpus", false, 0, 1, kMaxPlanGpus);
    }
    w.limits.providers = lim->Strings("providers");
  }
  return w;
}

PlanWorkload LoadWorkload(const std::string& path) { return ParseWorkload(ReadFileText(path), path); }

}  // namespace gpuplan
