#include "meter/store.h"

#include <sqlite3.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "core/enum_names.h"
#include "core/error.h"

namespace gpuplan {

namespace {

constexpr int64_t kMillisecondsPerDay = 24 * kMillisecondsPerHour;
constexpr int64_t kMilliwattsPerWatt = 1000;
constexpr int64_t kWalSizeLimitBytes = 32ll << 20;
constexpr uint64_t kMinDatabaseBytes = 64ull << 10;

// The schema of version 1 (docs/meter-store.md explains every column). Tables are WITHOUT
// ROWID, clustered on their primary key, which starts with the time: range queries and
// retention read contiguous pages, and a table costs one b-tree instead of a table and an
// index.
constexpr const char* kSchema = R"sql(
CREATE TABLE meta(
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE device(
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE
);
CREATE TABLE process(
  id INTEGER PRIMARY KEY,
  pid INTEGER NOT NULL,
  user TEXT,
  command TEXT,
  container_id TEXT,
  pod_namespace TEXT,
  pod_name TEXT,
  slurm_job_id TEXT,
  pod_uid TEXT
);
CREATE INDEX process_by_pid ON process(pid);
CREATE TABLE gpu_sample(
  time_ms INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  device_id INTEGER,
  util_gpu INTEGER,
  util_mem INTEGER,
  mem_used INTEGER,
  mem_total INTEGER,
  power_mw INTEGER,
  energy_mj INTEGER,
  temp_c INTEGER,
  sm_clock_mhz INTEGER,
  clock_events INTEGER,
  PRIMARY KEY(time_ms, gpu)
) WITHOUT ROWID;
CREATE TABLE process_sample(
  time_ms INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  process_id INTEGER NOT NULL,
  gpu_memory INTEGER,
  PRIMARY KEY(time_ms, gpu, process_id)
) WITHOUT ROWID;
)sql";

// gpu_minute and gpu_hour have the same columns.
constexpr const char* kGpuRollupColumns = R"sql(
  bucket_ms INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  device_id INTEGER,
  samples INTEGER NOT NULL,
  observed_ms INTEGER NOT NULL,
  busy_ms INTEGER NOT NULL,
  active_ms INTEGER NOT NULL,
  util_gpu_n INTEGER NOT NULL,
  util_gpu_sum INTEGER NOT NULL,
  util_gpu_min INTEGER,
  util_gpu_max INTEGER,
  util_mem_n INTEGER NOT NULL,
  util_mem_sum INTEGER NOT NULL,
  mem_used_n INTEGER NOT NULL,
  mem_used_sum INTEGER NOT NULL,
  mem_used_max INTEGER,
  mem_total INTEGER,
  power_n INTEGER NOT NULL,
  power_sum_mw INTEGER NOT NULL,
  power_max_mw INTEGER,
  energy_mj INTEGER,
  temp_max_c INTEGER,
  clock_events INTEGER NOT NULL,
  PRIMARY KEY(bucket_ms, gpu)
)sql";
constexpr const char* kGpuRollupSelect =
    "bucket_ms, gpu, device_id, samples, observed_ms, busy_ms, active_ms, util_gpu_n, util_gpu_sum, "
    "util_gpu_min, util_gpu_max, util_mem_n, util_mem_sum, mem_used_n, mem_used_sum, mem_used_max, "
    "mem_total, power_n, power_sum_mw, power_max_mw, energy_mj, temp_max_c, clock_events";
constexpr int kGpuRollupColumnCount = 23;

// process_minute and process_hour.
constexpr const char* kProcessRollupColumns = R"sql(
  bucket_ms INTEGER NOT NULL,
  gpu INTEGER NOT NULL,
  process_id INTEGER NOT NULL,
  samples INTEGER NOT NULL,
  observed_ms INTEGER NOT NULL,
  gpu_memory_n INTEGER NOT NULL,
  gpu_memory_sum INTEGER NOT NULL,
  gpu_memory_max INTEGER,
  PRIMARY KEY(bucket_ms, gpu, process_id)
)sql";
constexpr const char* kProcessRollupSelect =
    "bucket_ms, gpu, process_id, samples, observed_ms, gpu_memory_n, gpu_memory_sum, gpu_memory_max";

constexpr const char* kGpuSampleSelect =
    "time_ms, gpu, device_id, util_gpu, util_mem, mem_used, mem_total, power_mw, energy_mj, temp_c, "
    "sm_clock_mhz, clock_events";

constexpr const char* kMetaMinutesDone = "minutes_done_ms";
constexpr const char* kMetaHoursDone = "hours_done_ms";
constexpr const char* kMetaRawCut = "raw_cut_ms";
// Every sample handed to the store at or before this time is committed (or was dropped as too
// old): a replay continues after it (`meter run --resume`, docs/meter-store.md).
constexpr const char* kMetaSamplesComplete = "samples_complete_ms";

constexpr EnumName<Resolution> kResolutions[] = {
    {"raw", Resolution::kRaw}, {"minute", Resolution::kMinute}, {"hour", Resolution::kHour}};

// An SQLite call that failed, with the step and SQLite's message. Flush turns the transient
// ones (busy, locked, full, I/O) into a status; everything else becomes InputError or
// EnvironmentError naming the file (Translate).
class SqliteFailure : public std::runtime_error {
 public:
  SqliteFailure(int rc, const std::string& what) : std::runtime_error(what), rc_(rc) {}
  int rc() const { return rc_; }

 private:
  int rc_;
};

int PrimaryCode(int rc) { return rc & 0xff; }

std::string CodeName(int rc) {
  switch (PrimaryCode(rc)) {
    case SQLITE_ERROR:
      return "SQLITE_ERROR";
    case SQLITE_PERM:
      return "SQLITE_PERM";
    case SQLITE_BUSY:
      return "SQLITE_BUSY";
    case SQLITE_LOCKED:
      return "SQLITE_LOCKED";
    case SQLITE_NOMEM:
      return "SQLITE_NOMEM";
    case SQLITE_READONLY:
      return "SQLITE_READONLY";
    case SQLITE_IOERR:
      return "SQLITE_IOERR";
    case SQLITE_CORRUPT:
      return "SQLITE_CORRUPT";
    case SQLITE_FULL:
      return "SQLITE_FULL";
    case SQLITE_CANTOPEN:
      return "SQLITE_CANTOPEN";
    case SQLITE_CONSTRAINT:
      return "SQLITE_CONSTRAINT";
    case SQLITE_NOTADB:
      return "SQLITE_NOTADB";
    default:
      break;
  }
  return "SQLite code " + std::to_string(rc);
}

std::string Describe(sqlite3* db, int rc, const std::string& step) {
  const char* detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return step + ": " + detail + " (" + CodeName(rc) + ")";
}

// Busy, locked, full and I/O errors may pass: the samples wait in memory.
bool IsTransient(int rc) {
  switch (PrimaryCode(rc)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_NOMEM:
    case SQLITE_INTERRUPT:
      return true;
    default:
      return false;
  }
}

// The file is not what it should be: not SQLite, damaged, or its tables are not ours.
bool IsBadFile(int rc) {
  switch (PrimaryCode(rc)) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_FORMAT:
    case SQLITE_ERROR:
    case SQLITE_MISMATCH:
    case SQLITE_CONSTRAINT:
      return true;
    default:
      return false;
  }
}

[[noreturn]] void Translate(const SqliteFailure& f, const std::string& path) {
  if (IsBadFile(f.rc())) {
    throw InputError(std::string("not a usable gpuplan meter database: ") + f.what(), path);
  }
  throw EnvironmentError("meter database " + path + ": " + f.what());
}

// The folder of `path` cannot be written by anyone (a read-only mount): statvfs says so,
// whatever this process's permissions (root writes through modes, not through ST_RDONLY).
bool OnReadOnlyMedia(const std::string& path) {
  struct statvfs fs {};
  const std::string folder = std::filesystem::absolute(path).parent_path().string();
  return statvfs(folder.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0;
}

// A path as a file: URI path (RFC 3986): unreserved characters and '/' as they are, every other
// byte %-encoded, so '?', '#' and '%' in a file name stay part of the name.
std::string UriPath(const std::string& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  std::string out;
  for (unsigned char c : absolute) {
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

int64_t FloorTo(int64_t t, int64_t width) {
  if (width <= 0) {
    return t;
  }
  int64_t q = t / width;
  if (t % width != 0 && t < 0) {
    --q;
  }
  return q * width;
}

int64_t AsInt64(uint64_t v) { return static_cast<int64_t>(v); }  // bit-preserving
uint64_t AsUint64(int64_t v) { return static_cast<uint64_t>(v); }

// A prepared statement. Bind, Step and the column readers throw SqliteFailure.
class Stmt {
 public:
  Stmt(sqlite3* db, const std::string& sql) : db_(db) {
    const int rc = sqlite3_prepare_v3(db, sql.c_str(), -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) {
      throw SqliteFailure(rc, Describe(db, rc, "prepare"));
    }
  }
  ~Stmt() { sqlite3_finalize(stmt_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  void Bind(int i, int64_t v) { Check(sqlite3_bind_int64(stmt_, i, v)); }
  void Bind(int i, int v) { Bind(i, int64_t{v}); }
  void Bind(int i, uint64_t v) { Bind(i, AsInt64(v)); }
  void Bind(int i, const std::string& v) {
    Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  void Bind(int i, const char* v) { Bind(i, std::string(v)); }
  void BindNull(int i) { Check(sqlite3_bind_null(stmt_, i)); }
  template <typename T>
  void Bind(int i, const std::optional<T>& v) {
    if (v) {
      Bind(i, *v);
    } else {
      BindNull(i);
    }
  }
  // True for a row, false when done.
  bool Step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) {
      return true;
    }
    if (rc == SQLITE_DONE) {
      return false;
    }
    throw SqliteFailure(rc, Describe(db_, rc, "step"));
  }
  void Run() {
    while (Step()) {
    }
  }
  bool Null(int c) const { return sqlite3_column_type(stmt_, c) == SQLITE_NULL; }
  int64_t Int(int c) const { return sqlite3_column_int64(stmt_, c); }
  std::optional<int64_t> OptInt(int c) const {
    return Null(c) ? std::nullopt : std::optional<int64_t>(Int(c));
  }
  std::optional<int> OptInt32(int c) const {
    return Null(c) ? std::nullopt : std::optional<int>(sqlite3_column_int(stmt_, c));
  }
  std::optional<uint64_t> OptUint(int c) const {
    return Null(c) ? std::nullopt : std::optional<uint64_t>(AsUint64(Int(c)));
  }
  std::optional<std::string> OptText(int c) const {
    if (Null(c)) {
      return std::nullopt;
    }
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
    return std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c)));
  }

 private:
  void Check(int rc) {
    if (rc != SQLITE_OK) {
      throw SqliteFailure(rc, Describe(db_, rc, "bind"));
    }
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// A statement borrowed from the cache; reset when the borrower is done, so no finished or
// abandoned SELECT keeps a read snapshot open (which would stop WAL checkpoints).
class Use {
 public:
  explicit Use(Stmt& s) : stmt_(&s) {}
  ~Use() { stmt_->Reset(); }
  Use(const Use&) = delete;
  Use& operator=(const Use&) = delete;
  Stmt* operator->() { return stmt_; }
  Stmt& operator*() { return *stmt_; }

 private:
  Stmt* stmt_;
};

// One raw GPU sample as stored (power in mW, device by id).
struct GpuRow {
  int64_t time_ms = 0;
  int gpu = 0;
  std::optional<int64_t> device_id;
  std::optional<int> util_gpu;
  std::optional<int> util_mem;
  std::optional<uint64_t> mem_used;
  std::optional<uint64_t> mem_total;
  std::optional<int64_t> power_mw;
  std::optional<uint64_t> energy_mj;
  std::optional<int> temp_c;
  std::optional<int> sm_clock_mhz;
  std::optional<uint64_t> clock_events;
};

GpuRow ReadGpuRow(Stmt& s) {
  GpuRow r;
  r.time_ms = s.Int(0);
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

// A GPU roll-up row with its device id (the public GpuRollup carries the uuid).
struct GpuAcc {
  GpuRollup r;
  std::optional<int64_t> device_id;
};

template <typename T>
void KeepMin(std::optional<T>& into, const std::optional<T>& v) {
  if (v && (!into || *v < *into)) {
    into = v;
  }
}
template <typename T>
void KeepMax(std::optional<T>& into, const std::optional<T>& v) {
  if (v && (!into || *v > *into)) {
    into = v;
  }
}

void AddSample(GpuAcc& a, const GpuRow& s, int64_t dt_ms, std::optional<uint64_t> energy_delta, bool busy) {
  GpuRollup& r = a.r;
  const bool active = s.util_gpu && *s.util_gpu > 0;
  r.samples += 1;
  r.observed_ms += dt_ms;
  r.busy_ms += busy ? dt_ms : 0;
  r.active_ms += active ? dt_ms : 0;
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

// One process on one GPU over a bucket, by process id.
struct ProcessAcc {
  int64_t bucket_ms = 0;
  int gpu = 0;
  int64_t process_id = 0;
  int64_t first_ms = 0;
  int64_t last_ms = 0;
  int64_t samples = 0;
  int64_t observed_ms = 0;
  int64_t mem_n = 0;
  int64_t mem_sum = 0;
  std::optional<uint64_t> mem_max;
};

void MergeProcess(ProcessAcc& into, const ProcessAcc& more) {
  into.first_ms = std::min(into.first_ms, more.first_ms);
  into.last_ms = std::max(into.last_ms, more.last_ms);
  into.samples += more.samples;
  into.observed_ms += more.observed_ms;
  into.mem_n += more.mem_n;
  into.mem_sum += more.mem_sum;
  KeepMax(into.mem_max, more.mem_max);
}

using GpuKey = std::pair<int64_t, int>;                     // bucket, gpu
using ProcessKey = std::tuple<int64_t, int, int64_t>;       // bucket, gpu, process id

// Bucket widths of ComputeFromRaw besides the roll-ups' 60,000 and 3,600,000 ms.
constexpr int64_t kPerSample = 0;    // one row per sample, in the order read
constexpr int64_t kWholeRange = -1;  // one row per GPU (per process and GPU) over the range

enum class Parts { kAll, kGpus, kProcesses };

struct Computed {
  std::map<GpuKey, GpuAcc> gpus;  // bucketed rows
  std::vector<GpuAcc> gpu_rows;   // kPerSample rows, by time then GPU
  std::map<ProcessKey, ProcessAcc> processes;
  std::vector<ProcessAcc> process_rows;
};

ProcessUse UseOf(const ProcessAcc& a, const ProcessIdentity& who) {
  ProcessUse u;
  static_cast<ProcessIdentity&>(u) = who;
  u.gpu = a.gpu;
  u.from_ms = a.first_ms;
  u.to_ms = a.last_ms;
  u.samples = a.samples;
  u.observed_ms = a.observed_ms;
  u.gpu_memory_n = a.mem_n;
  u.gpu_memory_sum = a.mem_sum;
  u.gpu_memory_max = a.mem_max;
  return u;
}
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
  switch (PrimaryCode(rc)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return FlushState::kLocked;
    case SQLITE_FULL:
      return FlushState::kFull;
    default:
      return FlushState::kIoError;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------

std::string_view ToString(Resolution r) { return NameOf(kResolutions, r); }

Resolution ParseResolution(const std::string& text, const std::string& field) {
  return ParseEnumName(kResolutions, text, field);
}

int64_t BucketWidthMs(Resolution r) {
  switch (r) {
    case Resolution::kMinute:
      return kMillisecondsPerMinute;
    case Resolution::kHour:
      return kMillisecondsPerHour;
    case Resolution::kRaw:
      break;
  }
  return 0;
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

namespace {
std::optional<double> MeanOf(int64_t sum, int64_t n, double scale = 1) {
  if (n <= 0) {
    return std::nullopt;
  }
  return static_cast<double>(sum) / static_cast<double>(n) / scale;
}
}  // namespace

std::optional<double> GpuRollup::UtilizationGpuMean() const { return MeanOf(utilization_gpu_sum, utilization_gpu_n); }
std::optional<double> GpuRollup::UtilizationMemoryMean() const {
  return MeanOf(utilization_memory_sum, utilization_memory_n);
}
std::optional<double> GpuRollup::MemoryUsedMean() const { return MeanOf(memory_used_sum, memory_used_n); }
std::optional<double> GpuRollup::PowerMean() const {
  return MeanOf(power_sum_mw, power_n, static_cast<double>(kMilliwattsPerWatt));
}
std::optional<double> ProcessUse::GpuMemoryMean() const { return MeanOf(gpu_memory_sum, gpu_memory_n); }

void MergeRollup(GpuRollup& into, const GpuRollup& more) {
  into.samples += more.samples;
  into.observed_ms += more.observed_ms;
  into.busy_ms += more.busy_ms;
  into.active_ms += more.active_ms;
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

Resolution StoreExtent::FinestCovering(const TimeRange& range) const {
  if (raw_from_ms && *raw_from_ms <= range.from_ms) {
    return Resolution::kRaw;
  }
  if (minute_from_ms && *minute_from_ms <= range.from_ms) {
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

// ---------------------------------------------------------------------------------------------

struct MeterStore::Impl {
  std::string path;
  // The process table's pod_uid column (schema 2); "NULL" when reading a version-1 file
  // read-only (a writer migrates it on open).
  std::string pod_uid_column = "pod_uid";
  std::string PodUid(const char* alias) const {
    return pod_uid_column == "pod_uid" ? std::string(alias) + ".pod_uid" : pod_uid_column;
  }
  StoreOptions options;
  sqlite3* db = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Stmt>> statements;

  std::deque<GpuSample> gpu_buffer;
  std::deque<ProcessSample> process_buffer;

  // Ids of device and process rows, committed and written by the open transaction.
  std::map<std::string, int64_t> device_ids;
  std::map<ProcessIdentity, int64_t> process_ids;
  std::map<std::string, int64_t> pending_device_ids;
  std::map<ProcessIdentity, int64_t> pending_process_ids;

  // Committed meta values.
  std::optional<int64_t> minutes_done;
  std::optional<int64_t> hours_done;
  std::optional<int64_t> raw_cut;
  std::optional<int64_t> samples_complete;

  StoreCounters counters;
  std::optional<int64_t> last_flush_ms;
  FlushState last_state = FlushState::kOk;

  ~Impl() {
    statements.clear();
    if (db != nullptr) {
      sqlite3_close_v2(db);
    }
  }

  int64_t MaxGapMs() const {
    return static_cast<int64_t>(std::llround(options.max_sample_gap_seconds * kMillisecondsPerSecond));
  }
  int64_t NominalMs() const {
    return static_cast<int64_t>(std::llround(options.sample_interval_seconds * kMillisecondsPerSecond));
  }

  Use Q(const std::string& sql) {
    auto it = statements.find(sql);
    if (it == statements.end()) {
      it = statements.emplace(sql, std::make_unique<Stmt>(db, sql)).first;
    }
    it->second->Reset();
    return Use(*it->second);
  }

  void Exec(const std::string& sql) {
    char* message = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
    if (rc != SQLITE_OK) {
      std::string text = message != nullptr ? message : sqlite3_errstr(rc);
      sqlite3_free(message);
      throw SqliteFailure(rc, sql.substr(0, sql.find_first_of("(;\n")) + ": " + text + " (" + CodeName(rc) + ")");
    }
  }

  int64_t PragmaInt(const std::string& name) {
    auto q = Q("PRAGMA " + name);
    return q->Step() ? q->Int(0) : 0;
  }

  std::optional<int64_t> Meta(const char* key) {
    auto q = Q("SELECT value FROM meta WHERE key = ?1");
    q->Bind(1, key);
    return q->Step() ? q->OptInt(0) : std::nullopt;
  }
  void SetMeta(const char* key, int64_t value) {
    auto q = Q("INSERT OR REPLACE INTO meta(key, value) VALUES(?1, ?2)");
    q->Bind(1, key);
    q->Bind(2, value);
    q->Run();
  }
  void LoadMeta() {
    minutes_done = Meta(kMetaMinutesDone);
    hours_done = Meta(kMetaHoursDone);
    raw_cut = Meta(kMetaRawCut);
    samples_complete = Meta(kMetaSamplesComplete);
  }

  // --- ids -----------------------------------------------------------------------------------

  int64_t DeviceId(const std::string& uuid) {
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
    id = sqlite3_last_insert_rowid(db);
    pending_device_ids.emplace(uuid, id);
    return id;
  }

  int64_t ProcessId(const ProcessIdentity& p) {
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
    const int64_t id = sqlite3_last_insert_rowid(db);
    pending_process_ids.emplace(p, id);
    return id;
  }

  static void BindIdentity(Stmt& s, const ProcessIdentity& p) {
    s.Bind(1, p.pid);
    s.Bind(2, p.user);
    s.Bind(3, p.command);
    s.Bind(4, p.container_id);
    s.Bind(5, p.pod_namespace);
    s.Bind(6, p.pod_name);
    s.Bind(7, p.slurm_job_id);
    s.Bind(8, p.pod_uid);
  }

  void CommitIds() {
    device_ids.merge(pending_device_ids);
    process_ids.merge(pending_process_ids);
    pending_device_ids.clear();
    pending_process_ids.clear();
  }
  void DiscardIds() {
    pending_device_ids.clear();
    pending_process_ids.clear();
  }

  std::map<int64_t, std::string> DeviceNames() {
    std::map<int64_t, std::string> names;
    auto q = Q("SELECT id, uuid FROM device");
    while (q->Step()) {
      names.emplace(q->Int(0), q->OptText(1).value_or(""));
    }
    return names;
  }

  ProcessIdentity IdentityOf(int64_t process_id) {
    auto q = Q(
        "SELECT pid, user, command, container_id, pod_namespace, pod_name, slurm_job_id, " + pod_uid_column +
        " FROM process "
        "WHERE id = ?1");
    q->Bind(1, process_id);
    ProcessIdentity p;
    if (q->Step()) {
      ReadIdentity(*q, 0, p);
    }
    return p;
  }

  static void ReadIdentity(Stmt& s, int first, ProcessIdentity& p) {
    p.pid = static_cast<int>(s.Int(first));
    p.user = s.OptText(first + 1);
    p.command = s.OptText(first + 2);
    p.container_id = s.OptText(first + 3);
    p.pod_namespace = s.OptText(first + 4);
    p.pod_name = s.OptText(first + 5);
    p.slurm_job_id = s.OptText(first + 6);
    p.pod_uid = s.OptText(first + 7);
  }

  // --- writing samples -----------------------------------------------------------------------

  void InsertGpu(const GpuSample& s) {
    std::optional<int64_t> device;
    if (s.uuid) {
      device = DeviceId(*s.uuid);
    }
    std::optional<int64_t> power_mw;
    if (s.power) {
      power_mw = static_cast<int64_t>(std::llround(*s.power * kMilliwattsPerWatt));
    }
    auto q = Q(
        "INSERT OR REPLACE INTO gpu_sample(time_ms, gpu, device_id, util_gpu, util_mem, mem_used, mem_total, "
        "power_mw, energy_mj, temp_c, sm_clock_mhz, clock_events) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
        "?11, ?12)");
    q->Bind(1, s.time_ms);
    q->Bind(2, s.gpu);
    q->Bind(3, device);
    q->Bind(4, s.utilization_gpu);
    q->Bind(5, s.utilization_memory);
    q->Bind(6, s.memory_used);
    q->Bind(7, s.memory_total);
    q->Bind(8, power_mw);
    q->Bind(9, s.energy_mj);
    q->Bind(10, s.temperature);
    q->Bind(11, s.sm_clock);
    q->Bind(12, s.clock_event_reasons);
    q->Run();
  }

  void InsertProcess(const ProcessSample& s) {
    const int64_t id = ProcessId(s);
    auto q = Q(
        "INSERT OR REPLACE INTO process_sample(time_ms, gpu, process_id, gpu_memory) VALUES(?1, ?2, ?3, ?4)");
    q->Bind(1, s.time_ms);
    q->Bind(2, s.gpu);
    q->Bind(3, id);
    q->Bind(4, s.gpu_memory);
    q->Run();
  }

  // --- roll-ups ------------------------------------------------------------------------------

  // Roll-up rows of the raw samples in [from, to), one bucket per `width` ms (or kPerSample,
  // kWholeRange). Each sample's interval, energy and busy time are measured from the previous
  // sample of its GPU (docs/meter-store.md: roll-ups), which may lie before `from`.
  Computed ComputeFromRaw(int64_t from, int64_t to, int64_t width, std::optional<int> only_gpu,
                          Parts parts = Parts::kAll) {
    Computed c;
    const int64_t max_gap = MaxGapMs();
    const int64_t nominal = NominalMs();
    auto bucket_of = [&](int64_t t) { return width == kWholeRange ? from : FloorTo(t, width); };
    if (parts != Parts::kProcesses) {
      ComputeGpus(from, to, width, only_gpu, max_gap, nominal, bucket_of, c);
    }
    if (parts != Parts::kGpus) {
      ComputeProcesses(from, to, width, only_gpu, max_gap, nominal, bucket_of, c);
    }
    return c;
  }

  template <typename BucketOf>
  void ComputeGpus(int64_t from, int64_t to, int64_t width, std::optional<int> only_gpu, int64_t max_gap,
                   int64_t nominal, const BucketOf& bucket_of, Computed& c) {

    // When a process was on each GPU (sorted: the table is clustered on time).
    std::map<int, std::vector<int64_t>> present;
    {
      auto q = Q(
          "SELECT time_ms, gpu FROM process_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND (?3 IS NULL OR gpu = ?3) "
          "ORDER BY time_ms");
      q->Bind(1, from - max_gap);
      q->Bind(2, to);
      q->Bind(3, only_gpu);
      while (q->Step()) {
        present[static_cast<int>(q->Int(1))].push_back(q->Int(0));
      }
    }
    auto process_in = [&present](int gpu, int64_t after, int64_t upto) {
      auto it = present.find(gpu);
      if (it == present.end()) {
        return false;
      }
      auto t = std::upper_bound(it->second.begin(), it->second.end(), after);
      return t != it->second.end() && *t <= upto;
    };

    struct Prev {
      int64_t time_ms = 0;
      std::optional<uint64_t> energy_mj;
    };
    std::map<int, std::optional<Prev>> prev;
    auto q = Q(std::string("SELECT ") + kGpuSampleSelect +
               " FROM gpu_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND (?3 IS NULL OR gpu = ?3) "
               "ORDER BY time_ms, gpu");
    q->Bind(1, from);
    q->Bind(2, to);
    q->Bind(3, only_gpu);
    while (q->Step()) {
      const GpuRow s = ReadGpuRow(*q);
      auto it = prev.find(s.gpu);
      if (it == prev.end()) {
        std::optional<Prev> before;
        auto p = Q(
            "SELECT time_ms, energy_mj FROM gpu_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND gpu = ?3 "
            "ORDER BY time_ms DESC LIMIT 1");
        p->Bind(1, from - max_gap);
        p->Bind(2, from);
        p->Bind(3, s.gpu);
        if (p->Step()) {
          before = Prev{p->Int(0), p->OptUint(1)};
        }
        it = prev.emplace(s.gpu, before).first;
      }
      int64_t dt = nominal;
      std::optional<uint64_t> energy;
      if (s.energy_mj) {
        energy = 0;
      }
      if (it->second && s.time_ms - it->second->time_ms <= max_gap) {
        dt = s.time_ms - it->second->time_ms;
        if (s.energy_mj && it->second->energy_mj) {
          // A counter that went down was reset (driver reload): it counted from 0 since.
          energy = *s.energy_mj >= *it->second->energy_mj ? *s.energy_mj - *it->second->energy_mj : *s.energy_mj;
        }
      }
      const bool active = s.util_gpu && *s.util_gpu > 0;
      const bool busy = active || process_in(s.gpu, s.time_ms - dt, s.time_ms);
      GpuAcc* acc = nullptr;
      if (width == kPerSample) {
        acc = &c.gpu_rows.emplace_back();
      } else {
        auto [at, inserted] = c.gpus.try_emplace(GpuKey{bucket_of(s.time_ms), s.gpu});
        acc = &at->second;
      }
      if (acc->r.samples == 0) {
        acc->r.bucket_ms = bucket_of(s.time_ms);
        acc->r.width_ms = width == kWholeRange ? to - from : width;
        acc->r.gpu = s.gpu;
      }
      AddSample(*acc, s, dt, energy, busy);
      it->second = Prev{s.time_ms, s.energy_mj};
    }
  }

  template <typename BucketOf>
  void ComputeProcesses(int64_t from, int64_t to, int64_t width, std::optional<int> only_gpu, int64_t max_gap,
                        int64_t nominal, const BucketOf& bucket_of, Computed& c) {

    std::map<std::pair<int, int64_t>, std::optional<int64_t>> prev_process;  // (gpu, process) -> time
    auto pq = Q(
        "SELECT time_ms, gpu, process_id, gpu_memory FROM process_sample WHERE time_ms >= ?1 AND time_ms < ?2 "
        "AND (?3 IS NULL OR gpu = ?3) ORDER BY time_ms, gpu, process_id");
    pq->Bind(1, from);
    pq->Bind(2, to);
    pq->Bind(3, only_gpu);
    while (pq->Step()) {
      const int64_t t = pq->Int(0);
      const int gpu = static_cast<int>(pq->Int(1));
      const int64_t id = pq->Int(2);
      const std::optional<uint64_t> memory = pq->OptUint(3);
      auto it = prev_process.find({gpu, id});
      if (it == prev_process.end()) {
        auto p = Q(
            "SELECT max(time_ms) FROM process_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND gpu = ?3 "
            "AND process_id = ?4");
        p->Bind(1, from - max_gap);
        p->Bind(2, from);
        p->Bind(3, gpu);
        p->Bind(4, id);
        std::optional<int64_t> before;
        if (p->Step()) {
          before = p->OptInt(0);
        }
        it = prev_process.emplace(std::make_pair(gpu, id), before).first;
      }
      const int64_t dt = it->second && t - *it->second <= max_gap ? t - *it->second : nominal;
      it->second = t;
      ProcessAcc* acc = nullptr;
      if (width == kPerSample) {
        acc = &c.process_rows.emplace_back();
      } else {
        auto [at, inserted] = c.processes.try_emplace(ProcessKey{bucket_of(t), gpu, id});
        acc = &at->second;
      }
      ProcessAcc& a = *acc;
      if (a.samples == 0) {
        a.bucket_ms = bucket_of(t);
        a.gpu = gpu;
        a.process_id = id;
        a.first_ms = t;
      }
      a.last_ms = t;
      a.samples += 1;
      a.observed_ms += dt;
      if (memory) {
        a.mem_n += 1;
        a.mem_sum += AsInt64(*memory);
        KeepMax(a.mem_max, memory);
      }
    }
  }

  // Processes seen in the range, computed from the raw samples: one row per sample
  // (kPerSample) or per process and GPU (kWholeRange). Inside a read transaction.
  std::vector<ProcessUse> ProcessUseFromRaw(const TimeRange& range, std::optional<int> gpu, int64_t width) {
    Computed c = ComputeFromRaw(range.from_ms, range.to_ms, width, gpu, Parts::kProcesses);
    std::map<int64_t, ProcessIdentity> identities;
    std::vector<ProcessUse> out;
    auto add = [&](const ProcessAcc& acc) {
      auto it = identities.find(acc.process_id);
      if (it == identities.end()) {
        it = identities.emplace(acc.process_id, IdentityOf(acc.process_id)).first;
      }
      out.push_back(UseOf(acc, it->second));
    };
    for (const ProcessAcc& acc : c.process_rows) {
      add(acc);
    }
    for (const auto& [key, acc] : c.processes) {
      add(acc);
    }
    return out;
  }

  static std::string GpuTable(Resolution r) { return r == Resolution::kMinute ? "gpu_minute" : "gpu_hour"; }
  static std::string ProcessTable(Resolution r) { return r == Resolution::kMinute ? "process_minute" : "process_hour"; }

  static GpuAcc ReadGpuRollup(Stmt& s, int64_t width) {
    GpuAcc a;
    GpuRollup& r = a.r;
    r.bucket_ms = s.Int(0);
    r.width_ms = width;
    r.gpu = static_cast<int>(s.Int(1));
    a.device_id = s.OptInt(2);
    r.samples = s.Int(3);
    r.observed_ms = s.Int(4);
    r.busy_ms = s.Int(5);
    r.active_ms = s.Int(6);
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
    r.clock_event_reasons = AsUint64(s.Int(22));
    return a;
  }

  void WriteGpuRollup(const std::string& table, const GpuAcc& a) {
    std::string sql = "INSERT OR REPLACE INTO " + table + "(" + kGpuRollupSelect + ") VALUES(";
    for (int i = 1; i <= kGpuRollupColumnCount; ++i) {
      sql += (i > 1 ? ", ?" : "?") + std::to_string(i);
    }
    sql += ")";
    const GpuRollup& r = a.r;
    auto q = Q(sql);
    q->Bind(1, r.bucket_ms);
    q->Bind(2, r.gpu);
    q->Bind(3, a.device_id);
    q->Bind(4, r.samples);
    q->Bind(5, r.observed_ms);
    q->Bind(6, r.busy_ms);
    q->Bind(7, r.active_ms);
    q->Bind(8, r.utilization_gpu_n);
    q->Bind(9, r.utilization_gpu_sum);
    q->Bind(10, r.utilization_gpu_min);
    q->Bind(11, r.utilization_gpu_max);
    q->Bind(12, r.utilization_memory_n);
    q->Bind(13, r.utilization_memory_sum);
    q->Bind(14, r.memory_used_n);
    q->Bind(15, r.memory_used_sum);
    q->Bind(16, r.memory_used_max);
    q->Bind(17, r.memory_total);
    q->Bind(18, r.power_n);
    q->Bind(19, r.power_sum_mw);
    q->Bind(20, r.power_max_mw);
    q->Bind(21, r.energy_mj);
    q->Bind(22, r.temperature_max);
    q->Bind(23, r.clock_event_reasons);
    q->Run();
  }

  static ProcessAcc ReadProcessRollup(Stmt& s, int64_t width) {
    ProcessAcc a;
    a.bucket_ms = s.Int(0);
    a.gpu = static_cast<int>(s.Int(1));
    a.process_id = s.Int(2);
    a.samples = s.Int(3);
    a.observed_ms = s.Int(4);
    a.mem_n = s.Int(5);
    a.mem_sum = s.Int(6);
    a.mem_max = s.OptUint(7);
    a.first_ms = a.bucket_ms;
    a.last_ms = a.bucket_ms + width;
    return a;
  }

  void WriteProcessRollup(const std::string& table, const ProcessAcc& a) {
    auto q = Q("INSERT OR REPLACE INTO " + table + "(" + kProcessRollupSelect +
               ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    q->Bind(1, a.bucket_ms);
    q->Bind(2, a.gpu);
    q->Bind(3, a.process_id);
    q->Bind(4, a.samples);
    q->Bind(5, a.observed_ms);
    q->Bind(6, a.mem_n);
    q->Bind(7, a.mem_sum);
    q->Bind(8, a.mem_max);
    q->Run();
  }

  void DeleteBuckets(const std::string& table, int64_t from, int64_t to) {
    auto q = Q("DELETE FROM " + table + " WHERE bucket_ms >= ?1 AND bucket_ms < ?2");
    q->Bind(1, from);
    q->Bind(2, to);
    q->Run();
  }

  std::optional<int64_t> MinOf(const std::string& table, const std::string& column) {
    auto q = Q("SELECT min(" + column + ") FROM " + table);
    return q->Step() ? q->OptInt(0) : std::nullopt;
  }
  std::optional<int64_t> MaxOf(const std::string& table, const std::string& column) {
    auto q = Q("SELECT max(" + column + ") FROM " + table);
    return q->Step() ? q->OptInt(0) : std::nullopt;
  }
  static std::optional<int64_t> Later(std::optional<int64_t> a, std::optional<int64_t> b) {
    if (!a) {
      return b;
    }
    return b ? std::max(*a, *b) : a;
  }
  // The newest sample the file holds (GPU or process); roll-ups and retention never run ahead of
  // it, whatever clock they are given (docs/meter-store.md: the store's own time).
  std::optional<int64_t> NewestSample() { return Later(MaxOf("gpu_sample", "time_ms"), MaxOf("process_sample", "time_ms")); }
  // The store's own time (retention): the newest sample held or waiting in memory (a full file
  // keeps new samples buffered; retention must still make room for them), else the end of the
  // newest roll-up.
  std::optional<int64_t> NewestData() {
    std::optional<int64_t> t = NewestSample();
    for (const GpuSample& s : gpu_buffer) {
      t = Later(t, s.time_ms);
    }
    for (const ProcessSample& s : process_buffer) {
      t = Later(t, s.time_ms);
    }
    if (t) {
      return t;
    }
    if (auto m = MaxOf("gpu_minute", "bucket_ms")) {
      t = Later(t, *m + kMillisecondsPerMinute);
    }
    if (auto h = MaxOf("gpu_hour", "bucket_ms")) {
      t = Later(t, *h + kMillisecondsPerHour);
    }
    return t;
  }
  // Samples before this are dropped as too old: the raw cut (rounded up to its minute, for files
  // cut before cuts were whole minutes) plus the longest gap, so a minute re-rolled because of a
  // late sample still finds the sample before it and measures the same intervals as the first
  // roll-up did.
  std::optional<int64_t> AcceptFrom() const {
    if (!raw_cut) {
      return std::nullopt;
    }
    const int64_t margin = -FloorTo(-MaxGapMs(), kMillisecondsPerMinute);  // the gap, rounded up
    return -FloorTo(-*raw_cut, kMillisecondsPerMinute) + margin;
  }

  static std::optional<int64_t> Earlier(std::optional<int64_t> a, std::optional<int64_t> b) {
    if (!a) {
      return b;
    }
    if (!b) {
      return a;
    }
    return std::min(*a, *b);
  }

  // The oldest sample still in memory beyond the first `skip_gpu` / `skip_process` rows (those
  // being written now): minutes from its minute on are not complete yet.
  std::optional<int64_t> OldestWaiting(std::size_t skip_gpu, std::size_t skip_process) const {
    std::optional<int64_t> oldest;
    for (std::size_t i = skip_gpu; i < gpu_buffer.size(); ++i) {
      oldest = Earlier(oldest, gpu_buffer[i].time_ms);
    }
    for (std::size_t i = skip_process; i < process_buffer.size(); ++i) {
      oldest = Earlier(oldest, process_buffer[i].time_ms);
    }
    return oldest;
  }

  struct MetaUpdate {
    std::optional<int64_t> minutes_done;
    std::optional<int64_t> hours_done;
  };

  // Inside a write transaction: rolls up every minute completed by `now_ms` (and not waiting
  // on buffered samples) that is not rolled up yet, plus, when samples older than the minute
  // watermark were written (`late_from`), every rolled-up minute from that one on; then the
  // hours whose minutes are all rolled up, likewise. Writes the watermarks to meta; `update`
  // gets them to apply after the commit.
  RollUpResult RollUpInTransaction(int64_t now_ms, std::optional<int64_t> late_from, std::size_t skip_gpu,
                                   std::size_t skip_process, MetaUpdate& update) {
    RollUpResult result;
    result.minutes_done_ms = minutes_done;
    result.hours_done_ms = hours_done;
    update = {minutes_done, hours_done};

    // Never past the minute of the newest sample held: a clock ahead of the data (a replay's
    // end, a wall clock) marks nothing done that no sample has reached.
    const std::optional<int64_t> newest = NewestSample();
    if (!newest) {
      return result;
    }
    int64_t m_limit = std::min(FloorTo(now_ms, kMillisecondsPerMinute),
                               FloorTo(*newest, kMillisecondsPerMinute) + kMillisecondsPerMinute);
    if (auto waiting = OldestWaiting(skip_gpu, skip_process)) {
      m_limit = std::min(m_limit, FloorTo(*waiting, kMillisecondsPerMinute));
    }
    std::optional<int64_t> m_start = minutes_done;
    if (!m_start) {
      const auto first = Earlier(MinOf("gpu_sample", "time_ms"), MinOf("process_sample", "time_ms"));
      if (!first) {
        return result;
      }
      m_start = FloorTo(*first, kMillisecondsPerMinute);
    }
    if (late_from) {
      m_start = std::min(*m_start, FloorTo(*late_from, kMillisecondsPerMinute));
    }
    const int64_t m_end = std::max(minutes_done.value_or(std::numeric_limits<int64_t>::min()), m_limit);
    if (*m_start >= m_end) {
      return result;
    }

    Computed minutes = ComputeFromRaw(*m_start, m_end, kMillisecondsPerMinute, std::nullopt);
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
    result.minutes_done_ms = m_end;

    // Hours from the minute rows: an hour is complete when all its minutes are.
    std::optional<int64_t> h_start = hours_done;
    if (!h_start) {
      const auto first = Earlier(MinOf("gpu_minute", "bucket_ms"), MinOf("process_minute", "bucket_ms"));
      h_start = FloorTo(first.value_or(*m_start), kMillisecondsPerHour);
    }
    h_start = std::min(*h_start, FloorTo(*m_start, kMillisecondsPerHour));
    const int64_t h_end =
        std::max(hours_done.value_or(std::numeric_limits<int64_t>::min()), FloorTo(m_end, kMillisecondsPerHour));
    if (*h_start >= h_end) {
      return result;
    }
    std::map<GpuKey, GpuAcc> hours;
    {
      auto q = Q(std::string("SELECT ") + kGpuRollupSelect +
                 " FROM gpu_minute WHERE bucket_ms >= ?1 AND bucket_ms < ?2 ORDER BY bucket_ms, gpu");
      q->Bind(1, *h_start);
      q->Bind(2, h_end);
      while (q->Step()) {
        const GpuAcc minute = ReadGpuRollup(*q, kMillisecondsPerMinute);
        const GpuKey key{FloorTo(minute.r.bucket_ms, kMillisecondsPerHour), minute.r.gpu};
        auto [it, inserted] = hours.try_emplace(key, minute);
        if (inserted) {
          it->second.r.bucket_ms = key.first;
          it->second.r.width_ms = kMillisecondsPerHour;
        } else {
          MergeAcc(it->second, minute);
        }
      }
    }
    std::map<ProcessKey, ProcessAcc> process_hours;
    {
      auto q = Q(std::string("SELECT ") + kProcessRollupSelect +
                 " FROM process_minute WHERE bucket_ms >= ?1 AND bucket_ms < ?2 ORDER BY bucket_ms, gpu, process_id");
      q->Bind(1, *h_start);
      q->Bind(2, h_end);
      while (q->Step()) {
        const ProcessAcc minute = ReadProcessRollup(*q, kMillisecondsPerMinute);
        const ProcessKey key{FloorTo(minute.bucket_ms, kMillisecondsPerHour), minute.gpu, minute.process_id};
        auto [it, inserted] = process_hours.try_emplace(key, minute);
        if (inserted) {
          it->second.bucket_ms = std::get<0>(key);
        } else {
          MergeProcess(it->second, minute);
        }
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
    result.hours_done_ms = h_end;
    return result;
  }

  // --- retention -----------------------------------------------------------------------------

  // Deletes rows with `column` < cut, at most about `batch` rows per statement (each its own
  // transaction, so the write lock is held briefly). Returns the rows deleted.
  int64_t DeleteOlder(const std::string& table, const std::string& column, int64_t cut) {
    // The boundary is the time of the batch-th oldest row: rows up to it go (a few more when
    // several GPUs share that time), and with fewer rows left, all before the cut.
    auto q = Q("DELETE FROM " + table + " WHERE " + column + " < ?1 AND " + column + " <= COALESCE((SELECT " +
               column + " FROM " + table + " WHERE " + column + " < ?1 ORDER BY " + column +
               " LIMIT 1 OFFSET ?2), ?1)");
    int64_t total = 0;
    for (;;) {
      q->Reset();
      q->Bind(1, cut);
      q->Bind(2, options.retention_batch_rows - 1);
      q->Run();
      const int changed = sqlite3_changes(db);
      if (changed == 0) {
        break;
      }
      total += changed;
    }
    return total;
  }

  // A write transaction (BEGIN IMMEDIATE: the write lock is taken at the start, so a busy
  // database fails here, before any work); rolled back unless committed.
  class Transaction {
   public:
    explicit Transaction(Impl& impl) : impl_(impl) { impl_.Exec("BEGIN IMMEDIATE"); }
    ~Transaction() {
      if (!committed_ && sqlite3_get_autocommit(impl_.db) == 0) {
        sqlite3_exec(impl_.db, "ROLLBACK", nullptr, nullptr, nullptr);
      }
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void Commit() {
      impl_.Exec("COMMIT");
      committed_ = true;
    }

   private:
    Impl& impl_;
    bool committed_ = false;
  };

  // A read transaction: the queries of one call see one snapshot.
  class ReadTransaction {
   public:
    explicit ReadTransaction(Impl& impl) : impl_(impl) { impl_.Exec("BEGIN"); }
    ~ReadTransaction() {
      if (sqlite3_get_autocommit(impl_.db) == 0) {
        sqlite3_exec(impl_.db, "COMMIT", nullptr, nullptr, nullptr);
      }
    }
    ReadTransaction(const ReadTransaction&) = delete;
    ReadTransaction& operator=(const ReadTransaction&) = delete;

   private:
    Impl& impl_;
  };

  void Trim() {
    while (gpu_buffer.size() + process_buffer.size() > options.max_buffered_samples) {
      // The oldest first; at one time, process rows before GPU samples: a step with more
      // processes than the bound loses process rows, never the GPU samples bills are made of.
      const bool drop_gpu = process_buffer.empty() ||
                            (!gpu_buffer.empty() && gpu_buffer.front().time_ms < process_buffer.front().time_ms);
      if (drop_gpu) {
        gpu_buffer.pop_front();
      } else {
        process_buffer.pop_front();
      }
      ++counters.dropped_overflow;
    }
  }

  // Version 1 -> 2: process.pod_uid (the Kubernetes pod UID from the process's cgroup).
  void Migrate(int64_t from_version) {
    Transaction tx(*this);
    if (PragmaInt("user_version") == from_version && from_version == 1) {
      Exec("ALTER TABLE process ADD COLUMN pod_uid TEXT");
      Exec("PRAGMA user_version = 2");
    }
    tx.Commit();
  }

  void CreateSchema() {
    Transaction tx(*this);
    // Another process may have created it between our check and the lock.
    if (PragmaInt("application_id") == kMeterApplicationId) {
      tx.Commit();
      return;
    }
    Exec(kSchema);
    for (const char* table : {"gpu_minute", "gpu_hour"}) {
      Exec(std::string("CREATE TABLE ") + table + "(" + kGpuRollupColumns + ") WITHOUT ROWID");
    }
    for (const char* table : {"process_minute", "process_hour"}) {
      Exec(std::string("CREATE TABLE ") + table + "(" + kProcessRollupColumns + ") WITHOUT ROWID");
    }
    Exec("PRAGMA application_id = " + std::to_string(kMeterApplicationId));
    Exec("PRAGMA user_version = " + std::to_string(kMeterSchemaVersion));
    tx.Commit();
  }
};

// ---------------------------------------------------------------------------------------------

MeterStore::MeterStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
MeterStore::MeterStore(MeterStore&&) noexcept = default;
MeterStore& MeterStore::operator=(MeterStore&&) noexcept = default;
MeterStore::~MeterStore() = default;

const std::string& MeterStore::path() const { return impl_->path; }
const StoreOptions& MeterStore::options() const { return impl_->options; }

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
  const int flags = options.read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(path.c_str(), &impl->db, flags, nullptr);
  if (rc == SQLITE_OK && options.read_only && OnReadOnlyMedia(path)) {
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
    sqlite3_close_v2(impl->db);
    impl->db = nullptr;
    rc = sqlite3_open_v2(("file:" + UriPath(path) + "?immutable=1").c_str(), &impl->db,
                         SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
  }
  if (rc != SQLITE_OK) {
    throw EnvironmentError("cannot open meter database " + path + ": " + Describe(impl->db, rc, "open"));
  }
  sqlite3_extended_result_codes(impl->db, 1);
  sqlite3_busy_timeout(impl->db, options.busy_timeout_ms);
  if (!options.read_only && sqlite3_db_readonly(impl->db, "main") == 1) {
    throw EnvironmentError("cannot write meter database " + path + ": the file or its folder is read-only");
  }
  try {
    const auto application_id = impl->PragmaInt("application_id");
    const auto version = impl->PragmaInt("user_version");
    int64_t tables = 0;
    {
      auto q = impl->Q("SELECT count(*) FROM sqlite_master");
      tables = q->Step() ? q->Int(0) : 0;
    }
    bool create = false;
    if (version == 1 && options.read_only) {
      impl->pod_uid_column = "NULL";
    }
    if (application_id != kMeterApplicationId) {
      if (application_id != 0 || version != 0 || tables != 0) {
        throw InputError("not a gpuplan meter database (SQLite application_id " + std::to_string(application_id) +
                             ", " + std::to_string(tables) + " schema objects)",
                         path);
      }
      if (options.read_only) {
        throw InputError("not a gpuplan meter database (an empty SQLite file)", path);
      }
      create = true;
    } else if (version > kMeterSchemaVersion) {
      throw InputError("written by a newer gpuplan: schema version " + std::to_string(version) +
                           ", this gpuplan reads up to version " + std::to_string(kMeterSchemaVersion) +
                           "; upgrade gpuplan to read it",
                       path, 0, "user_version");
    } else if (version < 1) {
      throw InputError("damaged gpuplan meter database: schema version " + std::to_string(version), path, 0,
                       "user_version");
    }
    if (!options.read_only) {
      std::string mode;
      {
        auto q = impl->Q("PRAGMA journal_mode = WAL");
        if (q->Step()) {
          mode = q->OptText(0).value_or("");
        }
      }
      if (mode != "wal") {
        throw EnvironmentError("meter database " + path +
                               ": cannot use write-ahead logging (journal_mode is '" + mode +
                               "'; a network file system?)");
      }
      impl->Exec("PRAGMA synchronous = NORMAL");
      // After a checkpoint the WAL file is cut back to this size (a catch-up may have grown it).
      impl->Exec("PRAGMA journal_size_limit = " + std::to_string(kWalSizeLimitBytes));
      if (options.max_database_bytes) {
        const auto page_size = static_cast<uint64_t>(impl->PragmaInt("page_size"));
        impl->Exec("PRAGMA max_page_count = " + std::to_string(*options.max_database_bytes / page_size));
      }
      if (create) {
        impl->CreateSchema();
      } else if (version < kMeterSchemaVersion) {
        impl->Migrate(version);
      }
    }
    impl->LoadMeta();
  } catch (const SqliteFailure& f) {
    Translate(f, path);
  }
  return MeterStore(std::move(impl));
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

bool MeterStore::FlushDue(int64_t now_ms) const {
  if (!impl_->last_flush_ms || impl_->last_state == FlushState::kCatchingUp) {
    return true;
  }
  const auto every = static_cast<int64_t>(std::llround(impl_->options.flush_seconds * kMillisecondsPerSecond));
  return now_ms - *impl_->last_flush_ms >= every;
}

FlushStatus MeterStore::Flush(int64_t now_ms) {
  Impl& m = *impl_;
  if (m.options.read_only) {
    throw EnvironmentError("meter database " + m.path + " was opened read-only");
  }
  const auto started = std::chrono::steady_clock::now();
  FlushStatus status;
  m.last_flush_ms = now_ms;
  ++m.counters.flushes;
  const std::size_t n_gpu = std::min(m.gpu_buffer.size(), m.options.max_samples_per_flush);
  const std::size_t n_process = std::min(m.process_buffer.size(), m.options.max_samples_per_flush);
  const bool nothing_to_do = n_gpu == 0 && n_process == 0 && m.minutes_done &&
                             FloorTo(now_ms, kMillisecondsPerMinute) <= *m.minutes_done;
  if (!nothing_to_do) {
    try {
      Impl::Transaction tx(m);
      std::optional<int64_t> late_from;
      uint64_t too_old = 0;
      const std::optional<int64_t> accept_from = m.AcceptFrom();
      auto keep = [&](int64_t t) {
        // Only a late sample (its minute rolled up) can be too old; a new one is rolled up
        // for the first time from whatever the file holds.
        if (accept_from && t < *accept_from && m.minutes_done && t < *m.minutes_done) {
          ++too_old;  // its minute is rolled up and its neighbours deleted: it cannot count
          return false;
        }
        if (m.minutes_done && t < *m.minutes_done) {
          late_from = Impl::Earlier(late_from, t);
        }
        return true;
      };
      for (std::size_t i = 0; i < n_gpu; ++i) {
        if (keep(m.gpu_buffer[i].time_ms)) {
          m.InsertGpu(m.gpu_buffer[i]);
        }
      }
      for (std::size_t i = 0; i < n_process; ++i) {
        if (keep(m.process_buffer[i].time_ms)) {
          m.InsertProcess(m.process_buffer[i]);
        }
      }
      // Every sample before the oldest one still waiting is now committed; with none waiting,
      // every sample handed over so far.
      std::optional<int64_t> complete;
      if (auto waiting = m.OldestWaiting(n_gpu, n_process)) {
        complete = *waiting - 1;
      } else {
        for (std::size_t i = 0; i < n_gpu; ++i) {
          complete = Impl::Later(complete, m.gpu_buffer[i].time_ms);
        }
        for (std::size_t i = 0; i < n_process; ++i) {
          complete = Impl::Later(complete, m.process_buffer[i].time_ms);
        }
      }
      if (complete && (!m.samples_complete || *complete > *m.samples_complete)) {
        m.SetMeta(kMetaSamplesComplete, *complete);
      } else {
        complete = m.samples_complete;
      }
      Impl::MetaUpdate update;
      status.rollup = m.RollUpInTransaction(now_ms, late_from, n_gpu, n_process, update);
      tx.Commit();
      m.samples_complete = complete;
      m.CommitIds();
      m.minutes_done = update.minutes_done;
      m.hours_done = update.hours_done;
      m.gpu_buffer.erase(m.gpu_buffer.begin(), m.gpu_buffer.begin() + static_cast<std::ptrdiff_t>(n_gpu));
      m.process_buffer.erase(m.process_buffer.begin(),
                             m.process_buffer.begin() + static_cast<std::ptrdiff_t>(n_process));
      status.written = n_gpu + n_process - too_old;
      m.counters.written += status.written;
      m.counters.dropped_too_old += too_old;
      if (status.rollup.minute_rows + status.rollup.process_minute_rows > 0) {
        // About once a minute: copy the WAL into the database. With synchronous=NORMAL this is
        // when both files are synced, so a power loss (a crash loses nothing committed:
        // docs/meter-store.md) loses about a minute at most. PASSIVE never waits on readers or
        // writers; failing is harmless.
        sqlite3_wal_checkpoint_v2(m.db, nullptr, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
      }
    } catch (const SqliteFailure& f) {
      m.DiscardIds();
      if (!IsTransient(f.rc())) {
        Translate(f, m.path);
      }
      status.state = StateFor(f.rc());
      status.reason = f.what();
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

RollUpResult MeterStore::RollUp(int64_t now_ms) {
  Impl& m = *impl_;
  if (m.options.read_only) {
    throw EnvironmentError("meter database " + m.path + " was opened read-only");
  }
  try {
    Impl::Transaction tx(m);
    Impl::MetaUpdate update;
    RollUpResult result = m.RollUpInTransaction(now_ms, std::nullopt, 0, 0, update);
    tx.Commit();
    m.minutes_done = update.minutes_done;
    m.hours_done = update.hours_done;
    return result;
  } catch (const SqliteFailure& f) {
    Translate(f, m.path);
  }
}

RetentionResult MeterStore::ApplyRetention(int64_t now_ms) {
  Impl& m = *impl_;
  if (m.options.read_only) {
    throw EnvironmentError("meter database " + m.path + " was opened read-only");
  }
  const StoreOptions& o = m.options;
  RetentionResult result;
  auto span = [](double amount, int64_t unit) {
    return static_cast<int64_t>(std::llround(amount * static_cast<double>(unit)));
  };
  try {
    // The store's own time, not the caller's clock: the cuts are measured back from the newest
    // data the file holds, so a clock ahead of the data (a replay that wrote nothing, a wrong
    // wall clock) deletes nothing that newer data has not replaced.
    const std::optional<int64_t> newest = m.NewestData();
    if (!newest) {
      return result;
    }
    const int64_t now = std::min(now_ms, *newest);
    // Cuts are whole minutes (raw) and whole hours (minutes, hours), so no minute loses part of
    // its samples and no hour part of its minutes: whatever is re-rolled later is re-rolled
    // from everything it was first rolled from. Never delete what is not rolled up yet, nor
    // the minutes of an hour whose raw samples are still kept.
    if (m.minutes_done) {
      result.raw_cut_ms = std::min(FloorTo(now - span(o.raw_retention_hours, kMillisecondsPerHour), kMillisecondsPerMinute),
                                   *m.minutes_done);
    }
    const std::optional<int64_t> raw_cut = Impl::Later(result.raw_cut_ms, m.raw_cut);
    if (m.hours_done) {
      int64_t cut = std::min(FloorTo(now - span(o.minute_retention_days, kMillisecondsPerDay), kMillisecondsPerHour),
                             *m.hours_done);
      if (raw_cut) {
        cut = std::min(cut, FloorTo(*raw_cut, kMillisecondsPerHour));
      }
      result.minute_cut_ms = cut;
    }
    if (o.hour_retention_days) {
      int64_t cut = FloorTo(now - span(*o.hour_retention_days, kMillisecondsPerDay), kMillisecondsPerHour);
      if (result.minute_cut_ms) {
        cut = std::min(cut, *result.minute_cut_ms);
      }
      result.hour_cut_ms = cut;
    }
    if (result.raw_cut_ms) {
      const std::optional<int64_t> oldest = Impl::Earlier(m.MinOf("gpu_sample", "time_ms"), m.MinOf("process_sample", "time_ms"));
      if ((!m.raw_cut || *result.raw_cut_ms > *m.raw_cut) && oldest && *oldest < *result.raw_cut_ms) {
        // Recorded first (and only when it deletes something): a late sample from before the
        // cut is dropped, not rolled up alone.
        m.SetMeta(kMetaRawCut, *result.raw_cut_ms);
        m.raw_cut = result.raw_cut_ms;
      }
      result.gpu_samples = m.DeleteOlder("gpu_sample", "time_ms", *result.raw_cut_ms);
      result.process_samples = m.DeleteOlder("process_sample", "time_ms", *result.raw_cut_ms);
    }
    if (result.minute_cut_ms) {
      result.gpu_minutes = m.DeleteOlder("gpu_minute", "bucket_ms", *result.minute_cut_ms);
      result.process_minutes = m.DeleteOlder("process_minute", "bucket_ms", *result.minute_cut_ms);
    }
    if (result.hour_cut_ms) {
      result.gpu_hours = m.DeleteOlder("gpu_hour", "bucket_ms", *result.hour_cut_ms);
      result.process_hours = m.DeleteOlder("process_hour", "bucket_ms", *result.hour_cut_ms);
    }
  } catch (const SqliteFailure& f) {
    if (!IsTransient(f.rc())) {
      Translate(f, m.path);
    }
    result.done = false;
    result.reason = "meter database " + m.path + ": retention stopped (" + f.what() + "); the next call continues";
  }
  return result;
}

std::vector<GpuSample> MeterStore::GpuSamples(const TimeRange& range, std::optional<int> gpu) const {
  Impl& m = *impl_;
  std::vector<GpuSample> out;
  try {
    Impl::ReadTransaction tx(m);
    const auto names = m.DeviceNames();
    auto q = m.Q(std::string("SELECT ") + kGpuSampleSelect +
                 " FROM gpu_sample WHERE time_ms >= ?1 AND time_ms < ?2 AND (?3 IS NULL OR gpu = ?3) "
                 "ORDER BY time_ms, gpu");
    q->Bind(1, range.from_ms);
    q->Bind(2, range.to_ms);
    q->Bind(3, gpu);
    while (q->Step()) {
      const GpuRow r = ReadGpuRow(*q);
      GpuSample s;
      s.time_ms = r.time_ms;
      s.gpu = r.gpu;
      if (r.device_id) {
        if (auto it = names.find(*r.device_id); it != names.end()) {
          s.uuid = it->second;
        }
      }
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
      out.push_back(std::move(s));
    }
  } catch (const SqliteFailure& f) {
    Translate(f, m.path);
  }
  return out;
}

std::vector<ProcessSample> MeterStore::ProcessSamples(const TimeRange& range, std::optional<int> gpu) const {
  Impl& m = *impl_;
  std::vector<ProcessSample> out;
  try {
    Impl::ReadTransaction tx(m);
    auto q = m.Q(
        "SELECT s.time_ms, s.gpu, s.gpu_memory, p.pid, p.user, p.command, p.container_id, p.pod_namespace, "
        "p.pod_name, p.slurm_job_id, " + m.PodUid("p") + " FROM process_sample s JOIN process p ON p.id = s.process_id "
        "WHERE s.time_ms >= ?1 AND s.time_ms < ?2 AND (?3 IS NULL OR s.gpu = ?3) "
        "ORDER BY s.time_ms, s.gpu, s.process_id");
    q->Bind(1, range.from_ms);
    q->Bind(2, range.to_ms);
    q->Bind(3, gpu);
    while (q->Step()) {
      ProcessSample s;
      s.time_ms = q->Int(0);
      s.gpu = static_cast<int>(q->Int(1));
      s.gpu_memory = q->OptUint(2);
      Impl::ReadIdentity(*q, 3, s);
      out.push_back(std::move(s));
    }
  } catch (const SqliteFailure& f) {
    Translate(f, m.path);
  }
  return out;
}

std::vector<GpuRollup> MeterStore::GpuRollups(Resolution resolution, const TimeRange& range,
                                              std::optional<int> gpu) const {
  Impl& m = *impl_;
  std::vector<GpuRollup> out;
  try {
    Impl::ReadTransaction tx(m);
    const auto names = m.DeviceNames();
    auto emit = [&](GpuAcc a) {
      if (a.device_id) {
        if (auto it = names.find(*a.device_id); it != names.end()) {
          a.r.uuid = it->second;
        }
      }
      out.push_back(std::move(a.r));
    };
    if (resolution == Resolution::kRaw) {
      Computed c = m.ComputeFromRaw(range.from_ms, range.to_ms, kPerSample, gpu, Parts::kGpus);
      out.reserve(c.gpu_rows.size());
      for (GpuAcc& acc : c.gpu_rows) {
        emit(std::move(acc));
      }
      return out;
    }
    const int64_t width = BucketWidthMs(resolution);
    auto q = m.Q(std::string("SELECT ") + kGpuRollupSelect + " FROM " + Impl::GpuTable(resolution) +
                 " WHERE bucket_ms >= ?1 AND bucket_ms < ?2 AND (?3 IS NULL OR gpu = ?3) ORDER BY bucket_ms, gpu");
    q->Bind(1, range.from_ms);
    q->Bind(2, range.to_ms);
    q->Bind(3, gpu);
    while (q->Step()) {
      emit(Impl::ReadGpuRollup(*q, width));
    }
  } catch (const SqliteFailure& f) {
    Translate(f, m.path);
  }
  return out;
}

std::vector<ProcessUse> MeterStore::ProcessRollups(Resolution resolution, const TimeRange& range,
                                                   std::optional<int> gpu) const {
  Impl& m = *impl_;
  std::vector<ProcessUse> out;
  try {
    Impl::ReadTransaction tx(m);
    if (resolution == Resolution::kRaw) {
      return m.ProcessUseFromRaw(range, gpu, kPerSample);
    }
    const int64_t width = BucketWidthMs(resolution);
    auto q = m.Q(
        "SELECT r.bucket_ms, r.gpu, r.process_id, r.samples, r.observed_ms, r.gpu_memory_n, r.gpu_memory_sum, "
        "r.gpu_memory_max, p.pid, p.user, p.command, p.container_id, p.pod_namespace, p.pod_name, p.slurm_job_id, " +
        m.PodUid("p") + " FROM " +
        Impl::ProcessTable(resolution) +
        " r JOIN process p ON p.id = r.process_id WHERE r.bucket_ms >= ?1 AND r.bucket_ms < ?2 "
        "AND (?3 IS NULL OR r.gpu = ?3) ORDER BY r.bucket_ms, r.gpu, r.process_id");
    q->Bind(1, range.from_ms);
    q->Bind(2, range.to_ms);
    q->Bind(3, gpu);
    while (q->Step()) {
      const ProcessAcc a = Impl::ReadProcessRollup(*q, width);
      ProcessIdentity who;
      Impl::ReadIdentity(*q, 8, who);
      out.push_back(UseOf(a, who));
    }
  } catch (const SqliteFailure& f) {
    Translate(f, m.path);
  }
  return out;
}

std::vector<ProcessUse> MeterStore::ProcessesSeen(Resolution resolution, const TimeRange& range,
                                                  std::optional<int> gpu) const {
  std::vector<ProcessUse> rows;
  if (resolution == Resolution::kRaw) {
    try {
      Impl::ReadTransaction tx(*impl_);
      rows = impl_->ProcessUseFromRaw(range, gpu, kWholeRange);  // already one row per process
    } catch (const SqliteFailure& f) {
      Translate(f, impl_->path);
    }
  } else {
    rows = ProcessRollups(resolution, range, gpu);
  }
  std::map<std::pair<int, ProcessIdentity>, ProcessUse> merged;
  for (ProcessUse& u : rows) {
    auto [it, inserted] = merged.try_emplace({u.gpu, static_cast<const ProcessIdentity&>(u)}, u);
    if (!inserted) {
      ProcessUse& into = it->second;
      into.from_ms = std::min(into.from_ms, u.from_ms);
      into.to_ms = std::max(into.to_ms, u.to_ms);
      into.samples += u.samples;
      into.observed_ms += u.observed_ms;
      into.gpu_memory_n += u.gpu_memory_n;
      into.gpu_memory_sum += u.gpu_memory_sum;
      KeepMax(into.gpu_memory_max, u.gpu_memory_max);
    }
  }
  std::vector<ProcessUse> out;
  out.reserve(merged.size());
  for (auto& [key, u] : merged) {
    out.push_back(std::move(u));
  }
  std::stable_sort(out.begin(), out.end(), [](const ProcessUse& a, const ProcessUse& b) {
    return std::tie(a.gpu, a.from_ms) < std::tie(b.gpu, b.from_ms);
  });
  return out;
}

StoreExtent MeterStore::Extent() const {
  Impl& m = *impl_;
  StoreExtent e;
  try {
    Impl::ReadTransaction tx(m);
    {
      auto q = m.Q("SELECT min(time_ms), max(time_ms) FROM gpu_sample");
      if (q->Step()) {
        e.raw_from_ms = q->OptInt(0);
        e.raw_to_ms = q->OptInt(1);
      }
    }
    e.minute_from_ms = m.MinOf("gpu_minute", "bucket_ms");
    e.hour_from_ms = m.MinOf("gpu_hour", "bucket_ms");
    e.minutes_done_ms = m.Meta(kMetaMinutesDone);
    e.hours_done_ms = m.Meta(kMetaHoursDone);
    e.samples_complete_ms = m.Meta(kMetaSamplesComplete);
  } catch (const SqliteFailure& f) {
    Translate(f, m.path);
  }
  return e;
}

StoreCounters MeterStore::Counters() const { return impl_->counters; }

void MeterStore::Interrupt() {
  if (impl_ && impl_->db != nullptr) {
    sqlite3_interrupt(impl_->db);
  }
}

}  // namespace gpuplan
