// The meter store's writes: the in-memory buffer (Append, Trim), Flush (one transaction of
// sample inserts and a roll-up pass, its status when the file is locked, full or failing), the
// device and process rows, and the roll-up rows' inserts.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "core/error.h"
#include "meter/store_impl.h"
#include "read/time_text.h"

namespace gpuplan {

namespace {

using rollup::Earlier;
using rollup::Later;

std::string FormatCount(std::size_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

FlushState StateFor(int rc) {
  switch (sqlite::PrimaryCode(rc)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return FlushState::kLocked;
    case SQLITE_FULL:
      return FlushState::kFull;
    default:
      return FlushState::kIoError;
  }
}

void BindIdentity(sqlite::Stmt& s, const ProcessIdentity& p) {
  s.BindAll(p.pid, p.user, p.command, p.container_id, p.pod_namespace, p.pod_name, p.slurm_job_id, p.pod_uid);
}

}  // namespace

// --- the buffer ----------------------------------------------------------------------------------

void MeterStore::Impl::Trim() {
  while (gpu_buffer.size() + process_buffer.size() > options.max_buffered_samples) {
    // The oldest first; at one time, process rows before GPU samples: a step with more
    // processes than the bound loses process rows, never the GPU samples bills are made of.
    const bool drop_gpu = process_buffer.empty() ||
                          (!gpu_buffer.empty() && gpu_buffer.front().time < process_buffer.front().time);
    if (drop_gpu) {
      gpu_buffer.pop_front();
    } else {
      process_buffer.pop_front();
    }
    ++counters.dropped_overflow;
  }
}

// Samples before this are dropped as too old: the raw cut (rounded up to its minute, for files
// cut before cuts were whole minutes) plus the longest gap, so a minute re-rolled because of a
// late sample still finds the sample before it and measures the same intervals as the first
// roll-up did.
std::optional<UtcMillis> MeterStore::Impl::AcceptFrom() const {
  if (!raw_cut) {
    return std::nullopt;
  }
  constexpr std::chrono::milliseconds kMinute = std::chrono::minutes{1};
  // The gap, rounded up to whole minutes.
  const std::chrono::milliseconds margin{CeilTo(MaxGap().count(), kMinute.count())};
  return CeilTo(*raw_cut, kMinute) + margin;
}

std::optional<UtcMillis> MeterStore::Impl::OldestWaiting(std::size_t skip_gpu, std::size_t skip_process) const {
  std::optional<UtcMillis> oldest;
  for (std::size_t i = skip_gpu; i < gpu_buffer.size(); ++i) {
    oldest = Earlier(oldest, gpu_buffer[i].time);
  }
  for (std::size_t i = skip_process; i < process_buffer.size(); ++i) {
    oldest = Earlier(oldest, process_buffer[i].time);
  }
  return oldest;
}

void MeterStore::Append(const std::vector<GpuSample>& samples) {
  impl_->counters.appended += samples.size();
  impl_->gpu_buffer.insert(impl_->gpu_buffer.end(), samples.begin(), samples.end());
  impl_->Trim();
}

void MeterStore::Append(const std::vector<ProcessSample>& samples) {
  impl_->counters.appended += samples.size();
  impl_->process_buffer.insert(impl_->process_buffer.end(), samples.begin(), samples.end());
  impl_->Trim();
}

std::size_t MeterStore::Buffered() const { return impl_->gpu_buffer.size() + impl_->process_buffer.size(); }

bool MeterStore::FlushDue(UtcMillis now) const {
  if (!impl_->last_flush || impl_->last_state == FlushState::kCatchingUp) {
    return true;
  }
  const std::chrono::milliseconds every{
      static_cast<int64_t>(std::llround(impl_->options.flush_seconds * kMillisecondsPerSecond))};
  return now - *impl_->last_flush >= every;
}

// --- device and process rows ---------------------------------------------------------------------

int64_t MeterStore::Impl::DeviceId(const std::string& uuid) {
  if (auto it = device_ids.find(uuid); it != device_ids.end()) {
    return it->second;
  }
  if (auto it = pending_device_ids.find(uuid); it != pending_device_ids.end()) {
    return it->second;
  }
  int64_t id = 0;
  {
    auto q = Q("SELECT id FROM device WHERE uuid = ?1");
    q->Bind(1, uuid);
    if (q->Step()) {
      id = q->Int(0);
      device_ids.emplace(uuid, id);  // committed by whoever inserted it
      return id;
    }
  }
  auto q = Q("INSERT INTO device(uuid) VALUES(?1)");
  q->Bind(1, uuid);
  q->Run();
  id = sqlite3_last_insert_rowid(db.handle());
  pending_device_ids.emplace(uuid, id);
  return id;
}

int64_t MeterStore::Impl::ProcessId(const ProcessIdentity& p) {
  if (auto it = process_ids.find(p); it != process_ids.end()) {
    return it->second;
  }
  if (auto it = pending_process_ids.find(p); it != pending_process_ids.end()) {
    return it->second;
  }
  {
    auto q = Q(
        "SELECT id FROM process WHERE pid = ?1 AND user IS ?2 AND command IS ?3 AND container_id IS ?4 "
        "AND pod_namespace IS ?5 AND pod_name IS ?6 AND slurm_job_id IS ?7 AND pod_uid IS ?8");
    BindIdentity(*q, p);
    if (q->Step()) {
      const int64_t id = q->Int(0);
      process_ids.emplace(p, id);
      return id;
    }
  }
  auto q = Q(
      "INSERT INTO process(pid, user, command, container_id, pod_namespace, pod_name, slurm_job_id, pod_uid) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  BindIdentity(*q, p);
  q->Run();
  const int64_t id = sqlite3_last_insert_rowid(db.handle());
  pending_process_ids.emplace(p, id);
  return id;
}

void MeterStore::Impl::CommitIds() {
  device_ids.merge(pending_device_ids);
  process_ids.merge(pending_process_ids);
  pending_device_ids.clear();
  pending_process_ids.clear();
}

void MeterStore::Impl::DiscardIds() {
  pending_device_ids.clear();
  pending_process_ids.clear();
}

// --- inserts -------------------------------------------------------------------------------------

void MeterStore::Impl::InsertGpu(const GpuSample& s) {
  std::optional<int64_t> device;
  if (s.uuid) {
    device = DeviceId(*s.uuid);
  }
  const rollup::GpuRow r = rollup::RowOf(s, device);
  {
    // A sample at a (time, gpu) the file already holds replaces it only when it is the same
    // device's (a replay written again): another device's sample there is another server's
    // (or a swapped card's) and must not overwrite what was measured.
    auto q = Q(
        "INSERT INTO gpu_sample(time_ms, gpu, device_id, util_gpu, util_mem, mem_used, mem_total, "
        "power_mw, energy_mj, temp_c, sm_clock_mhz, clock_events) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
        "?11, ?12) ON CONFLICT(time_ms, gpu) DO UPDATE SET device_id = excluded.device_id, util_gpu = "
        "excluded.util_gpu, util_mem = excluded.util_mem, mem_used = excluded.mem_used, mem_total = "
        "excluded.mem_total, power_mw = excluded.power_mw, energy_mj = excluded.energy_mj, temp_c = "
        "excluded.temp_c, sm_clock_mhz = excluded.sm_clock_mhz, clock_events = excluded.clock_events "
        "WHERE gpu_sample.device_id IS excluded.device_id");
    q->BindAll(UnixMillis(r.time), r.gpu, r.device_id, r.util_gpu, r.util_mem, r.mem_used, r.mem_total, r.power_mw,
               r.energy_mj, r.temp_c, r.sm_clock_mhz, r.clock_events);
    q->Run();
  }
  if (sqlite3_changes(db.handle()) > 0) {
    return;
  }
  std::string held = "no UUID";
  {
    auto q = Q(
        "SELECT device.uuid FROM gpu_sample LEFT JOIN device ON device.id = gpu_sample.device_id "
        "WHERE gpu_sample.time_ms = ?1 AND gpu_sample.gpu = ?2");
    q->BindAll(UnixMillis(r.time), r.gpu);
    if (q->Step()) {
      held = q->OptText(0).value_or("no UUID");
    }
  }
  throw InputError("the meter database already holds GPU " + std::to_string(r.gpu) + " at " + FormatUtcIso(r.time) +
                       " (time_ms " + std::to_string(UnixMillis(r.time)) + ") from " + held +
                       "; this sample is from " + s.uuid.value_or("no UUID") +
                       ": one store keeps one server's GPUs (give this server its own --db)",
                   path, 0, "uuid");
}

void MeterStore::Impl::InsertProcess(const ProcessSample& s) {
  const int64_t id = ProcessId(s);
  auto q = Q("INSERT OR REPLACE INTO process_sample(time_ms, gpu, process_id, gpu_memory) VALUES(?1, ?2, ?3, ?4)");
  q->BindAll(UnixMillis(s.time), s.gpu, id, s.gpu_memory);
  q->Run();
}

void MeterStore::Impl::WriteGpuRollup(const std::string& table, const rollup::GpuAcc& a) {
  std::string sql = "INSERT OR REPLACE INTO " + table + "(" + kGpuRollupSelect + ") VALUES(";
  for (int i = 1; i <= kGpuRollupColumnCount; ++i) {
    sql += (i > 1 ? ", ?" : "?") + std::to_string(i);
  }
  sql += ")";
  const GpuRollup& r = a.r;
  auto q = Q(sql);
  q->BindAll(UnixMillis(r.bucket), r.gpu, a.device_id, r.samples, r.observed.count(), r.busy.count(), r.active.count(),
             r.utilization_gpu_n, r.utilization_gpu_sum, r.utilization_gpu_min, r.utilization_gpu_max,
             r.utilization_memory_n, r.utilization_memory_sum, r.memory_used_n, r.memory_used_sum,
             r.memory_used_max, r.memory_total, r.power_n, r.power_sum_mw, r.power_max_mw, r.energy_mj,
             r.temperature_max, r.clock_event_reasons);
  q->Run();
}

void MeterStore::Impl::WriteProcessRollup(const std::string& table, const rollup::ProcessAcc& a) {
  auto q = Q("INSERT OR REPLACE INTO " + table + "(" + kProcessRollupSelect +
             ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
  q->BindAll(UnixMillis(a.bucket), a.gpu, a.process_id, a.samples, a.observed.count(), a.mem_n, a.mem_sum, a.mem_max);
  q->Run();
}

void MeterStore::Impl::DeleteBuckets(const std::string& table, UtcMillis from, UtcMillis to) {
  auto q = Q("DELETE FROM " + table + " WHERE bucket_ms >= ?1 AND bucket_ms < ?2");
  q->BindAll(UnixMillis(from), UnixMillis(to));
  q->Run();
}

// --- Flush ---------------------------------------------------------------------------------------

FlushStatus MeterStore::Flush(UtcMillis now) {
  Impl& m = *impl_;
  if (m.options.read_only) {
    throw EnvironmentError("meter database " + m.path + " was opened read-only");
  }
  const auto started = std::chrono::steady_clock::now();
  FlushStatus status;
  m.last_flush = now;
  ++m.counters.flushes;
  const std::size_t n_gpu = std::min(m.gpu_buffer.size(), m.options.max_samples_per_flush);
  const std::size_t n_process = std::min(m.process_buffer.size(), m.options.max_samples_per_flush);
  const bool nothing_to_do = n_gpu == 0 && n_process == 0 && m.minutes_done &&
                             FloorTo(now, std::chrono::minutes{1}) <= *m.minutes_done;
  if (!nothing_to_do) {
    try {
      sqlite::WriteTransaction tx(m.db);
      std::optional<UtcMillis> late_from;
      uint64_t too_old = 0;
      const std::optional<UtcMillis> accept_from = m.AcceptFrom();
      auto keep = [&](UtcMillis t) {
        // Only a late sample (its minute rolled up) can be too old; a new one is rolled up
        // for the first time from whatever the file holds.
        if (accept_from && t < *accept_from && m.minutes_done && t < *m.minutes_done) {
          ++too_old;  // its minute is rolled up and its neighbours deleted: it cannot count
          return false;
        }
        if (m.minutes_done && t < *m.minutes_done) {
          late_from = Earlier(late_from, t);
        }
        return true;
      };
      for (std::size_t i = 0; i < n_gpu; ++i) {
        if (keep(m.gpu_buffer[i].time)) {
          m.InsertGpu(m.gpu_buffer[i]);
        }
      }
      for (std::size_t i = 0; i < n_process; ++i) {
        if (keep(m.process_buffer[i].time)) {
          m.InsertProcess(m.process_buffer[i]);
        }
      }
      // Every sample before the oldest one still waiting is now committed; with none waiting,
      // every sample handed over so far.
      std::optional<UtcMillis> complete;
      if (auto waiting = m.OldestWaiting(n_gpu, n_process)) {
        complete = *waiting - std::chrono::milliseconds{1};
      } else {
        for (std::size_t i = 0; i < n_gpu; ++i) {
          complete = Later(complete, m.gpu_buffer[i].time);
        }
        for (std::size_t i = 0; i < n_process; ++i) {
          complete = Later(complete, m.process_buffer[i].time);
        }
      }
      if (complete && (!m.samples_complete || *complete > *m.samples_complete)) {
        m.SetMeta(kMetaSamplesComplete, *complete);
      } else {
        complete = m.samples_complete;
      }
      Impl::MetaUpdate update;
      status.rollup = m.RollUpInTransaction(now, late_from, n_gpu, n_process, update);
      tx.Commit();
      m.samples_complete = complete;
      m.CommitIds();
      m.minutes_done = update.minutes_done;
      m.hours_done = update.hours_done;
      m.gpu_buffer.erase(m.gpu_buffer.begin(), m.gpu_buffer.begin() + static_cast<std::ptrdiff_t>(n_gpu));
      m.process_buffer.erase(m.process_buffer.begin(),
                             m.process_buffer.begin() + static_cast<std::ptrdiff_t>(n_process));
      status.written = n_gpu + n_process - too_old;
      status.dropped_too_old = too_old;
      m.counters.written += status.written;
      m.counters.dropped_too_old += too_old;
      if (too_old > 0) {
        status.notice = "meter database " + m.path + ": dropped " + FormatCount(too_old) +
                        " samples older than " + FormatUtcIso(*accept_from) +
                        ": retention deleted the raw samples before " + FormatUtcIso(*m.raw_cut) +
                        " and rolled up their minutes, so these cannot be counted";
      }
      if (status.rollup.minute_rows + status.rollup.process_minute_rows > 0) {
        // About once a minute: copy the WAL into the database. With synchronous=NORMAL this is
        // when both files are synced, so a power loss (a crash loses nothing committed:
        // docs/meter-store.md) loses about a minute at most. PASSIVE never waits on readers or
        // writers; failing is harmless.
        sqlite3_wal_checkpoint_v2(m.db.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      }
    } catch (const sqlite::SqliteFailure& f) {
      m.DiscardIds();
      if (!sqlite::IsTransient(f.rc())) {
        sqlite::Translate(f, m.path);
      }
      status.state = StateFor(f.rc());
      status.reason = f.what();
    } catch (...) {
      // A sample the file must not take (another device's at a held time and GPU): the
      // transaction was rolled back, so nothing of this flush is written; the rows stay in the
      // buffer and the ids of rows that were not committed are forgotten.
      m.DiscardIds();
      throw;
    }
  }
  status.buffered = Buffered();
  status.dropped = m.counters.dropped_overflow + m.counters.dropped_too_old;
  status.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string waiting = FormatCount(status.buffered) + " samples wait in memory";
  switch (status.state) {
    case FlushState::kLocked:
      status.reason = "meter database " + m.path + " is locked by another connection (" + status.reason + "); " +
                      waiting + ", written when it is free";
      break;
    case FlushState::kFull:
      status.reason = "meter database " + m.path + " is full (" + status.reason + "); " + waiting +
                      ", the oldest dropped beyond " + FormatCount(m.options.max_buffered_samples);
      break;
    case FlushState::kIoError:
      status.reason = "meter database " + m.path + " cannot be written (" + status.reason + "); " + waiting;
      break;
    default:
      if (status.buffered > 0) {
        status.state = FlushState::kCatchingUp;
        status.reason = "meter database " + m.path + ": catching up, wrote " + FormatCount(status.written) +
                        " samples, " + waiting;
      } else if (status.seconds > m.options.slow_flush_seconds) {
        status.state = FlushState::kSlow;
        status.reason = "meter database " + m.path + " is slow: writing " + FormatCount(status.written) +
                        " samples took " + std::to_string(status.seconds) + " s";
      } else if (IsBehind(m.last_state)) {
        status.reason = "meter database " + m.path + " caught up: every buffered sample is written";
      }
      break;
  }
  if (status.dropped > 0 && IsBehind(status.state)) {
    status.reason += " (" + FormatCount(status.dropped) + " dropped so far)";
  }
  status.changed = status.state != m.last_state;
  m.last_state = status.state;
  if (IsBehind(status.state)) {
    ++m.counters.flushes_behind;
  }
  return status;
}

}  // namespace gpuplan
