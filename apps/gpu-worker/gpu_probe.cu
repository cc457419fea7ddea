// gpu-probe: measures what the time model assumes about a GPU, one JSON line per measurement.
//   - dense bf16 GEMM throughput with cuBLASLt (the "achievable fraction of peak" of
//     docs/time-model.md §3), for square sizes 4096, 8192 and 16384;
//   - device-to-device copy bandwidth (the HBM efficiency of §5): bytes read + written / time.
// Every result is verified (GEMM against a CPU reference on sampled entries) before it is
// reported. Built only when nvcc is found; runs on a machine with an NVIDIA GPU.
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#define CHECK_CUDA(expr)                                                                          \
  do {                                                                                            \
    cudaError_t err_ = (expr);                                                                    \
    if (err_ != cudaSuccess) {                                                                    \
      std::printf("{\"error\":\"%s\",\"expr\":\"%s\",\"where\":\"%s:%d\"}\n", cudaGetErrorName(err_), #expr, \
                  __FILE__, __LINE__);                                                            \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)
#define CHECK_LT(expr)                                                                            \
  do {                                                                                            \
    cublasStatus_t st_ = (expr);                                                                  \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                           \
      std::printf("{\"error\":\"cublas status %d\",\"expr\":\"%s\",\"where\":\"%s:%d\"}\n", static_cast<int>(st_), \
                  #expr, __FILE__, __LINE__);                                                     \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)

static bool g_all_verified = true;  // every GEMM so far matched the CPU reference

__global__ void Fill(__nv_bfloat16* p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u + seed;
    x ^= x >> 13;
    p[i] = __float2bfloat16(static_cast<float>(x % 17) / 8.0f - 1.0f);
  }
}

// C (m x n) = A (m x k) x B (k x n), column-major, bf16 in and out, fp32 accumulate.
// Returns the achieved TFLOPS; prints one JSON line labelled `label`.
static double Gemm(cublasLtHandle_t lt, int m, int n, int k, const char* label, void* workspace, size_t ws_bytes) {
  const size_t ea = static_cast<size_t>(m) * k, eb = static_cast<size_t>(k) * n, ec = static_cast<size_t>(m) * n;
  __nv_bfloat16 *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&a, ea * 2));
  CHECK_CUDA(cudaMalloc(&b, eb * 2));
  CHECK_CUDA(cudaMalloc(&c, ec * 2));
  Fill<<<1024, 256>>>(a, ea, 1);
  Fill<<<1024, 256>>>(b, eb, 2);
  CHECK_CUDA(cudaGetLastError());
  cublasLtMatmulDesc_t desc;
  CHECK_LT(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  cublasLtMatrixLayout_t la, lb, lc;
  CHECK_LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, m, k, m));
  CHECK_LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
  CHECK_LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, m, n, m));
  cublasLtMatmulPreference_t pref;
  CHECK_LT(cublasLtMatmulPreferenceCreate(&pref));
  CHECK_LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                sizeof(ws_bytes)));
  cublasLtMatmulHeuristicResult_t heur;
  int found = 0;
  CHECK_LT(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &heur, &found));
  if (found == 0) {
    std::printf("{\"error\":\"no cuBLASLt algorithm for %s\"}\n", label);
    std::exit(3);
  }
  const float alpha = 1.0f, beta = 0.0f;
  auto run = [&] {
    CHECK_LT(cublasLtMatmul(lt, desc, &alpha, a, la, b, lb, &beta, c, lc, c, lc, &heur.algo, workspace, ws_bytes, 0));
  };
  for (int i = 0; i < 3; ++i) run();
  CHECK_CUDA(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  const double flops = 2.0 * m * static_cast<double>(n) * k;
  const int iters = flops > 2e12 ? 10 : 50;
  CHECK_CUDA(cudaEventRecord(start));
  for (int i = 0; i < iters; ++i) run();
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  const double tflops = flops * iters / (ms / 1e3) / 1e12;
  // Verify sampled entries of C (column-major) against a CPU dot product.
  std::vector<__nv_bfloat16> ha(ea), hb(eb), hc(ec);
  CHECK_CUDA(cudaMemcpy(ha.data(), a, ea * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hb.data(), b, eb * 2, cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(hc.data(), c, ec * 2, cudaMemcpyDeviceToHost));
  std::mt19937 rng(7);
  double max_rel = 0;
  for (int s = 0; s < 16; ++s) {
    const int i = static_cast<int>(rng() % m), j = static_cast<int>(rng() % n);
    double ref = 0, mag = 0;
    for (int x = 0; x < k; ++x) {
      const double v = __bfloat162float(ha[static_cast<size_t>(x) * m + i]) * __bfloat162float(hb[static_cast<size_t>(j) * k + x]);
      ref += v;
      mag += std::fabs(v);
    }
    const double got = __bfloat162float(hc[static_cast<size_t>(j) * m + i]);
    max_rel = std::fmax(max_rel, std::fabs(got - ref) / (mag + 1e-9));
  }
  std::printf("{\"measurement\":\"gemm_bf16\",\"label\":\"%s\",\"m\":%d,\"n\":%d,\"k\":%d,\"iterations\":%d,"
              "\"tflops\":%.1f,\"verified\":%s,\"max_rel_error\":%.2e}\n",
              label, m, n, k, iters, tflops, max_rel < 1e-2 ? "true" : "false", max_rel);
  g_all_verified = g_all_verified && max_rel < 1e-2;
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  return tflops;
}

static void CopyBandwidth() {
  const size_t bytes = size_t{4} << 30;
  void *src, *dst;
  CHECK_CUDA(cudaMalloc(&src, bytes));
  CHECK_CUDA(cudaMalloc(&dst, bytes));
  CHECK_CUDA(cudaMemset(src, 0x5a, bytes));
  CHECK_CUDA(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  const int iters = 20;
  CHECK_CUDA(cudaEventRecord(start));
  for (int i = 0; i < iters; ++i) {
    CHECK_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
  }
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
  unsigned char probe[2] = {0, 0};
  CHECK_CUDA(cudaMemcpy(probe, static_cast<char*>(dst) + bytes - 2, 2, cudaMemcpyDeviceToHost));
  // A copy reads and writes every byte: 2 x bytes of HBM traffic.
  const double gbs = 2.0 * static_cast<double>(bytes) * iters / (ms / 1e3) / 1e9;
  std::printf("{\"measurement\":\"d2d_copy\",\"bytes\":%zu,\"iterations\":%d,\"gb_per_s\":%.0f,\"verified\":%s}\n", bytes,
              iters, gbs, probe[0] == 0x5a && probe[1] == 0x5a ? "true" : "false");
  cudaFree(src);
  cudaFree(dst);
}

int main() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("{\"error\":\"no CUDA device\"}\n");
    return 3;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("{\"device\":\"%s\",\"sm\":\"%d.%d\",\"memory_bytes\":%zu,\"sms\":%d}\n", prop.name, prop.major, prop.minor,
              prop.totalGlobalMem, prop.multiProcessorCount);
  cublasLtHandle_t lt;
  CHECK_LT(cublasLtCreate(&lt));
  const size_t ws_bytes = size_t{64} << 20;
  void* ws;
  CHECK_CUDA(cudaMalloc(&ws, ws_bytes));
  for (int n : {4096, 8192, 16384}) {
    Gemm(lt, n, n, n, "square", ws, ws_bytes);
  }
  // The forward projections of one Llama-3.1-8B layer for 8192 tokens (h 4096, 8 KV heads of
  // 128, FFN 14336): time-weighted TFLOPS over the layer, what a training step's matmuls get.
  struct Shape {
    int out, in;
    const char* label;
  };
  const Shape layer[] = {{6144, 4096, "llama8b_qkv"}, {4096, 4096, "llama8b_o"}, {28672, 4096, "llama8b_gate_up"},
                         {4096, 14336, "llama8b_down"}};
  const int tokens = 8192;
  double flops = 0, seconds = 0;
  for (const auto& s : layer) {
    const double f = 2.0 * s.out * static_cast<double>(tokens) * s.in;
    const double t = Gemm(lt, s.out, tokens, s.in, s.label, ws, ws_bytes);
    flops += f;
    seconds += f / (t * 1e12);
  }
  std::printf("{\"measurement\":\"llama8b_layer_gemms\",\"tokens\":%d,\"tflops\":%.1f,\"verified\":%s}\n", tokens,
              flops / seconds / 1e12, g_all_verified ? "true" : "false");
  CopyBandwidth();
  cudaFree(ws);
  cublasLtDestroy(lt);
  return 0;
}
