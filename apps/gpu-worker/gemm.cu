// GEMM throughput with cuBLASLt per precision, and the burn-in (docs/check.md §11.4, §11.8).
//
// Layout: "TN", the one layout every precision supports (fp8 needs it on Hopper): A is stored
// k x m column-major and used transposed, B is k x n column-major, C and D are m x n.
// Inputs are q / 4 with q in -4..4 (int8: q itself), exact in every input type including fp8
// e4m3 and tf32, so with fp32 (or int32) accumulation every partial sum is exact and the result
// does not depend on the order of the additions: the CPU reference is exact, the only error
// allowed is the rounding of the output type, and the burn-in can compare results bit for bit.
//
// For each shape the heuristic's candidate algorithms (up to 8) are each timed and the fastest
// is kept; the result is checked on sampled entries against a double-precision CPU dot product.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <random>
#include <sstream>

#include "worker.h"

namespace gw {
namespace {

constexpr size_t kWorkspace = size_t{64} << 20;
constexpr int kCandidates = 8;
constexpr int kSamples = 16;

struct Precision {
  std::string name;
  cudaDataType_t ab, cd, scale;
  cublasComputeType_t compute;
  size_t ab_bytes, cd_bytes;
  int min_cc;              // major * 10 + minor
  double rel_out;          // allowed |got - ref| / |ref| from the output's rounding
  double rel_terms;        // plus this fraction of sum |a_x b_x|: accumulators narrower than fp32
  bool fast_accum;         // CUBLASLT_MATMUL_DESC_FAST_ACCUM (fp8 only): no promotion of partial sums
};

const Precision kPrecisions[] = {
    {"fp32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4, 4, 50, 1e-6, 1e-7, false},
    {"tf32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4, 4, 80, 1e-6, 1e-7, false},
    {"bf16", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2, 80, 1.0 / 128, 1e-7, false},
    {"fp16", CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2, 2, 70, 1.0 / 1024, 1e-7, false},
    {"int8", CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, 1, 4, 75, 0, 0, false},
    // Hopper's fp8 tensor cores accumulate in fewer bits than fp32 (about 14 significant bits
    // reported for H800 by DeepSeek-V3's report, §3.3): allowed 2^-10 of the terms' magnitude.
    {"fp8", CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 2, 89, 1.0 / 128, 1.0 / 1024, false},
    // The same with fast accumulation, as Transformer Engine runs the forward fp8 GEMM (fprop
    // use_split_accumulator=False): partial sums stay in the tensor cores' narrower accumulator
    // for the whole k loop, so the check allows 2^-6 of the terms' magnitude (it looks for wrong
    // results, not for the rounding this mode trades for speed).
    {"fp8-fast", CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1, 2, 89, 1.0 / 128, 1.0 / 64, true},
};

__device__ __host__ inline int Quarter(uint32_t seed, size_t i) {
  return static_cast<int>(Mix((static_cast<uint64_t>(seed) << 40) ^ i) % 9u) - 4;
}

__device__ inline void Store(float* p, float v) { *p = v; }
__device__ inline void Store(__nv_bfloat16* p, float v) { *p = __float2bfloat16(v); }
__device__ inline void Store(__half* p, float v) { *p = __float2half(v); }
__device__ inline void Store(int8_t* p, float v) { *p = static_cast<int8_t>(v); }
__device__ inline void Store(__nv_fp8_e4m3* p, float v) { *p = __nv_fp8_e4m3(v); }

template <typename T>
__global__ void FillKernel(T* p, size_t n, uint32_t seed, bool integer) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const int q = Quarter(seed, i);
    Store(p + i, integer ? static_cast<float>(q) : static_cast<float>(q) * 0.25f);
  }
}

void Fill(const Precision& p, void* dst, size_t n, uint32_t seed) {
  const unsigned g = GridFor(n, 256, 8192);
  switch (p.ab) {
    case CUDA_R_32F: FillKernel<float><<<g, 256>>>(static_cast<float*>(dst), n, seed, false); break;
    case CUDA_R_16BF: FillKernel<__nv_bfloat16><<<g, 256>>>(static_cast<__nv_bfloat16*>(dst), n, seed, false); break;
    case CUDA_R_16F: FillKernel<__half><<<g, 256>>>(static_cast<__half*>(dst), n, seed, false); break;
    case CUDA_R_8I: FillKernel<int8_t><<<g, 256>>>(static_cast<int8_t*>(dst), n, seed, true); break;
    case CUDA_R_8F_E4M3: FillKernel<__nv_fp8_e4m3><<<g, 256>>>(static_cast<__nv_fp8_e4m3*>(dst), n, seed, false); break;
    default: Fail("worker", "unsupported input type", "Fill", __FILE__, __LINE__);
  }
  GW_LAUNCHED();
}

// One element of a host copy as a double.
double ToDouble(cudaDataType_t t, const unsigned char* base, size_t i) {
  switch (t) {
    case CUDA_R_32F: return reinterpret_cast<const float*>(base)[i];
    case CUDA_R_32I: return reinterpret_cast<const int32_t*>(base)[i];
    case CUDA_R_16BF: return __bfloat162float(reinterpret_cast<const __nv_bfloat16*>(base)[i]);
    case CUDA_R_16F: return __half2float(reinterpret_cast<const __half*>(base)[i]);
    case CUDA_R_8I: return reinterpret_cast<const int8_t*>(base)[i];
    case CUDA_R_8F_E4M3: return static_cast<float>(reinterpret_cast<const __nv_fp8_e4m3*>(base)[i]);
    default: return NAN;
  }
}

// A matmul set up once: descriptors, buffers and the chosen algorithm.
class Gemm {
 public:
  Gemm(cublasLtHandle_t lt, const Precision& p, size_t m, size_t n, size_t k, void* workspace,
       size_t workspace_bytes = kWorkspace)
      : lt_(lt), p_(p), m_(m), n_(n), k_(k), ws_(workspace), ws_bytes_(workspace_bytes),
        a_(k * m * p.ab_bytes), b_(k * n * p.ab_bytes), c_(m * n * p.cd_bytes) {
    GW_LT(cublasLtMatmulDescCreate(&desc_, p.compute, p.scale));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    GW_LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    GW_LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (p.fast_accum) {
      const int8_t fast = 1;
      GW_LT(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    }
    GW_LT(cublasLtMatrixLayoutCreate(&la_, p.ab, k, m, k));
    GW_LT(cublasLtMatrixLayoutCreate(&lb_, p.ab, k, n, k));
    GW_LT(cublasLtMatrixLayoutCreate(&lc_, p.cd, m, n, m));
    Fill(p, a_.p, k * m, 1);
    Fill(p, b_.p, k * n, 2);
    GW_CUDA(cudaMemset(c_.p, 0, c_.bytes));
    GW_CUDA(cudaDeviceSynchronize());
  }
  ~Gemm() {
    GW_LT(cublasLtMatrixLayoutDestroy(la_));
    GW_LT(cublasLtMatrixLayoutDestroy(lb_));
    GW_LT(cublasLtMatrixLayoutDestroy(lc_));
    GW_LT(cublasLtMatmulDescDestroy(desc_));
  }

  // The heuristic's candidates (at most `wanted`, fitting the workspace) with state SUCCESS, best
  // first as the heuristic ranks them; empty when it has none for this precision and layout.
  std::vector<cublasLtMatmulAlgo_t> Candidates(int wanted) {
    cublasLtMatmulPreference_t pref;
    GW_LT(cublasLtMatmulPreferenceCreate(&pref));
    const size_t ws = ws_bytes_;
    GW_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    std::vector<cublasLtMatmulHeuristicResult_t> found(static_cast<size_t>(wanted));
    int returned = 0;
    const cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(lt_, desc_, la_, lb_, lc_, lc_, pref, wanted, found.data(), &returned);
    GW_LT(cublasLtMatmulPreferenceDestroy(pref));
    std::vector<cublasLtMatmulAlgo_t> out;
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && returned == 0)) {
      return out;  // no algorithm for this precision and layout here: the caller reports a skip
    }
    GW_LT(st);
    for (int i = 0; i < returned; ++i) {
      if (found[i].state == CUBLAS_STATUS_SUCCESS) {
        out.push_back(found[i].algo);
      }
    }
    return out;
  }

  // The heuristic's first algorithm, untimed (what a framework calling cuBLASLt once gets).
  bool FirstAlgorithm() {
    const std::vector<cublasLtMatmulAlgo_t> found = Candidates(1);
    if (found.empty()) {
      return false;
    }
    algo_ = found[0];
    return true;
  }

  // The heuristic's candidates; each is timed and the fastest kept. Returns how many were tried.
  int ChooseAlgorithm() {
    const std::vector<cublasLtMatmulAlgo_t> found = Candidates(kCandidates);
    double best = 1e30;
    int tried = 0;
    for (const cublasLtMatmulAlgo_t& candidate : found) {
      algo_ = candidate;
      Run();  // warm-up
      const double t = Time(2);
      ++tried;
      if (t < best) {
        best = t;
        best_algo_ = candidate;
      }
    }
    algo_ = best_algo_;
    return tried;
  }

  void Run(cudaStream_t s = nullptr, void* c = nullptr) {
    const float alpha_f = 1.0f, beta_f = 0.0f;
    const int32_t alpha_i = 1, beta_i = 0;
    const bool integer = p_.scale == CUDA_R_32I;
    void* out = c != nullptr ? c : c_.p;
    GW_LT(cublasLtMatmul(lt_, desc_, integer ? static_cast<const void*>(&alpha_i) : &alpha_f, a_.p, la_, b_.p, lb_,
                         integer ? static_cast<const void*>(&beta_i) : &beta_f, out, lc_, out, lc_, &algo_, ws_,
                         ws_bytes_, s));
  }

  // Seconds per matmul over `iterations` back to back.
  double Time(int iterations) {
    EventTimer t;
    t.Start();
    for (int i = 0; i < iterations; ++i) {
      Run();
    }
    return t.StopSeconds() / iterations;
  }

  // Exact reference of C[i, j] from the inputs as stored, and the tolerance for it.
  // `terms` (optional) gets sum |a_x b_x|, the scale of the accumulation's rounding.
  double Reference(size_t i, size_t j, double* terms = nullptr) const {
    std::vector<unsigned char> ha(k_ * p_.ab_bytes), hb(k_ * p_.ab_bytes);
    // Column i of the stored A (k x m) and column j of B (k x n) are contiguous.
    GW_CUDA(cudaMemcpy(ha.data(), static_cast<const unsigned char*>(a_.p) + i * k_ * p_.ab_bytes, ha.size(),
                       cudaMemcpyDeviceToHost));
    GW_CUDA(cudaMemcpy(hb.data(), static_cast<const unsigned char*>(b_.p) + j * k_ * p_.ab_bytes, hb.size(),
                       cudaMemcpyDeviceToHost));
    double ref = 0;
    double mag = 0;
    for (size_t x = 0; x < k_; ++x) {
      const double t = ToDouble(p_.ab, ha.data(), x) * ToDouble(p_.ab, hb.data(), x);
      ref += t;
      mag += std::fabs(t);
    }
    if (terms != nullptr) {
      *terms = mag;
    }
    return ref;
  }
  double Got(size_t i, size_t j, const void* c = nullptr) const {
    unsigned char h[8];
    const auto* base = static_cast<const unsigned char*>(c != nullptr ? c : c_.p);
    GW_CUDA(cudaMemcpy(h, base + (j * m_ + i) * p_.cd_bytes, p_.cd_bytes, cudaMemcpyDeviceToHost));
    return ToDouble(p_.cd, h, 0);
  }
  bool Close(double got, double ref, double terms) const {
    return std::fabs(got - ref) <= p_.rel_out * std::fabs(ref) + p_.rel_terms * terms + 1e-9;
  }

  // Checks kSamples entries; returns the wrong ones and the largest relative error.
  int Verify(double* max_rel) {
    GW_CUDA(cudaDeviceSynchronize());
    std::mt19937_64 rng(12345);
    int wrong = 0;
    *max_rel = 0;
    for (int s = 0; s < kSamples; ++s) {
      const size_t i = rng() % m_, j = rng() % n_;
      double terms = 0;
      const double ref = Reference(i, j, &terms), got = Got(i, j);
      *max_rel = std::max(*max_rel, std::fabs(got - ref) / std::max(1.0, std::fabs(ref)));
      wrong += Close(got, ref, terms) ? 0 : 1;
    }
    return wrong;
  }

  size_t OutputBytes() const { return c_.bytes; }
  void* Output() const { return c_.p; }

 private:
  cublasLtHandle_t lt_;
  const Precision& p_;
  size_t m_, n_, k_;
  void* ws_;
  size_t ws_bytes_;
  DeviceBuffer a_, b_, c_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, lc_ = nullptr;
  cublasLtMatmulAlgo_t algo_{}, best_algo_{};
};

struct Shape {
  const char* label;
  const char* role;  // "square" or "layer"
  size_t m, n, k;
};

// Square sizes, and the projections of one Llama-3.1-8B layer for 8192 tokens (hidden 4096,
// 8 KV heads of 128, FFN 14336): out x tokens x in.
const Shape kShapes[] = {
    {"square", "square", 4096, 4096, 4096},          {"square", "square", 8192, 8192, 8192},
    {"square", "square", 16384, 16384, 16384},       {"llama8b_qkv", "layer", 6144, 8192, 4096},
    {"llama8b_o", "layer", 4096, 8192, 4096},        {"llama8b_gate_up", "layer", 28672, 8192, 4096},
    {"llama8b_down", "layer", 4096, 8192, 14336},
};

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');) {
    if (!x.empty()) {
      out.push_back(x);
    }
  }
  return out;
}

const Precision* FindPrecision(const std::string& name) {
  for (const auto& x : kPrecisions) {
    if (x.name == name) {
      return &x;
    }
  }
  return nullptr;
}

// Why `name` cannot run on this GPU ("" when it can).
std::string CannotRun(const std::string& name, const Precision* p, const cudaDeviceProp& prop) {
  if (p == nullptr) {
    return "unknown precision";
  }
  if (prop.major * 10 + prop.minor < p->min_cc) {
    return name + " needs compute capability " + std::to_string(p->min_cc / 10) + "." + std::to_string(p->min_cc % 10) +
           "; this GPU is " + std::to_string(prop.major) + "." + std::to_string(prop.minor);
  }
  return "";
}

}  // namespace

void RunGemm(const Args& a, int device) {
  cudaDeviceProp prop{};
  GW_CUDA(cudaGetDeviceProperties(&prop, device));
  cublasLtHandle_t lt;
  GW_LT(cublasLtCreate(&lt));
  DeviceBuffer ws(kWorkspace);
  for (const std::string& name : Split(a.precisions.empty() ? "bf16" : a.precisions)) {
    const Precision* p = FindPrecision(name);
    const std::string why = CannotRun(name, p, prop);
    if (!why.empty()) {
      Json s = Line("skip");
      s.Str("name", "gemm").Str("precision", name).Str("reason", why);
      Emit(s);
      continue;
    }
    int measured = 0;  // shapes measured at this precision
    for (const Shape& sh : kShapes) {
      size_t free_b = 0, total_b = 0;
      GW_CUDA(cudaMemGetInfo(&free_b, &total_b));
      const size_t need = (sh.k * sh.m + sh.k * sh.n) * p->ab_bytes + sh.m * sh.n * p->cd_bytes;
      if (need + kWorkspace > free_b) {
        continue;  // a smaller card: the shape does not fit
      }
      Gemm g(lt, *p, sh.m, sh.n, sh.k, ws.p);
      const int tried = g.ChooseAlgorithm();
      if (tried == 0) {
        if (measured == 0) {
          Json s = Line("skip");
          s.Str("name", "gemm").Str("precision", p->name);
          s.Str("reason", "cuBLASLt offers no " + p->name + " algorithm for this GPU and layout (heuristic returned none)");
          Emit(s);
          break;
        }
        continue;  // this shape only
      }
      ++measured;
      // About 0.3 s of timed work, between 3 and 50 matmuls.
      const double probe = g.Time(1);
      const int iters = static_cast<int>(std::max(3.0, std::min(50.0, 0.3 / std::max(probe, 1e-6))));
      const double secs = g.Time(iters);
      double max_rel = 0;
      const int wrong = g.Verify(&max_rel);
      Json r = Line("result");
      r.Str("name", "gemm").Bool("verified", true).Str("precision", p->name).Str("role", sh.role).Str("shape", sh.label);
      r.U64("m", sh.m).U64("n", sh.n).U64("k", sh.k).Num("seconds", secs).Int("iterations", iters);
      r.Int("algorithms_tried", tried).Int("samples_checked", kSamples).Int("mismatches", wrong).Num("max_error", max_rel);
      Emit(r);
    }
  }
  GW_LT(cublasLtDestroy(lt));
}

namespace {

constexpr size_t kSweepWorkspace = size_t{32} << 20;
constexpr size_t kSweepMaxBytes = size_t{8} << 30;  // A, B and C together
constexpr int kSweepWarmup = 3;
constexpr int kSweepMaxCalls = 1 << 24;

// The default grid: m tokens x n output features x k input features, 150 shapes.
std::vector<std::array<size_t, 3>> DefaultSweep() {
  std::vector<std::array<size_t, 3>> out;
  for (size_t m : {128, 512, 2048, 8192, 32768}) {
    for (size_t n : {1024, 2048, 4096, 8192, 16384, 32768}) {
      for (size_t k : {1024, 2048, 4096, 8192, 16384}) {
        out.push_back({m, n, k});
      }
    }
  }
  return out;
}

}  // namespace

// The GEMM-efficiency table of the time model (scripts/device/gemm_table.py makes data/gemm/*.yaml
// of its lines). A shape (m, n, k) is a linear layer's forward product Y = X W^T: X is m tokens x k
// input features, W is n output features x k, both row-major as a framework holds them, so the
// cuBLASLt call is the one PyTorch makes for it: "TN" with cuBLAS's m = n (output features), its
// n = m (tokens), A = W, B = X. Per shape: the heuristic's first algorithm with a 32 MiB workspace
// (no candidates timed: what a framework gets), 3 warm-up calls, then batches of back-to-back calls
// timed with CUDA events, growing geometrically from 1 call (x2 to x10 a step, from the last
// batch's time) until one lasts at least --min-ms; that batch's time per call is printed. The
// result is then checked on sampled entries as in the gemm test.
void RunGemmSweep(const Args& a, int device) {
  cudaDeviceProp prop{};
  GW_CUDA(cudaGetDeviceProperties(&prop, device));
  int clock_khz = 0;  // CUDA 13's cudaDeviceProp has no clockRate: the attribute gives it
  GW_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  int runtime = 0;
  GW_CUDA(cudaRuntimeGetVersion(&runtime));
  const std::vector<std::array<size_t, 3>> shapes = a.shapes.empty() ? DefaultSweep() : a.shapes;
  const double min_s = a.min_ms / 1e3;
  {
    Json j;
    j.Str("type", "gemm_sweep").Str("test", a.test).Str("device", prop.name).Int("device_index", device);
    j.Str("cc", std::to_string(prop.major) + "." + std::to_string(prop.minor));
    j.Int("sm_count", prop.multiProcessorCount).Num("clock_mhz", clock_khz / 1e3);
    j.U64("cublaslt_version", cublasLtGetVersion()).Int("cuda_runtime", runtime);
    j.Num("min_ms", a.min_ms).U64("workspace_bytes", kSweepWorkspace).Int("warmup_calls", kSweepWarmup);
    j.U64("shapes", shapes.size());
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    char date[16] = "";
    if (gmtime_r(&now, &utc) != nullptr) {
      std::strftime(date, sizeof date, "%Y-%m-%d", &utc);
    }
    j.Str("date", date);  // UTC, the table's `measured`
    Emit(j);
  }
  cublasLtHandle_t lt;
  GW_LT(cublasLtCreate(&lt));
  DeviceBuffer ws(kSweepWorkspace);
  for (const std::string& name : Split(a.precisions.empty() ? "bf16,fp8,fp8-fast" : a.precisions)) {
    const Precision* p = FindPrecision(name);
    const std::string why = CannotRun(name, p, prop);
    if (!why.empty()) {
      Json s = Line("skip");
      s.Str("name", "gemm-sweep").Str("precision", name).Str("reason", why);
      Emit(s);
      continue;
    }
    for (const std::array<size_t, 3>& sh : shapes) {
      const size_t m = sh[0], n = sh[1], k = sh[2];
      auto skip_shape = [&](const std::string& reason) {
        Json s = Line("skip");
        s.Str("name", "gemm-sweep").Str("precision", name).U64("m", m).U64("n", n).U64("k", k).Str("reason", reason);
        Emit(s);
      };
      const size_t need = (m * k + k * n) * p->ab_bytes + m * n * p->cd_bytes;
      if (need > kSweepMaxBytes) {
        skip_shape("A, B and C need " + std::to_string(need >> 20) + " MiB, over the sweep's 8 GiB");
        continue;
      }
      size_t free_b = 0, total_b = 0;
      GW_CUDA(cudaMemGetInfo(&free_b, &total_b));
      if (need + (size_t{64} << 20) > free_b) {
        skip_shape("A, B and C need " + std::to_string(need >> 20) + " MiB; " + std::to_string(free_b >> 20) +
                   " MiB free");
        continue;
      }
      Gemm g(lt, *p, n, m, k, ws.p, kSweepWorkspace);  // cuBLAS m = output features, n = tokens
      if (!g.FirstAlgorithm()) {
        skip_shape("cuBLASLt offers no " + name + " algorithm for this shape and layout (heuristic returned none)");
        continue;
      }
      for (int i = 0; i < kSweepWarmup; ++i) {
        g.Run();
      }
      GW_CUDA(cudaDeviceSynchronize());
      int calls = 1;
      double batch = 0;
      for (;;) {
        batch = g.Time(calls) * calls;
        if (batch >= min_s || calls >= kSweepMaxCalls) {
          break;
        }
        // Aim 20% past --min-ms from this batch's rate, growing x2 to x10.
        const double aim = std::ceil(calls * 1.2 * min_s / std::max(batch, 1e-9));
        const double next = std::min(10.0 * calls, std::max(2.0 * calls, aim));
        calls = static_cast<int>(std::min<double>(next, kSweepMaxCalls));
      }
      const double per_call = batch / calls;
      double max_rel = 0;
      const int wrong = g.Verify(&max_rel);
      Json r = Line("gemm_shape");
      r.Str("precision", name).U64("m", m).U64("n", n).U64("k", k).Int("calls", calls);
      r.Num("seconds_per_call", per_call).Num("tflops", 2.0 * m * n * k / per_call / 1e12);
      r.Bool("verified", wrong == 0).Int("samples_checked", kSamples).Int("mismatches", wrong).Num("max_error", max_rel);
      Emit(r);
    }
  }
  GW_LT(cublasLtDestroy(lt));
}

namespace {

// Elements of `slot` that differ bit for bit from `ref`.
__global__ void CompareKernel(const uint16_t* slot, const uint16_t* ref, size_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    local += slot[i] != ref[i] ? 1ull : 0ull;
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

}  // namespace

// Burn-in: bf16 8192^3 GEMMs for `seconds`, each into one of many result slots filling most of the
// memory (gpu-burn's idea), every slot compared bit for bit with a reference result that was
// itself checked against the CPU on sampled entries, and one slot per round re-checked against
// the CPU reference. A progress line every 5 s carries the running counts.
void RunBurn(const Args& a, int device) {
  (void)device;
  const size_t m = 8192, n = 8192, k = 8192;
  const Precision& p = kPrecisions[2];  // bf16
  cublasLtHandle_t lt;
  GW_LT(cublasLtCreate(&lt));
  DeviceBuffer ws(kWorkspace);
  Gemm g(lt, p, m, n, k, ws.p);
  if (g.ChooseAlgorithm() == 0) {
    Fail("cublas", "no bf16 algorithm from cublasLtMatmulAlgoGetHeuristic", "burn-in GEMM", __FILE__, __LINE__);
  }
  g.Run();
  double max_rel = 0;
  const int ref_wrong_at_start = g.Verify(&max_rel);
  const size_t slot_bytes = g.OutputBytes();
  DeviceBuffer ref(slot_bytes);
  GW_CUDA(cudaMemcpy(ref.p, g.Output(), slot_bytes, cudaMemcpyDeviceToDevice));
  // CPU reference for sampled entries, computed once.
  std::mt19937_64 rng(777);
  std::vector<std::pair<size_t, size_t>> where;
  std::vector<double> want, terms(kSamples);
  for (int s = 0; s < kSamples; ++s) {
    where.emplace_back(rng() % m, rng() % n);
    want.push_back(g.Reference(where.back().first, where.back().second, &terms[s]));
  }
  size_t free_b = 0, total_b = 0;
  GW_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const size_t slots_n = std::max<size_t>(1, std::min<size_t>(1024, free_b * 8 / 10 / slot_bytes));
  std::vector<void*> slots;
  for (size_t i = 0; i < slots_n; ++i) {
    void* s = nullptr;
    GW_CUDA(cudaMalloc(&s, slot_bytes));
    slots.push_back(s);
  }
  DeviceBuffer bad(sizeof(unsigned long long));
  GW_CUDA(cudaMemset(bad.p, 0, bad.bytes));
  unsigned long long gemms = 0, ref_mismatches = static_cast<unsigned long long>(ref_wrong_at_start);
  double gemm_seconds = 0;
  const double t0 = WallSeconds();
  double next_progress = t0 + 5;
  EventTimer timer;
  size_t round = 0;
  while (WallSeconds() - t0 < a.seconds) {
    timer.Start();
    for (void* s : slots) {
      g.Run(nullptr, s);
    }
    gemm_seconds += timer.StopSeconds();
    gemms += slots.size();
    for (void* s : slots) {
      CompareKernel<<<GridFor(m * n, 256, 8192), 256>>>(static_cast<const uint16_t*>(s), ref.as<uint16_t>(), m * n,
                                                        bad.as<unsigned long long>());
      GW_LAUNCHED();
    }
    const void* check = slots[round % slots.size()];
    for (int s = 0; s < kSamples; ++s) {
      if (!g.Close(g.Got(where[s].first, where[s].second, check), want[s], terms[s])) {
        ++ref_mismatches;
      }
    }
    ++round;
    if (WallSeconds() >= next_progress) {
      unsigned long long h = 0;
      GW_CUDA(cudaMemcpy(&h, bad.p, sizeof h, cudaMemcpyDeviceToHost));
      Json pr = Line("progress");
      pr.Num("fraction", std::min(1.0, (WallSeconds() - t0) / a.seconds)).U64("gemms", gemms);
      pr.Num("seconds", gemm_seconds).U64("mismatches", h).U64("ref_mismatches", ref_mismatches);
      pr.U64("m", m).U64("n", n).U64("k", k);
      Emit(pr);
      next_progress += 5;
    }
  }
  GW_CUDA(cudaDeviceSynchronize());
  unsigned long long h = 0;
  GW_CUDA(cudaMemcpy(&h, bad.p, sizeof h, cudaMemcpyDeviceToHost));
  for (void* s : slots) {
    GW_CUDA(cudaFree(s));
  }
  Json r = Line("result");
  r.Str("name", "burn").Bool("verified", true).Str("precision", "bf16").U64("m", m).U64("n", n).U64("k", k);
  r.U64("gemms", gemms).Num("seconds", gemm_seconds).Num("elapsed", WallSeconds() - t0);
  r.U64("slots", slots.size()).U64("rounds", round).U64("mismatches", h).U64("ref_mismatches", ref_mismatches);
  Emit(r);
  GW_LT(cublasLtDestroy(lt));
}

}  // namespace gw
