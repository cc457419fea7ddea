#include "check/worker_protocol.h"

#include <cmath>

#include "core/error.h"
#include "read/json_depth.h"

namespace gpuplan {

std::optional<double> WorkerLine::Number(const char* key) const {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_number()) {
    return std::nullopt;
  }
  return it->get<double>();
}

std::optional<std::string> WorkerLine::Text(const char* key) const {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_string()) {
    return std::nullopt;
  }
  return it->get<std::string>();
}

std::optional<bool> WorkerLine::Flag(const char* key) const {
  const auto it = body.find(key);
  if (it == body.end() || !it->is_boolean()) {
    return std::nullopt;
  }
  return it->get<bool>();
}

std::optional<WorkerLine> ParseWorkerLine(const std::string& line, std::string* why) {
  auto fail = [why](std::string w) -> std::optional<WorkerLine> {
    if (why != nullptr) {
      *why = std::move(w);
    }
    return std::nullopt;
  };
  WorkerLine out;
  out.text = line;
  try {
    CheckJsonInput(line, "");
    out.body = nlohmann::json::parse(line);
  } catch (const InputError& e) {
    return fail(e.message());
  } catch (const nlohmann::json::exception& e) {
    return fail(std::string("not JSON: ") + e.what());
  }
  if (!out.body.is_object()) {
    return fail("not a JSON object");
  }
  // The worker prints counts, sizes and times (docs/check.md 11.1): every number at the top of a
  // line is finite and from 0 to 2^53, so the parent's conversions to integers cannot wrap.
  for (const auto& [key, v] : out.body.items()) {
    if (!v.is_number() || key == "device") {
      continue;
    }
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d > kMaxWorkerNumber) {
      return fail("\"" + key + "\" is " + v.dump() + ", expected a count or time from 0 to 2^53");
    }
  }
  const auto type = out.Text("type");
  if (!type) {
    return fail("no \"type\"");
  }
  static const std::pair<const char*, WorkerLineType> kTypes[] = {
      {"hello", WorkerLineType::kHello},   {"device", WorkerLineType::kDevice},
      {"result", WorkerLineType::kResult}, {"skip", WorkerLineType::kSkip},
      {"error", WorkerLineType::kError},   {"progress", WorkerLineType::kProgress},
      {"done", WorkerLineType::kDone}};
  bool known = false;
  for (const auto& [text, t] : kTypes) {
    if (*type == text) {
      out.type = t;
      known = true;
    }
  }
  if (!known) {
    return fail("unknown type '" + *type + "'");
  }
  out.test = out.Text("test").value_or("");
  out.name = out.Text("name").value_or("");
  if (const auto d = out.Number("device")) {
    if (*d < -1 || *d > kMaxWorkerDevice || *d != std::floor(*d)) {
      return fail("\"device\" is not a device index (-1 for all, or 0 to " + std::to_string(kMaxWorkerDevice) + ")");
    }
    out.device = static_cast<int>(*d);
  }
  if ((out.type == WorkerLineType::kResult || out.type == WorkerLineType::kSkip) && out.name.empty()) {
    return fail(std::string("a ") + *type + " line without a \"name\"");
  }
  if (out.type == WorkerLineType::kResult && !out.Flag("verified")) {
    return fail("a result line without \"verified\" (every measurement is checked before it is printed)");
  }
  if (out.type == WorkerLineType::kHello && out.Text("protocol").value_or("") != kWorkerProtocol) {
    return fail("protocol '" + out.Text("protocol").value_or("") + "', expected '" + kWorkerProtocol + "'");
  }
  return out;
}

}  // namespace gpuplan
