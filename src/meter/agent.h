// The meter agent (`gpuplan meter run`) and the trace recorder (`gpuplan meter record`),
// docs/meter.md §8. Each tick the agent reads every GPU (NVML through src/telemetry, or the next
// step of a trace at --speed X), names the processes on them (/proc, processes.h), and hands
// the samples to a writer thread (no I/O on the sampling thread). The writer thread owns the
// store: it appends to the store's in-memory buffer and flushes in batched transactions every
// flush_seconds of the agent's clock. When the database is locked, full or failing, the samples
// stay in memory (bounded), the observer hears it once (OnStoreBehind) and once more when the
// store has caught up (OnStoreCaughtUp); sampling goes on meanwhile. A replay (not live
// sampling) waits for the writer when it gets ahead by more than a flush's worth of rows, so a
// full-speed replay never overflows the buffer.
//
// RunMeter returns when the duration is over, the trace ends, or RequestMeterStop() is called
// (async-signal-safe: the CLI calls it from SIGINT/SIGTERM); it then writes what it holds.
// Observer calls come from both threads, one at a time (serialised by the agent). MeterLatest is
// thread-safe: a metrics endpoint on another thread reads the latest samples from it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "meter/store.h"
#include "meter/trace.h"

namespace gpuplan {

// Where the agent's time comes from: wall-clock time for the samples, a monotonic clock for the
// ticks, and a way to wait. SystemMeterClock is the machine's; ManualMeterClock (tests, the
// benchmark) advances only when waited on, so a week of ticks runs at once and exactly.
class MeterClock {
 public:
  virtual ~MeterClock() = default;
  virtual double WallSeconds() = 0;       // UTC seconds since the epoch
  virtual double MonotonicSeconds() = 0;  // any origin
  // Waits until MonotonicSeconds() >= t, or returns early once a stop was requested.
  virtual void SleepUntil(double t) = 0;
};

class SystemMeterClock : public MeterClock {
 public:
  double WallSeconds() override;
  double MonotonicSeconds() override;
  void SleepUntil(double t) override;  // in slices of at most 100 ms, checking the stop request
};

class ManualMeterClock : public MeterClock {
 public:
  explicit ManualMeterClock(double wall_start_seconds) : wall_start_(wall_start_seconds) {}
  double WallSeconds() override { return wall_start_ + now_; }
  double MonotonicSeconds() override { return now_; }
  void SleepUntil(double t) override;  // jumps there
  void Advance(double seconds) { now_ += seconds; }

 private:
  double wall_start_;
  double now_ = 0;
};

// Asks a running RunMeter or RecordMeterTrace to stop after its current tick (flushing what it
// holds). Async-signal-safe. ResetMeterStop clears it (RunMeter calls it on entry).
void RequestMeterStop();
// A process asked to stop is gone within 5 s (docs/meter.md §8): the front end ends it this many
// seconds after the first stop request even when a write to a slow disk is still under way (the
// cooperative path, drain then sqlite3_interrupt, takes at most kStopDrainSeconds + 0.5 s more).
inline constexpr unsigned kMeterStopDeadlineSeconds = 4;
void ResetMeterStop();
bool MeterStopRequested();

// The samples of the latest tick, for a metrics endpoint on another thread. Thread-safe.
class MeterLatest {
 public:
  struct State {
    std::optional<TraceStep> step;  // the latest tick's samples (absent before the first)
    int64_t ticks = 0;
    StoreCounters store;
    std::optional<FlushState> flush;  // the last flush's state
  };
  void Set(State state);
  State Get() const;

 private:
  mutable std::mutex mutex_;
  State state_;
};

struct MeterAgentRequest {
  std::string db;      // the meter database (SQLite); required
  std::string replay;  // a trace file (docs/meter-trace.md); empty: sample the GPUs through NVML
  // Replay: skip the trace's steps at or before the store's samples_complete (every sample
  // up to it is committed), so a stopped or killed replay continues where it stopped. Without
  // it a replay writes every step again, which gives the same store (docs/meter-store.md).
  bool resume = false;
  double speed = 1;    // replay: X times faster than recorded; very large: as fast as possible
  // Seconds between samples; unset: 1 s live, every step of the trace in replay (a larger
  // value skips steps closer than it to the last one taken).
  std::optional<double> interval_seconds;
  double duration_seconds = 0;  // 0: until stopped (or the trace ends); replay: trace seconds
  // Seconds (of the agent's clock) between flushes to the database; a SIGKILL loses at most
  // this plus one interval of samples. At most 10 (the crash bound).
  double flush_seconds = 5;
  std::string proc_root = "/proc";                 // where processes are looked up
  std::string nvml_library = "libnvidia-ml.so.1";  // GPUPLAN_NVML_LIBRARY in tests
  std::string offers;  // offers file: the offer the machine is rented under (checked at start)
  std::string offer;   // offer id; empty: the file's only offer
  bool verbose = false;  // the CLI prints one line per tick (OnTick)
  MeterLatest* latest = nullptr;  // updated after every tick when set
  StoreOptions store;  // the rest of the store's options (flush_seconds and the interval are set from above)
  // For the service around the agent (meter/meter_service.h), not RunMeter itself:
  std::string listen;      // "ADDR:PORT" for Prometheus /metrics; empty: no endpoint
  std::string token_file;  // a file holding the bearer token /metrics requires (needed off loopback)
  std::string alerts;      // alerts file (docs/meter-alerts.md): rules and webhooks
};

// Throws InputError naming the flag for a value out of range.
void ValidateMeterAgentRequest(const MeterAgentRequest& r);

struct MeterRunSummary {
  std::string source;  // "NVML 12.550.54, driver 550.54.15" or "trace FILE (host, N GPUs)"
  int64_t ticks = 0;
  std::optional<UtcMillis> first;  // the first and last sample's time
  std::optional<UtcMillis> last;
  StoreCounters store;
  std::size_t buffered_at_exit = 0;  // samples that could not be written before exit (lost)
  bool stopped = false;              // by RequestMeterStop
  int64_t resumed_after_steps = 0;   // --resume: the trace's steps skipped (already stored)
};

class MeterObserver {
 public:
  virtual ~MeterObserver() = default;
  virtual void OnStart(const std::string& /*source*/, const TraceHeader& /*machine*/) {}
  virtual void OnTick(const TraceStep& /*step*/, int64_t /*tick*/) {}
  // The store fell behind (locked, full, I/O error): once per outage, with the store's reason.
  virtual void OnStoreBehind(const FlushStatus& /*status*/) {}
  virtual void OnStoreCaughtUp(const FlushStatus& /*status*/) {}
  virtual void OnMessage(const std::string& /*line*/) {}
  virtual void OnStop(const MeterRunSummary& /*summary*/) {}
};

// Runs the agent until the duration ends, the trace ends or a stop is requested. Throws
// EnvironmentError when NVML cannot be loaded (no driver: exit 3) or the database cannot be
// written; InputError for a bad request, trace, offers file or database.
MeterRunSummary RunMeter(const MeterAgentRequest& request, MeterClock& clock, MeterObserver* observer = nullptr,
                         const GpuCatalog* catalog = nullptr);

struct MeterRecordRequest {
  std::string out;              // the trace file to write; required
  double duration_seconds = 60;  // 0: until stopped
  double interval_seconds = 1;
  std::string proc_root = "/proc";
  std::string nvml_library = "libnvidia-ml.so.1";
  bool verbose = false;
};

void ValidateMeterRecordRequest(const MeterRecordRequest& r);

// Samples the GPUs through NVML like the agent and writes the trace instead of a database.
MeterRunSummary RecordMeterTrace(const MeterRecordRequest& request, MeterClock& clock,
                                 MeterObserver* observer = nullptr);

}  // namespace gpuplan
