// The meter store's roll-up pass: reads raw samples (and minute rows) from the file, rolls them
// up with rollup.h's arithmetic and writes the gpu_/process_ minute and hour tables.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.h"
#include "meter/store_impl.h"

namespace gpuplan {

using rollup::Earlier;

rollup::IntervalRules MeterStore::Impl::Rules() const {
  rollup::IntervalRules rules;
  rules.max_gap = std::chrono::milliseconds{
      static_cast<int64_t>(std::llround(options.max_sample_gap_seconds * kMillisecondsPerSecond))};
  rules.nominal = std::chrono::milliseconds{
      static_cast<int64_t>(std::llround(options.sample_interval_seconds * kMillisecondsPerSecond))};
  return rules;
}

rollup::Computed MeterStore::Impl::ComputeFromRaw(UtcMillis from, UtcMillis to, std::chrono::milliseconds width,
                                                  std::optional<int> only_gpu, Parts parts) {
  rollup::Computed c;
  const rollup::IntervalRules rules = Rules();
  const rollup::Bucketing bucketing{from, to, width};
  if (parts != Parts::kProcesses) {
    // When a process was on each GPU (sorted: the table is clustered on time), from the longest
    // gap before the range on, since the first sample's interval may start there.
    rollup::ProcessPresence present;
    ForEachInRange("SELECT time_ms, gpu FROM process_sample WHERE " + InRange("time_ms", "gpu") + " ORDER BY time_ms",
                   from - rules.max_gap, to, only_gpu,
                   [&](sqlite::Stmt& q) { present.Add(static_cast<int>(q.Int(1)), FromUnixMillis(q.Int(0))); });
    rollup::GpuRollupBuilder gpus(bucketing, rules, present, c);
    auto add_gpu_sample = [&](sqlite::Stmt& q) {
      const rollup::GpuRow s = ReadGpuRow(q);
      if (gpus.NeedsPrevious(s.gpu)) {
        // The GPU's last sample within the longest gap before the range.
        std::optional<rollup::GpuPrevious> before;
        auto p = Q(
            "SELECT time_ms, energy_mj FROM gpu_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND gpu = ?3 "
            "ORDER BY time_ms DESC LIMIT 1");
        p->BindAll(UnixMillis(from - rules.max_gap), UnixMillis(from), s.gpu);
        if (p->Step()) {
          before = rollup::GpuPrevious{FromUnixMillis(p->Int(0)), p->OptUint(1)};
        }
        gpus.SetPrevious(s.gpu, before);
      }
      gpus.Add(s);
    };
    ForEachInRange(std::string("SELECT ") + kGpuSampleSelect + " FROM gpu_sample WHERE " + InRange("time_ms", "gpu") +
                       " ORDER BY time_ms, gpu",
                   from, to, only_gpu, add_gpu_sample);
  }
  if (parts != Parts::kGpus) {
    rollup::ProcessRollupBuilder processes(bucketing, rules, c);
    auto add_process_sample = [&](sqlite::Stmt& q) {
      const UtcMillis t = FromUnixMillis(q.Int(0));
      const int gpu = static_cast<int>(q.Int(1));
      const int64_t id = q.Int(2);
      if (processes.NeedsPrevious(gpu, id)) {
        // The process's last sample on this GPU within the longest gap before the range.
        auto p = Q(
            "SELECT max(time_ms) FROM process_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND gpu = ?3 "
            "AND process_id = ?4");
        p->BindAll(UnixMillis(from - rules.max_gap), UnixMillis(from), gpu, id);
        std::optional<UtcMillis> before;
        if (p->Step()) {
          before = OptFromUnixMillis(p->OptInt(0));
        }
        processes.SetPrevious(gpu, id, before);
      }
      processes.Add(t, gpu, id, q.OptUint(3));
    };
    ForEachInRange("SELECT time_ms, gpu, process_id, gpu_memory FROM process_sample WHERE " +
                       InRange("time_ms", "gpu") + " ORDER BY time_ms, gpu, process_id",
                   from, to, only_gpu, add_process_sample);
  }
  return c;
}

// Rolls up every minute completed by `now` (and not waiting on buffered samples) that is not
// rolled up yet, plus, when samples older than the minute watermark were written (`late_from`),
// every rolled-up minute from that one on; then the hours whose minutes are all rolled up,
// likewise. Writes the watermarks to meta.
RollUpResult MeterStore::Impl::RollUpInTransaction(UtcMillis now, std::optional<UtcMillis> late_from,
                                                   std::size_t skip_gpu, std::size_t skip_process,
                                                   MetaUpdate& update) {
  constexpr std::chrono::milliseconds kMinute = std::chrono::minutes{1};
  constexpr std::chrono::milliseconds kHour = std::chrono::hours{1};
  RollUpResult result;
  result.minutes_done = minutes_done;
  result.hours_done = hours_done;
  update = {minutes_done, hours_done};

  // Never past the minute of the newest sample held: a clock ahead of the data (a replay's
  // end, a wall clock) marks nothing done that no sample has reached.
  const std::optional<UtcMillis> newest = NewestSample();
  if (!newest) {
    return result;
  }
  UtcMillis m_limit = std::min(FloorTo(now, kMinute), FloorTo(*newest, kMinute) + kMinute);
  if (auto waiting = OldestWaiting(skip_gpu, skip_process)) {
    m_limit = std::min(m_limit, FloorTo(*waiting, kMinute));
  }
  std::optional<UtcMillis> m_start = minutes_done;
  if (!m_start) {
    const auto first = Earlier(MinOf("gpu_sample", "time_ms"), MinOf("process_sample", "time_ms"));
    if (!first) {
      return result;
    }
    m_start = FloorTo(*first, kMinute);
  }
  if (late_from) {
    m_start = std::min(*m_start, FloorTo(*late_from, kMinute));
  }
  const UtcMillis m_end = std::max(minutes_done.value_or(UtcMillis::min()), m_limit);
  if (*m_start >= m_end) {
    return result;
  }

  const rollup::Computed minutes = ComputeFromRaw(*m_start, m_end, kMinute, std::nullopt);
  DeleteBuckets("gpu_minute", *m_start, m_end);
  DeleteBuckets("process_minute", *m_start, m_end);
  for (const auto& [key, acc] : minutes.gpus) {
    WriteGpuRollup("gpu_minute", acc);
  }
  for (const auto& [key, acc] : minutes.processes) {
    WriteProcessRollup("process_minute", acc);
  }
  result.minute_rows = static_cast<int64_t>(minutes.gpus.size());
  result.process_minute_rows = static_cast<int64_t>(minutes.processes.size());
  SetMeta(kMetaMinutesDone, m_end);
  update.minutes_done = m_end;
  result.minutes_done = m_end;

  // Hours from the minute rows: an hour is complete when all its minutes are.
  std::optional<UtcMillis> h_start = hours_done;
  if (!h_start) {
    const auto first = Earlier(MinOf("gpu_minute", "bucket_ms"), MinOf("process_minute", "bucket_ms"));
    h_start = FloorTo(first.value_or(*m_start), kHour);
  }
  h_start = std::min(*h_start, FloorTo(*m_start, kHour));
  const UtcMillis h_end = std::max(hours_done.value_or(UtcMillis::min()), FloorTo(m_end, kHour));
  if (*h_start >= h_end) {
    return result;
  }
  std::map<rollup::GpuKey, rollup::GpuAcc> hours;
  {
    auto q = Q(std::string("SELECT ") + kGpuRollupSelect +
               " FROM gpu_minute WHERE bucket_ms >= ?1 AND bucket_ms < ?2 ORDER BY bucket_ms, gpu");
    q->BindAll(UnixMillis(*h_start), UnixMillis(h_end));
    while (q->Step()) {
      rollup::AddMinuteToHour(hours, ReadGpuRollup(*q, kMinute));
    }
  }
  std::map<rollup::ProcessKey, rollup::ProcessAcc> process_hours;
  {
    auto q = Q(std::string("SELECT ") + kProcessRollupSelect +
               " FROM process_minute WHERE bucket_ms >= ?1 AND bucket_ms < ?2 ORDER BY bucket_ms, gpu, process_id");
    q->BindAll(UnixMillis(*h_start), UnixMillis(h_end));
    while (q->Step()) {
      rollup::AddMinuteToHour(process_hours, ReadProcessRollup(*q, kMinute));
    }
  }
  DeleteBuckets("gpu_hour", *h_start, h_end);
  DeleteBuckets("process_hour", *h_start, h_end);
  for (const auto& [key, acc] : hours) {
    WriteGpuRollup("gpu_hour", acc);
  }
  for (const auto& [key, acc] : process_hours) {
    WriteProcessRollup("process_hour", acc);
  }
  result.hour_rows = static_cast<int64_t>(hours.size());
  result.process_hour_rows = static_cast<int64_t>(process_hours.size());
  SetMeta(kMetaHoursDone, h_end);
  update.hours_done = h_end;
  result.hours_done = h_end;
  return result;
}

RollUpResult MeterStore::RollUp(UtcMillis now) {
  Impl& m = *impl_;
  if (m.options.read_only) {
    throw EnvironmentError("meter database " + m.path + " was opened read-only");
  }
  try {
    sqlite::WriteTransaction tx(m.db);
    Impl::MetaUpdate update;
    RollUpResult result = m.RollUpInTransaction(now, std::nullopt, 0, 0, update);
    tx.Commit();
    m.minutes_done = update.minutes_done;
    m.hours_done = update.hours_done;
    return result;
  } catch (const sqlite::SqliteFailure& f) {
    sqlite::Translate(f, m.path);
  }
}

}  // namespace gpuplan
