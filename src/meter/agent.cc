#include "meter/agent.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "catalog/offer.h"
#include "meter/processes.h"
#include "meter/report.h"
#include "read/time_text.h"
#include "telemetry/nvml_source.h"

namespace gpuplan {

namespace {

volatile sig_atomic_t g_stop = 0;

constexpr double kMaxFlushSeconds = 10;       // the crash bound: lose at most 10 s
constexpr double kSleepSliceSeconds = 0.1;    // SystemMeterClock checks the stop request this often
constexpr double kMinGapSeconds = 10;         // the store's default gap limit
constexpr double kGapPerInterval = 2.5;       // a gap of up to 2.5 intervals is still observed
constexpr int kFinalFlushAttempts = 20;       // at exit, while the store is locked
constexpr double kFinalFlushWaitSeconds = 0.25;
// After a stop request the writer gives up on a locked, full or failing store after this long
// (wall time), so the process is gone within the 5 s a stop allows (docs/meter.md §8).
constexpr double kStopDrainSeconds = 2.0;
constexpr int kThrottleWaitMs = 50;

std::string ShortNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

[[noreturn]] void Bad(const std::string& flag, const std::string& message) { throw InputError(message, "", 0, flag); }

// NVML, or an EnvironmentError that says what to do on a machine without GPUs.
std::unique_ptr<NvmlSource> OpenNvml(const std::string& library) {
  try {
    return NvmlSource::Open(library);
  } catch (const EnvironmentError& e) {
    throw EnvironmentError(std::string(e.what()) +
                           "; without GPUs, replay a recorded trace: gpuplan meter run --replay FILE (docs/meter-trace.md)");
  }
}

// Live sampling: NVML snapshot -> GPU and process samples at the clock's wall time.
class LiveSampler {
 public:
  LiveSampler(const std::string& library, const std::string& proc_root)
      : source_(OpenNvml(library)), identities_(proc_root) {}

  std::string Describe() const { return source_->Describe(); }

  // The machine's inventory (the trace header): a snapshot only, so no event is consumed before
  // the first tick.
  SystemSnapshot Inventory() { return source_->Snapshot(); }

  TraceStep Sample(double wall_seconds) {
    SystemSnapshot snap = source_->Snapshot();
    TraceStep step;
    step.time = TimeFromSeconds(wall_seconds);
    step.gpus = GpuSamplesFromSnapshot(snap, wall_seconds);
    for (const GpuSnapshot& g : snap.gpus) {
      if (!g.processes) {
        continue;
      }
      for (const GpuProcess& p : *g.processes) {
        ProcessSample s;
        static_cast<ProcessIdentity&>(s) = identities_.Lookup(p.pid);
        s.time = step.time;
        s.gpu = g.index;
        s.gpu_memory = p.used_memory_bytes;
        step.processes.push_back(std::move(s));
      }
    }
    identities_.Sweep();
    // Health for the alert rules: each GPU's uncorrected ECC count, and the XIDs delivered since the
    // previous tick (an event of a device NVML cannot match to an index is left out).
    std::map<int, std::vector<int>> xids;
    for (const GpuEvent& e : source_->Events(0)) {
      if ((e.type & kGpuEventXid) != 0 && e.gpu >= 0) {
        xids[e.gpu].push_back(static_cast<int>(e.data));
      }
    }
    for (const GpuSnapshot& g : snap.gpus) {
      GpuHealthSample h;
      h.gpu = g.index;
      h.ecc_uncorrected = g.ecc_volatile_uncorrected ? g.ecc_volatile_uncorrected : g.ecc_aggregate_uncorrected;
      if (const auto it = xids.find(g.index); it != xids.end()) {
        h.xids = it->second;
      }
      if (h.ecc_uncorrected || !h.xids.empty()) {
        step.health.push_back(std::move(h));
      }
    }
    return step;
  }

 private:
  std::unique_ptr<NvmlSource> source_;
  ProcessIdentityCache identities_;
};

TraceHeader HeaderOf(const SystemSnapshot& snap, double interval_seconds) {
  TraceHeader h;
  h.host = snap.hostname.value_or("");
  h.interval_seconds = interval_seconds;
  h.driver_version = snap.driver_version;
  for (const GpuSnapshot& g : snap.gpus) {
    h.gpus.push_back(TraceGpu{g.index, g.name, g.uuid, g.memory_total});
  }
  return h;
}

// The offer the agent prices with, by the report's rules and messages (ChooseMeterOffer): the
// same first error whether `meter run` or `meter report` is given the file.
void CheckOffer(const MeterAgentRequest& r, const GpuCatalog* catalog) {
  if (r.offers.empty()) {
    if (!r.offer.empty()) {
      throw InputError::Option("offer", OptionRef("offer") + " needs " + OptionRef("offers") + " FILE");
    }
    return;
  }
  if (catalog == nullptr) {
    throw EnvironmentError("internal: --offers needs the GPU catalog");
  }
  ChooseMeterOffer(LoadOffers(r.offers, *catalog), r.offer);
}

// Observer calls come from the sampling thread (OnTick) and the writer thread (the store's
// state): one lock keeps them in order and lets an observer be simple.
class SerializedObserver {
 public:
  explicit SerializedObserver(MeterObserver* o) : o_(o) {}
  template <typename F>
  void Call(F&& f) {
    if (o_ != nullptr) {
      std::lock_guard<std::mutex> lock(mutex_);
      f(*o_);
    }
  }

 private:
  MeterObserver* o_;
  std::mutex mutex_;
};

// The store side of the loop, on its own thread: the sampler hands over each tick's samples
// (Hand, no I/O) and asks for a flush on its clock (RequestFlush); the writer thread appends
// them to the store's buffer and flushes, so a slow, locked or full database never delays a
// tick. An outage is reported once (OnStoreBehind) and its end once (OnStoreCaughtUp).
class Writer {
 public:
  Writer(MeterStore store, SerializedObserver& observer, MeterClock& clock)
      : store_(std::move(store)), observer_(observer), clock_(clock), last_request_(clock.MonotonicSeconds()) {
    thread_ = std::thread([this] { Run(); });
  }
  // On an exception in the sampling loop: stop without draining, never throw.
  ~Writer() {
    if (thread_.joinable()) {
      Stop(std::nullopt);
    }
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Sampling thread.
  void Hand(const TraceStep& step) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_rows_ += step.gpus.size() + step.processes.size();
    pending_.push_back(step);
  }
  bool Due(double monotonic_now) {
    std::lock_guard<std::mutex> lock(mutex_);
    return monotonic_now - last_request_ >= store_.options().flush_seconds ||
           pending_rows_ >= store_.options().max_samples_per_flush;
  }
  void RequestFlush(double monotonic_now, UtcMillis now) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      last_request_ = monotonic_now;
      flush_at_ = now;
    }
    cv_.notify_one();
  }
  // Replay only (a live tick never waits): while more than `limit` rows wait for the store,
  // asks for flushes and waits, so a replay at full speed cannot outrun the store and overflow
  // its bounded buffer.
  void Throttle(std::size_t limit, double monotonic_now, UtcMillis now) {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!failure_ && !MeterStopRequested() && pending_rows_ + published_.buffered > limit) {
      last_request_ = monotonic_now;
      flush_at_ = now;
      cv_.notify_one();
      room_.wait_for(lock, std::chrono::milliseconds(kThrottleWaitMs));
    }
  }
  // Live sampling: while the wall clock has jumped away from the steady clock, retention (which
  // measures its cuts back from the newest sample's wall time) waits.
  void HoldRetention(bool hold) { hold_retention_.store(hold); }
  // The writer thread's failure (a read-only or damaged database), rethrown on the sampler.
  void RethrowFailure() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (failure_) {
      std::rethrow_exception(failure_);
    }
  }
  // Stops the thread after it has written what it holds (rolling up through `end`), retrying
  // a while when the store is locked or full. Rethrows the thread's failure. No end (nothing
  // was sampled): stops without touching the store.
  void Finish(std::optional<UtcMillis> end) {
    Stop(end);
    RethrowFailure();
  }
  struct Published {
    StoreCounters counters;
    std::size_t buffered = 0;
    std::optional<FlushState> state;
  };
  void Stop(std::optional<UtcMillis> end) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      end_ = end;
    }
    cv_.notify_one();
    // After a stop request, a statement stuck on a slow disk is interrupted (sqlite3_interrupt,
    // repeated: it only reaches a statement that is running) once the drain time is over.
    if (MeterStopRequested()) {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(kStopDrainSeconds + 0.5);
      while (!finished_) {
        if (std::chrono::steady_clock::now() >= deadline) {
          store_.Interrupt();
        }
        finished_cv_.wait_for(lock, std::chrono::milliseconds(kThrottleWaitMs));
      }
    }
    thread_.join();
  }
  Published Get() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return published_;
  }

 private:
  void Run() {
    struct Finished {  // whichever way Run ends
      Writer& w;
      ~Finished() {
        {
          std::lock_guard<std::mutex> lock(w.mutex_);
          w.finished_ = true;
        }
        w.finished_cv_.notify_all();
      }
    } finished{*this};
    try {
      for (;;) {
        std::vector<TraceStep> steps;
        std::optional<UtcMillis> flush_at;
        bool stop = false;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          cv_.wait(lock, [&] { return stop_ || flush_at_.has_value() || catching_up_; });
          steps.swap(pending_);
          pending_rows_ = 0;
          flush_at = flush_at_;
          flush_at_.reset();
          stop = stop_;
          if (catching_up_ && !flush_at) {
            flush_at = last_flush_;
          }
        }
        for (const TraceStep& step : steps) {
          store_.Append(step.gpus);
          if (!step.processes.empty()) {
            store_.Append(step.processes);
          }
        }
        {
          std::lock_guard<std::mutex> lock(mutex_);
          published_.buffered = store_.Buffered();
        }
        if (stop) {
          if (end_) {  // set before stop_, under the lock
            Drain(*end_);
          }
          return;
        }
        if (flush_at) {
          Flush(*flush_at);
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      failure_ = std::current_exception();
    }
  }

  void Flush(UtcMillis now) {
    last_flush_ = now;
    const FlushStatus st = store_.Flush(now);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      catching_up_ = st.state == FlushState::kCatchingUp;
      published_ = {store_.Counters(), store_.Buffered(), st.state};
    }
    room_.notify_all();
    const bool behind = IsBehind(st.state) && st.state != FlushState::kCatchingUp;
    if (behind && !behind_) {
      behind_ = true;
      observer_.Call([&](MeterObserver& o) { o.OnStoreBehind(st); });
    } else if (!behind && behind_ && st.buffered == 0) {
      behind_ = false;
      observer_.Call([&](MeterObserver& o) { o.OnStoreCaughtUp(st); });
    } else if (st.state == FlushState::kSlow && st.changed) {
      observer_.Call([&](MeterObserver& o) { o.OnMessage(st.reason); });
    }
    if (st.dropped_too_old > 0) {  // never silent: how many, and why
      observer_.Call([&](MeterObserver& o) { o.OnMessage(st.notice); });
    }
    // Retention (raw 48 h, minutes 30 days by default) once an hour of samples, after a flush
    // that wrote: it deletes only what is rolled up, in short transactions. Not while the wall
    // clock disagrees with the steady clock (HoldRetention); a time before the last pass (the
    // clock was set back) starts a new hour.
    if (!behind && !hold_retention_.load() &&
        (!last_retention_ || now < *last_retention_ || now - *last_retention_ >= std::chrono::hours{1})) {
      last_retention_ = now;
      const RetentionResult r = store_.ApplyRetention(now);
      if (!r.done) {
        observer_.Call([&](MeterObserver& o) { o.OnMessage("retention postponed: " + r.reason); });
      }
    }
    state_ = st.state;
  }

  // At exit: flush (and roll up through the end) until the buffer is empty, waiting a little
  // while the store is locked or full.
  // Then retention once more, so a run that ends leaves the same file however often it was
  // stopped and resumed on the way (retention otherwise runs once an hour of samples). After a
  // stop request it gives up within kStopDrainSeconds (wall time) and the rest is lost, said.
  void Drain(UtcMillis end) {
    const auto started = std::chrono::steady_clock::now();
    auto out_of_time = [&] {
      return MeterStopRequested() &&
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() > kStopDrainSeconds;
    };
    for (int attempt = 0; attempt < kFinalFlushAttempts && !out_of_time(); ++attempt) {
      Flush(end);
      if (store_.Buffered() == 0) {
        break;
      }
      if (state_ && IsBehind(*state_) && *state_ != FlushState::kCatchingUp) {
        if (MeterStopRequested()) {  // the clock does not sleep once a stop is requested
          std::this_thread::sleep_for(std::chrono::duration<double>(kFinalFlushWaitSeconds));
        } else {
          clock_.SleepUntil(clock_.MonotonicSeconds() + kFinalFlushWaitSeconds);
        }
      }
    }
    if (store_.Buffered() == 0 && !out_of_time() && !hold_retention_.load()) {
      const RetentionResult r = store_.ApplyRetention(end);
      if (!r.done) {
        observer_.Call([&](MeterObserver& o) { o.OnMessage("retention postponed: " + r.reason); });
      }
    }
    std::lock_guard<std::mutex> lock(mutex_);
    published_.buffered = store_.Buffered();
  }

  MeterStore store_;
  SerializedObserver& observer_;
  MeterClock& clock_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::condition_variable room_;  // the writer made room (Throttle)
  std::condition_variable finished_cv_;
  bool finished_ = false;  // Run has returned
  // Shared with the sampling thread (under mutex_).
  std::vector<TraceStep> pending_;
  std::size_t pending_rows_ = 0;
  double last_request_;
  std::optional<UtcMillis> flush_at_;
  bool stop_ = false;
  std::optional<UtcMillis> end_;
  bool catching_up_ = false;
  std::exception_ptr failure_;
  Published published_;
  std::atomic<bool> hold_retention_{false};
  // The writer thread's own.
  std::optional<UtcMillis> last_flush_;
  std::optional<UtcMillis> last_retention_;
  std::optional<FlushState> state_;
  bool behind_ = false;
};

// --resume continues the trace the store was written from, so the store's newest samples must
// be of the trace's GPUs (by UUID): another server's trace shares no sample with the store, and
// resuming it would skip every step up to the store's mark and write nothing. InputError
// naming the trace's header field.
void CheckResumeDevices(const MeterStore& store, UtcMillis complete, const TraceReader& reader) {
  const TimeRange near{complete - std::chrono::minutes{10}, complete + std::chrono::milliseconds{1}};
  std::map<int, GpuSample> newest;  // per GPU index, its newest sample with a UUID
  for (GpuSample& g : store.GpuSamples(near)) {  // ordered by time
    if (g.uuid) {
      newest[g.gpu] = std::move(g);
    }
  }
  const std::vector<TraceGpu>& gpus = reader.header().gpus;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const TraceGpu& t = gpus[i];
    const auto it = newest.find(t.index);
    if (!t.uuid || it == newest.end() || *it->second.uuid == *t.uuid) {
      continue;
    }
    throw InputError("--resume continues the trace " + store.path() + " was written from, but its GPU " +
                         std::to_string(t.index) + " is " + *it->second.uuid + " (sample at " +
                         FormatUtcIso(it->second.time) + ") and this trace's is " + *t.uuid +
                         ": another server's trace; replay it into a database of its own",
                     reader.path(), 1, "gpus[" + std::to_string(i) + "].uuid");
  }
}

// A replayed step may not be dated after this machine's clock by more than this: a trace
// records the past, and a step from the future would move the store's own time (retention's
// cuts, docs/meter-store.md section 1) ahead of every real sample.
constexpr std::chrono::minutes kFutureStepTolerance{5};
// Live sampling: the wall clock may drift from the steady clock by this much before the agent
// calls it a jump, and a jumped clock must run with the steady clock this long before the agent
// takes its new time as right.
constexpr double kClockJumpSeconds = 60;
constexpr double kClockSettleSeconds = 600;

UtcMillis MachineNow() {
  return FromUnixMillis(std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count());
}

// Live sampling: samples carry the wall clock's time, and the store's retention measures back
// from the newest one. A wall clock that jumps ahead (a bad NTP step, a mistyped `date`) would
// let retention delete what the real time still keeps and make the samples after its
// correction "too old". The watch compares the wall clock's progress with the steady clock's:
// while they differ by more than kClockJumpSeconds, retention waits (nothing is deleted) and the
// log says so once; when the wall clock has run with the steady clock for kClockSettleSeconds
// since the jump (an intended change, or the jump corrected), its time is taken as right and
// retention resumes. docs/meter-store.md section 1 says what this cannot catch.
class ClockJumpWatch {
 public:
  ClockJumpWatch(double wall, double mono) : offset_(wall - mono) {}
  void Observe(double wall, double mono, Writer& writer, SerializedObserver& observers) {
    const double offset = wall - mono;
    if (std::fabs(offset - offset_) > kClockJumpSeconds) {
      const double jumped = offset - offset_;
      offset_ = offset;
      jumped_at_ = mono;
      if (!held_) {
        held_ = true;
        writer.HoldRetention(true);
        observers.Call([&](MeterObserver& o) {
          o.OnMessage("the wall clock jumped " + std::string(jumped > 0 ? "ahead" : "back") + " by " +
                      std::to_string(std::llround(std::fabs(jumped))) +
                      " s against the steady clock: samples carry its time, retention waits until it has "
                      "run steadily for " +
                      std::to_string(std::llround(kClockSettleSeconds)) + " s");
        });
      }
    } else if (held_ && mono - jumped_at_ >= kClockSettleSeconds) {
      held_ = false;
      writer.HoldRetention(false);
      observers.Call([&](MeterObserver& o) {
        o.OnMessage("the wall clock has run steadily since its jump: retention resumes");
      });
    }
  }

 private:
  double offset_;  // wall - steady, as last taken for right
  double jumped_at_ = 0;
  bool held_ = false;
};

// Where a run's roll-up ends: one interval after its last sample (its own time, never the wall
// clock's); none when nothing was sampled.
std::optional<UtcMillis> EndOf(const MeterRunSummary& summary, std::chrono::milliseconds interval) {
  if (!summary.last) {
    return std::nullopt;
  }
  return *summary.last + interval;
}

}  // namespace

double SystemMeterClock::WallSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

double SystemMeterClock::MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void SystemMeterClock::SleepUntil(double t) {
  while (!MeterStopRequested()) {
    const double left = t - MonotonicSeconds();
    if (left <= 0) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, kSleepSliceSeconds)));
  }
}

void ManualMeterClock::SleepUntil(double t) { now_ = std::max(now_, t); }

void RequestMeterStop() { g_stop = 1; }
void ResetMeterStop() { g_stop = 0; }
bool MeterStopRequested() { return g_stop != 0; }

void MeterLatest::Set(State state) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_ = std::move(state);
}

MeterLatest::State MeterLatest::Get() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return state_;
}

void ValidateMeterAgentRequest(const MeterAgentRequest& r) {
  if (r.db.empty()) {
    Bad("--db", "the meter database is required");
  }
  if (!(r.speed > 0) || !std::isfinite(r.speed)) {
    Bad("--speed", "expected a number > 0");
  }
  if (r.replay.empty() && r.speed != 1) {
    Bad("--speed", "--speed needs --replay FILE");
  }
  if (r.interval_seconds && !(*r.interval_seconds > 0)) {
    Bad("--interval", "expected a number of seconds > 0");
  }
  if (!(r.duration_seconds >= 0)) {
    Bad("--duration", "expected a number of seconds >= 0 (0: until stopped)");
  }
  if (!(r.flush_seconds > 0) || r.flush_seconds > kMaxFlushSeconds) {
    Bad("--flush-seconds", "expected more than 0 and at most 10 seconds (a crash loses at most this)");
  }
}

void ValidateMeterRecordRequest(const MeterRecordRequest& r) {
  if (r.out.empty()) {
    Bad("--out", "the trace file to write is required");
  }
  if (!(r.interval_seconds > 0)) {
    Bad("--interval", "expected a number of seconds > 0");
  }
  if (!(r.duration_seconds >= 0)) {
    Bad("--duration", "expected a number of seconds >= 0 (0: until stopped)");
  }
}

MeterRunSummary RunMeter(const MeterAgentRequest& request, MeterClock& clock, MeterObserver* observer,
                         const GpuCatalog* catalog) {
  ValidateMeterAgentRequest(request);
  CheckOffer(request, catalog);
  ResetMeterStop();

  // The source first: no driver is an EnvironmentError before any file is created.
  std::unique_ptr<TraceReader> reader;
  std::unique_ptr<LiveSampler> live;
  TraceHeader machine;
  MeterRunSummary summary;
  if (!request.replay.empty()) {
    reader = TraceReader::Open(request.replay);
    machine = reader->header();
    summary.source = "trace " + request.replay + " (" + (machine.host.empty() ? "no host" : machine.host) + ", " +
                     std::to_string(machine.gpus.size()) + " GPUs, every " + ShortNumber(machine.interval_seconds) +
                     " s)";
  } else {
    live = std::make_unique<LiveSampler>(request.nvml_library, request.proc_root);
    summary.source = live->Describe();
  }
  const double interval = request.interval_seconds.value_or(reader ? reader->header().interval_seconds : 1.0);

  StoreOptions so = request.store;
  so.read_only = false;
  so.flush_seconds = request.flush_seconds;
  so.sample_interval_seconds = reader ? std::max(interval, reader->header().interval_seconds) : interval;
  so.max_sample_gap_seconds = std::max(kMinGapSeconds, kGapPerInterval * so.sample_interval_seconds);
  SerializedObserver observers(observer);
  MeterStore store = MeterStore::Open(request.db, so);
  std::optional<UtcMillis> resume_after;
  if (reader && request.resume) {
    resume_after = store.Extent().samples_complete;
    if (resume_after) {
      CheckResumeDevices(store, *resume_after, *reader);
    }
  }
  Writer writer(std::move(store), observers, clock);

  if (live) {
    machine = HeaderOf(live->Inventory(), interval);  // for OnStart (not stored)
  }
  observers.Call([&](MeterObserver& o) { o.OnStart(summary.source, machine); });

  const double start = clock.MonotonicSeconds();
  double next_tick = start;
  ClockJumpWatch jump(clock.WallSeconds(), start);
  std::optional<UtcMillis> replay_first;  // the trace's first step (--duration counts from it)
  std::optional<UtcMillis> pace_first;    // the first step replayed (--speed paces from it)
  std::optional<UtcMillis> last_taken;
  const std::chrono::milliseconds interval_ms{static_cast<int64_t>(std::llround(interval * 1000))};
  TraceStep step;
  try {
    while (!MeterStopRequested()) {
      if (reader) {
        if (!reader->Next(step)) {
          break;
        }
        if (const UtcMillis limit = MachineNow() + kFutureStepTolerance; step.time > limit) {
          // Caught below like any bad line: the steps before it are kept, this one is not written.
          throw InputError("step dated " + FormatUtcIso(step.time) + ", after this machine's clock (" +
                               FormatUtcIso(limit - kFutureStepTolerance) + ") by more than " +
                               std::to_string(kFutureStepTolerance.count()) +
                               " minutes: a trace records the past (was the recording machine's clock wrong?)",
                           reader->path(), reader->line(), "time_ms");
        }
        if (!replay_first) {
          replay_first = step.time;
        }
        const double trace_elapsed = static_cast<double>((step.time - *replay_first).count()) / 1000.0;
        if (request.duration_seconds > 0 && trace_elapsed >= request.duration_seconds) {
          break;
        }
        if (request.interval_seconds && last_taken && step.time - *last_taken < interval_ms) {
          continue;  // --interval coarser than the trace: skip this step
        }
        if (resume_after && step.time <= *resume_after) {
          last_taken = step.time;  // stored by the run that stopped: --interval still counts it
          ++summary.resumed_after_steps;
          continue;
        }
        if (!pace_first) {
          pace_first = step.time;
        }
        clock.SleepUntil(start + static_cast<double>((step.time - *pace_first).count()) / 1000.0 / request.speed);
        if (MeterStopRequested()) {
          break;
        }
      } else {
        if (request.duration_seconds > 0 && next_tick - start >= request.duration_seconds) {
          break;
        }
        clock.SleepUntil(next_tick);
        if (MeterStopRequested()) {
          break;
        }
        const double wall = clock.WallSeconds();
        const double mono = clock.MonotonicSeconds();
        jump.Observe(wall, mono, writer, observers);
        step = live->Sample(wall);
        next_tick += interval;
        // A tick that overran (a slow driver call): skip the missed ticks rather than burst.
        const double now = clock.MonotonicSeconds();
        if (next_tick < now) {
          next_tick += std::ceil((now - next_tick) / interval) * interval;
        }
      }
      last_taken = step.time;
      ++summary.ticks;
      if (!summary.first) {
        summary.first = step.time;
      }
      summary.last = step.time;
      writer.Hand(step);
      if (reader) {
        writer.Throttle(so.max_samples_per_flush, clock.MonotonicSeconds(), step.time);
      }
      observers.Call([&](MeterObserver& o) { o.OnTick(step, summary.ticks); });
      const double now = clock.MonotonicSeconds();
      if (writer.Due(now)) {
        writer.RequestFlush(now, step.time);
      }
      writer.RethrowFailure();
      if (request.latest != nullptr) {
        const Writer::Published w = writer.Get();
        request.latest->Set({step, summary.ticks, w.counters, w.state});
      }
    }
  } catch (const InputError&) {
    // A bad line in the trace: keep what was replayed before it, then report the line.
    writer.Finish(EndOf(summary, interval_ms));
    throw;
  }
  summary.stopped = MeterStopRequested();
  // Roll up through the end of the last interval sampled; nothing sampled: the store is left
  // exactly as it was (no roll-up, no retention, no time mark moved).
  writer.Finish(EndOf(summary, interval_ms));
  const Writer::Published w = writer.Get();
  summary.store = w.counters;
  summary.buffered_at_exit = w.buffered;
  if (summary.buffered_at_exit > 0) {
    observers.Call([&](MeterObserver& o) {
      o.OnMessage(std::to_string(summary.buffered_at_exit) + " samples could not be written to " + request.db +
                  " before exit (the database stayed locked or full) and are lost");
    });
  }
  observers.Call([&](MeterObserver& o) { o.OnStop(summary); });
  return summary;
}

MeterRunSummary RecordMeterTrace(const MeterRecordRequest& request, MeterClock& clock, MeterObserver* observer) {
  ValidateMeterRecordRequest(request);
  ResetMeterStop();
  LiveSampler live(request.nvml_library, request.proc_root);
  MeterRunSummary summary;
  summary.source = live.Describe();
  const TraceHeader header = HeaderOf(live.Inventory(), request.interval_seconds);
  std::ofstream out(request.out, std::ios::binary | std::ios::trunc);
  if (!out) {
    throw EnvironmentError("cannot write the trace " + request.out);
  }
  TraceWriter writer(out, header);
  if (observer != nullptr) {
    observer->OnStart(summary.source, header);
  }
  const double start = clock.MonotonicSeconds();
  double next_tick = start;
  while (!MeterStopRequested()) {
    if (request.duration_seconds > 0 && next_tick - start >= request.duration_seconds) {
      break;
    }
    clock.SleepUntil(next_tick);
    if (MeterStopRequested()) {
      break;
    }
    const TraceStep step = live.Sample(clock.WallSeconds());
    writer.Write(step);
    ++summary.ticks;
    if (!summary.first) {
      summary.first = step.time;
    }
    summary.last = step.time;
    if (observer != nullptr) {
      observer->OnTick(step, summary.ticks);
    }
    next_tick += request.interval_seconds;
    const double now = clock.MonotonicSeconds();
    if (next_tick < now) {
      next_tick += std::ceil((now - next_tick) / request.interval_seconds) * request.interval_seconds;
    }
  }
  writer.Finish();
  if (!out) {
    throw EnvironmentError("writing the trace " + request.out + " failed (disk full?)");
  }
  summary.stopped = MeterStopRequested();
  if (observer != nullptr) {
    observer->OnStop(summary);
  }
  return summary;
}

}  // namespace gpuplan
