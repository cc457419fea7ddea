#include "meter/render/meter_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "format/numbers.h"
#include "format/shown.h"
#include "format/table.h"
#include "format/text_lang.h"
#include "read/file_text.h"
#include "read/json_fields.h"

namespace gpuplan {

using nlohmann::json;

namespace {

std::optional<double> OptNum(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    return std::nullopt;
  }
  return it->get<double>();
}

}  // namespace

json WatchResultToJson(const WatchResult& r) {
  json j;
  j["schema"] = kWatchSchema;
  j["command"] = r.command;
  j["hostname"] = r.hostname;
  j["started"] = r.started;
  j["duration_seconds"] = r.duration_seconds;
  j["exit_code"] = r.exit_code;
  j["interval_seconds"] = r.interval_seconds;
  j["gpus"] = r.gpus;
  j["diagnosis"] = {{"bound", ToString(r.diagnosis.bound)},
                    {"gpu_part", r.diagnosis.gpu_part},
                    {"evidence", r.diagnosis.evidence}};
  const WatchSummary& s = r.summary;
  j["summary"] = {{"gpu_util_mean", OptionalToJson(s.gpu_util_mean)},
                  {"gpu_memory_util_mean", OptionalToJson(s.gpu_memory_util_mean)},
                  {"gpu_memory_used_peak", OptionalToJson(s.gpu_memory_used_peak)},
                  {"cpu_cores_mean", s.cpu_cores_mean},
                  {"cpu_cores_peak", s.cpu_cores_peak},
                  {"read_bytes_per_s_mean", s.read_bytes_per_s_mean},
                  {"waiting_io_share", s.waiting_io_share},
                  {"running_share", s.running_share},
                  {"system_iowait_mean", OptionalToJson(s.system_iowait_mean)},
                  {"system_steal_mean", OptionalToJson(s.system_steal_mean)},
                  {"pcie_bytes_per_s_mean", OptionalToJson(s.pcie_bytes_per_s_mean)},
                  {"pcie_link_bytes_per_s", OptionalToJson(s.pcie_link_bytes_per_s)},
                  {"nvlink_bytes_per_s_mean", OptionalToJson(s.nvlink_bytes_per_s_mean)},
                  {"nvlinks_up", s.nvlinks_up},
                  {"cpus", s.cpus}};
  // The series as columns (one array per figure), compact for hours of samples.
  json series;
  auto column = [&](const char* key, auto get) {
    json a = json::array();
    for (const auto& x : r.series) {
      a.push_back(get(x));
    }
    series[key] = std::move(a);
  };
  column("t", [](const WatchSample& x) { return json(x.t); });
  column("gpu_util", [](const WatchSample& x) { return OptionalToJson(x.gpu_util); });
  column("gpu_memory_util", [](const WatchSample& x) { return OptionalToJson(x.gpu_memory_util); });
  column("gpu_memory_used", [](const WatchSample& x) { return OptionalToJson(x.gpu_memory_used); });
  column("pcie_bytes_per_s", [](const WatchSample& x) { return OptionalToJson(x.pcie_bytes_per_s); });
  column("nvlink_bytes_per_s", [](const WatchSample& x) { return OptionalToJson(x.nvlink_bytes_per_s); });
  column("cpu_cores", [](const WatchSample& x) { return json(x.cpu_cores); });
  column("read_bytes_per_s", [](const WatchSample& x) { return json(x.read_bytes_per_s); });
  column("write_bytes_per_s", [](const WatchSample& x) { return json(x.write_bytes_per_s); });
  column("processes", [](const WatchSample& x) { return json(x.processes); });
  column("waiting_io", [](const WatchSample& x) { return json(x.waiting_io); });
  column("running", [](const WatchSample& x) { return json(x.running); });
  column("system_busy", [](const WatchSample& x) { return OptionalToJson(x.system_busy); });
  column("system_iowait", [](const WatchSample& x) { return OptionalToJson(x.system_iowait); });
  column("system_steal", [](const WatchSample& x) { return OptionalToJson(x.system_steal); });
  column("disk_read_bytes_per_s", [](const WatchSample& x) { return json(x.disk_read_bytes_per_s); });
  column("disk_write_bytes_per_s", [](const WatchSample& x) { return json(x.disk_write_bytes_per_s); });
  column("net_rx_bytes_per_s", [](const WatchSample& x) { return json(x.net_rx_bytes_per_s); });
  column("net_tx_bytes_per_s", [](const WatchSample& x) { return json(x.net_tx_bytes_per_s); });
  j["series"] = std::move(series);
  return j;
}

WatchResult WatchResultFromJson(const json& j, const std::string& file) {
  if (!j.is_object() || j.value("schema", "") != kWatchSchema) {
    throw InputError(std::string("not a gpuplan meter watch result (expected schema ") + kWatchSchema + ")", file, 0,
                     "schema");
  }
  WatchResult r;
  try {
    r.command = j.at("command").get<std::vector<std::string>>();
    r.hostname = j.value("hostname", "");
    r.started = j.value("started", "");
    r.duration_seconds = j.at("duration_seconds").get<double>();
    r.exit_code = j.at("exit_code").get<int>();
    r.interval_seconds = j.value("interval_seconds", 1.0);
    r.gpus = j.value("gpus", 0);
    const json& d = j.at("diagnosis");
    const std::string bound = d.at("bound").get<std::string>();
    bool known = false;
    for (auto b : {WatchBound::kCompute, WatchBound::kMemory, WatchBound::kDataLoading, WatchBound::kCommunication,
                   WatchBound::kCpu, WatchBound::kIo, WatchBound::kWaiting, WatchBound::kTooShort}) {
      if (bound == ToString(b)) {
        r.diagnosis.bound = b;
        known = true;
      }
    }
    if (!known) {
      throw InputError("unknown diagnosis '" + bound + "'", file, 0, "diagnosis.bound");
    }
    r.diagnosis.gpu_part = d.value("gpu_part", "");
    r.diagnosis.evidence = d.value("evidence", std::vector<std::string>{});
    const json& s = j.at("summary");
    r.summary.gpu_util_mean = OptNum(s, "gpu_util_mean");
    r.summary.gpu_memory_util_mean = OptNum(s, "gpu_memory_util_mean");
    r.summary.gpu_memory_used_peak = OptNum(s, "gpu_memory_used_peak");
    r.summary.cpu_cores_mean = s.value("cpu_cores_mean", 0.0);
    r.summary.cpu_cores_peak = s.value("cpu_cores_peak", 0.0);
    r.summary.read_bytes_per_s_mean = s.value("read_bytes_per_s_mean", 0.0);
    r.summary.waiting_io_share = s.value("waiting_io_share", 0.0);
    r.summary.running_share = s.value("running_share", 0.0);
    r.summary.system_iowait_mean = OptNum(s, "system_iowait_mean");
    r.summary.system_steal_mean = OptNum(s, "system_steal_mean");
    r.summary.pcie_bytes_per_s_mean = OptNum(s, "pcie_bytes_per_s_mean");
    r.summary.pcie_link_bytes_per_s = OptNum(s, "pcie_link_bytes_per_s");
    r.summary.nvlink_bytes_per_s_mean = OptNum(s, "nvlink_bytes_per_s_mean");
    r.summary.nvlinks_up = s.value("nvlinks_up", 0);
    r.summary.cpus = s.value("cpus", 0);
    const json& series = j.at("series");
    const auto& t = series.at("t");
    for (std::size_t i = 0; i < t.size(); ++i) {
      WatchSample x;
      x.t = t[i].get<double>();
      auto at = [&](const char* key) -> std::optional<double> {
        const auto it = series.find(key);
        if (it == series.end() || i >= it->size() || (*it)[i].is_null()) {
          return std::nullopt;
        }
        return (*it)[i].get<double>();
      };
      x.gpu_util = at("gpu_util");
      x.gpu_memory_util = at("gpu_memory_util");
      x.gpu_memory_used = at("gpu_memory_used");
      x.pcie_bytes_per_s = at("pcie_bytes_per_s");
      x.nvlink_bytes_per_s = at("nvlink_bytes_per_s");
      x.cpu_cores = at("cpu_cores").value_or(0);
      x.read_bytes_per_s = at("read_bytes_per_s").value_or(0);
      x.system_iowait = at("system_iowait");
      r.series.push_back(x);
    }
  } catch (const json::exception& e) {
    throw InputError(std::string("not a complete gpuplan meter watch result: ") + e.what(), file, 0, "");
  }
  return r;
}

WatchResult LoadWatchResult(const std::string& path) {
  return WatchResultFromJson(ParseJsonText(ReadFileText(path), path), path);
}

std::string Sparkline(const std::vector<std::optional<double>>& values, double full, std::size_t width) {
  static const char* blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  std::string out;
  if (values.empty() || width == 0 || full <= 0) {
    return out;
  }
  const std::size_t n = std::min(width, values.size());
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t from = b * values.size() / n, to = (b + 1) * values.size() / n;
    double sum = 0;
    int count = 0;
    for (std::size_t i = from; i < to; ++i) {
      if (values[i]) {
        sum += *values[i];
        ++count;
      }
    }
    if (count == 0) {
      out += ' ';
      continue;
    }
    const double v = std::clamp(sum / count / full, 0.0, 1.0);
    out += blocks[std::min<std::size_t>(7, static_cast<std::size_t>(std::floor(v * 8)))];
  }
  return out;
}

namespace {

std::string Bound(WatchBound b) {
  const std::string name = ToString(b);
  return Say("cli.meter.bound." + name, name);
}

}  // namespace

void WatchResultToText(std::ostream& os, const WatchResult& r) {
  std::string cmd;
  for (const auto& a : r.command) {
    cmd += (cmd.empty() ? "" : " ") + a;
  }
  os << SayFormat("cli.meter.watch.head", "{} on {}: {} s, exit code {}",
                  {Shown(cmd), r.hostname.empty() ? Say("cli.meter.watch.this_machine", "this machine") : Shown(r.hostname),
                   fmt::format("{:.1f}", r.duration_seconds), std::to_string(r.exit_code)})
     << "\n";
  std::vector<std::optional<double>> gpu, cpu;
  for (const auto& x : r.series) {
    gpu.push_back(x.gpu_util);
    cpu.push_back(x.cpu_cores);
  }
  // The two curves' labels padded to one width, so the sparklines start in the same column.
  const std::string gpu_label = Say("cli.meter.watch.gpu_util", "GPU utilisation");
  const std::string cpu_label = Say("cli.meter.watch.cpu_cores", "CPU cores used");
  const int64_t label_width = std::max<int64_t>(16, std::max(DisplayWidth(gpu_label), DisplayWidth(cpu_label)) + 1);
  if (r.summary.gpu_util_mean) {
    os << "  " << PadRight(gpu_label, label_width) << " " << Sparkline(gpu, 100) << "  "
       << SayFormat("cli.meter.watch.gpu_mean", "mean {}%", {fmt::format("{:.0f}", *r.summary.gpu_util_mean)}) << "\n";
  } else {
    os << "  " << PadRight(gpu_label, label_width) << " " << Shown(SayMessage(r.diagnosis.gpu_part)) << "\n";
  }
  const double cores = std::max(1.0, std::ceil(r.summary.cpu_cores_peak));
  os << "  " << PadRight(cpu_label, label_width) << " " << Sparkline(cpu, cores) << "  "
     << SayFormat("cli.meter.watch.cpu_mean", "mean {}, peak {} (scale 0-{})",
                  {fmt::format("{:.2f}", r.summary.cpu_cores_mean), fmt::format("{:.2f}", r.summary.cpu_cores_peak),
                   fmt::format("{:.0f}", cores)})
     << "\n";
  os << SayFormat("cli.meter.watch.diagnosis", "Diagnosis: {}", {Bound(r.diagnosis.bound)}) << "\n";
  for (const auto& e : r.diagnosis.evidence) {
    os << "  - " << Shown(SayMessage(e)) << "\n";
  }
}

void WatchComparisonToText(std::ostream& os, const std::vector<std::pair<std::string, WatchResult>>& results) {
  double fastest = 0;
  for (const auto& [name, r] : results) {
    if (r.exit_code == 0 && (fastest == 0 || r.duration_seconds < fastest)) {
      fastest = r.duration_seconds;
    }
  }
  const Table t({Column(Say("cli.meter.compare.run", "run"), 24), Column(Say("cli.meter.compare.host", "host"), 16),
                 Column(Say("cli.meter.compare.seconds", "seconds"), 9, Align::kRight, "  "),
                 Column(Say("cli.meter.compare.vs_fastest", "vs fastest"), 10, Align::kRight, "  "),
                 Column(Say("cli.meter.compare.gpu_util", "GPU util"), 8, Align::kRight, "  "),
                 Column(Say("cli.meter.compare.cpu_cores", "CPU cores"), 9, Align::kRight, "  "),
                 Column(Say("cli.meter.compare.read", "read MB/s"), 9, Align::kRight, "  "),
                 Column(Say("cli.meter.compare.exit", "exit"), 4, Align::kRight, "  "),
                 Column(Say("cli.meter.compare.diagnosis", "diagnosis"), 0, Align::kLeft, "  ")});
  t.PrintHeader(os);
  for (const auto& [name, r] : results) {
    t.PrintRow(os, {Shown(name), Shown(r.hostname), fmt::format("{:.1f}", r.duration_seconds),
                    fastest > 0 && r.exit_code == 0 ? fmt::format("{:+.0f}%", 100 * (r.duration_seconds / fastest - 1)) : "-",
                    r.summary.gpu_util_mean ? fmt::format("{:.0f}%", *r.summary.gpu_util_mean) : "n/a",
                    fmt::format("{:.2f}", r.summary.cpu_cores_mean), fmt::format("{:.1f}", r.summary.read_bytes_per_s_mean / 1e6),
                    std::to_string(r.exit_code), Bound(r.diagnosis.bound)});
  }
}

}  // namespace gpuplan
