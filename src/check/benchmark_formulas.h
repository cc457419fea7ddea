// The arithmetic of the GPU tests, each formula once with its source (docs/check.md §11): the
// worker (apps/gpu-worker) prints raw counts and times, and these turn them into the figures the
// verdicts judge, so a number is only as good as one definition here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan {

// STREAM (McCalpin, www.cs.virginia.edu/stream/ref.html): bytes counted per kernel are those the
// kernel reads plus those it writes, `elements` words of `element_bytes` each:
//   copy  c = a        2 words per element
//   scale b = q c      2 words per element
//   add   c = a + b    3 words per element
//   triad a = b + q c  3 words per element
enum class StreamKernel { kCopy, kScale, kAdd, kTriad };
std::optional<StreamKernel> ParseStreamKernel(const std::string& name);  // "copy", "scale", "add", "triad"
double StreamBytes(StreamKernel k, uint64_t elements, uint64_t element_bytes);

// nccl-tests (doc/PERFORMANCE.md): algbw = S / t with S the bytes of the operation (all_reduce:
// count x typesize; all_gather and reduce_scatter: the whole array, recvcount x typesize x n);
// busbw = algbw x factor, all_reduce 2(n-1)/n, all_gather and reduce_scatter (n-1)/n. GB = 1e9.
enum class Collective { kAllReduce, kAllGather, kReduceScatter };
std::optional<Collective> ParseCollective(const std::string& name);  // "all_reduce", "all_gather", "reduce_scatter"
const char* ToString(Collective c);
double BusBandwidthFactor(Collective c, int ranks);
double AlgorithmBandwidthGBs(double bytes, double seconds);
double BusBandwidthGBs(Collective c, int ranks, double bytes, double seconds);

// A dense GEMM C(m x n) = A(m x k) B(k x n) does 2 m n k floating-point (or integer) operations.
double GemmTflops(uint64_t m, uint64_t n, uint64_t k, double seconds);

// GB/s (1e9 bytes) of `bytes` moved in `seconds`.
double GBs(double bytes, double seconds);


// Seconds each clock-event (throttle) reason was active over a run of samples: sample i holds
// from t[i] to t[i+1] (the last one `interval_s`), and every bit set in masks[i] counts on its
// own (several reasons can be active at once; NVML nvmlClocksEventReasons). Samples before
// `from_s` are left out (warm-up); a sample with no mask (nullopt) counts for nothing.
// Keys are ClockEventNames ("sw_power_cap", "hw_slowdown", ...).
std::map<std::string, double> ClockEventSeconds(const std::vector<double>& t,
                                                const std::vector<std::optional<uint64_t>>& masks, double interval_s,
                                                double from_s = 0);

}  // namespace gpuplan
