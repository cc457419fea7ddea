// NCCL collectives from one process driving every local GPU (ncclCommInitAll; docs/check.md
// §11.7): all_reduce, all_gather and reduce_scatter of float data from --min-bytes (8) to
// --max-bytes (1 GiB), doubling. S (the bytes the parent's algbw divides) is as nccl-tests
// defines it: all_reduce count x 4; all_gather and reduce_scatter the whole array, n x the
// per-rank part. Each size: 2 warm-up operations, then timed ones (host clock around the
// launches and the streams' synchronisation, as nccl-tests does), then the output checked on
// every GPU: rank r sends r + 1, so a sum is n(n+1)/2 and a gathered part r is r + 1.
#include "worker.h"

#ifdef GPUPLAN_WORKER_NCCL
#include <nccl.h>

#define GW_NCCL(expr)                                                         \
  do {                                                                        \
    const ncclResult_t gw_r_ = (expr);                                        \
    if (gw_r_ != ncclSuccess) {                                               \
      ::gw::Fail("nccl", ncclGetErrorString(gw_r_), #expr, __FILE__, __LINE__); \
    }                                                                         \
  } while (0)
#endif

namespace gw {

#ifdef GPUPLAN_WORKER_NCCL
namespace {

__global__ void FillFloat(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = v;
  }
}
// Elements not equal to the expected value; for all_gather part r (of `part` elements) is r + 1.
__global__ void CheckFloat(const float* p, size_t n, float want, size_t part, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float w = part > 0 ? static_cast<float>(i / part + 1) : want;
    local += p[i] != w ? 1ull : 0ull;
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

}  // namespace

bool NcclBuilt() { return true; }

void RunNccl(const Args& a, const std::vector<int>& devices) {
  const int n = static_cast<int>(devices.size());
  std::vector<ncclComm_t> comms(devices.size());
  GW_NCCL(ncclCommInitAll(comms.data(), n, devices.data()));
  std::vector<cudaStream_t> streams(devices.size());
  std::vector<float*> send(devices.size()), recv(devices.size());
  std::vector<unsigned long long*> bad(devices.size());
  const size_t max_floats = a.max_bytes / sizeof(float);
  for (int r = 0; r < n; ++r) {
    GW_CUDA(cudaSetDevice(devices[r]));
    GW_CUDA(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking));
    GW_CUDA(cudaMalloc(&send[r], max_floats * sizeof(float)));
    GW_CUDA(cudaMalloc(&recv[r], max_floats * sizeof(float)));
    GW_CUDA(cudaMalloc(&bad[r], sizeof(unsigned long long)));
  }
  const char* names[] = {"all_reduce", "all_gather", "reduce_scatter"};
  for (int c = 0; c < 3; ++c) {
    for (size_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 2) {
      // Elements per operation: all_reduce count; all_gather sendcount; reduce_scatter recvcount.
      const size_t total = bytes / sizeof(float);
      const size_t per = c == 0 ? total : total / static_cast<size_t>(n);
      if (per == 0) {
        continue;  // fewer bytes than one float per rank
      }
      const size_t s_bytes = (c == 0 ? per : per * static_cast<size_t>(n)) * sizeof(float);
      const size_t send_n = c == 2 ? per * static_cast<size_t>(n) : per;
      const size_t recv_n = c == 1 ? per * static_cast<size_t>(n) : per;
      for (int r = 0; r < n; ++r) {
        GW_CUDA(cudaSetDevice(devices[r]));
        FillFloat<<<GridFor(send_n, 256, 4096), 256, 0, streams[r]>>>(send[r], send_n, static_cast<float>(r + 1));
        GW_LAUNCHED();
        GW_CUDA(cudaMemsetAsync(recv[r], 0, recv_n * sizeof(float), streams[r]));
      }
      auto op = [&]() {
        GW_NCCL(ncclGroupStart());
        for (int r = 0; r < n; ++r) {
          if (c == 0) {
            GW_NCCL(ncclAllReduce(send[r], recv[r], per, ncclFloat, ncclSum, comms[r], streams[r]));
          } else if (c == 1) {
            GW_NCCL(ncclAllGather(send[r], recv[r], per, ncclFloat, comms[r], streams[r]));
          } else {
            GW_NCCL(ncclReduceScatter(send[r], recv[r], per, ncclFloat, ncclSum, comms[r], streams[r]));
          }
        }
        GW_NCCL(ncclGroupEnd());
      };
      auto sync = [&]() {
        for (int r = 0; r < n; ++r) {
          GW_CUDA(cudaSetDevice(devices[r]));
          GW_CUDA(cudaStreamSynchronize(streams[r]));
        }
      };
      op();
      op();
      sync();
      const int iters = s_bytes >= (size_t{256} << 20) ? 5 : 20;
      const double t0 = WallSeconds();
      for (int i = 0; i < iters; ++i) {
        op();
      }
      sync();
      const double secs = (WallSeconds() - t0) / iters;
      unsigned long long wrong = 0;
      const float sum = static_cast<float>(n) * static_cast<float>(n + 1) / 2.0f;
      for (int r = 0; r < n; ++r) {
        GW_CUDA(cudaSetDevice(devices[r]));
        GW_CUDA(cudaMemsetAsync(bad[r], 0, sizeof(unsigned long long), streams[r]));
        CheckFloat<<<GridFor(recv_n, 256, 4096), 256, 0, streams[r]>>>(recv[r], recv_n, sum, c == 1 ? per : 0, bad[r]);
        GW_LAUNCHED();
        unsigned long long h = 0;
        GW_CUDA(cudaMemcpyAsync(&h, bad[r], sizeof h, cudaMemcpyDeviceToHost, streams[r]));
        GW_CUDA(cudaStreamSynchronize(streams[r]));
        wrong += h;
      }
      Json j = Line("result");
      j.Str("name", "nccl").Bool("verified", true).Str("collective", names[c]).Int("ranks", n);
      j.U64("bytes", s_bytes).Num("seconds", secs).Int("iterations", iters).U64("wrong", wrong);
      Emit(j);
    }
  }
  for (int r = 0; r < n; ++r) {
    GW_CUDA(cudaSetDevice(devices[r]));
    GW_CUDA(cudaFree(send[r]));
    GW_CUDA(cudaFree(recv[r]));
    GW_CUDA(cudaFree(bad[r]));
    GW_CUDA(cudaStreamDestroy(streams[r]));
    GW_NCCL(ncclCommDestroy(comms[r]));
  }
}

#else

bool NcclBuilt() { return false; }

void RunNccl(const Args&, const std::vector<int>&) {
  Json s = Line("skip");
  s.Str("name", "nccl").Str("reason", "this gpu-worker was built without NCCL (nccl.h or libnccl not found)");
  Emit(s);
}

#endif

}  // namespace gw
