// Copies over PCIe and between GPUs (docs/check.md §11.5, §11.6).
//
// PCIe: 256 MiB host-to-device and device-to-host with pinned memory (cudaHostAlloc, copies
// timed with CUDA events, best of 10) and pageable memory (malloc, synchronous copies timed on
// the host clock, best of 5); after each direction the data is compared with what was sent.
//
// P2P: for every ordered pair of GPUs, whether peer access is possible; 256 MiB copies
// (cudaMemcpyPeerAsync, best of 5) with peer access enabled and disabled, the received bytes
// checked on the destination; and the latency of 4-byte copies (100 back to back).
#include <cstdlib>
#include <cstring>

#include "worker.h"

namespace gw {
namespace {

constexpr size_t kCopyBytes = size_t{256} << 20;

unsigned long long CountHostDiff(const uint32_t* a, const uint32_t* b, size_t words) {
  unsigned long long bad = 0;
  for (size_t i = 0; i < words; ++i) {
    bad += a[i] != b[i] ? 1ull : 0ull;
  }
  return bad;
}

void FillHost(uint32_t* p, size_t words, uint32_t seed) {
  for (size_t i = 0; i < words; ++i) {
    p[i] = Mix((static_cast<uint64_t>(seed) << 40) ^ i);
  }
}

void Emit1(const char* dir, const char* mem, double seconds, unsigned long long bad) {
  Json r = Line("result");
  r.Str("name", "pcie").Bool("verified", true).Str("direction", dir).Str("memory", mem);
  r.U64("bytes", kCopyBytes).Num("seconds", seconds).U64("mismatches", bad);
  Emit(r);
}

}  // namespace

void RunPcie(const Args& a, int device) {
  (void)device;
  const size_t words = kCopyBytes / sizeof(uint32_t);
  DeviceBuffer d(kCopyBytes);
  cudaStream_t s;
  GW_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  {
    uint32_t* src = nullptr;
    uint32_t* dst = nullptr;
    GW_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&src), kCopyBytes, cudaHostAllocDefault));
    GW_CUDA(cudaHostAlloc(reinterpret_cast<void**>(&dst), kCopyBytes, cudaHostAllocDefault));
    FillHost(src, words, 3);
    std::memset(dst, 0, kCopyBytes);
    EventTimer t;
    double h2d = 1e30, d2h = 1e30;
    GW_CUDA(cudaMemcpyAsync(d.p, src, kCopyBytes, cudaMemcpyHostToDevice, s));  // warm-up
    for (int i = 0; i < 10; ++i) {
      t.Start(s);
      GW_CUDA(cudaMemcpyAsync(d.p, src, kCopyBytes, cudaMemcpyHostToDevice, s));
      h2d = std::min(h2d, t.StopSeconds(s));
    }
    for (int i = 0; i < 10; ++i) {
      t.Start(s);
      GW_CUDA(cudaMemcpyAsync(dst, d.p, kCopyBytes, cudaMemcpyDeviceToHost, s));
      d2h = std::min(d2h, t.StopSeconds(s));
    }
    GW_CUDA(cudaStreamSynchronize(s));
    // What came back is what was sent: both directions carried the data intact.
    const unsigned long long bad = CountHostDiff(src, dst, words);
    Emit1("h2d", "pinned", h2d, bad);
    Emit1("d2h", "pinned", d2h, bad);
    GW_CUDA(cudaFreeHost(src));
    GW_CUDA(cudaFreeHost(dst));
  }
  if (!a.pinned_only) {
    std::vector<uint32_t> src(words), dst(words, 0);
    FillHost(src.data(), words, 4);
    double h2d = 1e30, d2h = 1e30;
    GW_CUDA(cudaMemcpy(d.p, src.data(), kCopyBytes, cudaMemcpyHostToDevice));  // warm-up, pages touched
    for (int i = 0; i < 5; ++i) {
      const double t0 = WallSeconds();
      GW_CUDA(cudaMemcpy(d.p, src.data(), kCopyBytes, cudaMemcpyHostToDevice));
      h2d = std::min(h2d, WallSeconds() - t0);
    }
    for (int i = 0; i < 5; ++i) {
      const double t0 = WallSeconds();
      GW_CUDA(cudaMemcpy(dst.data(), d.p, kCopyBytes, cudaMemcpyDeviceToHost));
      d2h = std::min(d2h, WallSeconds() - t0);
    }
    const unsigned long long bad = CountHostDiff(src.data(), dst.data(), words);
    Emit1("h2d", "pageable", h2d, bad);
    Emit1("d2h", "pageable", d2h, bad);
  }
  GW_CUDA(cudaStreamDestroy(s));
}

void RunP2p(const Args& a, const std::vector<int>& devices) {
  (void)a;
  const size_t n = devices.size();
  std::vector<void*> src(n, nullptr), dst(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    GW_CUDA(cudaSetDevice(devices[i]));
    GW_CUDA(cudaMalloc(&src[i], kCopyBytes));
    GW_CUDA(cudaMalloc(&dst[i], kCopyBytes));
  }
  for (size_t si = 0; si < n; ++si) {
    for (size_t di = 0; di < n; ++di) {
      if (si == di) {
        continue;
      }
      const int s = devices[si], d = devices[di];
      int can = 0;
      GW_CUDA(cudaDeviceCanAccessPeer(&can, s, d));
      {
        Json r = Line("result");
        r.Str("name", "p2p_access").Bool("verified", true).Int("src", s).Int("dst", d).Bool("can_access", can != 0);
        Emit(r);
      }
      for (int on = (can != 0 ? 1 : 0); on >= 0; --on) {
        GW_CUDA(cudaSetDevice(s));
        if (can != 0) {
          const cudaError_t e = on != 0 ? cudaDeviceEnablePeerAccess(d, 0) : cudaDeviceDisablePeerAccess(d);
          if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
            (void)cudaGetLastError();
          } else {
            GW_CUDA(e);
          }
        }
        const unsigned char value = static_cast<unsigned char>(0x11 + si * 16 + di + (on != 0 ? 0x80 : 0));
        GW_CUDA(cudaMemset(src[si], value, kCopyBytes));
        GW_CUDA(cudaSetDevice(d));
        GW_CUDA(cudaMemset(dst[di], 0, kCopyBytes));
        GW_CUDA(cudaDeviceSynchronize());
        GW_CUDA(cudaSetDevice(s));
        cudaStream_t st;
        GW_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        GW_CUDA(cudaMemcpyPeerAsync(dst[di], d, src[si], s, kCopyBytes, st));  // warm-up
        EventTimer t;
        double best = 1e30;
        for (int i = 0; i < 5; ++i) {
          t.Start(st);
          GW_CUDA(cudaMemcpyPeerAsync(dst[di], d, src[si], s, kCopyBytes, st));
          best = std::min(best, t.StopSeconds(st));
        }
        // Latency: 100 four-byte copies back to back.
        t.Start(st);
        for (int i = 0; i < 100; ++i) {
          GW_CUDA(cudaMemcpyPeerAsync(dst[di], d, src[si], s, 4, st));
        }
        const double lat = t.StopSeconds(st);
        GW_CUDA(cudaStreamSynchronize(st));
        GW_CUDA(cudaStreamDestroy(st));
        GW_CUDA(cudaSetDevice(d));
        const unsigned long long bad = CountBytesNot(static_cast<const unsigned char*>(dst[di]), kCopyBytes, value);
        Json r = Line("result");
        r.Str("name", "p2p_copy").Bool("verified", true).Int("src", s).Int("dst", d).Bool("peer_access", on != 0);
        r.U64("bytes", kCopyBytes).Num("seconds", best).U64("mismatches", bad);
        Emit(r);
        Json l = Line("result");
        l.Str("name", "p2p_latency").Bool("verified", true).Int("src", s).Int("dst", d).Bool("peer_access", on != 0);
        l.Int("copies", 100).Num("seconds", lat);
        Emit(l);
      }
      GW_CUDA(cudaSetDevice(s));
      if (can != 0) {
        const cudaError_t e = cudaDeviceDisablePeerAccess(d);
        if (e == cudaErrorPeerAccessNotEnabled) {
          (void)cudaGetLastError();
        } else {
          GW_CUDA(e);
        }
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    GW_CUDA(cudaSetDevice(devices[i]));
    GW_CUDA(cudaFree(src[i]));
    GW_CUDA(cudaFree(dst[i]));
  }
}

}  // namespace gw
