// gpu-worker: arguments in, JSON lines out (apps/gpu-worker/README.md).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "worker.h"

namespace gw {
namespace {

std::string g_test;
int g_device = -1;

__global__ void CountWordsKernel(const uint32_t* got, const uint32_t* want, size_t n, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    local += got[i] != want[i] ? 1ull : 0ull;
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

__global__ void CountBytesKernel(const unsigned char* p, size_t n, unsigned char v, unsigned long long* bad) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    local += p[i] != v ? 1ull : 0ull;
  }
  if (local != 0) {
    atomicAdd(bad, local);
  }
}

void DeviceLine(int dev) {
  cudaDeviceProp prop{};
  GW_CUDA(cudaGetDeviceProperties(&prop, dev));
  char bus[32] = {0};
  GW_CUDA(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
  GW_CUDA(cudaSetDevice(dev));
  size_t free_b = 0, total_b = 0;
  GW_CUDA(cudaMemGetInfo(&free_b, &total_b));
  Json j;
  j.Str("type", "device").Int("device", dev).Str("name", prop.name);
  j.Str("cc", std::to_string(prop.major) + "." + std::to_string(prop.minor));
  j.Str("pci_bus_id", bus).U64("memory_total", total_b).U64("memory_free", free_b);
  j.Int("sms", prop.multiProcessorCount);
  Emit(j);
}

[[noreturn]] void Usage(const std::string& why) {
  Json j;
  j.Str("type", "error").Str("test", g_test).Int("device", g_device).Str("api", "usage").Str("error", why);
  j.Str("expr", "gpu-worker arguments").Str("where", "main.cu");
  Emit(j);
  std::exit(2);
}

}  // namespace

// ---- JSON lines -------------------------------------------------------------------------------

std::string Escape(const std::string& s) {
  std::string o;
  for (unsigned char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (c < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += static_cast<char>(c);
        }
    }
  }
  return o;
}

void Json::Key(const char* k) {
  if (!body_.empty()) {
    body_ += ",";
  }
  body_ += "\"" + std::string(k) + "\":";
}
Json& Json::Str(const char* k, const std::string& v) {
  Key(k);
  body_ += "\"" + Escape(v) + "\"";
  return *this;
}
Json& Json::Num(const char* k, double v) {
  Key(k);
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  body_ += b;
  return *this;
}
Json& Json::Int(const char* k, long long v) {
  Key(k);
  body_ += std::to_string(v);
  return *this;
}
Json& Json::U64(const char* k, unsigned long long v) {
  Key(k);
  body_ += std::to_string(v);
  return *this;
}
Json& Json::Bool(const char* k, bool v) {
  Key(k);
  body_ += v ? "true" : "false";
  return *this;
}
Json& Json::Raw(const char* k, const std::string& raw) {
  Key(k);
  body_ += raw;
  return *this;
}

void Emit(const Json& j) {
  std::printf("%s\n", j.Text().c_str());
  std::fflush(stdout);
}

Json Line(const char* type) {
  Json j;
  j.Str("type", type).Str("test", g_test).Int("device", g_device);
  return j;
}

void SetContext(const std::string& test, int device) {
  g_test = test;
  g_device = device;
}
int ContextDevice() { return g_device; }

void Fail(const char* api, const std::string& error, const char* expr, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  Json j;
  j.Str("type", "error").Str("test", g_test).Int("device", g_device).Str("api", api).Str("error", error);
  j.Str("expr", expr).Str("where", std::string(base != nullptr ? base + 1 : file) + ":" + std::to_string(line));
  Emit(j);
  std::exit(3);
}

const char* CublasName(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}

// ---- helpers ------------------------------------------------------------------------------------

DeviceBuffer::DeviceBuffer(size_t n) : bytes(n) { GW_CUDA(cudaMalloc(&p, n)); }
DeviceBuffer::~DeviceBuffer() {
  if (p != nullptr) {
    GW_CUDA(cudaFree(p));
  }
}

EventTimer::EventTimer() {
  GW_CUDA(cudaEventCreate(&start_));
  GW_CUDA(cudaEventCreate(&stop_));
}
EventTimer::~EventTimer() {
  GW_CUDA(cudaEventDestroy(start_));
  GW_CUDA(cudaEventDestroy(stop_));
}
void EventTimer::Start(cudaStream_t s) { GW_CUDA(cudaEventRecord(start_, s)); }
double EventTimer::StopSeconds(cudaStream_t s) {
  GW_CUDA(cudaEventRecord(stop_, s));
  GW_CUDA(cudaEventSynchronize(stop_));
  float ms = 0;
  GW_CUDA(cudaEventElapsedTime(&ms, start_, stop_));
  return static_cast<double>(ms) / 1e3;
}

double WallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

unsigned GridFor(size_t n, unsigned threads, unsigned max_blocks) {
  const size_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > max_blocks ? max_blocks : blocks));
}

unsigned long long CountDifferentWords(const uint32_t* got, const uint32_t* want, size_t words, cudaStream_t s) {
  DeviceBuffer bad(sizeof(unsigned long long));
  GW_CUDA(cudaMemsetAsync(bad.p, 0, bad.bytes, s));
  CountWordsKernel<<<GridFor(words, 256, 8192), 256, 0, s>>>(got, want, words, bad.as<unsigned long long>());
  GW_LAUNCHED();
  unsigned long long h = 0;
  GW_CUDA(cudaMemcpyAsync(&h, bad.p, sizeof h, cudaMemcpyDeviceToHost, s));
  GW_CUDA(cudaStreamSynchronize(s));
  return h;
}

unsigned long long CountBytesNot(const unsigned char* p, size_t bytes, unsigned char value, cudaStream_t s) {
  DeviceBuffer bad(sizeof(unsigned long long));
  GW_CUDA(cudaMemsetAsync(bad.p, 0, bad.bytes, s));
  CountBytesKernel<<<GridFor(bytes, 256, 8192), 256, 0, s>>>(p, bytes, value, bad.as<unsigned long long>());
  GW_LAUNCHED();
  unsigned long long h = 0;
  GW_CUDA(cudaMemcpyAsync(&h, bad.p, sizeof h, cudaMemcpyDeviceToHost, s));
  GW_CUDA(cudaStreamSynchronize(s));
  return h;
}

namespace {

// --shapes "m,n,k;m,n,k;...": positive integers, three per shape.
std::vector<std::array<size_t, 3>> ParseShapes(const std::string& text) {
  std::vector<std::array<size_t, 3>> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(';', start), text.size());
    const std::string one = text.substr(start, end - start);
    start = end + 1;
    if (one.find_first_not_of(" ") == std::string::npos) {
      continue;  // empty entry (a trailing ';')
    }
    std::array<size_t, 3> s{};
    const char* p = one.c_str();
    const std::string bad = "--shapes: '" + one + "' is not three positive integers m,n,k";
    for (int d = 0; d < 3; ++d) {
      while (*p == ' ') {
        ++p;
      }
      char* after = nullptr;
      const unsigned long long v = *p >= '0' && *p <= '9' ? std::strtoull(p, &after, 10) : 0;
      if (v == 0) {
        Usage(bad);
      }
      s[d] = static_cast<size_t>(v);
      p = after;
      while (*p == ' ') {
        ++p;
      }
      if (d < 2 && *p++ != ',') {
        Usage(bad);
      }
    }
    if (*p != '\0') {
      Usage(bad);
    }
    out.push_back(s);
  }
  if (out.empty()) {
    Usage("--shapes needs at least one m,n,k");
  }
  return out;
}

int Main(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        Usage(k + " needs a value");
      }
      return argv[++i];
    };
    if (k == "--test") a.test = value();
    else if (k == "--device") a.device = std::atoi(value().c_str());
    else if (k == "--pci-bus-id") a.pci_bus_id = value();
    else if (k == "--devices") a.all_devices = value() == "all";
    else if (k == "--seconds") a.seconds = std::atof(value().c_str());
    else if (k == "--precisions") a.precisions = value();
    else if (k == "--pinned-only") a.pinned_only = true;
    else if (k == "--min-bytes") a.min_bytes = std::strtoull(value().c_str(), nullptr, 10);
    else if (k == "--max-bytes") a.max_bytes = std::strtoull(value().c_str(), nullptr, 10);
    else if (k == "--min-ms") a.min_ms = std::atof(value().c_str());
    else if (k == "--shapes") a.shapes = ParseShapes(value());
    else Usage("unknown argument " + k);
  }
  if (!(a.min_ms > 0)) {
    Usage("--min-ms must be a positive number of milliseconds");
  }
  SetContext(a.test, a.all_devices ? -1 : a.device);
  {
    Json hello;
    hello.Str("type", "hello").Str("protocol", "gpuplan-worker/1").Str("worker", "gpu-worker 1").Bool("nccl", NcclBuilt());
    Emit(hello);
  }
  const char* tests[] = {"memory", "bandwidth", "gemm", "gemm-sweep", "pcie", "p2p", "nccl", "burn"};
  bool known = false;
  for (const char* t : tests) {
    known = known || a.test == t;
  }
  if (!known) {
    Usage("--test must be one of memory, bandwidth, gemm, gemm-sweep, pcie, p2p, nccl, burn; got '" + a.test + "'");
  }
  int count = 0;
  GW_CUDA(cudaGetDeviceCount(&count));
  std::vector<int> devices;
  if (a.all_devices) {
    for (int d = 0; d < count; ++d) {
      devices.push_back(d);
      DeviceLine(d);
    }
  } else {
    int dev = a.device;
    if (!a.pci_bus_id.empty()) {
      GW_CUDA(cudaDeviceGetByPCIBusId(&dev, a.pci_bus_id.c_str()));
    }
    if (dev < 0 || dev >= count) {
      Usage("no CUDA device " + std::to_string(dev) + " (" + std::to_string(count) + " visible)");
    }
    SetContext(a.test, dev);
    DeviceLine(dev);
    GW_CUDA(cudaSetDevice(dev));
    devices.push_back(dev);
  }
  if (a.test == "memory") RunMemory(a, devices[0]);
  else if (a.test == "bandwidth") RunBandwidth(a, devices[0]);
  else if (a.test == "gemm") RunGemm(a, devices[0]);
  else if (a.test == "gemm-sweep") RunGemmSweep(a, devices[0]);
  else if (a.test == "burn") RunBurn(a, devices[0]);
  else if (a.test == "pcie") RunPcie(a, devices[0]);
  else if (a.test == "p2p") RunP2p(a, devices);
  else if (a.test == "nccl") RunNccl(a, devices);
  GW_CUDA(cudaDeviceSynchronize());
  Emit(Line("done"));
  return 0;
}

}  // namespace
}  // namespace gw

int main(int argc, char** argv) { return gw::Main(argc, argv); }
