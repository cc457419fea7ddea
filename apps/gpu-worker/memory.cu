// Usable memory: allocate at least 95% of the free memory in large blocks, then write and read
// back three patterns over every 32-bit word of it (docs/check.md §11.2):
//   walking ones         word w holds 1 << ((w + pass) mod 32): over 32 passes every bit of every
//                        word is set alone once (stuck-at and coupled bits);
//   seeded random        Mix(seed + pass, w): data-dependent faults;
//   address-in-address   the low 32 bits of the word's own address (inverted on odd passes):
//                        aliased or mis-decoded addresses show as another word's address.
// All blocks are written before any is read back, so a write that lands in the wrong place is
// found. Mismatches are counted on the GPU; the first one is described.
#include <algorithm>

#include "worker.h"

namespace gw {
namespace {

constexpr size_t kBlock = size_t{1} << 30;      // 1 GiB
constexpr size_t kMinBlock = size_t{16} << 20;  // 16 MiB
constexpr size_t kLeave = size_t{64} << 20;     // left for the context and the kernels

// The patterns, by number (kernel arguments).
constexpr int kWalkingOnes = 0;
constexpr int kRandom = 1;
constexpr int kAddress = 2;

__device__ __forceinline__ uint32_t Expected(int kind, uint64_t word, const uint32_t* addr, uint32_t pass) {
  switch (kind) {
    case kWalkingOnes: return 1u << ((word + pass) & 31u);
    case kRandom: return Mix((static_cast<uint64_t>(pass) << 40) ^ word);
    default: {
      const uint32_t a = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(addr));
      return (pass & 1u) != 0 ? ~a : a;
    }
  }
}

__global__ void WriteKernel(uint32_t* p, size_t n, uint64_t first_word, int kind, uint32_t pass) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    p[i] = Expected(kind, first_word + i, p + i, pass);
  }
}

struct FirstBad {
  unsigned long long word;  // global word index; ~0: none
  uint32_t want, got;
};

__global__ void VerifyKernel(const uint32_t* p, size_t n, uint64_t first_word, int kind, uint32_t pass,
                             unsigned long long* bad, FirstBad* first) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const uint32_t want = Expected(kind, first_word + i, p + i, pass);
    const uint32_t got = p[i];
    if (got != want) {
      ++local;
      if (atomicCAS(&first->word, ~0ull, first_word + i) == ~0ull) {
        first->want = want;
        first->got = got;
      }
    }
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

}  // namespace

void RunMemory(const Args& a, int device) {
  (void)device;
  // The counters first, so the big allocations cannot leave no room for them.
  DeviceBuffer bad(sizeof(unsigned long long));
  DeviceBuffer first(sizeof(FirstBad));
  size_t free_b = 0, total_b = 0;
  GW_CUDA(cudaMemGetInfo(&free_b, &total_b));
  std::vector<void*> blocks;
  std::vector<size_t> sizes;
  size_t allocated = 0;
  size_t block = kBlock;
  while (block >= kMinBlock && allocated + block + kLeave <= free_b) {
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, block);
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it and try a smaller block
      block /= 2;
      continue;
    }
    GW_CUDA(e);
    blocks.push_back(p);
    sizes.push_back(block);
    allocated += block;
  }
  // The tail below 1 GiB in halving blocks.
  for (size_t b = block / 2; b >= kMinBlock; b /= 2) {
    while (allocated + b + kLeave <= free_b) {
      void* p = nullptr;
      const cudaError_t e = cudaMalloc(&p, b);
      if (e == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        break;
      }
      GW_CUDA(e);
      blocks.push_back(p);
      sizes.push_back(b);
      allocated += b;
    }
  }
  GW_CUDA(cudaMemset(bad.p, 0, bad.bytes));
  GW_CUDA(cudaMemset(first.p, 0xff, first.bytes));
  const double t0 = WallSeconds();
  unsigned long long words_checked = 0;
  int passes = 0;
  // One pass of each pattern at least; then walking-ones positions and new seeds until the
  // time budget is used (at most 32 rounds: every bit position once).
  for (uint32_t pass = 0; pass < 32; ++pass) {
    for (int kind : {kWalkingOnes, kRandom, kAddress}) {
      uint64_t word = 0;
      for (size_t i = 0; i < blocks.size(); ++i) {
        const size_t n = sizes[i] / sizeof(uint32_t);
        WriteKernel<<<GridFor(n, 256), 256>>>(static_cast<uint32_t*>(blocks[i]), n, word, kind, pass);
        GW_LAUNCHED();
        word += n;
      }
      GW_CUDA(cudaDeviceSynchronize());
      word = 0;
      for (size_t i = 0; i < blocks.size(); ++i) {
        const size_t n = sizes[i] / sizeof(uint32_t);
        VerifyKernel<<<GridFor(n, 256), 256>>>(static_cast<const uint32_t*>(blocks[i]), n, word, kind, pass,
                                               bad.as<unsigned long long>(), first.as<FirstBad>());
        GW_LAUNCHED();
        word += n;
      }
      GW_CUDA(cudaDeviceSynchronize());
      words_checked += word;
    }
    ++passes;
    Json p = Line("progress");
    p.Num("fraction", std::min(1.0, (WallSeconds() - t0) / a.seconds)).Int("passes", passes);
    Emit(p);
    if (WallSeconds() - t0 >= a.seconds) {
      break;
    }
  }
  unsigned long long h_bad = 0;
  FirstBad h_first{};
  GW_CUDA(cudaMemcpy(&h_bad, bad.p, sizeof h_bad, cudaMemcpyDeviceToHost));
  GW_CUDA(cudaMemcpy(&h_first, first.p, sizeof h_first, cudaMemcpyDeviceToHost));
  for (void* p : blocks) {
    GW_CUDA(cudaFree(p));
  }
  Json r = Line("result");
  r.Str("name", "memory").Bool("verified", true);
  r.U64("bytes_allocated", allocated).U64("memory_free", free_b).U64("memory_total", total_b);
  r.Int("blocks", static_cast<long long>(blocks.size()));
  r.Raw("patterns", "[\"walking_ones\",\"random\",\"address\"]").Int("passes", passes);
  r.U64("words_checked", words_checked).U64("mismatched_words", h_bad);
  if (h_bad != 0 && h_first.word != ~0ull) {
    char b[160];
    std::snprintf(b, sizeof b, "word %llu (byte offset %llu into the allocation): wrote 0x%08x, read 0x%08x", h_first.word,
                  h_first.word * 4ull, h_first.want, h_first.got);
    r.Str("first_mismatch", b);
  }
  r.Num("seconds", WallSeconds() - t0);
  Emit(r);
}

}  // namespace gw
