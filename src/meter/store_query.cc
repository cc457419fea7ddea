// The meter store's read paths: samples, roll-ups and processes by time range and GPU, and the
// extent. Each is one read transaction over ForEachInRange (prepare, bind range and GPU, step
// rows into structs); raw roll-ups are computed by store_rollup.cc's ComputeFromRaw.
#include <algorithm>
#include <tuple>
#include <utility>

#include "meter/store_impl.h"

namespace gpuplan {

std::string InRange(const std::string& time_column, const std::string& gpu_column) {
  return time_column + " >= ?1 AND " + time_column + " < ?2 AND (?3 IS NULL OR " + gpu_column + " = ?3)";
}

// --- rows into structs ---------------------------------------------------------------------------

rollup::GpuRow MeterStore::Impl::ReadGpuRow(sqlite::Stmt& s) {
  rollup::GpuRow r;
  r.time = FromUnixMillis(s.Int(0));
  r.gpu = static_cast<int>(s.Int(1));
  r.device_id = s.OptInt(2);
  r.util_gpu = s.OptInt32(3);
  r.util_mem = s.OptInt32(4);
  r.mem_used = s.OptUint(5);
  r.mem_total = s.OptUint(6);
  r.power_mw = s.OptInt(7);
  r.energy_mj = s.OptUint(8);
  r.temp_c = s.OptInt32(9);
  r.sm_clock_mhz = s.OptInt32(10);
  r.clock_events = s.OptUint(11);
  return r;
}

rollup::GpuAcc MeterStore::Impl::ReadGpuRollup(sqlite::Stmt& s, std::chrono::milliseconds width) {
  rollup::GpuAcc a;
  GpuRollup& r = a.r;
  r.bucket = FromUnixMillis(s.Int(0));
  r.width = width;
  r.gpu = static_cast<int>(s.Int(1));
  a.device_id = s.OptInt(2);
  r.samples = s.Int(3);
  r.observed = std::chrono::milliseconds{s.Int(4)};
  r.busy = std::chrono::milliseconds{s.Int(5)};
  r.active = std::chrono::milliseconds{s.Int(6)};
  r.utilization_gpu_n = s.Int(7);
  r.utilization_gpu_sum = s.Int(8);
  r.utilization_gpu_min = s.OptInt32(9);
  r.utilization_gpu_max = s.OptInt32(10);
  r.utilization_memory_n = s.Int(11);
  r.utilization_memory_sum = s.Int(12);
  r.memory_used_n = s.Int(13);
  r.memory_used_sum = s.Int(14);
  r.memory_used_max = s.OptUint(15);
  r.memory_total = s.OptUint(16);
  r.power_n = s.Int(17);
  r.power_sum_mw = s.Int(18);
  r.power_max_mw = s.OptInt(19);
  r.energy_mj = s.OptUint(20);
  r.temperature_max = s.OptInt32(21);
  r.clock_event_reasons = rollup::AsUint64(s.Int(22));
  return a;
}

rollup::ProcessAcc MeterStore::Impl::ReadProcessRollup(sqlite::Stmt& s, std::chrono::milliseconds width) {
  rollup::ProcessAcc a;
  a.bucket = FromUnixMillis(s.Int(0));
  a.gpu = static_cast<int>(s.Int(1));
  a.process_id = s.Int(2);
  a.samples = s.Int(3);
  a.observed = std::chrono::milliseconds{s.Int(4)};
  a.mem_n = s.Int(5);
  a.mem_sum = s.Int(6);
  a.mem_max = s.OptUint(7);
  a.first = a.bucket;
  a.last = a.bucket + width;
  return a;
}

void MeterStore::Impl::ReadIdentity(sqlite::Stmt& s, int first, ProcessIdentity& p) {
  p.pid = static_cast<int>(s.Int(first));
  p.user = s.OptText(first + 1);
  p.command = s.OptText(first + 2);
  p.container_id = s.OptText(first + 3);
  p.pod_namespace = s.OptText(first + 4);
  p.pod_name = s.OptText(first + 5);
  p.slurm_job_id = s.OptText(first + 6);
  p.pod_uid = s.OptText(first + 7);
}

// --- lookups -------------------------------------------------------------------------------------

std::map<int64_t, std::string> MeterStore::Impl::DeviceNames() {
  std::map<int64_t, std::string> names;
  auto q = Q("SELECT id, uuid FROM device");
  while (q->Step()) {
    names.emplace(q->Int(0), q->OptText(1).value_or(""));
  }
  return names;
}

ProcessIdentity MeterStore::Impl::IdentityOf(int64_t process_id) {
  auto q = Q("SELECT pid, user, command, container_id, pod_namespace, pod_name, slurm_job_id, " + pod_uid_column +
             " FROM process "
             "WHERE id = ?1");
  q->Bind(1, process_id);
  ProcessIdentity p;
  if (q->Step()) {
    ReadIdentity(*q, 0, p);
  }
  return p;
}

std::vector<ProcessUse> MeterStore::Impl::ProcessUseFromRaw(const TimeRange& range, std::optional<int> gpu,
                                                            std::chrono::milliseconds width) {
  const rollup::Computed c = ComputeFromRaw(range.from, range.to, width, gpu, Parts::kProcesses);
  std::map<int64_t, ProcessIdentity> identities;
  std::vector<ProcessUse> out;
  auto add = [&](const rollup::ProcessAcc& acc) {
    auto it = identities.find(acc.process_id);
    if (it == identities.end()) {
      it = identities.emplace(acc.process_id, IdentityOf(acc.process_id)).first;
    }
    out.push_back(rollup::UseOf(acc, it->second));
  };
  for (const rollup::ProcessAcc& acc : c.process_rows) {
    add(acc);
  }
  for (const auto& [key, acc] : c.processes) {
    add(acc);
  }
  return out;
}

namespace {

std::string GpuTable(Resolution r) { return r == Resolution::kMinute ? "gpu_minute" : "gpu_hour"; }
std::string ProcessTable(Resolution r) { return r == Resolution::kMinute ? "process_minute" : "process_hour"; }

// The uuid of a device id, when known.
std::optional<std::string> UuidOf(const std::map<int64_t, std::string>& names, std::optional<int64_t> device_id) {
  if (device_id) {
    if (auto it = names.find(*device_id); it != names.end()) {
      return it->second;
    }
  }
  return std::nullopt;
}

}  // namespace

// --- the public reads ----------------------------------------------------------------------------

std::vector<GpuSample> MeterStore::GpuSamples(const TimeRange& range, std::optional<int> gpu) const {
  Impl& m = *impl_;
  return m.InReadTransaction([&] {
    std::vector<GpuSample> out;
    const auto names = m.DeviceNames();
    m.ForEachInRange(std::string("SELECT ") + kGpuSampleSelect + " FROM gpu_sample WHERE " +
                         InRange("time_ms", "gpu") + " ORDER BY time_ms, gpu",
                     range.from, range.to, gpu, [&](sqlite::Stmt& q) {
                       const rollup::GpuRow r = Impl::ReadGpuRow(q);
                       out.push_back(rollup::SampleOf(r, UuidOf(names, r.device_id)));
                     });
    return out;
  });
}

std::vector<ProcessSample> MeterStore::ProcessSamples(const TimeRange& range, std::optional<int> gpu) const {
  Impl& m = *impl_;
  return m.InReadTransaction([&] {
    std::vector<ProcessSample> out;
    m.ForEachInRange(
        "SELECT s.time_ms, s.gpu, s.gpu_memory, p.pid, p.user, p.command, p.container_id, p.pod_namespace, "
        "p.pod_name, p.slurm_job_id, " +
            m.PodUid("p") + " FROM process_sample s JOIN process p ON p.id = s.process_id WHERE " +
            InRange("s.time_ms", "s.gpu") + " ORDER BY s.time_ms, s.gpu, s.process_id",
        range.from, range.to, gpu, [&](sqlite::Stmt& q) {
          ProcessSample s;
          s.time = FromUnixMillis(q.Int(0));
          s.gpu = static_cast<int>(q.Int(1));
          s.gpu_memory = q.OptUint(2);
          Impl::ReadIdentity(q, 3, s);
          out.push_back(std::move(s));
        });
    return out;
  });
}

std::vector<GpuRollup> MeterStore::GpuRollups(Resolution resolution, const TimeRange& range,
                                              std::optional<int> gpu) const {
  Impl& m = *impl_;
  return m.InReadTransaction([&] {
    std::vector<GpuRollup> out;
    const auto names = m.DeviceNames();
    auto emit = [&](rollup::GpuAcc a) {
      if (auto uuid = UuidOf(names, a.device_id)) {
        a.r.uuid = std::move(uuid);
      }
      out.push_back(std::move(a.r));
    };
    if (resolution == Resolution::kRaw) {
      rollup::Computed c = m.ComputeFromRaw(range.from, range.to, rollup::kPerSample, gpu, Impl::Parts::kGpus);
      out.reserve(c.gpu_rows.size());
      for (rollup::GpuAcc& acc : c.gpu_rows) {
        emit(std::move(acc));
      }
      return out;
    }
    const std::chrono::milliseconds width = BucketWidth(resolution);
    m.ForEachInRange(std::string("SELECT ") + kGpuRollupSelect + " FROM " + GpuTable(resolution) + " WHERE " +
                         InRange("bucket_ms", "gpu") + " ORDER BY bucket_ms, gpu",
                     range.from, range.to, gpu,
                     [&](sqlite::Stmt& q) { emit(Impl::ReadGpuRollup(q, width)); });
    return out;
  });
}

std::vector<ProcessUse> MeterStore::ProcessRollups(Resolution resolution, const TimeRange& range,
                                                   std::optional<int> gpu) const {
  Impl& m = *impl_;
  return m.InReadTransaction([&] {
    if (resolution == Resolution::kRaw) {
      return m.ProcessUseFromRaw(range, gpu, rollup::kPerSample);
    }
    std::vector<ProcessUse> out;
    const std::chrono::milliseconds width = BucketWidth(resolution);
    m.ForEachInRange(
        "SELECT r.bucket_ms, r.gpu, r.process_id, r.samples, r.observed_ms, r.gpu_memory_n, r.gpu_memory_sum, "
        "r.gpu_memory_max, p.pid, p.user, p.command, p.container_id, p.pod_namespace, p.pod_name, p.slurm_job_id, " +
            m.PodUid("p") + " FROM " + ProcessTable(resolution) + " r JOIN process p ON p.id = r.process_id WHERE " +
            InRange("r.bucket_ms", "r.gpu") + " ORDER BY r.bucket_ms, r.gpu, r.process_id",
        range.from, range.to, gpu, [&](sqlite::Stmt& q) {
          const rollup::ProcessAcc a = Impl::ReadProcessRollup(q, width);
          ProcessIdentity who;
          Impl::ReadIdentity(q, 8, who);
          out.push_back(rollup::UseOf(a, who));
        });
    return out;
  });
}

std::vector<ProcessUse> MeterStore::ProcessesSeen(Resolution resolution, const TimeRange& range,
                                                  std::optional<int> gpu) const {
  std::vector<ProcessUse> rows;
  if (resolution == Resolution::kRaw) {
    // Already one row per process and GPU.
    rows = impl_->InReadTransaction([&] { return impl_->ProcessUseFromRaw(range, gpu, rollup::kWholeRange); });
  } else {
    rows = ProcessRollups(resolution, range, gpu);
  }
  std::map<std::pair<int, ProcessIdentity>, ProcessUse> merged;
  for (ProcessUse& u : rows) {
    auto [it, inserted] = merged.try_emplace({u.gpu, static_cast<const ProcessIdentity&>(u)}, u);
    if (!inserted) {
      rollup::MergeUse(it->second, u);
    }
  }
  std::vector<ProcessUse> out;
  out.reserve(merged.size());
  for (auto& [key, u] : merged) {
    out.push_back(std::move(u));
  }
  std::stable_sort(out.begin(), out.end(), [](const ProcessUse& a, const ProcessUse& b) {
    return std::tie(a.gpu, a.from) < std::tie(b.gpu, b.from);
  });
  return out;
}

StoreExtent MeterStore::Extent() const {
  Impl& m = *impl_;
  return m.InReadTransaction([&] {
    StoreExtent e;
    {
      auto q = m.Q("SELECT min(time_ms), max(time_ms) FROM gpu_sample");
      if (q->Step()) {
        e.raw_from = OptFromUnixMillis(q->OptInt(0));
        e.raw_to = OptFromUnixMillis(q->OptInt(1));
      }
    }
    e.minute_from = m.MinOf("gpu_minute", "bucket_ms");
    e.hour_from = m.MinOf("gpu_hour", "bucket_ms");
    e.minutes_done = m.Meta(kMetaMinutesDone);
    e.hours_done = m.Meta(kMetaHoursDone);
    e.samples_complete = m.Meta(kMetaSamplesComplete);
    return e;
  });
}

}  // namespace gpuplan
