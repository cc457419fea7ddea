// Memory bandwidth: STREAM copy, scale and triad (McCalpin; docs/check.md §11.3) on three arrays
// of 2^28 floats (1 GiB each; smaller when memory is short), vectorised as float4, each kernel
// timed with CUDA events, best of the timed iterations (STREAM reports the best). q = 0.5 keeps
// every value exact through copy (c = a), scale (b = q c) and triad (a = b + q c): a stays what
// it was, so every element of all three arrays is checked afterwards. The parent counts the bytes
// (read + written) from `elements` and `element_bytes`.
#include <algorithm>

#include "worker.h"

namespace gw {
namespace {

constexpr float kQ = 0.5f;
constexpr int kIterations = 20;  // the first is a warm-up, not counted

__global__ void Init(float4* a, float4* b, float4* c, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t e = i * 4;
    a[i] = make_float4(static_cast<float>(e % 1024 + 1), static_cast<float>((e + 1) % 1024 + 1),
                       static_cast<float>((e + 2) % 1024 + 1), static_cast<float>((e + 3) % 1024 + 1));
    b[i] = make_float4(0, 0, 0, 0);
    c[i] = make_float4(0, 0, 0, 0);
  }
}
__global__ void Copy(const float4* __restrict__ a, float4* __restrict__ c, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    c[i] = a[i];
  }
}
__global__ void Scale(float4* __restrict__ b, const float4* __restrict__ c, float q, size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float4 x = c[i];
    b[i] = make_float4(q * x.x, q * x.y, q * x.z, q * x.w);
  }
}
__global__ void Triad(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c, float q,
                      size_t n4) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float4 x = b[i];
    const float4 y = c[i];
    a[i] = make_float4(x.x + q * y.x, x.y + q * y.y, x.z + q * y.z, x.w + q * y.w);
  }
}
// Wrong elements per array: 0 = a, 1 = b, 2 = c.
__global__ void Check(const float* a, const float* b, const float* c, float q, size_t n, unsigned long long* bad) {
  unsigned long long la = 0, lb = 0, lc = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float want = static_cast<float>(i % 1024 + 1);
    la += a[i] != want;
    lb += b[i] != q * want;
    lc += c[i] != want;
  }
  if (la) atomicAdd(&bad[0], la);
  if (lb) atomicAdd(&bad[1], lb);
  if (lc) atomicAdd(&bad[2], lc);
}

}  // namespace

void RunBandwidth(const Args& a, int device) {
  (void)a;
  cudaDeviceProp prop{};
  GW_CUDA(cudaGetDeviceProperties(&prop, device));
  size_t free_b = 0, total_b = 0;
  GW_CUDA(cudaMemGetInfo(&free_b, &total_b));
  // 2^28 floats per array; halve until three arrays fit in half the free memory. At least
  // 8x the L2 cache per array so the caches cannot hold it.
  size_t n = size_t{1} << 28;
  while (n > (size_t{1} << 20) && 3 * n * sizeof(float) > free_b / 2) {
    n /= 2;
  }
  const size_t n4 = n / 4;
  DeviceBuffer da(n * sizeof(float)), db(n * sizeof(float)), dc(n * sizeof(float));
  DeviceBuffer bad(3 * sizeof(unsigned long long));
  const unsigned threads = 256;
  // One float4 per thread per loop turn; enough blocks to fill every SM many times.
  const unsigned grid = GridFor(n4, threads, static_cast<unsigned>(prop.multiProcessorCount) * 64u);
  Init<<<grid, threads>>>(da.as<float4>(), db.as<float4>(), dc.as<float4>(), n4);
  GW_LAUNCHED();
  GW_CUDA(cudaDeviceSynchronize());
  EventTimer timer;
  double best[3] = {1e30, 1e30, 1e30};
  for (int it = 0; it < kIterations; ++it) {
    timer.Start();
    Copy<<<grid, threads>>>(da.as<float4>(), dc.as<float4>(), n4);
    GW_LAUNCHED();
    const double t_copy = timer.StopSeconds();
    timer.Start();
    Scale<<<grid, threads>>>(db.as<float4>(), dc.as<float4>(), kQ, n4);
    GW_LAUNCHED();
    const double t_scale = timer.StopSeconds();
    timer.Start();
    Triad<<<grid, threads>>>(da.as<float4>(), db.as<float4>(), dc.as<float4>(), kQ, n4);
    GW_LAUNCHED();
    const double t_triad = timer.StopSeconds();
    if (it > 0) {
      best[0] = std::min(best[0], t_copy);
      best[1] = std::min(best[1], t_scale);
      best[2] = std::min(best[2], t_triad);
    }
  }
  GW_CUDA(cudaMemset(bad.p, 0, bad.bytes));
  Check<<<GridFor(n, threads, 8192), threads>>>(da.as<float>(), db.as<float>(), dc.as<float>(), kQ, n,
                                                bad.as<unsigned long long>());
  GW_LAUNCHED();
  unsigned long long h[3] = {0, 0, 0};
  GW_CUDA(cudaMemcpy(h, bad.p, sizeof h, cudaMemcpyDeviceToHost));
  // copy writes c, scale writes b, triad writes a.
  const struct {
    const char* kernel;
    double seconds;
    unsigned long long wrong;
  } out[] = {{"copy", best[0], h[2]}, {"scale", best[1], h[1]}, {"triad", best[2], h[0]}};
  for (const auto& o : out) {
    Json r = Line("result");
    r.Str("name", "stream").Bool("verified", true).Str("kernel", o.kernel);
    r.U64("elements", n).Int("element_bytes", sizeof(float)).Int("iterations", kIterations - 1);
    r.Num("seconds", o.seconds).U64("mismatches", o.wrong);
    Emit(r);
  }
}

}  // namespace gw
