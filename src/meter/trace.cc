#include "meter/trace.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <map>

#include "core/error.h"
#include "read/json_depth.h"

namespace gpuplan {

using nlohmann::json;

namespace {

constexpr double kMilliPerUnit = 1000.0;
// A step's time must be a plausible epoch time in ms: after 2000-01-01, before 2200-01-01.
constexpr int64_t kMinTimeMs = 946684800000;
constexpr int64_t kMaxTimeMs = 7258118400000;
constexpr auto kMaxMemory = static_cast<int64_t>(kMaxTraceMemoryBytes);
constexpr auto kMaxEnergy = static_cast<int64_t>(kMaxTraceEnergyMj);

// A step made by a repeat line must keep within the bounds a written step has: its time before
// 2200 and its energy counters at most kMaxTraceEnergyMj.
void CheckRepeated(const TraceStep& s, const std::string& file, int line) {
  if (UnixMillis(s.time) > kMaxTimeMs) {
    throw InputError("the repeat goes past the year 2200 (time_ms " + std::to_string(UnixMillis(s.time)) + ")", file, line,
                     "repeat");
  }
  for (const GpuSample& g : s.gpus) {
    if (g.energy_mj && *g.energy_mj > kMaxTraceEnergyMj) {
      throw InputError("the repeat takes GPU " + std::to_string(g.gpu) + "'s energy_mj past 2^62", file, line,
                       "repeat");
    }
  }
}

// Where a value is, for errors: file, line, and a field path ("gpus[2].power").
struct Where {
  const std::string& file;
  int line;
  [[noreturn]] void Fail(const std::string& field, const std::string& message) const {
    throw InputError(message, file, line, field);
  }
};

std::string Path(const std::string& prefix, const char* key) { return prefix.empty() ? key : prefix + "." + key; }

template <typename T>
std::optional<T> OptInt(const json& o, const char* key, const std::string& prefix, const Where& w, int64_t min,
                        int64_t max) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) {
    return std::nullopt;
  }
  if (!it->is_number_integer() && !it->is_number_unsigned()) {
    w.Fail(Path(prefix, key), "expected an integer, got " + it->dump());
  }
  // A non-negative literal is stored unsigned: the lower bound applies to it too (a 0 where at
  // least 1 is needed, such as "version": 0 or "pid": 0, is refused here).
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if ((min > 0 && v < static_cast<uint64_t>(min)) || v > static_cast<uint64_t>(max)) {
      w.Fail(Path(prefix, key),
             "expected " + std::to_string(min) + " to " + std::to_string(max) + ", got " + it->dump());
    }
    return static_cast<T>(v);
  }
  const int64_t v = it->get<int64_t>();
  if (v < min || v > max) {
    w.Fail(Path(prefix, key),
           "expected " + std::to_string(min) + " to " + std::to_string(max) + ", got " + it->dump());
  }
  return static_cast<T>(v);
}

std::optional<double> OptNumber(const json& o, const char* key, const std::string& prefix, const Where& w,
                                double min, double max) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) {
    return std::nullopt;
  }
  if (!it->is_number()) {
    w.Fail(Path(prefix, key), "expected a number, got " + it->dump());
  }
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < min || v > max) {
    w.Fail(Path(prefix, key), "expected a number from " + json(min).dump() + " to " + json(max).dump() + ", got " +
                                  it->dump());
  }
  return v;
}

std::optional<std::string> OptString(const json& o, const char* key, const std::string& prefix, const Where& w) {
  const auto it = o.find(key);
  if (it == o.end() || it->is_null()) {
    return std::nullopt;
  }
  if (!it->is_string()) {
    w.Fail(Path(prefix, key), "expected a string, got " + it->dump());
  }
  return it->get<std::string>();
}

json ParseLine(const std::string& text, const Where& w) {
  CheckJsonInput(text, w.file, w.line);
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    w.Fail("", "not a JSON object (each line of a trace is one JSON object)");
  }
  if (!j.is_object()) {
    w.Fail("", "expected a JSON object, got " + std::string(j.type_name()));
  }
  return j;
}

TraceHeader ParseHeader(const json& j, const Where& w) {
  const auto format = OptString(j, "format", "", w);
  if (!format || *format != kMeterTraceFormat) {
    w.Fail("format", std::string("the first line must be the trace header with \"format\": \"") + kMeterTraceFormat +
                         "\"" + (format ? ", got \"" + *format + "\"" : ""));
  }
  TraceHeader h;
  const auto version = OptInt<int>(j, "version", "", w, 1, std::numeric_limits<int>::max());
  if (!version) {
    w.Fail("version", "missing: the trace format version");
  }
  if (*version > kMeterTraceVersion) {
    w.Fail("version", "trace format version " + std::to_string(*version) + " is newer than this gpuplan reads (" +
                          std::to_string(kMeterTraceVersion) + ")");
  }
  h.version = *version;
  h.host = OptString(j, "host", "", w).value_or("");
  const auto interval = OptNumber(j, "interval_seconds", "", w, 0.001, 86400);
  if (!interval) {
    w.Fail("interval_seconds", "missing: the sampling interval in seconds");
  }
  h.interval_seconds = *interval;
  h.driver_version = OptString(j, "driver_version", "", w);
  const auto gpus = j.find("gpus");
  if (gpus == j.end() || !gpus->is_array() || gpus->empty()) {
    w.Fail("gpus", "expected a non-empty array of the machine's GPUs");
  }
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    const json& g = (*gpus)[i];
    const std::string prefix = "gpus[" + std::to_string(i) + "]";
    if (!g.is_object()) {
      w.Fail(prefix, "expected an object");
    }
    TraceGpu t;
    const auto index = OptInt<int>(g, "index", prefix, w, 0, 1023);
    if (!index) {
      w.Fail(prefix + ".index", "missing: the GPU's NVML index");
    }
    t.index = *index;
    for (const TraceGpu& seen : h.gpus) {
      if (seen.index == t.index) {
        w.Fail(prefix + ".index", "GPU " + std::to_string(t.index) + " listed twice");
      }
    }
    t.name = OptString(g, "name", prefix, w);
    t.uuid = OptString(g, "uuid", prefix, w);
    t.memory_total = OptInt<uint64_t>(g, "memory_total", prefix, w, 0, kMaxMemory);
    h.gpus.push_back(std::move(t));
  }
  return h;
}

TraceStep ParseStep(const json& j, const TraceHeader& h, const Where& w) {
  TraceStep s;
  const auto time_ms = OptInt<int64_t>(j, "time_ms", "", w, kMinTimeMs, kMaxTimeMs);
  if (!time_ms) {
    w.Fail("time_ms", "missing: the step's time (UTC milliseconds since the epoch)");
  }
  s.time = FromUnixMillis(*time_ms);
  const auto gpus = j.find("gpus");
  if (gpus == j.end() || !gpus->is_array()) {
    w.Fail("gpus", "expected an array of GPU samples");
  }
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    const json& g = (*gpus)[i];
    const std::string prefix = "gpus[" + std::to_string(i) + "]";
    if (!g.is_object()) {
      w.Fail(prefix, "expected an object");
    }
    GpuSample x;
    x.time = s.time;
    const auto index = OptInt<int>(g, "gpu", prefix, w, 0, 1023);
    if (!index) {
      w.Fail(prefix + ".gpu", "missing: the GPU's index");
    }
    x.gpu = *index;
    const TraceGpu* info = nullptr;
    for (const TraceGpu& t : h.gpus) {
      if (t.index == x.gpu) {
        info = &t;
      }
    }
    if (info == nullptr) {
      w.Fail(prefix + ".gpu", "GPU " + std::to_string(x.gpu) + " is not in the header's gpus");
    }
    for (const GpuSample& seen : s.gpus) {
      if (seen.gpu == x.gpu) {
        w.Fail(prefix + ".gpu", "GPU " + std::to_string(x.gpu) + " twice in one step");
      }
    }
    x.uuid = info->uuid;
    x.memory_total = info->memory_total;
    x.utilization_gpu = OptInt<int>(g, "utilization_gpu", prefix, w, 0, 100);
    x.utilization_memory = OptInt<int>(g, "utilization_memory", prefix, w, 0, 100);
    x.memory_used = OptInt<uint64_t>(g, "memory_used", prefix, w, 0, kMaxMemory);
    x.power = OptNumber(g, "power", prefix, w, 0, 100000);
    x.energy_mj = OptInt<uint64_t>(g, "energy_mj", prefix, w, 0, kMaxEnergy);
    x.temperature = OptInt<int>(g, "temperature", prefix, w, -100, 300);
    x.sm_clock = OptInt<int>(g, "sm_clock", prefix, w, 0, 100000);
    x.clock_event_reasons =
        OptInt<uint64_t>(g, "clock_event_reasons", prefix, w, 0, std::numeric_limits<int64_t>::max());
    GpuHealthSample health;
    health.gpu = x.gpu;
    health.ecc_uncorrected =
        OptInt<uint64_t>(g, "ecc_uncorrected", prefix, w, 0, std::numeric_limits<int64_t>::max());
    if (const auto xids = g.find("xids"); xids != g.end() && !xids->is_null()) {
      if (!xids->is_array()) {
        w.Fail(prefix + ".xids", "expected an array of XID numbers");
      }
      for (std::size_t k = 0; k < xids->size(); ++k) {
        const json& v = (*xids)[k];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000) {
          w.Fail(prefix + ".xids[" + std::to_string(k) + "]", "expected an XID number from 0 to 1000000");
        }
        health.xids.push_back(v.get<int>());
      }
    }
    if (health.ecc_uncorrected || !health.xids.empty()) {
      s.health.push_back(std::move(health));
    }
    if (const auto procs = g.find("processes"); procs != g.end() && !procs->is_null()) {
      if (!procs->is_array()) {
        w.Fail(prefix + ".processes", "expected an array");
      }
      for (std::size_t k = 0; k < procs->size(); ++k) {
        const json& p = (*procs)[k];
        const std::string pp = prefix + ".processes[" + std::to_string(k) + "]";
        if (!p.is_object()) {
          w.Fail(pp, "expected an object");
        }
        ProcessSample ps;
        ps.time = s.time;
        ps.gpu = x.gpu;
        const auto pid = OptInt<int>(p, "pid", pp, w, 1, std::numeric_limits<int>::max());
        if (!pid) {
          w.Fail(pp + ".pid", "missing: the process id");
        }
        ps.pid = *pid;
        ps.user = OptString(p, "user", pp, w);
        ps.command = OptString(p, "command", pp, w);
        ps.container_id = OptString(p, "container_id", pp, w);
        ps.pod_uid = OptString(p, "pod_uid", pp, w);
        ps.pod_namespace = OptString(p, "pod_namespace", pp, w);
        ps.pod_name = OptString(p, "pod_name", pp, w);
        ps.slurm_job_id = OptString(p, "slurm_job_id", pp, w);
        ps.gpu_memory = OptInt<uint64_t>(p, "gpu_memory", pp, w, 0, kMaxMemory);
        s.processes.push_back(std::move(ps));
      }
    }
    s.gpus.push_back(std::move(x));
  }
  return s;
}

template <typename T>
void Put(json& j, const char* key, const std::optional<T>& v) {
  if (v) {
    j[key] = *v;
  }
}

json StepJson(const TraceStep& s) {
  json j;
  j["time_ms"] = UnixMillis(s.time);
  json gpus = json::array();
  for (const GpuSample& g : s.gpus) {
    json o;
    o["gpu"] = g.gpu;
    Put(o, "utilization_gpu", g.utilization_gpu);
    Put(o, "utilization_memory", g.utilization_memory);
    Put(o, "memory_used", g.memory_used);
    if (g.power) {
      o["power"] = std::round(*g.power * kMilliPerUnit) / kMilliPerUnit;  // NVML's milliwatts
    }
    Put(o, "energy_mj", g.energy_mj);
    Put(o, "temperature", g.temperature);
    Put(o, "sm_clock", g.sm_clock);
    Put(o, "clock_event_reasons", g.clock_event_reasons);
    for (const GpuHealthSample& h : s.health) {
      if (h.gpu == g.gpu) {
        Put(o, "ecc_uncorrected", h.ecc_uncorrected);
        if (!h.xids.empty()) {
          o["xids"] = h.xids;
        }
      }
    }
    json procs = json::array();
    for (const ProcessSample& p : s.processes) {
      if (p.gpu != g.gpu) {
        continue;
      }
      json q;
      q["pid"] = p.pid;
      Put(q, "user", p.user);
      Put(q, "command", p.command);
      Put(q, "container_id", p.container_id);
      Put(q, "pod_uid", p.pod_uid);
      Put(q, "pod_namespace", p.pod_namespace);
      Put(q, "pod_name", p.pod_name);
      Put(q, "slurm_job_id", p.slurm_job_id);
      Put(q, "gpu_memory", p.gpu_memory);
      procs.push_back(std::move(q));
    }
    if (!procs.empty()) {
      o["processes"] = std::move(procs);
    }
    gpus.push_back(std::move(o));
  }
  j["gpus"] = std::move(gpus);
  return j;
}

// A step as the writer stores it: power rounded to the milliwatt (what the line holds), so that
// a repeat compares what the reader will see.
TraceStep Canonical(TraceStep s, const TraceHeader& h) {
  for (GpuSample& g : s.gpus) {
    if (g.power) {
      g.power = std::round(*g.power * kMilliPerUnit) / kMilliPerUnit;
    }
    for (const TraceGpu& t : h.gpus) {
      if (t.index == g.gpu) {
        g.uuid = t.uuid;
        g.memory_total = t.memory_total;
      }
    }
  }
  // Processes in GPU order, as a line lists them.
  std::vector<ProcessSample> ordered;
  for (const GpuSample& g : s.gpus) {
    for (const ProcessSample& p : s.processes) {
      if (p.gpu == g.gpu) {
        ordered.push_back(p);
      }
    }
  }
  s.processes = std::move(ordered);
  // Health in GPU order, as a line lists it; a GPU with nothing to say has no entry.
  std::vector<GpuHealthSample> health;
  for (const GpuSample& g : s.gpus) {
    for (const GpuHealthSample& x : s.health) {
      if (x.gpu == g.gpu && (x.ecc_uncorrected || !x.xids.empty())) {
        health.push_back(x);
      }
    }
  }
  s.health = std::move(health);
  return s;
}

}  // namespace

TraceStep RepeatStep(const TraceStep& previous, double interval_seconds) {
  TraceStep s = previous;
  const auto interval_ms = static_cast<int64_t>(std::llround(interval_seconds * kMilliPerUnit));
  s.time += std::chrono::milliseconds{interval_ms};
  for (GpuSample& g : s.gpus) {
    g.time = s.time;
    if (g.energy_mj && g.power) {
      *g.energy_mj += static_cast<uint64_t>(std::llround(*g.power * interval_seconds * kMilliPerUnit));
    }
  }
  for (ProcessSample& p : s.processes) {
    p.time = s.time;
  }
  for (GpuHealthSample& h : s.health) {
    h.xids.clear();
  }
  std::erase_if(s.health, [](const GpuHealthSample& h) { return !h.ecc_uncorrected; });
  return s;
}

TraceWriter::TraceWriter(std::ostream& out, const TraceHeader& header) : out_(out), header_(header) {
  json h;
  h["format"] = kMeterTraceFormat;
  h["version"] = kMeterTraceVersion;
  h["host"] = header.host;
  h["interval_seconds"] = header.interval_seconds;
  Put(h, "driver_version", header.driver_version);
  json gpus = json::array();
  for (const TraceGpu& g : header.gpus) {
    json o;
    o["index"] = g.index;
    Put(o, "name", g.name);
    Put(o, "uuid", g.uuid);
    Put(o, "memory_total", g.memory_total);
    gpus.push_back(std::move(o));
  }
  h["gpus"] = std::move(gpus);
  out_ << h.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  ++lines_;
}

void TraceWriter::WriteFull(const TraceStep& step) {
  out_ << StepJson(step).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  ++lines_;
}

void TraceWriter::Write(const TraceStep& raw) {
  TraceStep step = Canonical(raw, header_);
  ++steps_;
  if (previous_ && RepeatStep(*previous_, header_.interval_seconds) == step) {
    ++pending_repeats_;
    previous_ = std::move(step);
    if (pending_repeats_ == kMaxTraceRepeat) {
      Finish();  // a longer run is several repeat lines: a reader takes at most kMaxTraceRepeat
    }
    return;
  }
  Finish();
  WriteFull(step);
  previous_ = std::move(step);
}

void TraceWriter::Finish() {
  if (pending_repeats_ > 0) {
    out_ << json{{"repeat", pending_repeats_}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    ++lines_;
    pending_repeats_ = 0;
  }
  out_.flush();
}

std::unique_ptr<TraceReader> TraceReader::Open(const std::string& path) {
  std::unique_ptr<TraceReader> r(new TraceReader());
  r->path_ = path;
  r->in_.open(path, std::ios::binary);
  if (!r->in_) {
    throw InputError("cannot open the trace", path);
  }
  std::string text;
  if (!std::getline(r->in_, text)) {
    throw InputError("empty trace: expected a header line", path, 1, "format");
  }
  r->line_ = 1;
  const Where w{r->path_, r->line_};
  r->header_ = ParseHeader(ParseLine(text, w), w);
  return r;
}

bool TraceReader::Next(TraceStep& step) {
  if (repeats_left_ > 0) {
    --repeats_left_;
    step = RepeatStep(*previous_, header_.interval_seconds);
    CheckRepeated(step, path_, line_);
    previous_ = step;
    return true;
  }
  std::string text;
  while (std::getline(in_, text)) {
    ++line_;
    if (text.empty() || text == "\r") {
      continue;
    }
    const Where w{path_, line_};
    const json j = ParseLine(text, w);
    if (j.contains("repeat")) {
      if (!previous_) {
        w.Fail("repeat", "a repeat needs a step before it");
      }
      const auto n = OptInt<int64_t>(j, "repeat", "", w, 1, kMaxTraceRepeat);
      if (!n) {
        w.Fail("repeat", "expected a number of steps from 1 to " + std::to_string(kMaxTraceRepeat) + ", got null");
      }
      repeats_left_ = *n - 1;
      step = RepeatStep(*previous_, header_.interval_seconds);
      CheckRepeated(step, path_, line_);
      previous_ = step;
      return true;
    }
    step = ParseStep(j, header_, w);
    if (previous_ && step.time <= previous_->time) {
      w.Fail("time_ms", "time " + std::to_string(UnixMillis(step.time)) + " is not after the previous step's (" +
                            std::to_string(UnixMillis(previous_->time)) + ")");
    }
    previous_ = step;
    return true;
  }
  if (in_.bad()) {
    throw InputError("read error", path_, line_);
  }
  return false;
}

Trace ReadTrace(const std::string& path) {
  auto r = TraceReader::Open(path);
  Trace t;
  t.header = r->header();
  TraceStep s;
  while (r->Next(s)) {
    t.steps.push_back(s);
  }
  return t;
}

void WriteTrace(std::ostream& out, const Trace& trace) {
  TraceWriter w(out, trace.header);
  for (const TraceStep& s : trace.steps) {
    w.Write(s);
  }
  w.Finish();
}

}  // namespace gpuplan
