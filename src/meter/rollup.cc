// The meter store's roll-up arithmetic (rollup.h), and the public arithmetic of store.h's rows:
// GpuRollup's and ProcessUse's means, MergeRollup. No SQLite here.
#include "meter/rollup.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace gpuplan {

std::optional<double> GpuRollup::UtilizationGpuMean() const {
  return rollup::MeanOf(utilization_gpu_sum, utilization_gpu_n);
}
std::optional<double> GpuRollup::UtilizationMemoryMean() const {
  return rollup::MeanOf(utilization_memory_sum, utilization_memory_n);
}
std::optional<double> GpuRollup::MemoryUsedMean() const { return rollup::MeanOf(memory_used_sum, memory_used_n); }
std::optional<double> GpuRollup::PowerMean() const {
  return rollup::MeanOf(power_sum_mw, power_n, static_cast<double>(rollup::kMilliwattsPerWatt));
}
std::optional<double> ProcessUse::GpuMemoryMean() const { return rollup::MeanOf(gpu_memory_sum, gpu_memory_n); }

void MergeRollup(GpuRollup& into, const GpuRollup& more) {
  using rollup::KeepMax;
  using rollup::KeepMin;
  into.samples += more.samples;
  into.observed += more.observed;
  into.busy += more.busy;
  into.active += more.active;
  into.utilization_gpu_n += more.utilization_gpu_n;
  into.utilization_gpu_sum = rollup::SaturatingAdd(into.utilization_gpu_sum, more.utilization_gpu_sum);
  KeepMin(into.utilization_gpu_min, more.utilization_gpu_min);
  KeepMax(into.utilization_gpu_max, more.utilization_gpu_max);
  into.utilization_memory_n += more.utilization_memory_n;
  into.utilization_memory_sum = rollup::SaturatingAdd(into.utilization_memory_sum, more.utilization_memory_sum);
  into.memory_used_n += more.memory_used_n;
  into.memory_used_sum = rollup::SaturatingAdd(into.memory_used_sum, more.memory_used_sum);
  KeepMax(into.memory_used_max, more.memory_used_max);
  KeepMax(into.memory_total, more.memory_total);
  into.power_n += more.power_n;
  into.power_sum_mw = rollup::SaturatingAdd(into.power_sum_mw, more.power_sum_mw);
  KeepMax(into.power_max_mw, more.power_max_mw);
  if (more.energy_mj) {
    into.energy_mj = rollup::SaturatingAdd(into.energy_mj.value_or(0), *more.energy_mj);
  }
  KeepMax(into.temperature_max, more.temperature_max);
  into.clock_event_reasons |= more.clock_event_reasons;
  if (more.uuid) {
    into.uuid = more.uuid;
  }
}

namespace rollup {

std::optional<UtcMillis> Later(std::optional<UtcMillis> a, std::optional<UtcMillis> b) {
  if (!a) {
    return b;
  }
  return b ? std::max(*a, *b) : a;
}

std::optional<UtcMillis> Earlier(std::optional<UtcMillis> a, std::optional<UtcMillis> b) {
  if (!a) {
    return b;
  }
  if (!b) {
    return a;
  }
  return std::min(*a, *b);
}

std::optional<double> MeanOf(int64_t sum, int64_t n, double scale) {
  if (n <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(sum) / static_cast<double>(n) / scale;
}

GpuRow RowOf(const GpuSample& s, std::optional<int64_t> device_id) {
  GpuRow r;
  r.time = s.time;
  r.gpu = s.gpu;
  r.device_id = device_id;
  r.util_gpu = s.utilization_gpu;
  r.util_mem = s.utilization_memory;
  r.mem_used = s.memory_used;
  r.mem_total = s.memory_total;
  if (s.power) {
    r.power_mw = static_cast<int64_t>(std::llround(*s.power * kMilliwattsPerWatt));
  }
  r.energy_mj = s.energy_mj;
  r.temp_c = s.temperature;
  r.sm_clock_mhz = s.sm_clock;
  r.clock_events = s.clock_event_reasons;
  return r;
}

GpuSample SampleOf(const GpuRow& r, std::optional<std::string> uuid) {
  GpuSample s;
  s.time = r.time;
  s.gpu = r.gpu;
  s.uuid = std::move(uuid);
  s.utilization_gpu = r.util_gpu;
  s.utilization_memory = r.util_mem;
  s.memory_used = r.mem_used;
  s.memory_total = r.mem_total;
  if (r.power_mw) {
    s.power = static_cast<double>(*r.power_mw) / kMilliwattsPerWatt;
  }
  s.energy_mj = r.energy_mj;
  s.temperature = r.temp_c;
  s.sm_clock = r.sm_clock_mhz;
  s.clock_event_reasons = r.clock_events;
  return s;
}

std::chrono::milliseconds Interval(std::optional<UtcMillis> previous, UtcMillis time, const IntervalRules& rules) {
  return previous && time - *previous <= rules.max_gap ? time - *previous : rules.nominal;
}

GpuStep StepOf(const std::optional<GpuPrevious>& previous, const GpuRow& s, const IntervalRules& rules) {
  GpuStep step;
  step.dt = rules.nominal;
  if (s.energy_mj) {
    step.energy_mj = 0;
  }
  if (previous && s.time - previous->time <= rules.max_gap) {
    step.dt = s.time - previous->time;
    if (s.energy_mj && previous->energy_mj) {
      // A counter that went down was reset (driver reload): it counted from 0 since.
      step.energy_mj = *s.energy_mj >= *previous->energy_mj ? *s.energy_mj - *previous->energy_mj : *s.energy_mj;
    }
  }
  return step;
}

void AddSample(GpuAcc& a, const GpuRow& s, std::chrono::milliseconds dt, std::optional<uint64_t> energy_delta,
               bool busy) {
  GpuRollup& r = a.r;
  const bool active = s.util_gpu && *s.util_gpu > 0;
  r.samples += 1;
  r.observed += dt;
  r.busy += busy ? dt : std::chrono::milliseconds{0};
  r.active += active ? dt : std::chrono::milliseconds{0};
  if (s.util_gpu) {
    r.utilization_gpu_n += 1;
    r.utilization_gpu_sum = SaturatingAdd(r.utilization_gpu_sum, int64_t{*s.util_gpu});
    KeepMin(r.utilization_gpu_min, s.util_gpu);
    KeepMax(r.utilization_gpu_max, s.util_gpu);
  }
  if (s.util_mem) {
    r.utilization_memory_n += 1;
    r.utilization_memory_sum = SaturatingAdd(r.utilization_memory_sum, int64_t{*s.util_mem});
  }
  if (s.mem_used) {
    r.memory_used_n += 1;
    r.memory_used_sum = SaturatingAddBytes(r.memory_used_sum, *s.mem_used);
    KeepMax(r.memory_used_max, s.mem_used);
  }
  KeepMax(r.memory_total, s.mem_total);
  if (s.power_mw) {
    r.power_n += 1;
    r.power_sum_mw = SaturatingAdd(r.power_sum_mw, *s.power_mw);
    KeepMax(r.power_max_mw, s.power_mw);
  }
  if (energy_delta) {
    r.energy_mj = SaturatingAdd(r.energy_mj.value_or(0), *energy_delta);
  }
  KeepMax(r.temperature_max, s.temp_c);
  r.clock_event_reasons |= s.clock_events.value_or(0);
  if (s.device_id) {
    a.device_id = s.device_id;
  }
}

void MergeAcc(GpuAcc& into, const GpuAcc& more) {
  MergeRollup(into.r, more.r);
  if (more.device_id) {
    into.device_id = more.device_id;
  }
}

void MergeProcess(ProcessAcc& into, const ProcessAcc& more) {
  into.first = std::min(into.first, more.first);
  into.last = std::max(into.last, more.last);
  into.samples += more.samples;
  into.observed += more.observed;
  into.mem_n += more.mem_n;
  into.mem_sum = SaturatingAdd(into.mem_sum, more.mem_sum);
  KeepMax(into.mem_max, more.mem_max);
}

void MergeUse(ProcessUse& into, const ProcessUse& more) {
  into.from = std::min(into.from, more.from);
  into.to = std::max(into.to, more.to);
  into.samples += more.samples;
  into.observed += more.observed;
  into.gpu_memory_n += more.gpu_memory_n;
  into.gpu_memory_sum = SaturatingAdd(into.gpu_memory_sum, more.gpu_memory_sum);
  KeepMax(into.gpu_memory_max, more.gpu_memory_max);
}

ProcessUse UseOf(const ProcessAcc& a, const ProcessIdentity& who) {
  ProcessUse u;
  static_cast<ProcessIdentity&>(u) = who;
  u.gpu = a.gpu;
  u.from = a.first;
  u.to = a.last;
  u.samples = a.samples;
  u.observed = a.observed;
  u.gpu_memory_n = a.mem_n;
  u.gpu_memory_sum = a.mem_sum;
  u.gpu_memory_max = a.mem_max;
  return u;
}

void ProcessPresence::Add(int gpu, UtcMillis time) { times_[gpu].push_back(time); }

bool ProcessPresence::Any(int gpu, UtcMillis after, UtcMillis upto) const {
  auto it = times_.find(gpu);
  if (it == times_.end()) {
    return false;
  }
  auto t = std::upper_bound(it->second.begin(), it->second.end(), after);
  return t != it->second.end() && *t <= upto;
}

void GpuRollupBuilder::Add(const GpuRow& s) {
  std::optional<GpuPrevious>& previous = previous_[s.gpu];
  const GpuStep step = StepOf(previous, s, rules_);
  const bool active = s.util_gpu && *s.util_gpu > 0;
  const bool busy = active || presence_.Any(s.gpu, s.time - step.dt, s.time);
  GpuAcc* acc = nullptr;
  if (bucketing_.width == kPerSample) {
    acc = &out_.gpu_rows.emplace_back();
  } else {
    acc = &out_.gpus.try_emplace(GpuKey{bucketing_.BucketOf(s.time), s.gpu}).first->second;
  }
  if (acc->r.samples == 0) {
    acc->r.bucket = bucketing_.BucketOf(s.time);
    acc->r.width = bucketing_.RowWidth();
    acc->r.gpu = s.gpu;
  }
  AddSample(*acc, s, step.dt, step.energy_mj, busy);
  previous = GpuPrevious{s.time, s.energy_mj};
}

void ProcessRollupBuilder::Add(UtcMillis time, int gpu, int64_t process_id, std::optional<uint64_t> gpu_memory) {
  std::optional<UtcMillis>& previous = previous_[{gpu, process_id}];
  const std::chrono::milliseconds dt = Interval(previous, time, rules_);
  previous = time;
  ProcessAcc* acc = nullptr;
  if (bucketing_.width == kPerSample) {
    acc = &out_.process_rows.emplace_back();
  } else {
    acc = &out_.processes.try_emplace(ProcessKey{bucketing_.BucketOf(time), gpu, process_id}).first->second;
  }
  ProcessAcc& a = *acc;
  if (a.samples == 0) {
    a.bucket = bucketing_.BucketOf(time);
    a.gpu = gpu;
    a.process_id = process_id;
    a.first = time;
  }
  a.last = time;
  a.samples += 1;
  a.observed += dt;
  if (gpu_memory) {
    a.mem_n += 1;
    a.mem_sum = SaturatingAddBytes(a.mem_sum, *gpu_memory);
    KeepMax(a.mem_max, gpu_memory);
  }
}

void AddMinuteToHour(std::map<GpuKey, GpuAcc>& hours, const GpuAcc& minute) {
  const GpuKey key{FloorHour(minute.r.bucket), minute.r.gpu};
  auto [it, inserted] = hours.try_emplace(key, minute);
  if (inserted) {
    it->second.r.bucket = key.first;
    it->second.r.width = std::chrono::hours{1};
  } else {
    MergeAcc(it->second, minute);
  }
}

void AddMinuteToHour(std::map<ProcessKey, ProcessAcc>& hours, const ProcessAcc& minute) {
  const ProcessKey key{FloorHour(minute.bucket), minute.gpu, minute.process_id};
  auto [it, inserted] = hours.try_emplace(key, minute);
  if (inserted) {
    it->second.bucket = std::get<0>(key);
  } else {
    MergeProcess(it->second, minute);
  }
}

}  // namespace rollup
}  // namespace gpuplan
