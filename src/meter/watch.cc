#include "meter/watch.h"

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include "telemetry/pcie.h"
#include "telemetry/proc.h"
#include "core/error.h"
#include "read/time_text.h"
#include "read/file_text.h"
#include "telemetry/nvml_source.h"

extern char** environ;

namespace gpuplan {

namespace {

// A stop signal sent to gpuplan itself (SIGTERM from a scheduler, SIGINT/SIGHUP/SIGQUIT), to be
// forwarded to the command's process group by the sampling loop.
volatile sig_atomic_t g_watch_signal = 0;
void OnWatchSignal(int signal) { g_watch_signal = signal; }
constexpr int kForwardedSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
// After forwarding a stop signal, the command's group has this long to end before SIGKILL, so
// gpuplan itself is gone within the 5 s a stop allows (docs/meter-watch.md).
constexpr double kForwardGraceSeconds = 3.5;

std::string FormatSeconds(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

const char* ToString(WatchBound b) {
  switch (b) {
    case WatchBound::kCompute:
      return "compute-bound";
    case WatchBound::kMemory:
      return "memory-bound";
    case WatchBound::kDataLoading:
      return "data-loading-bound";
    case WatchBound::kCommunication:
      return "communication-bound";
    case WatchBound::kCpu:
      return "cpu-bound";
    case WatchBound::kIo:
      return "io-bound";
    case WatchBound::kWaiting:
      return "waiting";
    case WatchBound::kTooShort:
      return "too-short";
  }
  return "?";
}

namespace {

// A /proc file, empty when the process has gone.
std::string ReadSmallFile(const std::string& path) { return TryReadFileText(path).value_or(""); }

}  // namespace

std::optional<ProcCounters> ReadProcCounters(const std::string& proc_root, int pid) {
  const std::string dir = proc_root + "/" + std::to_string(pid);
  const std::string stat = ReadSmallFile(dir + "/stat");
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses; fields follow the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream in(stat.substr(close + 1));
  std::vector<std::string> f;
  for (std::string tok; in >> tok && f.size() < 15;) {
    f.push_back(tok);
  }
  if (f.size() < 15) {
    return std::nullopt;
  }
  ProcCounters c;
  c.state = f[0].empty() ? '?' : f[0][0];
  try {
    c.ppid = std::stoi(f[1]);
    // proc(5): utime (14), stime (15), cutime (16), cstime (17), counted from the pid as field 1.
    c.cpu_ticks = std::stoull(f[11]) + std::stoull(f[12]) + std::stoull(f[13]) + std::stoull(f[14]);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  const std::string io = ReadSmallFile(dir + "/io");
  std::istringstream lines(io);
  for (std::string key; lines >> key;) {
    uint64_t v = 0;
    lines >> v;
    if (key == "rchar:") {
      c.rchar = v;
      c.io_readable = true;
    } else if (key == "wchar:") {
      c.wchar = v;
    }
  }
  return c;
}

std::vector<int> ProcessTree(const std::string& proc_root, int pid) {
  std::multimap<int, int> children;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(proc_root, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      continue;
    }
    const std::string stat = ReadSmallFile(e.path().string() + "/stat");
    const std::size_t close = stat.rfind(')');
    if (close == std::string::npos) {
      continue;
    }
    std::istringstream in(stat.substr(close + 1));
    std::string state;
    int ppid = 0;
    if (in >> state >> ppid) {
      children.emplace(ppid, std::stoi(name));
    }
  }
  std::vector<int> tree{pid};
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const auto [a, b] = children.equal_range(tree[i]);
    for (auto it = a; it != b; ++it) {
      tree.push_back(it->second);
    }
  }
  return tree;
}

namespace {

struct DiskNet {
  uint64_t disk_read = 0, disk_write = 0, net_rx = 0, net_tx = 0;  // bytes
};

DiskNet ReadDiskNet(const std::string& proc_root) {
  DiskNet d;
  std::istringstream disks(ReadSmallFile(proc_root + "/diskstats"));
  const bool have_sys_block = std::filesystem::exists("/sys/block");
  for (std::string line; std::getline(disks, line);) {
    std::istringstream in(line);
    std::string major, minor, name;
    uint64_t v[7] = {};
    if (!(in >> major >> minor >> name >> v[0] >> v[1] >> v[2] >> v[3] >> v[4] >> v[5] >> v[6])) {
      continue;
    }
    // Whole disks only (a partition's bytes are its disk's too); loop and RAM devices are not storage.
    if (name.rfind("loop", 0) == 0 || name.rfind("ram", 0) == 0 || name.rfind("zram", 0) == 0) {
      continue;
    }
    if (have_sys_block && !std::filesystem::exists("/sys/block/" + name)) {
      continue;
    }
    d.disk_read += v[2] * 512;   // sectors read: always 512-byte units (Documentation/admin-guide/iostats)
    d.disk_write += v[6] * 512;  // sectors written
  }
  std::istringstream net(ReadSmallFile(proc_root + "/net/dev"));
  for (std::string line; std::getline(net, line);) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) {
      continue;
    }
    std::string iface = line.substr(0, colon);
    iface.erase(0, iface.find_first_not_of(' '));
    if (iface == "lo") {
      continue;
    }
    std::istringstream in(line.substr(colon + 1));
    uint64_t f[9] = {};
    for (auto& x : f) {
      in >> x;
    }
    d.net_rx += f[0];
    d.net_tx += f[8];
  }
  return d;
}


std::string Fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Per-process counters of the tree at one moment, to difference per pid (a child that exits and
// is reaped moves its CPU time to its parent's cutime/cstime; its read bytes leave with it).
struct TreeReading {
  std::map<int, ProcCounters> procs;
  double t = 0;
};

TreeReading ReadTree(const std::string& proc_root, int pid, double t) {
  TreeReading r;
  r.t = t;
  for (int p : ProcessTree(proc_root, pid)) {
    if (auto c = ReadProcCounters(proc_root, p)) {
      r.procs[p] = *c;
    }
  }
  return r;
}

}  // namespace

WatchSummary SummarizeWatch(const std::vector<WatchSample>& series, int cpus) {
  WatchSummary s;
  s.cpus = cpus;
  if (series.empty()) {
    return s;
  }
  double gpu = 0, gmem = 0, iowait = 0, steal = 0, pcie = 0, nvlink = 0;
  int n_gpu = 0, n_gmem = 0, n_iowait = 0, n_steal = 0, n_pcie = 0, n_nvlink = 0, waiting = 0, running = 0;
  for (const auto& x : series) {
    s.cpu_cores_mean += x.cpu_cores;
    s.cpu_cores_peak = std::max(s.cpu_cores_peak, x.cpu_cores);
    s.read_bytes_per_s_mean += x.read_bytes_per_s;
    waiting += x.waiting_io > 0 ? 1 : 0;
    running += x.running > 0 ? 1 : 0;
    if (x.gpu_util) {
      gpu += *x.gpu_util;
      ++n_gpu;
    }
    if (x.gpu_memory_util) {
      gmem += *x.gpu_memory_util;
      ++n_gmem;
    }
    if (x.gpu_memory_used) {
      s.gpu_memory_used_peak = std::max(s.gpu_memory_used_peak.value_or(0), *x.gpu_memory_used);
    }
    if (x.pcie_bytes_per_s) {
      pcie += *x.pcie_bytes_per_s;
      ++n_pcie;
    }
    if (x.nvlink_bytes_per_s) {
      nvlink += *x.nvlink_bytes_per_s;
      ++n_nvlink;
    }
    if (x.system_iowait) {
      iowait += *x.system_iowait;
      ++n_iowait;
    }
    if (x.system_steal) {
      steal += *x.system_steal;
      ++n_steal;
    }
  }
  const auto n = static_cast<double>(series.size());
  s.cpu_cores_mean /= n;
  s.read_bytes_per_s_mean /= n;
  s.waiting_io_share = waiting / n;
  s.running_share = running / n;
  if (n_gpu > 0) s.gpu_util_mean = gpu / n_gpu;
  if (n_gmem > 0) s.gpu_memory_util_mean = gmem / n_gmem;
  if (n_iowait > 0) s.system_iowait_mean = iowait / n_iowait;
  if (n_steal > 0) s.system_steal_mean = steal / n_steal;
  if (n_pcie > 0) s.pcie_bytes_per_s_mean = pcie / n_pcie;
  if (n_nvlink > 0) s.nvlink_bytes_per_s_mean = nvlink / n_nvlink;
  return s;
}

std::optional<double> PcieLinkBytesPerSecond(int generation, int lanes) {
  const auto gb_s = PcieTheoryGBs(generation, lanes);  // telemetry/pcie.h: the PCI-SIG rates
  return gb_s ? std::optional<double>(*gb_s * 1e9) : std::nullopt;
}

// Thresholds (docs/meter-watch.md gives the reasons).
namespace {
constexpr double kComputeUtil = 80;      // % of time a kernel ran: the GPU is kept fed
constexpr double kLowUtil = 50;          // under this the GPU waits more than it works
constexpr double kMemoryUtil = 60;       // % of time HBM was read or written
constexpr double kCpuCores = 0.8;        // one core busy 80% of the time: the host side computes
constexpr double kRunningShare = 0.8;    // runnable in 80% of samples: it wants the CPU even when it gets less
constexpr double kReadRate = 1e6;        // 1 MB/s of reads: the command streams data
constexpr double kWaitingShare = 0.2;    // a fifth of the samples with a process in state D
constexpr double kIowait = 0.1;          // a tenth of the machine's CPU time in iowait
constexpr double kPcieBusy = 0.2;        // per-GPU traffic of a fifth of one direction of its link
constexpr double kPcieBusyUnknownLink = 4e9;  // bytes/s, when the link's width and generation are unknown
}  // namespace

WatchDiagnosis DiagnoseWatch(const WatchSummary& s, int gpus, std::size_t samples, const std::string& gpu_skip) {
  WatchDiagnosis d;
  d.gpu_part = gpu_skip.empty() ? "measured on " + std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs")
                                : "SKIP: not measured: " + gpu_skip;
  if (samples < 2) {
    d.bound = WatchBound::kTooShort;
    d.evidence.push_back("fewer than 2 samples: run the command longer or lower --interval");
    return d;
  }
  // A command that is always runnable wants the CPU: on a busy or oversold host it gets less than
  // a core, and that is the finding, not a reason to call it idle.
  const bool cpu_busy = s.cpu_cores_mean >= kCpuCores || s.running_share >= kRunningShare;
  const bool reads = s.read_bytes_per_s_mean >= kReadRate && s.cpu_cores_mean < kCpuCores;
  const bool d_state = s.waiting_io_share >= kWaitingShare;
  // The machine's iowait blames the command only when its own processes were seen waiting on I/O:
  // on a shared machine another job's writes are not this command's data loading.
  const bool iowait = s.system_iowait_mean && *s.system_iowait_mean >= kIowait && s.waiting_io_share > 0;
  const bool io = reads || d_state || iowait;
  auto host_evidence = [&] {
    d.evidence.push_back("the command's processes used " + Fmt("%.2f", s.cpu_cores_mean) + " CPU cores on average (peak " +
                         Fmt("%.2f", s.cpu_cores_peak) + ") of " + std::to_string(s.cpus));
    d.evidence.push_back(Fmt("%.0f", 100 * s.running_share) + "% of samples had a process running or ready to run (state R)");
    d.evidence.push_back("they read " + Fmt("%.1f", s.read_bytes_per_s_mean / 1e6) + " MB/s on average");
    if (s.waiting_io_share > 0) {
      d.evidence.push_back(Fmt("%.0f", 100 * s.waiting_io_share) + "% of samples had a process waiting on I/O (state D)");
    }
    if (s.system_iowait_mean) {
      d.evidence.push_back("the machine spent " + Fmt("%.1f", 100 * *s.system_iowait_mean) + "% of its CPU time in iowait");
    }
    if (s.system_steal_mean && *s.system_steal_mean >= 0.05) {
      d.evidence.push_back("the hypervisor stole " + Fmt("%.1f", 100 * *s.system_steal_mean) +
                           "% of the CPU time (a noisy neighbour or an oversold host)");
    }
  };
  // PCIe: busy when each GPU moves a fifth of its link's one-direction rate (docs/meter-watch.md).
  const double pcie_limit = s.pcie_link_bytes_per_s ? kPcieBusy * *s.pcie_link_bytes_per_s : kPcieBusyUnknownLink;
  const bool pcie_busy = s.pcie_bytes_per_s_mean && *s.pcie_bytes_per_s_mean >= pcie_limit;
  auto pcie_line = [&] {
    std::string line = "PCIe traffic " + Fmt("%.2f", s.pcie_bytes_per_s_mean.value_or(0) / 1e9) +
                       " GB/s per GPU on average (both directions)";
    if (s.pcie_link_bytes_per_s) {
      line += ", " + Fmt("%.0f", 100 * s.pcie_bytes_per_s_mean.value_or(0) / *s.pcie_link_bytes_per_s) +
              "% of one direction of its link (" + Fmt("%.1f", *s.pcie_link_bytes_per_s / 1e9) + " GB/s)";
    }
    return line;
  };
  // NVLink: busy on the same share of one direction of the GPU's links (25 GB/s each).
  const double links_per_gpu = gpus > 0 ? static_cast<double>(s.nvlinks_up) / gpus : 0;
  const bool nvlink_busy = s.nvlink_bytes_per_s_mean && links_per_gpu > 0 &&
                           *s.nvlink_bytes_per_s_mean >= kPcieBusy * links_per_gpu * kNvLinkBytesPerSecond;
  auto nvlink_line = [&] {
    std::string line = "NVLink traffic " + Fmt("%.2f", s.nvlink_bytes_per_s_mean.value_or(0) / 1e9) +
                       " GB/s per GPU on average (both directions)";
    if (links_per_gpu > 0) {
      const double one_way = links_per_gpu * kNvLinkBytesPerSecond;
      line += ", " + Fmt("%.0f", 100 * s.nvlink_bytes_per_s_mean.value_or(0) / one_way) + "% of one direction of its " +
              Fmt("%.0f", links_per_gpu) + " links (" + Fmt("%.0f", one_way / 1e9) + " GB/s)";
    }
    return line;
  };
  const bool nvlink_unmeasured = s.nvlinks_up > 0 && !s.nvlink_bytes_per_s_mean;
  if (!s.gpu_util_mean) {
    d.bound = cpu_busy ? WatchBound::kCpu : io ? WatchBound::kIo : WatchBound::kWaiting;
    host_evidence();
    return d;
  }
  const double util = *s.gpu_util_mean;
  d.evidence.push_back("GPU utilisation " + Fmt("%.0f", util) + "% on average (the share of time a kernel ran)");
  if (s.gpu_memory_util_mean) {
    d.evidence.push_back("GPU memory busy " + Fmt("%.0f", *s.gpu_memory_util_mean) + "% of the time");
  }
  if (util >= kLowUtil && s.gpu_memory_util_mean && *s.gpu_memory_util_mean >= kMemoryUtil) {
    d.bound = WatchBound::kMemory;
  } else if (util >= kComputeUtil) {
    d.bound = WatchBound::kCompute;
  } else if (io || cpu_busy) {
    d.bound = WatchBound::kDataLoading;
    host_evidence();
  } else if (util < kLowUtil && pcie_busy && gpus == 1) {
    d.bound = WatchBound::kDataLoading;
    d.evidence.push_back(pcie_line() + ": the GPU waits on copies between host and GPU memory");
  } else if (util < kLowUtil && gpus >= 2 && (pcie_busy || nvlink_busy || !s.pcie_bytes_per_s_mean || nvlink_unmeasured)) {
    d.bound = WatchBound::kCommunication;
    const std::string lead = std::to_string(gpus) + " GPUs, low utilisation and no host-side wait";
    if (nvlink_busy) {
      d.evidence.push_back(lead + "; " + nvlink_line() + ": the GPUs wait on data moving between them");
    } else if (pcie_busy) {
      d.evidence.push_back(lead + "; " + pcie_line() + ": the GPUs wait on data moving between them");
    } else if (!s.pcie_bytes_per_s_mean) {
      d.evidence.push_back(lead + ": the GPUs wait on each other (inferred: NVML gave no PCIe traffic)");
    } else {
      d.evidence.push_back(lead + "; " + pcie_line() + ", but " + std::to_string(s.nvlinks_up) +
                           " NVLinks are up and their traffic is not measured: the GPUs most likely wait on each other "
                           "over NVLink");
    }
  } else if (util < kLowUtil && gpus >= 2) {
    d.bound = WatchBound::kWaiting;
    d.evidence.push_back(s.nvlink_bytes_per_s_mean
                             ? pcie_line() + "; " + nvlink_line() + ": the GPUs are not waiting on each other's data"
                             : pcie_line() + " and no NVLink: the GPUs are not waiting on each other's data");
    host_evidence();
  } else if (util < kLowUtil) {
    d.bound = WatchBound::kWaiting;
    host_evidence();
  } else {
    d.bound = WatchBound::kCompute;
    d.evidence.push_back("the GPU is busy more than half of the time with no host-side wait");
  }
  return d;
}

WatchResult RunWatch(const WatchRequest& q) {
  if (q.command.empty()) {
    throw InputError("no command to watch: gpuplan meter watch -- CMD ARGS...", "", 0, "command");
  }
  if (!(q.interval_seconds >= 0.05 && q.interval_seconds <= 3600)) {
    throw InputError("the interval must be between 0.05 and 3600 seconds", "", 0, "interval");
  }
  WatchResult r;
  r.command = q.command;
  r.interval_seconds = q.interval_seconds;
  r.started = UtcNowIso();
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) {
    r.hostname = host;
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const double tick = static_cast<double>(sysconf(_SC_CLK_TCK));

  // The GPU part: NVML, or SKIP with the reason.
  std::unique_ptr<NvmlSource> nvml;
  std::string gpu_skip;
  std::optional<double> pcie_link;
  int nvlinks_up = 0;
  std::map<int, NvLinkCounters> nvlink_prev;  // the last NVLink counters of each GPU, and when they were read
  std::optional<std::chrono::steady_clock::time_point> nvlink_read_at;
  try {
    nvml = NvmlSource::Open(q.nvml_library);
    const SystemSnapshot inventory = nvml->Snapshot();
    r.gpus = static_cast<int>(inventory.gpus.size());
    for (const GpuSnapshot& g : inventory.gpus) {
      const auto link = PcieLinkBytesPerSecond(g.pcie_gen_max.value_or(0), g.pcie_width_max.value_or(0));
      if (link && (!pcie_link || *link < *pcie_link)) pcie_link = link;
      nvlinks_up += g.nvlink_up.value_or(0);
      if (const auto c = nvml->ReadNvLinkCounters(g.index)) {
        nvlink_prev[g.index] = *c;
        nvlink_read_at = std::chrono::steady_clock::now();
      }
    }
    if (r.gpus == 0) {
      gpu_skip = "NVML lists no GPU";
      nvml.reset();
    }
  } catch (const std::exception& e) {
    gpu_skip = e.what();
  }

  // Start the command in a process group of its own (it and everything it starts), which gets
  // the terminal when gpuplan has it, as a shell's job would: Ctrl-C reaches the command, and a
  // stop signal sent to gpuplan (SIGTERM, SIGINT, SIGHUP, SIGQUIT) is forwarded to that group;
  // gpuplan waits for the command, writes its report and exits with the command's status.
  std::vector<char*> argv;
  for (const auto& a : q.command) {
    argv.push_back(const_cast<char*>(a.c_str()));
  }
  argv.push_back(nullptr);
  g_watch_signal = 0;
  struct sigaction forward {};
  forward.sa_handler = OnWatchSignal;
  sigemptyset(&forward.sa_mask);
  struct sigaction old_handlers[std::size(kForwardedSignals)] = {};
  for (std::size_t i = 0; i < std::size(kForwardedSignals); ++i) {
    sigaction(kForwardedSignals[i], &forward, &old_handlers[i]);
  }
  auto restore_handlers = [&] {
    for (std::size_t i = 0; i < std::size(kForwardedSignals); ++i) {
      sigaction(kForwardedSignals[i], &old_handlers[i], nullptr);
    }
  };
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int sig : kForwardedSignals) {
    sigaddset(&defaults, sig);
  }
  sigaddset(&defaults, SIGTTOU);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int spawn = posix_spawnp(&pid, argv[0], nullptr, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  // The terminal: when gpuplan is the foreground job, the command's group becomes it until the
  // command ends (SIGTTOU ignored while gpuplan, then in the background, hands it back).
  const bool own_terminal = spawn == 0 && isatty(STDIN_FILENO) == 1 && tcgetpgrp(STDIN_FILENO) == getpgrp();
  struct sigaction ignore_ttou {}, old_ttou{};
  ignore_ttou.sa_handler = SIG_IGN;
  sigemptyset(&ignore_ttou.sa_mask);
  sigaction(SIGTTOU, &ignore_ttou, &old_ttou);
  if (own_terminal) {
    tcsetpgrp(STDIN_FILENO, pid);
  }
  auto give_back_terminal = [&] {
    if (own_terminal) {
      tcsetpgrp(STDIN_FILENO, getpgrp());
    }
    sigaction(SIGTTOU, &old_ttou, nullptr);
  };
  if (spawn != 0) {
    give_back_terminal();
    restore_handlers();
    r.exit_code = 127;  // as the shells say for a command that cannot be run
    r.diagnosis.gpu_part = gpu_skip.empty() ? "not sampled" : "SKIP: not measured: " + gpu_skip;
    r.diagnosis.evidence.push_back("could not start " + q.command[0] + ": " + std::strerror(spawn));
    r.summary.cpus = static_cast<int>(cpus);
    return r;
  }
  auto now = [&t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  TreeReading prev = ReadTree(q.proc_root, pid, 0);
  CpuTimes prev_cpu = ReadCpuTimes(q.proc_root);
  DiskNet prev_io = ReadDiskNet(q.proc_root);
  int status = 0;
  bool done = false;
  struct rusage usage {};  // of the command and its reaped descendants, once it has ended
  double next = q.interval_seconds;
  std::optional<double> forwarded_at;
  bool killed = false;
  while (!done) {
    // Wait for the next tick or the command's end, whichever comes first.
    const pid_t w = wait4(pid, &status, WNOHANG, &usage);
    done = w == pid;
    const double t = now();
    if (!done && g_watch_signal != 0 && !forwarded_at) {
      const int sig = g_watch_signal;
      kill(-pid, sig);
      forwarded_at = t;
      r.diagnosis.evidence.push_back(std::string("gpuplan was sent SIG") + sigabbrev_np(sig) +
                                     " and forwarded it to the command's process group");
    } else if (!done && forwarded_at && !killed && t - *forwarded_at > kForwardGraceSeconds) {
      kill(-pid, SIGKILL);
      killed = true;
    }
    if (!done && t < next) {
      std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.02, next - t)));
      continue;
    }
    if (done && t - prev.t < 0.2 * q.interval_seconds) {
      break;  // a sliver of an interval at the end says nothing
    }
    next += q.interval_seconds;
    WatchSample s;
    s.t = t;
    const double dt = t - prev.t;
    TreeReading cur = ReadTree(q.proc_root, pid, t);
    uint64_t ticks = 0, rchar = 0, wchar = 0;
    if (done) {
      // The command has been reaped: its /proc entry is gone. Its CPU time and that of every
      // descendant it reaped is in wait4's rusage; the tree's CPU time at the last reading was
      // the sum of its processes' counters (each with its own reaped children).
      cur.procs.erase(pid);
      const double total = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                           static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
      uint64_t before = 0;
      for (const auto& [p, c] : prev.procs) {
        before += c.cpu_ticks;
      }
      const auto total_ticks = static_cast<uint64_t>(std::llround(total * tick));
      ticks += total_ticks > before ? total_ticks - before : 0;
      const auto main = prev.procs.find(pid);
      if (main != prev.procs.end()) {
        prev.procs.erase(main);  // counted above
      }
      // Descendants still alive were reparented away from the command and are no longer its tree.
      cur.procs.clear();
    }
    for (const auto& [p, c] : cur.procs) {
      const auto before = prev.procs.find(p);
      if (before == prev.procs.end()) {
        ticks += c.cpu_ticks;
        rchar += c.rchar;
        wchar += c.wchar;
      } else {
        ticks += c.cpu_ticks >= before->second.cpu_ticks ? c.cpu_ticks - before->second.cpu_ticks : 0;
        rchar += c.rchar >= before->second.rchar ? c.rchar - before->second.rchar : 0;
        wchar += c.wchar >= before->second.wchar ? c.wchar - before->second.wchar : 0;
      }
      ++s.processes;
      s.waiting_io += c.state == 'D' ? 1 : 0;
      s.running += c.state == 'R' ? 1 : 0;
    }
    s.cpu_cores = static_cast<double>(ticks) / tick / dt;
    s.read_bytes_per_s = static_cast<double>(rchar) / dt;
    s.write_bytes_per_s = static_cast<double>(wchar) / dt;
    const CpuTimes cpu = ReadCpuTimes(q.proc_root);
    if (cpu.valid && prev_cpu.valid && cpu.Total() > prev_cpu.Total()) {
      const auto all = static_cast<double>(cpu.Total() - prev_cpu.Total());
      s.system_iowait = static_cast<double>(cpu.iowait - prev_cpu.iowait) / all;
      s.system_steal = static_cast<double>(cpu.steal - prev_cpu.steal) / all;
      s.system_busy = 1 - static_cast<double>((cpu.idle - prev_cpu.idle) + (cpu.iowait - prev_cpu.iowait)) / all;
    }
    const DiskNet io = ReadDiskNet(q.proc_root);
    s.disk_read_bytes_per_s = static_cast<double>(io.disk_read - std::min(io.disk_read, prev_io.disk_read)) / dt;
    s.disk_write_bytes_per_s = static_cast<double>(io.disk_write - std::min(io.disk_write, prev_io.disk_write)) / dt;
    s.net_rx_bytes_per_s = static_cast<double>(io.net_rx - std::min(io.net_rx, prev_io.net_rx)) / dt;
    s.net_tx_bytes_per_s = static_cast<double>(io.net_tx - std::min(io.net_tx, prev_io.net_tx)) / dt;
    if (nvml) {
      const SystemSnapshot snap = nvml->Snapshot();
      double util = 0, mem_util = 0, used = 0;
      int n_util = 0, n_mem = 0, n_used = 0;
      for (const auto& g : snap.gpus) {
        if (g.utilization_gpu) {
          util += *g.utilization_gpu;
          ++n_util;
        }
        if (g.utilization_memory) {
          mem_util += *g.utilization_memory;
          ++n_mem;
        }
        if (g.memory_used) {
          used += static_cast<double>(*g.memory_used);
          ++n_used;
        }
      }
      if (n_util > 0) s.gpu_util = util / n_util;
      if (n_mem > 0) s.gpu_memory_util = mem_util / n_mem;
      if (n_used > 0) s.gpu_memory_used = used;
      double pcie = 0;
      int n_pcie = 0;
      for (const auto& g : snap.gpus) {
        if (const auto p = nvml->ReadPcieThroughput(g.index)) {
          pcie += p->tx_bytes_per_s + p->rx_bytes_per_s;
          ++n_pcie;
        }
      }
      if (n_pcie > 0) s.pcie_bytes_per_s = pcie / n_pcie;
      // NVLink: the counters' growth since the previous reading, per GPU.
      const auto read_at = std::chrono::steady_clock::now();
      const double nvlink_dt =
          nvlink_read_at ? std::chrono::duration<double>(read_at - *nvlink_read_at).count() : 0;
      nvlink_read_at = read_at;
      double nvlink = 0;
      int n_nvlink = 0;
      for (const auto& g : snap.gpus) {
        const auto c = nvml->ReadNvLinkCounters(g.index);
        if (!c) continue;
        if (const auto before = nvlink_prev.find(g.index); before != nvlink_prev.end() && nvlink_dt > 0 &&
                                                           c->tx_bytes >= before->second.tx_bytes &&
                                                           c->rx_bytes >= before->second.rx_bytes) {
          nvlink += static_cast<double>((c->tx_bytes - before->second.tx_bytes) + (c->rx_bytes - before->second.rx_bytes)) /
                    nvlink_dt;
          ++n_nvlink;
        }
        nvlink_prev[g.index] = *c;
      }
      if (n_nvlink > 0) s.nvlink_bytes_per_s = nvlink / n_nvlink;
    }
    r.series.push_back(s);
    prev = std::move(cur);
    prev_cpu = cpu;
    prev_io = io;
  }

  r.duration_seconds = now();
  give_back_terminal();
  restore_handlers();
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
  r.summary = SummarizeWatch(r.series, static_cast<int>(cpus));
  r.summary.pcie_link_bytes_per_s = pcie_link;
  r.summary.nvlinks_up = nvlinks_up;
  std::vector<std::string> signal_lines = std::move(r.diagnosis.evidence);
  r.diagnosis = DiagnoseWatch(r.summary, r.gpus, r.series.size(), gpu_skip);
  r.diagnosis.evidence.insert(r.diagnosis.evidence.begin(), signal_lines.begin(), signal_lines.end());
  if (killed) {
    r.diagnosis.evidence.insert(r.diagnosis.evidence.begin(),
                                "the command's process group did not end within " + FormatSeconds(kForwardGraceSeconds) +
                                    " s of the forwarded signal and was killed (SIGKILL)");
  }
  return r;
}

}  // namespace gpuplan
