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
  into.utilization_gpu_sum += more.utilization_gpu_sum;
  KeepMin(into.utilization_gpu_min, more.utilization_gpu_min);
  KeepMax(into.utilization_gpu_max, more.utilization_gpu_max);
  into.utilization_memory_n += more.utilization_memory_n;
  into.utilization_memory_sum += more.utilization_memory_sum;
  into.memory_used_n += more.memory_used_n;
  into.memory_used_sum += more.memory_used_sum;
  KeepMax(into.memory_used_max, more.memory_used_max);
  KeepMax(into.memory_total, more.memory_total);
  into.power_n += more.power_n;
  into.power_sum_mw += more.power_sum_mw;
  KeepMax(into.power_max_mw, more.power_max_mw);
  if (more.energy_mj) {
    into.energy_mj = into.energy_mj.value_or(0) + *more.energy_mj;
  }
  KeepMax(into.temperature_max, more.temperature_max);
  into.clock_event_reasons |= more.clock_event_reasons;
  if (more.uuid) {
    into.uuid = more.uuid;
  }
}

namespace rollup {

std::optional<int64_t> Later(std::optional<int64_t> a, std::optional<int64_t> b) {
  if (!a) {
    return b;
  }
  return b ? std::max(*a, *b) : a;
}

std::optional<int64_t> Earlier(std::optional<int64_t> a, std::optional<int64_t> b) {
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
  r.time_ms = UnixMillis(s.time);  // the stored column
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
  s.time = FromUnixMillis(r.time_ms);
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

int64_t IntervalMs(std::optional<int64_t> previous_ms, int64_t time_ms, const IntervalRules& rules) {
  return previous_ms && time_ms - *previous_ms <= rules.max_gap_ms ? time_ms - *previous_ms : rules.nominal_ms;
}

GpuStep StepOf(const std::optional<GpuPrevious>& previous, const GpuRow& s, const IntervalRules& rules) {
  GpuStep step;
  step.dt_ms = rules.nominal_ms;
  if (s.energy_mj) {
    step.energy_mj = 0;
  }
  if (previous && s.time_ms - previous->time_ms <= rules.max_gap_ms) {
    step.dt_ms = s.time_ms - previous->time_ms;
    if (s.energy_mj && previous->energy_mj) {
      // A counter that went down was reset (driver reload): it counted from 0 since.
      step.energy_mj = *s.energy_mj >= *previous->energy_mj ? *s.energy_mj - *previous->energy_mj : *s.energy_mj;
    }
  }
  return step;
}

void AddSample(GpuAcc& a, const GpuRow& s, int64_t dt_ms, std::optional<uint64_t> energy_delta, bool busy) {
  GpuRollup& r = a.r;
  const bool active = s.util_gpu && *s.util_gpu > 0;
  const std::chrono::milliseconds dt{dt_ms};
  r.samples += 1;
  r.observed += dt;
  r.busy += busy ? dt : std::chrono::milliseconds{0};
  r.active += active ? dt : std::chrono::milliseconds{0};
  if (s.util_gpu) {
    r.utilization_gpu_n += 1;
    r.utilization_gpu_sum += *s.util_gpu;
    KeepMin(r.utilization_gpu_min, s.util_gpu);
    KeepMax(r.utilization_gpu_max, s.util_gpu);
  }
  if (s.util_mem) {
    r.utilization_memory_n += 1;
    r.utilization_memory_sum += *s.util_mem;
  }
  if (s.mem_used) {
    r.memory_used_n += 1;
    r.memory_used_sum += AsInt64(*s.mem_used);
    KeepMax(r.memory_used_max, s.mem_used);
  }
  KeepMax(r.memory_total, s.mem_total);
  if (s.power_mw) {
    r.power_n += 1;
    r.power_sum_mw += *s.power_mw;
    KeepMax(r.power_max_mw, s.power_mw);
  }
  if (energy_delta) {
    r.energy_mj = r.energy_mj.value_or(0) + *energy_delta;
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
  into.first_ms = std::min(into.first_ms, more.first_ms);
  into.last_ms = std::max(into.last_ms, more.last_ms);
  into.samples += more.samples;
  into.observed_ms += more.observed_ms;
  into.mem_n += more.mem_n;
  into.mem_sum += more.mem_sum;
  KeepMax(into.mem_max, more.mem_max);
}

void MergeUse(ProcessUse& into, const ProcessUse& more) {
  into.from = std::min(into.from, more.from);
  into.to = std::max(into.to, more.to);
  into.samples += more.samples;
  into.observed += more.observed;
  into.gpu_memory_n += more.gpu_memory_n;
  into.gpu_memory_sum += more.gpu_memory_sum;
  KeepMax(into.gpu_memory_max, more.gpu_memory_max);
}

ProcessUse UseOf(const ProcessAcc& a, const ProcessIdentity& who) {
  ProcessUse u;
  static_cast<ProcessIdentity&>(u) = who;
  u.gpu = a.gpu;
  u.from = FromUnixMillis(a.first_ms);
  u.to = FromUnixMillis(a.last_ms);
  u.samples = a.samples;
  u.observed = std::chrono::milliseconds{a.observed_ms};
  u.gpu_memory_n = a.mem_n;
  u.gpu_memory_sum = a.mem_sum;
  u.gpu_memory_max = a.mem_max;
  return u;
}

void ProcessPresence::Add(int gpu, int64_t time_ms) { times_[gpu].push_back(time_ms); }

bool ProcessPresence::Any(int gpu, int64_t after_ms, int64_t upto_ms) const {
  auto it = times_.find(gpu);
  if (it == times_.end()) {
    return false;
  }
  auto t = std::upper_bound(it->second.begin(), it->second.end(), after_ms);
  return t != it->second.end() && *t <= upto_ms;
}

void GpuRollupBuilder::Add(const GpuRow& s) {
  std::optional<GpuPrevious>& previous = previous_[s.gpu];
  const GpuStep step = StepOf(previous, s, rules_);
  const bool active = s.util_gpu && *s.util_gpu > 0;
  const bool busy = active || presence_.Any(s.gpu, s.time_ms - step.dt_ms, s.time_ms);
  GpuAcc* acc = nullptr;
  if (bucketing_.width_ms == kPerSample) {
    acc = &out_.gpu_rows.emplace_back();
  } else {
    acc = &out_.gpus.try_emplace(GpuKey{bucketing_.BucketOf(s.time_ms), s.gpu}).first->second;
  }
  if (acc->r.samples == 0) {
    acc->r.bucket = FromUnixMillis(bucketing_.BucketOf(s.time_ms));
    acc->r.width = std::chrono::milliseconds{bucketing_.RowWidth()};
    acc->r.gpu = s.gpu;
  }
  AddSample(*acc, s, step.dt_ms, step.energy_mj, busy);
  previous = GpuPrevious{s.time_ms, s.energy_mj};
}

void ProcessRollupBuilder::Add(int64_t time_ms, int gpu, int64_t process_id, std::optional<uint64_t> gpu_memory) {
  std::optional<int64_t>& previous = previous_[{gpu, process_id}];
  const int64_t dt = IntervalMs(previous, time_ms, rules_);
  previous = time_ms;
  ProcessAcc* acc = nullptr;
  if (bucketing_.width_ms == kPerSample) {
    acc = &out_.process_rows.emplace_back();
  } else {
    acc = &out_.processes.try_emplace(ProcessKey{bucketing_.BucketOf(time_ms), gpu, process_id}).first->second;
  }
  ProcessAcc& a = *acc;
  if (a.samples == 0) {
    a.bucket_ms = bucketing_.BucketOf(time_ms);
    a.gpu = gpu;
    a.process_id = process_id;
    a.first_ms = time_ms;
  }
  a.last_ms = time_ms;
  a.samples += 1;
  a.observed_ms += dt;
  if (gpu_memory) {
    a.mem_n += 1;
    a.mem_sum += AsInt64(*gpu_memory);
    KeepMax(a.mem_max, gpu_memory);
  }
}

void AddMinuteToHour(std::map<GpuKey, GpuAcc>& hours, const GpuAcc& minute) {
  const GpuKey key{FloorTo(UnixMillis(minute.r.bucket), kMillisecondsPerHour), minute.r.gpu};
  auto [it, inserted] = hours.try_emplace(key, minute);
  if (inserted) {
    it->second.r.bucket = FromUnixMillis(key.first);
    it->second.r.width = std::chrono::hours{1};
  } else {
    MergeAcc(it->second, minute);
  }
}

void AddMinuteToHour(std::map<ProcessKey, ProcessAcc>& hours, const ProcessAcc& minute) {
  const ProcessKey key{FloorTo(minute.bucket_ms, kMillisecondsPerHour), minute.gpu, minute.process_id};
  auto [it, inserted] = hours.try_emplace(key, minute);
  if (inserted) {
    it->second.bucket_ms = std::get<0>(key);
  } else {
    MergeProcess(it->second, minute);
  }
}

}  // namespace rollup
}  // namespace gpuplan
