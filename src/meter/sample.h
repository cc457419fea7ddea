// What `gpuplan meter` stores: one sample per GPU per tick, and one per process seen on a GPU
// at that tick (docs/meter-store.md). The agent builds GPU samples from a telemetry snapshot
// (GpuSamplesFromSnapshot) and process samples from NVML's process list and /proc; the store
// (store.h) keeps them and their roll-ups.
//
// Time is typed (core/time.h): a sample's `time` is a UtcMillis, an instant in UTC to the
// millisecond; the store keeps it as integer milliseconds since the Unix epoch (`time_ms`), which
// make the minute and hour buckets exact and compare exactly in SQL. A millisecond is finer than
// NVML's own sample period (1/6 s to 1 s). Every measured field is optional: absent means "not
// measured" (NVML_ERROR_NOT_SUPPORTED, no permission), never zero.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "telemetry/snapshot.h"

namespace gpuplan {

inline constexpr int64_t kMillisecondsPerSecond = 1000;
inline constexpr int64_t kMillisecondsPerMinute = 60 * kMillisecondsPerSecond;
inline constexpr int64_t kMillisecondsPerHour = 60 * kMillisecondsPerMinute;

// On counts (the typed FloorTo / CeilTo below round with them): `t` rounded down to a multiple of
// `width` (towards minus infinity); `t` when width <= 0.
inline int64_t FloorTo(int64_t t, int64_t width) {
  if (width <= 0) {
    return t;
  }
  int64_t q = t / width;
  if (t % width != 0 && t < 0) {
    --q;
  }
  return q * width;
}
// `t` rounded up to a multiple of `width` (towards plus infinity); `t` when width <= 0.
inline int64_t CeilTo(int64_t t, int64_t width) { return -FloorTo(-t, width); }
// Typed: `t` rounded down (up) to a multiple of `width` since the epoch, towards minus (plus)
// infinity; `t` when width <= 0.
inline UtcMillis FloorTo(UtcMillis t, std::chrono::milliseconds width) {
  return FromUnixMillis(FloorTo(UnixMillis(t), width.count()));
}
inline UtcMillis CeilTo(UtcMillis t, std::chrono::milliseconds width) {
  return FromUnixMillis(CeilTo(UnixMillis(t), width.count()));
}
// The start of the UTC hour holding `t`, and the first hour start at or after it.
inline UtcMillis FloorHour(UtcMillis t) { return FloorTo(t, std::chrono::hours{1}); }
inline UtcMillis CeilHour(UtcMillis t) { return CeilTo(t, std::chrono::hours{1}); }

// Seconds since the epoch (what clocks and recordings give) to a sample's time, rounded to the
// nearest millisecond.
UtcMillis TimeFromSeconds(double seconds);

struct GpuSample {
  UtcMillis time{};  // UTC, to the millisecond (stored as milliseconds since the Unix epoch)
  int gpu = 0;       // NVML index
  std::optional<std::string> uuid;
  std::optional<int> utilization_gpu;     // %: time a kernel ran over NVML's sample period
  std::optional<int> utilization_memory;  // %: time device memory was read or written
  std::optional<uint64_t> memory_used;    // bytes
  std::optional<uint64_t> memory_total;   // bytes
  std::optional<double> power;            // W (stored to the milliwatt, NVML's resolution)
  std::optional<uint64_t> energy_mj;      // mJ, cumulative since the driver loaded (resets)
  std::optional<int> temperature;         // C
  std::optional<int> sm_clock;            // MHz
  std::optional<uint64_t> clock_event_reasons;  // kClockEvent* bit mask (telemetry/snapshot.h)

  bool operator==(const GpuSample&) const = default;
};

// Health of one GPU at one tick: what the alert rules judge besides the sample (docs/meter-alerts.md).
// Not stored in the database; `meter record` keeps it in the trace so a replay raises the same alerts.
struct GpuHealthSample {
  int gpu = 0;
  std::optional<uint64_t> ecc_uncorrected;  // cumulative uncorrected ECC count (volatile, else aggregate)
  std::vector<int> xids;                    // XID events the driver delivered since the previous tick

  bool operator==(const GpuHealthSample&) const = default;
};

// Who a process on a GPU is: the same identity seen at many ticks is stored once. Two samples
// with equal identities are the same process (a pid reused by another command or user is not).
struct ProcessIdentity {
  int pid = 0;
  std::optional<std::string> user;
  std::optional<std::string> command;       // command line as in /proc/PID/cmdline, spaces between
  std::optional<std::string> container_id;  // from /proc/PID/cgroup (docker, containerd, cri-o)
  std::optional<std::string> pod_namespace;  // Kubernetes pod, from the cgroup's pod uid
  std::optional<std::string> pod_name;
  std::optional<std::string> slurm_job_id;  // SLURM_JOB_ID of the process, or its cgroup's job_N
  std::optional<std::string> pod_uid;  // Kubernetes pod UID from /proc/PID/cgroup (kubepods)

  auto operator<=>(const ProcessIdentity&) const = default;
};

// One process seen on one GPU at one tick. The agent gives a process sample the same time as
// the GPU sample of that tick.
struct ProcessSample : ProcessIdentity {
  UtcMillis time{};  // UTC, to the millisecond
  int gpu = 0;
  std::optional<uint64_t> gpu_memory;  // bytes the process holds on this GPU

  bool operator==(const ProcessSample&) const = default;
};

// One GpuSample per GPU of the snapshot, at `time_seconds` (UTC seconds since the epoch; the
// snapshot's own at_seconds counts from when its source was opened, so the caller supplies the
// wall-clock time of the read).
std::vector<GpuSample> GpuSamplesFromSnapshot(const SystemSnapshot& snapshot, double time_seconds);

}  // namespace gpuplan
