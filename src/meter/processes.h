// Who a process on a GPU is, read from /proc (docs/meter.md §8): its user, command line, the
// container and Kubernetes pod its cgroup names, and its Slurm job. NVML gives only the pid
// and the GPU memory; this fills the rest of ProcessIdentity.
//
// proc_root is "/proc" on a machine; tests point it at fixture trees (tests/fixtures/proc/).
// Nothing here throws: a process that ended or a file that cannot be read leaves the field
// absent (a process seen by NVML may be in another PID namespace, or gone by the time we look).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "meter/sample.h"

namespace gpuplan {

// What a cgroup path says about the process (any of /proc/PID/cgroup's lines, v1 or v2).
struct CgroupIdentity {
  std::optional<std::string> container_id;  // 64 hex digits: docker, containerd, cri-o, podman
  std::optional<std::string> pod_uid;       // Kubernetes pod UID, with dashes
  std::optional<std::string> slurm_job_id;  // the job_N of Slurm's cgroup

  bool operator==(const CgroupIdentity&) const = default;
};

// Parses the text of /proc/PID/cgroup. Forms recognised (cgroup v1 and v2, cgroupfs and systemd
// drivers): /docker/ID, docker-ID.scope, cri-containerd-ID.scope, .../cri-containerd:ID,
// crio-ID.scope, /crio-ID, libpod-ID.scope; kubepods/.../podUID/ and
// kubepods-<qos>-podUID_WITH_UNDERSCORES.slice; Slurm's .../job_N/....
CgroupIdentity ParseCgroup(const std::string& text);

// The value of NAME in the NUL-separated text of /proc/PID/environ.
std::optional<std::string> EnvironValue(const std::string& environ, const std::string& name);

// The identity of `pid` from `proc_root`: user (the real uid's name from the password database,
// else the number), command line (arguments joined by spaces; /proc/PID/comm in brackets when
// the command line is empty), container id, pod UID, Slurm job (cgroup, else SLURM_JOB_ID from
// environ when readable). Only pid is set when /proc/PID does not exist.
ProcessIdentity ReadProcessIdentity(int pid, const std::string& proc_root = "/proc");

// ReadProcessIdentity with a cache: a pid is read again only when its start time
// (/proc/PID/stat field 22) changes, so a process on a GPU for a week costs one read of its
// status, cmdline, cgroup and environ (and one of stat per tick).
class ProcessIdentityCache {
 public:
  explicit ProcessIdentityCache(std::string proc_root = "/proc") : proc_root_(std::move(proc_root)) {}
  const ProcessIdentity& Lookup(int pid);
  // Drops the pids not looked up since the previous call (processes that left the GPUs).
  void Sweep();
  std::size_t size() const { return entries_.size(); }
  uint64_t reads() const { return reads_; }

 private:
  struct Entry {
    std::optional<uint64_t> start_time;
    ProcessIdentity identity;
    bool used = true;
  };
  std::string proc_root_;
  std::map<int, Entry> entries_;
  uint64_t reads_ = 0;
};

}  // namespace gpuplan
