// The meter's trace: what `gpuplan meter record` wrote on a machine with GPUs and what
// `gpuplan meter run --replay` reads back on one without (docs/meter-trace.md).
//
// JSON Lines. The first line is the header (format version, host, sampling interval, the GPUs
// with name, UUID and memory); then one line per sampling step with each GPU's sample and the
// processes on it; a step identical to the one before except for its time (one interval later)
// and its energy counters (advanced by power x interval) may be written as {"repeat": N},
// so a week of idle or steady GPUs stays small. Errors name the file, the line and the field
// (InputError, exit code 2).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "meter/sample.h"

namespace gpuplan {

inline constexpr int kMeterTraceVersion = 1;
inline constexpr const char* kMeterTraceFormat = "gpuplan-meter-trace";
// The most steps one {"repeat": N} line stands for (docs/meter-trace.md section 4): 100,000 steps
// is 11.6 days at 10 s, 27.8 hours at 1 s; the writer splits a longer run into several lines, and
// the reader refuses a larger N, so one short line cannot make a replay run for hours.
inline constexpr int64_t kMaxTraceRepeat = 100000;
// Bytes of GPU memory a trace may state (memory_total, memory_used, gpu_memory): 16 TiB, as in
// nvidia-smi captures (docs/nvidia-smi-capture.md).
inline constexpr uint64_t kMaxTraceMemoryBytes = 1ULL << 44;
// Energy counters (mJ): 2^62, about 146 million years at 1 kW, so a repeat cannot wrap one.
inline constexpr uint64_t kMaxTraceEnergyMj = 1ULL << 62;

struct TraceGpu {
  int index = 0;
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<uint64_t> memory_total;  // bytes
  bool operator==(const TraceGpu&) const = default;
};

struct TraceHeader {
  int version = kMeterTraceVersion;
  std::string host;
  double interval_seconds = 1;
  std::optional<std::string> driver_version;
  std::vector<TraceGpu> gpus;
  bool operator==(const TraceHeader&) const = default;
};

// One sampling step: a sample per GPU and one per process seen on a GPU, all at `time` (written
// as "time_ms", UTC milliseconds since the epoch).
struct TraceStep {
  UtcMillis time{};
  std::vector<GpuSample> gpus;
  std::vector<ProcessSample> processes;
  std::vector<GpuHealthSample> health;  // GPUs with an ECC count or XID events at this step, in GPU order
  bool operator==(const TraceStep&) const = default;
};

// The step that {"repeat": 1} stands for after `previous`: one interval later, each energy
// counter advanced by llround(power W x interval s x 1000) mJ (when both are present), the ECC
// counts kept and no XID events (an event is delivered once).
TraceStep RepeatStep(const TraceStep& previous, double interval_seconds);

// Writes a trace: the header at once, then steps. Steps equal to RepeatStep(previous) are
// counted and written as one {"repeat": N} line when a different step comes or at Finish().
class TraceWriter {
 public:
  TraceWriter(std::ostream& out, const TraceHeader& header);
  void Write(const TraceStep& step);
  void Finish();  // writes a pending repeat line (the destructor does not)
  int64_t steps() const { return steps_; }
  int64_t lines() const { return lines_; }

 private:
  void WriteFull(const TraceStep& step);
  std::ostream& out_;
  TraceHeader header_;
  std::optional<TraceStep> previous_;
  int64_t pending_repeats_ = 0;
  int64_t steps_ = 0;
  int64_t lines_ = 0;
};

// Reads a trace file step by step (repeats expanded). InputError naming file, line and field on
// a malformed header or step, a time that does not increase, or a GPU the header lacks.
class TraceReader {
 public:
  static std::unique_ptr<TraceReader> Open(const std::string& path);
  const TraceHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  // The next step; false at the end of the file.
  bool Next(TraceStep& step);
  int line() const { return line_; }

 private:
  TraceReader() = default;
  std::string path_;
  std::ifstream in_;
  int line_ = 0;
  TraceHeader header_;
  std::optional<TraceStep> previous_;
  int64_t repeats_left_ = 0;
};

// Whole-file helpers (tests, small traces).
struct Trace {
  TraceHeader header;
  std::vector<TraceStep> steps;
};
Trace ReadTrace(const std::string& path);
void WriteTrace(std::ostream& out, const Trace& trace);

}  // namespace gpuplan
