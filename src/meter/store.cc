// MeterStore's front: names and options, Open (the connection and its settings), meta values,
// retention and the lifecycle. The other parts: store_schema.cc, store_write.cc,
// store_rollup.cc, store_query.cc (store_impl.h); SQLite plumbing in sqlite.h, arithmetic in rollup.h.
#include "meter/store.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "core/enum_names.h"
#include "core/error.h"
#include "meter/store_impl.h"

namespace gpuplan {

namespace {

using rollup::Earlier;
using rollup::Later;

constexpr int64_t kMillisecondsPerDay = 24 * kMillisecondsPerHour;
constexpr int64_t kWalSizeLimitBytes = 32ll << 20;
constexpr uint64_t kMinDatabaseBytes = 64ull << 10;

constexpr EnumName<Resolution> kResolutions[] = {
    {"raw", Resolution::kRaw}, {"minute", Resolution::kMinute}, {"hour", Resolution::kHour}};

}  // namespace

// --- names and options ---------------------------------------------------------------------------

std::string_view ToString(Resolution r) { return NameOf(kResolutions, r); }

Resolution ParseResolution(const std::string& text, const std::string& field) {
  return ParseEnumName(kResolutions, text, field);
}

std::chrono::milliseconds BucketWidth(Resolution r) {
  switch (r) {
    case Resolution::kMinute:
      return std::chrono::minutes{1};
    case Resolution::kHour:
      return std::chrono::hours{1};
    case Resolution::kRaw:
      break;
  }
  return std::chrono::milliseconds{0};
}

std::string_view ToString(FlushState s) {
  switch (s) {
    case FlushState::kOk:
      return "ok";
    case FlushState::kSlow:
      return "slow";
    case FlushState::kLocked:
      return "locked";
    case FlushState::kFull:
      return "full";
    case FlushState::kIoError:
      return "io_error";
    case FlushState::kCatchingUp:
      break;
  }
  return "catching_up";
}

bool IsBehind(FlushState s) { return s != FlushState::kOk && s != FlushState::kSlow; }

Resolution StoreExtent::FinestCovering(const TimeRange& range) const {
  if (raw_from && *raw_from <= range.from) {
    return Resolution::kRaw;
  }
  if (minute_from && *minute_from <= range.from) {
    return Resolution::kMinute;
  }
  return Resolution::kHour;
}

void ValidateStoreOptions(const StoreOptions& o) {
  auto positive = [](double v, const char* field) {
    if (!(v > 0) || !std::isfinite(v)) {
      throw InputError("must be a positive number, got " + std::to_string(v), "", 0, field);
    }
  };
  positive(o.flush_seconds, "flush_seconds");
  positive(o.slow_flush_seconds, "slow_flush_seconds");
  positive(o.sample_interval_seconds, "sample_interval_seconds");
  positive(o.max_sample_gap_seconds, "max_sample_gap_seconds");
  positive(o.raw_retention_hours, "raw_retention_hours");
  positive(o.minute_retention_days, "minute_retention_days");
  if (o.hour_retention_days) {
    positive(*o.hour_retention_days, "hour_retention_days");
  }
  if (o.max_buffered_samples == 0) {
    throw InputError("must be at least 1", "", 0, "max_buffered_samples");
  }
  if (o.max_samples_per_flush == 0) {
    throw InputError("must be at least 1", "", 0, "max_samples_per_flush");
  }
  if (o.busy_timeout_ms < 0) {
    throw InputError("must be 0 or more, got " + std::to_string(o.busy_timeout_ms), "", 0, "busy_timeout_ms");
  }
  if (o.retention_batch_rows < 1) {
    throw InputError("must be at least 1, got " + std::to_string(o.retention_batch_rows), "", 0,
                     "retention_batch_rows");
  }
  if (o.max_database_bytes && *o.max_database_bytes < kMinDatabaseBytes) {
    throw InputError("must be at least " + std::to_string(kMinDatabaseBytes) + " bytes", "", 0,
                     "max_database_bytes");
  }
  // Raw samples must outlive the minute being rolled up, and minutes the hour.
  if (o.raw_retention_hours * static_cast<double>(kMillisecondsPerHour) <
      2 * static_cast<double>(kMillisecondsPerMinute)) {
    throw InputError("must keep at least 2 minutes of raw samples", "", 0, "raw_retention_hours");
  }
  if (o.minute_retention_days * 24 < 2) {
    throw InputError("must keep at least 2 hours of minute roll-ups", "", 0, "minute_retention_days");
  }
}

// --- meta values and extents ---------------------------------------------------------------------

std::optional<UtcMillis> MeterStore::Impl::Meta(const char* key) {
  auto q = Q("SELECT value FROM meta WHERE key = ?1");
  q->Bind(1, key);
  return q->Step() ? OptFromUnixMillis(q->OptInt(0)) : std::nullopt;
}

void MeterStore::Impl::SetMeta(const char* key, UtcMillis value) {
  auto q = Q("INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
  q->Bind(1, key);
  q->Bind(2, UnixMillis(value));
  q->Run();
}

void MeterStore::Impl::LoadMeta() {
  minutes_done = Meta(kMetaMinutesDone);
  hours_done = Meta(kMetaHoursDone);
  raw_cut = Meta(kMetaRawCut);
  samples_complete = Meta(kMetaSamplesComplete);
}

std::optional<UtcMillis> MeterStore::Impl::MinOf(const std::string& table, const std::string& column) {
  auto q = Q("SELECT min(" + column + ") FROM " + table);
  return q->Step() ? OptFromUnixMillis(q->OptInt(0)) : std::nullopt;
}

std::optional<UtcMillis> MeterStore::Impl::MaxOf(const std::string& table, const std::string& column) {
  auto q = Q("SELECT max(" + column + ") FROM " + table);
  return q->Step() ? OptFromUnixMillis(q->OptInt(0)) : std::nullopt;
}

std::optional<UtcMillis> MeterStore::Impl::NewestSample() {
  return Later(MaxOf("gpu_sample", "time_ms"), MaxOf("process_sample", "time_ms"));
}

std::optional<UtcMillis> MeterStore::Impl::NewestData() {
  std::optional<UtcMillis> t = NewestSample();
  for (const GpuSample& s : gpu_buffer) {
    t = Later(t, s.time);
  }
  for (const ProcessSample& s : process_buffer) {
    t = Later(t, s.time);
  }
  if (t) {
    return t;
  }
  if (auto m = MaxOf("gpu_minute", "bucket_ms")) {
    t = Later(t, *m + std::chrono::minutes{1});
  }
  if (auto h = MaxOf("gpu_hour", "bucket_ms")) {
    t = Later(t, *h + std::chrono::hours{1});
  }
  return t;
}

// --- lifecycle and Open --------------------------------------------------------------------------

MeterStore::MeterStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MeterStore::MeterStore(MeterStore&&) noexcept = default;
MeterStore& MeterStore::operator=(MeterStore&&) noexcept = default;
MeterStore::~MeterStore() = default;

const std::string& MeterStore::path() const { return impl_->path; }
const StoreOptions& MeterStore::options() const { return impl_->options; }
StoreCounters MeterStore::Counters() const { return impl_->counters; }

void MeterStore::Interrupt() {
  if (impl_ && impl_->db.handle() != nullptr) {
    sqlite3_interrupt(impl_->db.handle());
  }
}

MeterStore MeterStore::Open(const std::string& path, const StoreOptions& options) {
  ValidateStoreOptions(options);
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->options = options;
  if (options.read_only) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      throw InputError("no such meter database", path);
    }
  }
  sqlite::Database& db = impl->db;
  const int flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = db.Open(path, flags);
  if (rc == SQLITE_OK && options.read_only && sqlite::OnReadOnlyMedia(path)) {
    // A WAL database is read through its -shm index, which a reader creates when missing; on
    // read-only media (a snapshot, a DVD, a read-only mount) it cannot. With no -wal file holding
    // writes (a writer that closed cleanly leaves none) the file alone is the whole database,
    // and SQLite's immutable mode reads it without the index (sqlite.org/uri.html).
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    if (!ec && wal > 0) {
      throw EnvironmentError("cannot read meter database " + path +
                             ": it is on read-only media with unmerged writes in " + path +
                             "-wal; copy the database and its -wal file to a writable folder and report from there");
    }
    rc = db.Open("file:" + sqlite::UriPath(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
  }
  if (rc != SQLITE_OK) {
    throw EnvironmentError("cannot open meter database " + path + ": " + sqlite::Describe(db.handle(), rc, "open"));
  }
  sqlite3_extended_result_codes(db.handle(), 1);
  sqlite3_busy_timeout(db.handle(), options.busy_timeout_ms);
  if (!options.read_only && sqlite3_db_readonly(db.handle(), "main") == 1) {
    throw EnvironmentError("cannot write meter database " + path + ": the file or its folder is read-only");
  }
  try {
    const Impl::SchemaAction action = impl->CheckSchema();
    if (!options.read_only) {
      std::string mode;
      {
        auto q = db.Query("PRAGMA journal_mode = WAL");
        if (q->Step()) {
          mode = q->OptText(0).value_or("");
        }
      }
      if (mode != "wal") {
        throw EnvironmentError("meter database " + path +
                               ": cannot use write-ahead logging (journal_mode is '" + mode +
                               "'; a network file system?)");
      }
      db.Exec("PRAGMA synchronous = NORMAL");
      // After a checkpoint the WAL file is cut back to this size (a catch-up may have grown it).
      db.Exec("PRAGMA journal_size_limit = " + std::to_string(kWalSizeLimitBytes));
      if (options.max_database_bytes) {
        const auto page_size = static_cast<uint64_t>(db.PragmaInt("page_size"));
        db.Exec("PRAGMA max_page_count = " + std::to_string(*options.max_database_bytes / page_size));
      }
      if (action == Impl::SchemaAction::kCreate) {
        impl->CreateSchema();
      } else if (action == Impl::SchemaAction::kMigrate) {
        impl->Migrate();
      }
    }
    impl->LoadMeta();
  } catch (const sqlite::SqliteFailure& f) {
    sqlite::Translate(f, path);
  }
  return MeterStore(std::move(impl));
}

// --- retention -----------------------------------------------------------------------------------

int64_t MeterStore::Impl::DeleteOlder(const std::string& table, const std::string& column, UtcMillis cut) {
  // The boundary is the time of the batch-th oldest row: rows up to it go (a few more when
  // several GPUs share that time), and with fewer rows left, all before the cut.
  auto q = Q("DELETE FROM " + table + " WHERE " + column + " < ?1 AND " + column + " <= COALESCE((SELECT " + column +
             " FROM " + table + " WHERE " + column + " < ?1 ORDER BY " + column + " LIMIT 1 OFFSET ?2), ?1)");
  int64_t total = 0;
  for (;;) {
    q->Reset();
    q->BindAll(UnixMillis(cut), options.retention_batch_rows - 1);
    q->Run();
    const int changed = sqlite3_changes(db.handle());
    if (changed == 0) {
      break;
    }
    total += changed;
  }
  return total;
}

RetentionResult MeterStore::ApplyRetention(UtcMillis now_time) {
  Impl& m = *impl_;
  if (m.options.read_only) {
    throw EnvironmentError("meter database " + m.path + " was opened read-only");
  }
  const StoreOptions& o = m.options;
  RetentionResult result;
  constexpr std::chrono::milliseconds kMinute = std::chrono::minutes{1};
  constexpr std::chrono::milliseconds kHour = std::chrono::hours{1};
  auto span = [](double amount, int64_t unit) {
    return std::chrono::milliseconds{static_cast<int64_t>(std::llround(amount * static_cast<double>(unit)))};
  };
  try {
    // The store's own time, not the caller's clock: the cuts are measured back from the newest
    // data the file holds, so a clock ahead of the data (a replay that wrote nothing, a wrong
    // wall clock) deletes nothing that newer data has not replaced.
    const std::optional<UtcMillis> newest = m.NewestData();
    if (!newest) {
      return result;
    }
    const UtcMillis now = std::min(now_time, *newest);
    // Cuts are whole minutes (raw) and whole hours (minutes, hours), so no minute loses part of
    // its samples and no hour part of its minutes: whatever is re-rolled later is re-rolled
    // from everything it was first rolled from. Never delete what is not rolled up yet, nor
    // the minutes of an hour whose raw samples are still kept.
    if (m.minutes_done) {
      result.raw_cut = std::min(FloorTo(now - span(o.raw_retention_hours, kMillisecondsPerHour), kMinute),
                                *m.minutes_done);
    }
    const std::optional<UtcMillis> raw_cut = Later(result.raw_cut, m.raw_cut);
    if (m.hours_done) {
      UtcMillis cut = std::min(FloorTo(now - span(o.minute_retention_days, kMillisecondsPerDay), kHour),
                               *m.hours_done);
      if (raw_cut) {
        cut = std::min(cut, FloorTo(*raw_cut, kHour));
      }
      result.minute_cut = cut;
    }
    if (o.hour_retention_days) {
      UtcMillis cut = FloorTo(now - span(*o.hour_retention_days, kMillisecondsPerDay), kHour);
      if (result.minute_cut) {
        cut = std::min(cut, *result.minute_cut);
      }
      result.hour_cut = cut;
    }
    if (result.raw_cut) {
      const std::optional<UtcMillis> oldest =
          Earlier(m.MinOf("gpu_sample", "time_ms"), m.MinOf("process_sample", "time_ms"));
      if ((!m.raw_cut || *result.raw_cut > *m.raw_cut) && oldest && *oldest < *result.raw_cut) {
        // Recorded first (and only when it deletes something): a late sample from before the
        // cut is dropped, not rolled up alone.
        m.SetMeta(kMetaRawCut, *result.raw_cut);
        m.raw_cut = result.raw_cut;
      }
      result.gpu_samples = m.DeleteOlder("gpu_sample", "time_ms", *result.raw_cut);
      result.process_samples = m.DeleteOlder("process_sample", "time_ms", *result.raw_cut);
    }
    if (result.minute_cut) {
      result.gpu_minutes = m.DeleteOlder("gpu_minute", "bucket_ms", *result.minute_cut);
      result.process_minutes = m.DeleteOlder("process_minute", "bucket_ms", *result.minute_cut);
    }
    if (result.hour_cut) {
      result.gpu_hours = m.DeleteOlder("gpu_hour", "bucket_ms", *result.hour_cut);
      result.process_hours = m.DeleteOlder("process_hour", "bucket_ms", *result.hour_cut);
    }
  } catch (const sqlite::SqliteFailure& f) {
    if (!sqlite::IsTransient(f.rc())) {
      sqlite::Translate(f, m.path);
    }
    result.done = false;
    result.reason = "meter database " + m.path + ": retention stopped (" + f.what() + "); the next call continues";
  }
  return result;
}

}  // namespace gpuplan
