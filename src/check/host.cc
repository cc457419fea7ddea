#include "check/host.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>
#include <utility>

#include "read/file_text.h"
#include "check/cells.h"
#include "check/verdict.h"

namespace gpuplan {
namespace {

// A system file, empty when absent.
std::string Slurp(const std::string& path) { return TryReadFileText(path).value_or(""); }

std::string Trim(std::string s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  const auto e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// "key<TAB>: value" lines of /proc/cpuinfo, one block per processor (blank line between).
std::vector<std::vector<std::pair<std::string, std::string>>> CpuBlocks(const std::string& text) {
  std::vector<std::vector<std::pair<std::string, std::string>>> blocks(1);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (Trim(line).empty()) {
      if (!blocks.back().empty()) {
        blocks.emplace_back();
      }
      continue;
    }
    const auto colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    blocks.back().emplace_back(Trim(line.substr(0, colon)), Trim(line.substr(colon + 1)));
  }
  if (blocks.back().empty()) {
    blocks.pop_back();
  }
  return blocks;
}

std::string Field(const std::vector<std::pair<std::string, std::string>>& block, const std::string& key) {
  for (const auto& [k, v] : block) {
    if (k == key) {
      return v;
    }
  }
  return {};
}

}  // namespace

HostInfo ParseHostInfo(const HostTexts& t) {
  HostInfo h;
  if (!Trim(t.hostname).empty()) {
    h.hostname = Trim(t.hostname);
  }
  if (!Trim(t.kernel).empty()) {
    h.kernel = Trim(t.kernel);
  }
  {
    std::istringstream in(t.os_release);
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        std::string v = line.substr(12);
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) {
          v = v.substr(1, v.size() - 2);
        }
        h.os = v;
      }
    }
    if (!h.os) {
      h.not_measured["os"] = "no PRETTY_NAME in /etc/os-release";
    }
  }
  const auto blocks = CpuBlocks(t.cpuinfo);
  int processors = 0;
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> sockets;
  bool topology = true;
  for (const auto& b : blocks) {
    if (Field(b, "processor").empty()) {
      continue;
    }
    ++processors;
    const std::string phys = Field(b, "physical id");
    const std::string core = Field(b, "core id");
    if (phys.empty() || core.empty()) {
      topology = false;
    } else {
      cores.emplace(phys, core);
      sockets.insert(phys);
    }
    if (!h.cpu_model) {
      std::string model = Field(b, "model name");
      if (model.empty()) {
        model = Field(b, "Model");  // arm64 device-tree machines
      }
      if (!model.empty()) {
        h.cpu_model = model;
      }
    }
    if (!h.virtual_machine) {
      const std::string flags = Field(b, "flags");
      if (!flags.empty()) {
        h.virtual_machine = (" " + flags + " ").find(" hypervisor ") != std::string::npos;
      }
    }
  }
  if (processors > 0) {
    h.cpu_threads = processors;
    if (topology) {
      h.cpu_cores = static_cast<int>(cores.size());
      h.cpu_sockets = static_cast<int>(sockets.size());
    } else {
      h.not_measured["cpu_cores"] = "/proc/cpuinfo has no physical id / core id (counted threads only)";
    }
  } else {
    h.not_measured["cpu"] = "/proc/cpuinfo unreadable or empty";
  }
  if (!h.cpu_model && processors > 0) {
    h.not_measured["cpu_model"] = "no model name in /proc/cpuinfo";
  }
  {
    std::istringstream in(t.meminfo);
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      if (ls >> key >> kib && key == "MemTotal:") {
        h.memory_bytes = kib * 1024;  // the kernel's "kB" is KiB (proc(5))
        break;
      }
    }
    if (!h.memory_bytes) {
      h.not_measured["memory"] = "no MemTotal in /proc/meminfo";
    }
  }
  return h;
}

HostInfo ReadHostInfo(const std::string& proc_root, const std::string& os_release) {
  HostTexts t;
  t.cpuinfo = Slurp(proc_root + "/cpuinfo");
  t.meminfo = Slurp(proc_root + "/meminfo");
  t.os_release = Slurp(os_release);
  t.hostname = Slurp(proc_root + "/sys/kernel/hostname");
  t.kernel = Slurp(proc_root + "/sys/kernel/osrelease");
  return ParseHostInfo(t);
}


namespace {

// One work unit: 4096 steps of xorshift64 (integer ALU, no memory traffic), so the rate scales
// with cores and not with memory bandwidth.
uint64_t WorkUnit(uint64_t x) {
  for (int i = 0; i < 4096; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

// Runs work units on `threads` threads for `seconds`; returns units per second (all threads).
double Rate(int threads, double seconds, const std::function<void(double)>& progress) {
  std::atomic<bool> stop{false};
  std::vector<uint64_t> units(static_cast<std::size_t>(threads), 0);
  std::vector<uint64_t> sinks(static_cast<std::size_t>(threads), 0);
  std::vector<std::thread> pool;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&, i] {
      uint64_t x = 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i);
      uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        x = WorkUnit(x);
        ++n;
      }
      units[static_cast<std::size_t>(i)] = n;
      sinks[static_cast<std::size_t>(i)] = x;
    });
  }
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::min(std::chrono::steady_clock::duration(std::chrono::milliseconds(100)),
                                         deadline - std::chrono::steady_clock::now()));
    if (progress) {
      progress(std::min(1.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / seconds));
    }
  }
  stop = true;
  for (auto& t : pool) {
    t.join();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  uint64_t total = 0;
  uint64_t sink = 0;
  for (std::size_t i = 0; i < units.size(); ++i) {
    total += units[i];
    sink ^= sinks[i];
  }
  if (sink == 0x1234567) {  // uses the result so the loop cannot be removed (never true in practice)
    total += 1;
  }
  return static_cast<double>(total) / elapsed;
}

std::string Gib(uint64_t bytes) { return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30)); }

}  // namespace

CpuThroughput MeasureCpuThroughput(int threads, double seconds, const std::function<void(double)>& progress) {
  CpuThroughput r;
  r.threads = std::max(1, threads);
  const auto t0 = std::chrono::steady_clock::now();
  r.single_rate = Rate(1, seconds / 2, [&](double f) { if (progress) progress(f / 2); });
  r.parallel_rate = Rate(r.threads, seconds / 2, [&](double f) { if (progress) progress(0.5 + f / 2); });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

std::vector<CheckResult> JudgeHost(const HostInfo& info, int gpu_count, uint64_t gpu_memory_total,
                                   std::optional<int> promised_cores, std::optional<double> steal,
                                   const CpuThroughput& tp, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  const std::string dflt = "default (docs/check.md §4)";
  {
    CheckResult r = Make("cpu_model", -1, {});
    if (info.cpu_model || info.cpu_threads) {
      Pass(r);
      r.measured_text = fmt::format("{}: {} socket(s), {} cores, {} threads{}", info.cpu_model.value_or("unknown CPU"),
                                    info.cpu_sockets ? std::to_string(*info.cpu_sockets) : "?",
                                    info.cpu_cores ? std::to_string(*info.cpu_cores) : "?",
                                    info.cpu_threads ? std::to_string(*info.cpu_threads) : "?",
                                    info.virtual_machine.value_or(false) ? " (virtual machine)" : "");
      r.evidence = "read from /proc/cpuinfo";
    } else {
      Skip(r, "not measured: /proc/cpuinfo unreadable");
    }
    out.push_back(r);
  }
  // The logical CPUs present against the offer's promise (providers sell vCPUs).
  if (promised_cores) {
    CheckResult r = Make("cpu_cores_promised", -1, {});
    r.unit = "vCPUs";
    r.expected = *promised_cores;
    r.expectation_source = "offer (cpu_cores)";
    if (!info.cpu_threads) {
      Skip(r, "not measured: /proc/cpuinfo unreadable");
    } else {
      r.measured = *info.cpu_threads;
      AtLeast(r, *info.cpu_threads, *promised_cores, CheckStatus::kFail,
              "ask the provider for the CPUs in the offer");
      r.evidence = fmt::format("{} logical CPUs online, the offer promises {}", *info.cpu_threads, *promised_cores);
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("cpu_cores_per_gpu", -1, {});
    r.unit = "cores/GPU";
    r.expected = th.cpu_cores_per_gpu_warn;
    r.expected_text = fmt::format(">= {}", th.cpu_cores_per_gpu_warn);
    r.expectation_source = dflt;
    const std::optional<int> cores = info.cpu_cores ? info.cpu_cores : info.cpu_threads;
    if (gpu_count <= 0) {
      Skip(r, "no GPUs seen: no per-GPU ratio");
    } else if (!cores) {
      Skip(r, "not measured: core count unknown");
    } else {
      const double per = static_cast<double>(*cores) / gpu_count;
      r.measured = per;
      AtLeast(r, per, th.cpu_cores_per_gpu_warn, CheckStatus::kWarn,
              "data loading and tokenisation run on the CPU: too few cores per GPU starve the GPUs");
      r.evidence = fmt::format("{} {} for {} GPUs", *cores, info.cpu_cores ? "physical cores" : "logical CPUs", gpu_count);
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("ram_per_gpu_memory", -1, {});
    r.unit = "x GPU memory";
    r.expected = th.ram_per_gpu_memory_warn;
    r.expected_text = fmt::format(">= {} x total GPU memory", th.ram_per_gpu_memory_warn);
    r.expectation_source = dflt;
    if (gpu_count <= 0 || gpu_memory_total == 0) {
      Skip(r, "no GPU memory seen: no ratio");
    } else if (!info.memory_bytes) {
      Skip(r, "not measured: no MemTotal in /proc/meminfo");
    } else {
      const double ratio = static_cast<double>(*info.memory_bytes) / static_cast<double>(gpu_memory_total);
      r.measured = ratio;
      AtLeast(r, ratio, th.ram_per_gpu_memory_warn, CheckStatus::kWarn,
              "loading a checkpoint or offloading optimizer state needs host RAM at least the size of GPU memory");
      r.evidence = fmt::format("host RAM {} against {} of GPU memory on {} GPUs", Gib(*info.memory_bytes),
                               Gib(gpu_memory_total), gpu_count);
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("cpu_steal", -1, {});
    r.unit = "%";
    r.expected = th.steal_warn_fraction * 100;
    r.expected_text = fmt::format("< {}% (FAIL from {}%)", check_cells::Number(th.steal_warn_fraction * 100, 6),
                                  check_cells::Number(th.steal_fail_fraction * 100, 6));
    r.expectation_source = dflt;
    if (!steal) {
      Skip(r, "not measured: /proc/stat unreadable or no time passed");
    } else {
      r.measured = *steal * 100;
      r.evidence = fmt::format("{:.2f}% of CPU time was stolen by the hypervisor during the check (/proc/stat)",
                               *steal * 100);
      const std::string dedicated = "the virtual machine shares its physical cores with others: ask for dedicated cores";
      if (*steal >= th.steal_fail_fraction) {
        Fail(r, dedicated);
      } else if (*steal >= th.steal_warn_fraction) {
        Warn(r, dedicated);
      } else {
        Pass(r);
      }
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("cpu_throughput", -1, {});
    r.unit = "x one thread";
    const std::optional<int> cores = info.cpu_cores ? info.cpu_cores : info.cpu_threads;
    if (tp.single_rate <= 0 || !cores) {
      Skip(r, "not measured");
    } else {
      // Independent cores give a speed-up equal to their number; hyperthreads add little to
      // integer work, so the physical cores are the yardstick.
      const int yard = std::min(*cores, tp.threads);
      r.measured = tp.SpeedUp();
      r.expected = th.cpu_throughput_warn_fraction * yard;
      r.expected_text = fmt::format(">= {} x {} cores", check_cells::Number(th.cpu_throughput_warn_fraction, 6), yard);
      r.expectation_source = dflt;
      AtLeast(r, tp.SpeedUp(), *r.expected, CheckStatus::kWarn,
              "the cores are shared or throttled: compare with the steal time and ask the provider");
      r.evidence = fmt::format("{} threads together did {:.1f}x the work of one thread ({} cores present{})", tp.threads,
                               tp.SpeedUp(), *cores, info.virtual_machine.value_or(false)
                                                         ? "; a virtual machine whose vCPUs are hyperthread pairs "
                                                           "reaches about 0.6x of its vCPU count"
                                                         : "");
    }
    r.seconds = tp.seconds;
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuplan
