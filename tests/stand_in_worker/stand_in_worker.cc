// A stand-in for gpu-worker (apps/gpu-worker) with no GPU: it takes the same arguments and
// prints lines of the same schema (docs/check.md §11.1) with fixed values, so the parent's
// runner and verdicts can be tested on a machine without a GPU. Built five times
// (tests/stand_in_worker/CMakeLists.txt), one behaviour each (STAND_IN_MODE):
//   good        fixed, plausible results for an H100 SXM (the values below; tests derive the
//               expected figures from them by hand)
//   abort       prints its device line and one result, then abort()s
//   hang        prints its device line, then sleeps forever
//   garbage     prints a line that is not JSON among good ones, exits 0
//   cuda_error  prints a CUDA error line (cudaErrorECCUncorrectable) and exits 3
// Environment: STAND_IN_FAULT_TEST=<test> limits the fault to one test (others behave as good);
// STAND_IN_FAULT_DEVICE=<n> limits it to one device; STAND_IN_SLOW=1 makes scale WARN and
// triad FAIL; STAND_IN_WRONG=1 reports mismatches; STAND_IN_DEVICES=<n> devices for --devices all.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

const char* Env(const char* k) {
  const char* v = std::getenv(k);
  return v != nullptr ? v : "";
}

void Line(const std::string& s) {
  std::printf("%s\n", s.c_str());
  std::fflush(stdout);
}

std::string Device(int d, const std::string& bus) {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "{\"type\":\"device\",\"device\":%d,\"name\":\"Stand-in H100\",\"cc\":\"9.0\",\"pci_bus_id\":\"%s\","
                "\"memory_total\":85520809984,\"memory_free\":84934656000,\"sms\":132}",
                d, bus.c_str());
  return buf;
}

std::string Head(const char* type, const std::string& test, int device) {
  return std::string("{\"type\":\"") + type + "\",\"test\":\"" + test + "\",\"device\":" + std::to_string(device);
}

void Good(const std::string& test, int device, double seconds, const std::string& precisions, bool pinned_only,
          double max_bytes) {
  const bool slow = std::strcmp(Env("STAND_IN_SLOW"), "1") == 0;
  const bool wrong = std::strcmp(Env("STAND_IN_WRONG"), "1") == 0;
  char buf[1024];
  if (test == "memory") {
    // 80,000 MiB of the 81,000 MiB free; three patterns over every 4-byte word.
    std::snprintf(buf, sizeof buf,
                  ",\"name\":\"memory\",\"verified\":true,\"bytes_allocated\":83886080000,\"memory_free\":84934656000,"
                  "\"blocks\":79,\"patterns\":[\"walking_ones\",\"random\",\"address\"],\"passes\":1,"
                  "\"words_checked\":62914560000,\"mismatched_words\":%d%s}",
                  wrong ? 3 : 0, wrong ? ",\"first_mismatch\":\"block 2 word 17: wrote 0x00000004, read 0x00000005\"" : "");
    Line(Head("result", test, device) + buf);
  } else if (test == "bandwidth") {
    const struct {
      const char* kernel;
      double seconds;
    } k[] = {{"copy", 0.0007}, {"scale", slow ? 0.0008 : 0.0007}, {"triad", slow ? 0.0015 : 0.001}};
    for (const auto& x : k) {
      std::snprintf(buf, sizeof buf,
                    ",\"name\":\"stream\",\"verified\":true,\"kernel\":\"%s\",\"elements\":268435456,"
                    "\"element_bytes\":4,\"iterations\":20,\"seconds\":%.9g,\"mismatches\":%d}",
                    x.kernel, x.seconds, wrong ? 1 : 0);
      Line(Head("result", test, device) + buf);
    }
  } else if (test == "gemm") {
    const struct {
      const char* p;
      double seconds;  // for 8192^3
    } t[] = {{"fp32", 0.022}, {"tf32", 0.003}, {"bf16", 0.0015}, {"fp16", 0.0015}, {"int8", 0.00075}};
    std::string list = "," + precisions + ",";
    for (const auto& x : t) {
      if (list.find(std::string(",") + x.p + ",") == std::string::npos) {
        continue;
      }
      std::snprintf(buf, sizeof buf,
                    ",\"name\":\"gemm\",\"verified\":true,\"precision\":\"%s\",\"role\":\"square\",\"shape\":\"square\","
                    "\"m\":8192,\"n\":8192,\"k\":8192,\"seconds\":%.9g,\"algorithms_tried\":4,\"samples_checked\":16,"
                    "\"mismatches\":%d,\"max_error\":0}",
                    x.p, x.seconds, wrong ? 2 : 0);
      Line(Head("result", test, device) + buf);
      if (std::strcmp(x.p, "bf16") == 0) {
        std::snprintf(buf, sizeof buf,
                      ",\"name\":\"gemm\",\"verified\":true,\"precision\":\"bf16\",\"role\":\"layer\",\"shape\":\"llama8b_o\","
                      "\"m\":4096,\"n\":8192,\"k\":4096,\"seconds\":0.00038,\"algorithms_tried\":4,\"samples_checked\":16,"
                      "\"mismatches\":0,\"max_error\":0}");
        Line(Head("result", test, device) + buf);
      }
    }
    if (list.find(",fp8,") != std::string::npos) {
      Line(Head("skip", test, device) + ",\"name\":\"gemm\",\"precision\":\"fp8\",\"reason\":\"stand-in: no fp8\"}");
    }
  } else if (test == "pcie") {
    const struct {
      const char* dir;
      const char* mem;
      double seconds;
    } c[] = {{"h2d", "pinned", 0.005}, {"d2h", "pinned", 0.0052}, {"h2d", "pageable", 0.012}, {"d2h", "pageable", 0.013}};
    for (const auto& x : c) {
      if (pinned_only && std::strcmp(x.mem, "pinned") != 0) {
        continue;
      }
      std::snprintf(buf, sizeof buf,
                    ",\"name\":\"pcie\",\"verified\":true,\"direction\":\"%s\",\"memory\":\"%s\",\"bytes\":268435456,"
                    "\"seconds\":%.9g,\"mismatches\":0}",
                    x.dir, x.mem, x.seconds);
      Line(Head("result", test, device) + buf);
    }
  } else if (test == "p2p") {
    const int n = std::atoi(Env("STAND_IN_DEVICES")) > 0 ? std::atoi(Env("STAND_IN_DEVICES")) : 2;
    for (int s = 0; s < n; ++s) {
      for (int d = 0; d < n; ++d) {
        if (s == d) continue;
        std::snprintf(buf, sizeof buf, ",\"name\":\"p2p_access\",\"verified\":true,\"src\":%d,\"dst\":%d,\"can_access\":true}", s, d);
        Line(Head("result", test, -1) + buf);
        for (int on = 1; on >= 0; --on) {
          std::snprintf(buf, sizeof buf,
                        ",\"name\":\"p2p_copy\",\"verified\":true,\"src\":%d,\"dst\":%d,\"peer_access\":%s,"
                        "\"bytes\":268435456,\"seconds\":%.9g,\"mismatches\":0}",
                        s, d, on ? "true" : "false", on ? 0.0008 : 0.01);
          Line(Head("result", test, -1) + buf);
          std::snprintf(buf, sizeof buf,
                        ",\"name\":\"p2p_latency\",\"verified\":true,\"src\":%d,\"dst\":%d,\"peer_access\":%s,"
                        "\"copies\":100,\"seconds\":%.9g}",
                        s, d, on ? "true" : "false", on ? 0.0002 : 0.001);
          Line(Head("result", test, -1) + buf);
        }
      }
    }
  } else if (test == "nccl") {
    const int n = std::atoi(Env("STAND_IN_DEVICES")) > 0 ? std::atoi(Env("STAND_IN_DEVICES")) : 2;
    for (const char* coll : {"all_reduce", "all_gather", "reduce_scatter"}) {
      for (double b = 8; b <= max_bytes; b *= 2) {
        // t = 10 us + bytes / 1e11: algbw tends to 100 GB/s for large messages.
        std::snprintf(buf, sizeof buf,
                      ",\"name\":\"nccl\",\"verified\":true,\"collective\":\"%s\",\"ranks\":%d,\"bytes\":%.0f,"
                      "\"seconds\":%.9g,\"wrong\":%d}",
                      coll, n, b, 1e-5 + b / 1e11, wrong ? 5 : 0);
        Line(Head("result", test, -1) + buf);
      }
    }
  } else if (test == "burn") {
    // 1,000 GEMMs of 8192^3 taking 1.5 s of GEMM time (733.0 TFLOPS) over the requested
    // seconds; waits at most 1 s so the parent samples.
    usleep(static_cast<useconds_t>(std::min(seconds, 1.0) * 1e6));
    std::snprintf(buf, sizeof buf,
                  ",\"name\":\"burn\",\"verified\":true,\"precision\":\"bf16\",\"m\":8192,\"n\":8192,\"k\":8192,"
                  "\"gemms\":1000,\"seconds\":1.5,\"elapsed\":%.9g,\"mismatches\":%d,\"ref_mismatches\":0}",
                  seconds, wrong ? 7 : 0);
    Line(Head("result", test, device) + buf);
  }
  Line(Head("done", test, device) + "}");
}

}  // namespace

int main(int argc, char** argv) {
  std::string test;
  std::string bus = "0000:00:09.0";
  std::string precisions = "bf16";
  int device = 0;
  bool all = false;
  bool pinned_only = false;
  double seconds = 1;
  double max_bytes = 1 << 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--test") { test = v; ++i; }
    else if (a == "--device") { device = std::atoi(v); ++i; }
    else if (a == "--pci-bus-id") { bus = v; ++i; }
    else if (a == "--devices") { all = std::strcmp(v, "all") == 0; ++i; }
    else if (a == "--seconds") { seconds = std::atof(v); ++i; }
    else if (a == "--precisions") { precisions = v; ++i; }
    else if (a == "--max-bytes") { max_bytes = std::atof(v); ++i; }
    else if (a == "--pinned-only") { pinned_only = true; }
  }
  Line("{\"type\":\"hello\",\"protocol\":\"gpuplan-worker/1\",\"worker\":\"stand-in\",\"nccl\":true}");
  if (all) {
    const int n = std::atoi(Env("STAND_IN_DEVICES")) > 0 ? std::atoi(Env("STAND_IN_DEVICES")) : 2;
    for (int d = 0; d < n; ++d) {
      char b[32];
      std::snprintf(b, sizeof b, "0000:%02x:00.0", 0x09 + d);
      Line(Device(d, b));
    }
    device = -1;
  } else {
    Line(Device(device, bus));
  }
  std::string mode = STAND_IN_MODE;
  const std::string only_test = Env("STAND_IN_FAULT_TEST");
  const std::string only_device = Env("STAND_IN_FAULT_DEVICE");
  if ((!only_test.empty() && only_test != test) || (!only_device.empty() && std::atoi(only_device.c_str()) != device)) {
    mode = "good";
  }
  if (mode == "abort") {
    std::fprintf(stderr, "stand-in: aborting in the %s test\n", test.c_str());
    std::abort();
  }
  if (mode == "hang") {
    std::fprintf(stderr, "stand-in: hanging in the %s test\n", test.c_str());
    for (;;) {
      pause();
    }
  }
  if (mode == "cuda_error") {
    Line(Head("error", test, device) +
         ",\"api\":\"cuda\",\"error\":\"cudaErrorECCUncorrectable\",\"expr\":\"cudaMemcpy(host, dev, bytes, "
         "cudaMemcpyDeviceToHost)\",\"where\":\"memory_test.cu:142\"}");
    return 3;
  }
  if (mode == "garbage") {
    Line("CUDA says hello \x01\x02 {not json");
  }
  Good(test, device, seconds, precisions, pinned_only, max_bytes);
  return 0;
}
