#include "check/render/check_json.h"

#include <map>
#include <set>
#include <type_traits>

#include "core/error.h"
#include "format/numbers.h"
#include "read/file_text.h"
#include "read/json_fields.h"
#include "telemetry/snapshot_json.h"

namespace gpuplan {

using nlohmann::json;

namespace {

CheckStatus StatusFromText(const std::string& s, const std::string& file, const std::string& where) {
  for (CheckStatus c : {CheckStatus::kPass, CheckStatus::kWarn, CheckStatus::kFail, CheckStatus::kSkip, CheckStatus::kError}) {
    if (s == ToString(c)) {
      return c;
    }
  }
  throw InputError("expected PASS, WARN, FAIL, SKIP or ERROR, got '" + s + "'", file, 0, where);
}

// Bounds on a report's numbers (docs/check-report-formats.md).
constexpr int64_t kMaxCpus = 65536;
constexpr int64_t kMaxHostMemory = int64_t{1} << 56;  // 64 PiB
constexpr int64_t kMaxGpu = 65535;                  // a GPU index, as in snapshots
constexpr double kMaxSeconds = 31622400;            // a year: a test, a curve's time

// Typed reads of a report object with errors naming the key path.
struct Reader {
  const std::string& file;

  [[noreturn]] void Fail(const std::string& where, const std::string& what) const { throw InputError(what, file, 0, where); }

  std::string Str(const json& o, const char* key, const std::string& where, bool required = false) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      if (required) {
        Fail(where + key, "missing");
      }
      return {};
    }
    if (!it->is_string()) {
      Fail(where + key, "expected a string");
    }
    return it->get<std::string>();
  }
  std::optional<double> Num(const json& o, const char* key, const std::string& where) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      return std::nullopt;
    }
    if (!it->is_number()) {
      Fail(where + key, "expected a number");
    }
    return it->get<double>();
  }
  // An integer in [min, max] (checked before it is narrowed to I, so nothing wraps).
  template <typename I>
  std::optional<I> Int(const json& o, const char* key, const std::string& where, int64_t min, int64_t max) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      return std::nullopt;
    }
    if (!it->is_number_integer()) {
      Fail(where + key, "expected an integer");
    }
    const bool in_range = it->is_number_unsigned() ? it->get<uint64_t>() <= static_cast<uint64_t>(max) &&
                                                         (min <= 0 || it->get<uint64_t>() >= static_cast<uint64_t>(min))
                                                   : it->get<int64_t>() >= min && it->get<int64_t>() <= max;
    if (!in_range) {
      Fail(where + key, "out of range: expected " + std::to_string(min) + " to " + std::to_string(max) + ", got " +
                            it->dump());
    }
    return static_cast<I>(it->get<int64_t>());
  }
  // A number in [min, max].
  std::optional<double> Num(const json& o, const char* key, const std::string& where, double min, double max) const {
    const std::optional<double> v = Num(o, key, where);
    if (v && (*v < min || *v > max)) {
      Fail(where + key, "out of range: expected " + json(min).dump() + " to " + json(max).dump() + ", got " +
                            json(*v).dump());
    }
    return v;
  }
  std::optional<bool> Bool(const json& o, const char* key, const std::string& where) const {
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      return std::nullopt;
    }
    if (!it->is_boolean()) {
      Fail(where + key, "expected true or false");
    }
    return it->get<bool>();
  }
  const json& Array(const json& o, const char* key, const std::string& where) const {
    static const json empty = json::array();
    const auto it = o.find(key);
    if (it == o.end() || it->is_null()) {
      return empty;
    }
    if (!it->is_array()) {
      Fail(where + key, "expected an array");
    }
    return *it;
  }
};

}  // namespace

json CheckResultToJson(const CheckResult& r) {
  json j;
  j["name"] = r.name;
  j["gpu"] = r.gpu >= 0 ? json(r.gpu) : json(nullptr);
  if (!r.node.empty()) {
    j["node"] = r.node;
  }
  j["status"] = ToString(r.status);
  j["measured"] = OptionalToJson(r.measured);
  j["expected"] = OptionalToJson(r.expected);
  j["unit"] = r.unit;
  j["evidence"] = r.evidence;
  // The optional texts only when present (a 1,000-node merge has 160,000 results).
  auto text = [&j](const char* key, const std::string& v) {
    if (!v.empty()) {
      j[key] = v;
    }
  };
  text("measured_text", r.measured_text);
  text("expected_text", r.expected_text);
  text("advice", r.advice);
  text("expectation_source", r.expectation_source);
  if (r.seconds > 0) {
    j["seconds"] = r.seconds;
  }
  return j;
}

json HostToJson(const HostInfo& h) {
  json j;
  j["hostname"] = OptionalToJson(h.hostname);
  j["os"] = OptionalToJson(h.os);
  j["kernel"] = OptionalToJson(h.kernel);
  j["cpu_model"] = OptionalToJson(h.cpu_model);
  j["cpu_sockets"] = OptionalToJson(h.cpu_sockets);
  j["cpu_cores"] = OptionalToJson(h.cpu_cores);
  j["cpu_threads"] = OptionalToJson(h.cpu_threads);
  j["memory_bytes"] = OptionalToJson(h.memory_bytes);
  j["virtual_machine"] = OptionalToJson(h.virtual_machine);
  j["not_measured"] = h.not_measured;
  return j;
}

namespace {

// The link test's figures (docs/check.md §12; report.h NetLink).
json NetToJson(const NetLink& n) {
  json j;
  j["host"] = n.host;
  j["tool"] = n.tool;
  j["streams"] = n.streams;
  j["seconds"] = n.seconds;
  j["connect_ms"] = n.connect_ms;
  j["rtt_ms"] = n.rtt_ms;
  j["rtt_p90_ms"] = n.rtt_p90_ms;
  j["pings"] = n.pings;
  j["throughput_gbps"] = n.throughput_gbps;
  j["reverse_gbps"] = n.reverse_gbps;
  j["throughput_bytes"] = n.throughput_bytes;
  j["reverse_bytes"] = n.reverse_bytes;
  j["transfer_bytes"] = n.transfer_bytes;
  j["transfer_measured_bytes"] = n.transfer_measured_bytes;
  j["transfer_seconds"] = n.transfer_seconds;
  j["transfer_extrapolated"] = n.transfer_extrapolated;
  j["listener_rate_mbps"] = OptionalToJson(n.listener_rate_mbps);
  return j;
}

// Bounds of the `net` object: 100 Tbit/s, a day of milliseconds, a year of seconds, 2^50 bytes.
constexpr double kMaxGbps = 1e5;
constexpr double kMaxMs = 86400e3;
constexpr int64_t kMaxNetBytes = int64_t{1} << 50;
constexpr int64_t kMaxNetStreams = 1024;
constexpr int64_t kMaxPings = 100000;

NetLink NetFromJson(const json& j, const Reader& rd) {
  const std::string w = "net.";
  if (!j.is_object()) {
    rd.Fail("net", "expected an object or null");
  }
  static const std::set<std::string> known = {
      "host", "tool", "streams", "seconds", "connect_ms", "rtt_ms", "rtt_p90_ms", "pings", "throughput_gbps",
      "reverse_gbps", "throughput_bytes", "reverse_bytes", "transfer_bytes", "transfer_measured_bytes",
      "transfer_seconds", "transfer_extrapolated", "listener_rate_mbps"};
  for (const auto& [k, v] : j.items()) {
    if (!known.count(k)) {
      rd.Fail(w + k, "unknown key (the net object has: host, tool, streams, seconds, connect_ms, rtt_ms, rtt_p90_ms, "
                     "pings, throughput_gbps, reverse_gbps, throughput_bytes, reverse_bytes, transfer_bytes, "
                     "transfer_measured_bytes, transfer_seconds, transfer_extrapolated, listener_rate_mbps)");
    }
  }
  auto need = [&](auto v, const char* key) {
    if (!v) {
      rd.Fail(w + key, "missing");
    }
    return *v;
  };
  NetLink n;
  n.host = rd.Str(j, "host", w, true);
  n.tool = rd.Str(j, "tool", w, true);
  n.streams = need(rd.Int<int>(j, "streams", w, 1, kMaxNetStreams), "streams");
  n.seconds = need(rd.Num(j, "seconds", w, 0, kMaxSeconds), "seconds");
  n.connect_ms = rd.Num(j, "connect_ms", w, 0, kMaxMs).value_or(0);
  n.rtt_ms = need(rd.Num(j, "rtt_ms", w, 0, kMaxMs), "rtt_ms");
  n.rtt_p90_ms = rd.Num(j, "rtt_p90_ms", w, 0, kMaxMs).value_or(0);
  n.pings = rd.Int<int>(j, "pings", w, 0, kMaxPings).value_or(0);
  n.throughput_gbps = need(rd.Num(j, "throughput_gbps", w, 0, kMaxGbps), "throughput_gbps");
  n.reverse_gbps = need(rd.Num(j, "reverse_gbps", w, 0, kMaxGbps), "reverse_gbps");
  n.throughput_bytes = rd.Int<uint64_t>(j, "throughput_bytes", w, 0, kMaxNetBytes).value_or(0);
  n.reverse_bytes = rd.Int<uint64_t>(j, "reverse_bytes", w, 0, kMaxNetBytes).value_or(0);
  n.transfer_bytes = need(rd.Int<uint64_t>(j, "transfer_bytes", w, 0, kMaxNetBytes), "transfer_bytes");
  n.transfer_measured_bytes = rd.Int<uint64_t>(j, "transfer_measured_bytes", w, 0, kMaxNetBytes).value_or(0);
  n.transfer_seconds = need(rd.Num(j, "transfer_seconds", w, 0, kMaxSeconds), "transfer_seconds");
  n.transfer_extrapolated = rd.Bool(j, "transfer_extrapolated", w).value_or(false);
  n.listener_rate_mbps = rd.Num(j, "listener_rate_mbps", w, 0, kMaxGbps * 1000);
  return n;
}

// The report as a tree; `with_tests` false leaves `tests` an empty array (WriteMergeJson streams
// them instead).
json ReportToJson(const CheckReport& r, bool with_tests) {
  json j;
  j["schema"] = kCheckReportSchema;
  j["tool_version"] = r.tool_version;
  j["mode"] = r.mode;
  j["started"] = r.started;
  j["finished"] = r.finished.empty() ? json(nullptr) : json(r.finished);
  j["complete"] = !r.finished.empty();
  j["source"] = r.source;
  j["expect"] = r.expect;
  j["expected_card"] = r.expected_card;
  j["offer_id"] = r.offer_id;
  j["verdict"] = ToString(r.verdict);
  j["exit_code"] = r.ExitCode();
  j["environment_problem"] = r.environment_problem;
  j["notes"] = r.notes;
  j["host"] = HostToJson(r.host);
  // gpus[]: every GPU of every node, flat, with its node; nodes[]: the snapshots as read.
  json gpus = json::array();
  json nodes = json::array();
  for (const auto& n : r.nodes) {
    nodes.push_back(ToJson(n));
    for (const auto& g : n.gpus) {
      json gj = ToJson(g);
      gj["node"] = OptionalToJson(n.hostname);
      gj["driver_version"] = OptionalToJson(n.driver_version);
      gj["cuda_driver_version"] = OptionalToJson(n.cuda_driver_version);
      gpus.push_back(std::move(gj));
    }
  }
  j["gpus"] = std::move(gpus);
  j["nodes"] = std::move(nodes);
  json events = json::array();
  for (const auto& e : r.events) {
    events.push_back(ToJson(e));
  }
  j["events"] = std::move(events);
  json tests = json::array();
  if (with_tests) {
    for (const auto& t : r.tests) {
      tests.push_back(CheckResultToJson(t));
    }
  }
  j["tests"] = std::move(tests);
  // curves[]: NVML samples during the GPU tests, one array per quantity, index i = sample i.
  json curves = json::array();
  for (const auto& c : r.curves) {
    json cj;
    cj["test"] = c.test;
    cj["gpu"] = c.gpu;
    if (!c.node.empty()) {
      cj["node"] = c.node;
    }
    cj["interval_s"] = c.interval_s;
    cj["warmup_s"] = c.warmup_s;
    cj["t"] = c.t;
    auto arr = [](const auto& v) {
      json a = json::array();
      for (const auto& x : v) {
        a.push_back(OptionalToJson(x));
      }
      return a;
    };
    cj["temperature_c"] = arr(c.temperature_c);
    cj["power_w"] = arr(c.power_w);
    cj["sm_clock_mhz"] = arr(c.sm_clock_mhz);
    cj["clock_events"] = arr(c.clock_events);
    cj["clock_event_seconds"] = c.clock_event_seconds;
    curves.push_back(std::move(cj));
  }
  j["curves"] = std::move(curves);
  j["net"] = r.net ? NetToJson(*r.net) : json(nullptr);
  return j;
}

}  // namespace

json CheckReportToJson(const CheckReport& r) { return ReportToJson(r, true); }

CheckReport ReportFromJson(const json& j, const std::string& file) {
  const Reader rd{file};
  if (!j.is_object()) {
    rd.Fail("", "not a gpuplan check report (expected a JSON object)");
  }
  const std::string schema = rd.Str(j, "schema", "");
  if (schema != kCheckReportSchema) {
    rd.Fail("schema", "not a gpuplan check report: schema '" + schema + "', expected '" + kCheckReportSchema + "'");
  }
  CheckReport r;
  r.tool_version = rd.Str(j, "tool_version", "");
  r.mode = rd.Str(j, "mode", "");
  r.started = rd.Str(j, "started", "");
  r.finished = rd.Str(j, "finished", "");
  // "complete" is whether `finished` is set (a killed check leaves both unset); a report that
  // says otherwise was edited, and an incomplete report must not read as a finished one.
  if (const auto complete = rd.Bool(j, "complete", ""); complete && *complete == r.finished.empty()) {
    rd.Fail("complete", *complete ? "says true but the report has no finished time"
                                  : "says false but the report has a finished time (" + r.finished + ")");
  }
  r.source = rd.Str(j, "source", "");
  r.expect = rd.Str(j, "expect", "");
  r.expected_card = rd.Str(j, "expected_card", "");
  r.offer_id = rd.Str(j, "offer_id", "");
  r.environment_problem = rd.Bool(j, "environment_problem", "").value_or(false);
  for (std::size_t i = 0; const auto& n : rd.Array(j, "notes", "")) {
    if (!n.is_string()) {
      rd.Fail("notes[" + std::to_string(i) + "]", "expected a string");
    }
    r.notes.push_back(n.get<std::string>());
    ++i;
  }
  if (const auto it = j.find("host"); it != j.end() && it->is_object()) {
    const json& h = *it;
    const std::string w = "host.";
    if (auto s = rd.Str(h, "hostname", w); !s.empty()) r.host.hostname = s;
    if (auto s = rd.Str(h, "os", w); !s.empty()) r.host.os = s;
    if (auto s = rd.Str(h, "kernel", w); !s.empty()) r.host.kernel = s;
    if (auto s = rd.Str(h, "cpu_model", w); !s.empty()) r.host.cpu_model = s;
    r.host.cpu_sockets = rd.Int<int>(h, "cpu_sockets", w, 1, kMaxCpus);
    r.host.cpu_cores = rd.Int<int>(h, "cpu_cores", w, 1, kMaxCpus);
    r.host.cpu_threads = rd.Int<int>(h, "cpu_threads", w, 1, kMaxCpus);
    r.host.memory_bytes = rd.Int<uint64_t>(h, "memory_bytes", w, 0, kMaxHostMemory);
    r.host.virtual_machine = rd.Bool(h, "virtual_machine", w);
    if (const auto nm = h.find("not_measured"); nm != h.end() && nm->is_object()) {
      for (const auto& [k, v] : nm->items()) {
        r.host.not_measured[k] = v.is_string() ? v.get<std::string>() : v.dump();
      }
    }
  }
  for (std::size_t i = 0; const auto& n : rd.Array(j, "nodes", "")) {
    r.nodes.push_back(SnapshotFromJson(n, file, "nodes[" + std::to_string(i) + "]"));
    ++i;
  }
  for (std::size_t i = 0; const auto& e : rd.Array(j, "events", "")) {
    r.events.push_back(EventFromJson(e, file, "events[" + std::to_string(i) + "]"));
    ++i;
  }
  for (std::size_t i = 0; const auto& t : rd.Array(j, "tests", "")) {
    const std::string w = "tests[" + std::to_string(i) + "].";
    if (!t.is_object()) {
      rd.Fail(w.substr(0, w.size() - 1), "expected an object");
    }
    CheckResult c;
    c.name = rd.Str(t, "name", w, true);
    c.gpu = rd.Int<int>(t, "gpu", w, 0, kMaxGpu).value_or(-1);
    c.node = rd.Str(t, "node", w);
    c.status = StatusFromText(rd.Str(t, "status", w, true), file, w + "status");
    c.measured = rd.Num(t, "measured", w);
    c.expected = rd.Num(t, "expected", w);
    c.unit = rd.Str(t, "unit", w);
    c.measured_text = rd.Str(t, "measured_text", w);
    c.expected_text = rd.Str(t, "expected_text", w);
    c.evidence = rd.Str(t, "evidence", w);
    c.advice = rd.Str(t, "advice", w);
    c.expectation_source = rd.Str(t, "expectation_source", w);
    c.seconds = rd.Num(t, "seconds", w, 0, kMaxSeconds).value_or(0);
    r.Add(std::move(c));
    ++i;
  }
  if (const auto cs = j.find("curves"); cs != j.end() && cs->is_array()) {
    for (std::size_t i = 0; const auto& c : *cs) {
      const std::string w = "curves[" + std::to_string(i) + "].";
      if (!c.is_object()) {
        rd.Fail(w.substr(0, w.size() - 1), "expected an object");
      }
      GpuCurve g;
      g.test = rd.Str(c, "test", w);
      g.gpu = rd.Int<int>(c, "gpu", w, -1, kMaxGpu).value_or(-1);
      g.node = rd.Str(c, "node", w);
      g.interval_s = rd.Num(c, "interval_s", w, 0.001, 86400).value_or(1);
      g.warmup_s = rd.Num(c, "warmup_s", w, 0, kMaxSeconds).value_or(0);
      auto nums = [&](const char* key, auto& out, double min, double max) {
        const auto it = c.find(key);
        if (it == c.end()) {
          return;
        }
        if (!it->is_array()) {
          rd.Fail(w + key, "expected an array");
        }
        for (const auto& x : *it) {
          using V = typename std::decay_t<decltype(out)>::value_type;
          if (x.is_null()) {
            out.push_back(V{});
          } else if (x.is_number()) {
            const double d = x.get<double>();
            if (d < min || d > max) {
              rd.Fail(w + key, "out of range: expected " + json(min).dump() + " to " + json(max).dump() + ", got " +
                                   x.dump());
            }
            if constexpr (std::is_same_v<V, double> || std::is_same_v<V, std::optional<double>>) {
              out.push_back(d);
            } else {
              if (!x.is_number_unsigned()) {
                rd.Fail(w + key, "expected whole numbers, got " + x.dump());
              }
              out.push_back(x.get<uint64_t>());
            }
          } else {
            rd.Fail(w + key, "expected numbers");
          }
        }
      };
      nums("t", g.t, 0, kMaxSeconds);
      nums("temperature_c", g.temperature_c, -100, 300);
      nums("power_w", g.power_w, 0, 100000);
      nums("sm_clock_mhz", g.sm_clock_mhz, 0, 100000);
      nums("clock_events", g.clock_events, 0, 9007199254740992.0);
      if (const auto ces = c.find("clock_event_seconds"); ces != c.end() && ces->is_object()) {
        for (const auto& [k, v] : ces->items()) {
          if (v.is_number()) {
            g.clock_event_seconds[k] = v.get<double>();
          }
        }
      }
      r.curves.push_back(std::move(g));
      ++i;
    }
  }
  if (const auto it = j.find("net"); it != j.end() && !it->is_null()) {
    r.net = NetFromJson(*it, rd);
  }
  // The verdict is recomputed from the tests (Add); a report that says otherwise was edited.
  const std::string said = rd.Str(j, "verdict", "");
  if (!said.empty() && said != ToString(r.verdict)) {
    rd.Fail("verdict", "says " + said + " but its tests give " + ToString(r.verdict));
  }
  return r;
}

NamedReport LoadReport(const std::string& path) {
  const json j = ParseJsonText(ReadFileText(path), path);
  return NamedReport{path, ReportFromJson(j, path)};
}

namespace {

json IncompleteToJson(const std::vector<IncompleteReport>& incomplete, const char* label_key) {
  json a = json::array();
  for (const auto& i : incomplete) {
    a.push_back({{"file", i.file}, {label_key, i.label}, {"reason", i.reason}, {"environment_problem", i.environment_problem}});
  }
  return a;
}

}  // namespace

json ComparisonToJson(const ComparisonResult& c) {
  json j;
  j["exit_code"] = c.ExitCode();
  j["incomplete"] = IncompleteToJson(c.incomplete, "label");
  j["currency"] = c.currency.empty() ? json(nullptr) : json(c.currency);
  j["rank_basis"] = c.rank_basis;
  j["notes"] = c.notes;
  json machines = json::array();
  for (const auto& m : c.machines) {
    json mj;
    mj["file"] = m.file;
    mj["label"] = m.label;
    mj["card"] = m.card;
    mj["gpus"] = m.gpus;
    mj["verdict"] = ToString(m.verdict);
    mj["complete"] = m.incomplete.empty();
    mj["incomplete"] = m.incomplete.empty() ? json(nullptr) : json(m.incomplete);
    mj["offer_id"] = m.offer_id;
    mj["price_per_hour"] = OptionalToJson(m.price_per_hour);
    mj["bf16_tflops"] = OptionalToJson(m.bf16_tflops);
    mj["storage_gb_s"] = OptionalToJson(m.storage_gb_s);
    mj["per_bf16_pflop_hour"] = OptionalToJson(m.per_bf16_pflop_hour);
    mj["per_storage_tb_s_hour"] = OptionalToJson(m.per_storage_tb_s_hour);
    mj["rank"] = m.rank > 0 ? json(m.rank) : json(nullptr);
    json terms = nullptr;
    if (m.offer) {
      const ProviderTerms& t = m.offer->terms;
      terms = json::object();
      terms["sla_response_minutes"] = OptionalToJson(t.sla_response_minutes);
      terms["node_replacement_hours"] = OptionalToJson(t.node_replacement_hours);
      terms["resume_from_checkpoint"] = OptionalToJson(t.resume_from_checkpoint);
      terms["private_network"] = OptionalToJson(t.private_network);
      terms["disk_encryption"] = OptionalToJson(t.disk_encryption);
      terms["data_erasure_on_release"] = OptionalToJson(t.data_erasure_on_release);
      terms["billing_transparency"] = OptionalToJson(t.billing_transparency);
      mj["provider"] = m.offer->provider;
    }
    mj["terms"] = std::move(terms);
    machines.push_back(std::move(mj));
  }
  j["machines"] = std::move(machines);
  json rows = json::array();
  for (const auto& row : c.rows) {
    json rj;
    rj["test"] = row.test;
    rj["unit"] = row.unit;
    json cells = json::array();
    for (const auto& cell : row.cells) {
      if (!cell) {
        cells.push_back(nullptr);
        continue;
      }
      cells.push_back({{"status", ToString(cell->status)},
                       {"measured", OptionalToJson(cell->measured)},
                       {"text", cell->text},
                       {"results", cell->results},
                       {"failing", cell->failing}});
    }
    rj["cells"] = std::move(cells);
    rows.push_back(std::move(rj));
  }
  j["rows"] = std::move(rows);
  return j;
}

namespace {

json MergeTree(const MergeResult& m, bool with_tests) {
  json j = ReportToJson(m.merged, with_tests);
  j["merge"] = {{"nodes", m.nodes}, {"outlier_z", m.outlier_z}, {"incomplete", IncompleteToJson(m.incomplete, "node")}};
  json outliers = json::array();
  for (const auto& o : m.outliers) {
    outliers.push_back({{"test", o.test},
                        {"node", o.node},
                        {"gpu", o.gpu >= 0 ? json(o.gpu) : json(nullptr)},
                        {"value", o.value},
                        {"median", o.median},
                        {"spread", o.spread},
                        {"z", o.z},
                        {"unit", o.unit},
                        {"peers", o.peers}});
  }
  j["outliers"] = std::move(outliers);
  return j;
}

// `text` (a value dumped with indent 2 at depth 0) as it appears `pad` spaces deeper.
void WriteIndented(const std::string& text, std::size_t pad, std::ostream& out) {
  std::size_t from = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', from)) {
    out.write(text.data() + from, static_cast<std::streamsize>(nl + 1 - from));
    for (std::size_t i = 0; i < pad; ++i) {
      out.put(' ');
    }
    from = nl + 1;
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

}  // namespace

json MergeToJson(const MergeResult& m) { return MergeTree(m, true); }

void WriteMergeJson(const MergeResult& m, std::ostream& out) {
  // The same bytes as MergeToJson(m).dump(2) + "\n": the small parts as one tree (its keys in
  // nlohmann's sorted order), the 160,000 results of a 1,000-node merge one at a time, so the
  // whole document is never a tree nor one string (docs/check.md §10).
  const json head = MergeTree(m, false);
  out << '{';
  bool first = true;
  for (auto it = head.begin(); it != head.end(); ++it) {
    out << (first ? "\n  " : ",\n  ") << json(it.key()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << ": ";
    first = false;
    if (it.key() != "tests" || m.merged.tests.empty()) {
      WriteIndented(it.value().dump(2, ' ', false, nlohmann::json::error_handler_t::replace), 2, out);
      continue;
    }
    out << '[';
    for (std::size_t i = 0; i < m.merged.tests.size(); ++i) {
      out << (i == 0 ? "\n    " : ",\n    ");
      WriteIndented(CheckResultToJson(m.merged.tests[i]).dump(2, ' ', false, nlohmann::json::error_handler_t::replace), 4, out);
    }
    out << "\n  ]";
  }
  out << (first ? "}\n" : "\n}\n");
}

}  // namespace gpuplan
