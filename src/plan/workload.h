// What a team will run over the next months (`gpuplan plan WORKLOAD`, docs/plan.md §1): training
// jobs with their token budgets and windows, services with their request rates, and the limits
// of the plan. Each job's model, task and options are fit's (the keys of `POST /api/fit`, read
// through fit's options table with its bounds); the plan's own keys are id, every, window and
// qps_by_hour.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "fit/fit_request.h"

namespace gpuplan {

enum class JobRepeat { kOnce, kMonth };

struct PlanTrainingJob {
  std::string id;
  int line = 0;
  FitRequest fit;           // model, task, tokens, framework, seq, ... (gpu and gpus left to the plan)
  JobRepeat every = JobRepeat::kOnce;
  // The days it may run, both included (`window: {from, to}`); unset: any time in its month
  // (a job run once: the plan's first month).
  std::optional<LocalDay> window_from, window_to;
  bool interruptible = false;  // may run on spot (it checkpoints)
};

struct PlanService {
  std::string id;
  int line = 0;
  FitRequest fit;  // model, framework, prompt_tokens, output_tokens, latency_ms, qps, ...
  // Requests per second at each hour of the day (the day's shape); unset: fit.qps all day.
  std::optional<std::array<double, 24>> qps_by_hour;
  double QpsAt(int hour_of_day) const;
  double PeakQps() const;
};

struct PlanLimits {
  std::optional<double> budget_per_month;  // in the workload's currency
  std::optional<int64_t> max_gpus;         // GPUs held at once over the whole plan
  std::vector<std::string> providers;      // empty: every provider of the offers
};

struct PlanWorkload {
  std::string file;
  std::string currency = "CNY";
  LocalDay first_month{};  // the 1st of the first month
  LocalDay last_month{};   // the 1st of the last month (included)
  std::vector<PlanTrainingJob> training;
  std::vector<PlanService> serving;
  PlanLimits limits;
  // The 1st of every month of the plan, in order.
  std::vector<LocalDay> Months() const;
};

// Throws InputError naming the file, line and field (an unknown key, a value out of bounds, a
// window outside the months, a job id given twice, ...).
PlanWorkload ParseWorkload(const std::string& yaml_text, const std::string& file);
PlanWorkload LoadWorkload(const std::string& path);

}  // namespace gpuplan
