// gpu-worker: the CUDA side of `gpuplan check` (docs/check.md §11). One process per GPU (one for
// all GPUs for P2P and NCCL); it prints JSON lines on stdout (schema gpuplan-worker/1, parsed by
// src/check/worker_protocol.h) and nothing else there. Every CUDA, cuBLASLt and NCCL call is
// checked: a failure prints one error line naming the API's error, the expression and file:line,
// and exits 3. Every measurement is verified before it is printed (counts of wrong values are
// part of the line); the parent does the arithmetic (src/check/benchmark_formulas.h) from the raw
// counts and times printed here.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace gw {

struct Args {
  std::string test;             // memory | bandwidth | gemm | gemm-sweep | pcie | p2p | nccl | burn
  int device = 0;               // --device N (CUDA index under CUDA_DEVICE_ORDER=PCI_BUS_ID)
  std::string pci_bus_id;       // --pci-bus-id ID: wins over --device
  bool all_devices = false;     // --devices all
  double seconds = 10;          // --seconds S: time budget (memory passes, burn-in length)
  std::string precisions;       // --precisions fp32,tf32,bf16,fp16,int8,fp8 (empty: gemm bf16, gemm-sweep bf16,fp8)
  bool pinned_only = false;     // --pinned-only (PCIe, all GPUs at once)
  size_t min_bytes = 8;         // --min-bytes (NCCL sweep)
  size_t max_bytes = size_t{1} << 30;  // --max-bytes (NCCL sweep)
  double min_ms = 100;          // --min-ms (gemm-sweep): timed batch length per shape
  std::vector<std::array<size_t, 3>> shapes;  // --shapes "m,n,k;..." (gemm-sweep; empty: the default grid)
};

// One JSON object, built field by field.
class Json {
 public:
  Json& Str(const char* k, const std::string& v);
  Json& Num(const char* k, double v);
  Json& Int(const char* k, long long v);
  Json& U64(const char* k, unsigned long long v);
  Json& Bool(const char* k, bool v);
  Json& Raw(const char* k, const std::string& raw);
  std::string Text() const { return "{" + body_ + "}"; }

 private:
  void Key(const char* k);
  std::string body_;
};

std::string Escape(const std::string& s);
// Prints one line on stdout and flushes it (the parent reads lines as they come).
void Emit(const Json& j);
// A line of `type` for the current test and device ("result", "skip", "progress", "done").
Json Line(const char* type);

// The test and device the current lines are about (for error lines).
void SetContext(const std::string& test, int device);
int ContextDevice();

// Prints an error line and exits 3.
[[noreturn]] void Fail(const char* api, const std::string& error, const char* expr, const char* file, int line);
const char* CublasName(cublasStatus_t s);

#define GW_CUDA(expr)                                                        \
  do {                                                                       \
    const cudaError_t gw_e_ = (expr);                                        \
    if (gw_e_ != cudaSuccess) {                                              \
      ::gw::Fail("cuda", cudaGetErrorName(gw_e_), #expr, __FILE__, __LINE__); \
    }                                                                        \
  } while (0)
#define GW_LT(expr)                                                          \
  do {                                                                       \
    const cublasStatus_t gw_s_ = (expr);                                     \
    if (gw_s_ != CUBLAS_STATUS_SUCCESS) {                                    \
      ::gw::Fail("cublas", ::gw::CublasName(gw_s_), #expr, __FILE__, __LINE__); \
    }                                                                        \
  } while (0)
// After a kernel launch: launch errors now, execution errors at the next synchronisation.
#define GW_LAUNCHED() GW_CUDA(cudaGetLastError())

// Device memory freed on scope exit (errors on free are checked too).
struct DeviceBuffer {
  void* p = nullptr;
  size_t bytes = 0;
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t n);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  template <typename T>
  T* as() const { return static_cast<T*>(p); }
};

// CUDA events timing work on a stream.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  void Start(cudaStream_t s = nullptr);
  double StopSeconds(cudaStream_t s = nullptr);  // waits for the stop event

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

double WallSeconds();  // steady clock, for budgets and pageable copies

// Grid size for a grid-stride kernel over n items with `threads` per block.
unsigned GridFor(size_t n, unsigned threads, unsigned max_blocks = 65535u * 32u);

// A hash of (seed, index): the seeded random pattern and the GEMM inputs.
__host__ __device__ inline uint32_t Mix(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return static_cast<uint32_t>(x);
}

// Counts elements of `got` that differ from `want` (bytes compared as 32-bit words when aligned).
unsigned long long CountDifferentWords(const uint32_t* got, const uint32_t* want, size_t words, cudaStream_t s = nullptr);
unsigned long long CountBytesNot(const unsigned char* p, size_t bytes, unsigned char value, cudaStream_t s = nullptr);

// The tests. `devices` are CUDA device indices.
void RunMemory(const Args& a, int device);
void RunBandwidth(const Args& a, int device);
void RunGemm(const Args& a, int device);
void RunGemmSweep(const Args& a, int device);
void RunBurn(const Args& a, int device);
void RunPcie(const Args& a, int device);
void RunP2p(const Args& a, const std::vector<int>& devices);
void RunNccl(const Args& a, const std::vector<int>& devices);
bool NcclBuilt();

}  // namespace gw
