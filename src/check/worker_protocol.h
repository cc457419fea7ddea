// The lines gpu-worker (apps/gpu-worker) prints on stdout, one JSON object per line, and their
// parser (schema `gpuplan-worker/1`, docs/check.md §11.1). The parent never trusts a line it
// cannot read: ParseWorkerLine says why, and the runner turns such a line into a FAIL.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace gpuplan {

inline constexpr const char* kWorkerProtocol = "gpuplan-worker/1";
// Bounds on a worker line's numbers: a device index is -1 (all) or 0 to 1023; every other number
// at the top of a line is a count, size or time from 0 to 2^53.
inline constexpr int kMaxWorkerDevice = 1023;
inline constexpr double kMaxWorkerNumber = 9007199254740992.0;

enum class WorkerLineType {
  kHello,     // {"type":"hello","protocol":"gpuplan-worker/1","worker":"...","nccl":true}
  kDevice,    // {"type":"device","device":0,"name":..,"cc":"9.0","pci_bus_id":..,"memory_total":..,"memory_free":..}
  kResult,    // {"type":"result","test":..,"device":0,"name":..,"verified":true,...raw counts and times}
  kSkip,      // {"type":"skip","test":..,"device":0,"name":..,"reason":..}
  kError,     // {"type":"error","test":..,"device":0,"api":"cuda","error":"cudaErrorIllegalAddress","expr":..,"where":..}
  kProgress,  // {"type":"progress","test":..,"device":0,"fraction":0.25,...}
  kDone,      // {"type":"done","test":..,"device":0}: the test finished and every result was printed
};

struct WorkerLine {
  WorkerLineType type = WorkerLineType::kResult;
  std::string test;      // "memory", "bandwidth", "gemm", "pcie", "p2p", "nccl", "burn"
  std::string name;      // result or skip name ("stream_copy", "gemm", "pcie_copy", ...)
  int device = -1;       // CUDA device the line is about; -1: all (p2p, nccl)
  nlohmann::json body;   // the whole object
  std::string text;      // the line as printed

  // Typed fields of `body`; nullopt when absent or of another type.
  std::optional<double> Number(const char* key) const;
  std::optional<std::string> Text(const char* key) const;
  std::optional<bool> Flag(const char* key) const;
};

// One stdout line -> a WorkerLine, or nullopt with `why` set ("not JSON: ...", "no type",
// "unknown type 'x'", "a result without a name", ...).
std::optional<WorkerLine> ParseWorkerLine(const std::string& line, std::string* why);

}  // namespace gpuplan
