// The meter store's schema in one place: the tables, the column lists the reads and writes use,
// the meta keys, the version check on open and each migration step (docs/meter-store.md).
#include <iterator>
#include <string>

#include "core/error.h"
#include "meter/store_impl.h"

namespace gpuplan {

namespace {

// The schema at kMeterSchemaVersion (store.h; docs/meter-store.md explains every column).
// Tables are WITHOUT ROWID, clustered on their primary key, which starts with the time: range
// queries and retention read contiguous pages, and a table costs one b-tree instead of a table
// and an index.
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

// Each step takes a file of version `from` to `from` + 1. Add a step here (and raise
// kMeterSchemaVersion in store.h, and kSchema above) for every change of the schema.
struct Migration {
  int64_t from;
  const char* sql;
};
constexpr Migration kMigrations[] = {
    // 1 -> 2: process.pod_uid (the Kubernetes pod UID from the process's cgroup).
    {1, "ALTER TABLE process ADD COLUMN pod_uid TEXT"},
};
static_assert(static_cast<int>(std::size(kMigrations)) == kMeterSchemaVersion - 1, "one migration step per version after 1");

}  // namespace

const char* const kGpuSampleSelect =
    "time_ms, gpu, device_id, util_gpu, util_mem, mem_used, mem_total, power_mw, energy_mj, temp_c, "
    "sm_clock_mhz, clock_events";
const char* const kGpuRollupSelect =
    "bucket_ms, gpu, device_id, samples, observed_ms, busy_ms, active_ms, util_gpu_n, util_gpu_sum, "
    "util_gpu_min, util_gpu_max, util_mem_n, util_mem_sum, mem_used_n, mem_used_sum, mem_used_max, "
    "mem_total, power_n, power_sum_mw, power_max_mw, energy_mj, temp_max_c, clock_events";
const int kGpuRollupColumnCount = 23;
const char* const kProcessRollupSelect =
    "bucket_ms, gpu, process_id, samples, observed_ms, gpu_memory_n, gpu_memory_sum, gpu_memory_max";

const char* const kMetaMinutesDone = "minutes_done_ms";
const char* const kMetaHoursDone = "hours_done_ms";
const char* const kMetaRawCut = "raw_cut_ms";
// `meter run --resume` continues after it (docs/meter-store.md).
const char* const kMetaSamplesComplete = "samples_complete_ms";

MeterStore::Impl::SchemaAction MeterStore::Impl::CheckSchema() {
  const auto application_id = db.PragmaInt("application_id");
  const auto version = db.PragmaInt("user_version");
  int64_t tables = 0;
  {
    auto q = Q("SELECT count(*) FROM sqlite_master");
    tables = q->Step() ? q->Int(0) : 0;
  }
  if (version == 1 && options.read_only) {
    pod_uid_column = "NULL";
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
    return SchemaAction::kCreate;
  }
  if (version > kMeterSchemaVersion) {
    throw InputError("written by a newer gpuplan: schema version " + std::to_string(version) +
                         ", this gpuplan reads up to version " + std::to_string(kMeterSchemaVersion) +
                         "; upgrade gpuplan to read it",
                     path, 0, "user_version");
  }
  if (version < 1) {
    throw InputError("damaged gpuplan meter database: schema version " + std::to_string(version), path, 0,
                     "user_version");
  }
  return version < kMeterSchemaVersion ? SchemaAction::kMigrate : SchemaAction::kNone;
}

void MeterStore::Impl::Migrate() {
  sqlite::WriteTransaction tx(db);
  // Another process may have migrated it between our check and the lock: start from what the
  // file says now.
  int64_t version = db.PragmaInt("user_version");
  for (const Migration& step : kMigrations) {
    if (step.from == version) {
      db.Exec(step.sql);
      ++version;
      db.Exec("PRAGMA user_version = " + std::to_string(version));
    }
  }
  tx.Commit();
}

void MeterStore::Impl::CreateSchema() {
  sqlite::WriteTransaction tx(db);
  // Another process may have created it between our check and the lock.
  if (db.PragmaInt("application_id") == kMeterApplicationId) {
    tx.Commit();
    return;
  }
  db.Exec(kSchema);
  for (const char* table : {"gpu_minute", "gpu_hour"}) {
    db.Exec(std::string("CREATE TABLE ") + table + "(" + kGpuRollupColumns + ") WITHOUT ROWID");
  }
  for (const char* table : {"process_minute", "process_hour"}) {
    db.Exec(std::string("CREATE TABLE ") + table + "(" + kProcessRollupColumns + ") WITHOUT ROWID");
  }
  db.Exec("PRAGMA application_id = " + std::to_string(kMeterApplicationId));
  db.Exec("PRAGMA user_version = " + std::to_string(kMeterSchemaVersion));
  tx.Commit();
}

}  // namespace gpuplan
