// Runs gpu-worker processes (one per GPU, or one for all GPUs) and collects their JSON lines
// (check/worker_protocol.h). Each worker gets its own process group; a worker still running at
// its timeout is killed with its whole group (SIGKILL), so a hung CUDA call or a child it started
// cannot outlive the test. Nothing here judges: the verdicts (check/gpu_tests.h) turn a crash, a
// hang, unreadable output or an error line into a FAIL for that GPU with the evidence kept here.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/worker_protocol.h"

namespace gpuplan {

struct WorkerCommand {
  std::vector<std::string> argv;  // argv[0]: the worker's path
  int gpu = -1;                   // the GPU (NVML index) it measures; -1: all of them
  // Added to the inherited environment ("CUDA_DEVICE_ORDER=PCI_BUS_ID").
  std::vector<std::string> env;
};

struct WorkerRun {
  WorkerCommand command;
  std::vector<WorkerLine> lines;        // readable lines, in order
  std::vector<std::string> unreadable;  // "line: why" for each line that is not the schema
  std::string stderr_tail;              // the last kStderrKeep bytes of its stderr
  std::string start_error;              // non-empty: the process could not be started
  std::optional<int> exit_code;         // set when it exited
  std::optional<int> signal;            // set when a signal ended it (SIGKILL after a timeout too)
  bool timed_out = false;
  double seconds = 0;

  bool Finished(const std::string& test) const;  // a "done" line for `test` was printed
  std::string CommandLine() const;               // argv joined, for the evidence
};

inline constexpr std::size_t kStderrKeep = 2048;
inline constexpr std::size_t kMaxLineBytes = 1 << 20;  // a longer line is unreadable output

struct WorkerRunOptions {
  double timeout_s = 600;  // per worker, from its start
  double tick_s = 1;       // how often `tick` is called while any worker runs
  // Called every tick_s with the seconds since the start (the NVML sampler), on this thread.
  std::function<void(double)> tick;
  // Called for every readable line as it arrives (progress), with the index of the command.
  std::function<void(std::size_t, const WorkerLine&)> on_line;
};

// Starts every command at once and waits until all have ended or been killed. Never throws for
// what a worker does; throws std::system_error only when this process cannot make pipes.
std::vector<WorkerRun> RunWorkers(const std::vector<WorkerCommand>& commands, const WorkerRunOptions& options);

// One other program run to its end with the workers' spawn (no shell; its own process group;
// stdin /dev/null; default signal handling): the link test runs `iperf3 -J` with it
// (check/net_iperf.h). stdout is kept up to `max_stdout` bytes (the rest is read and dropped,
// `out_truncated`), stderr's last kStderrKeep bytes.
struct ProcessOptions {
  double timeout_s = 60;     // from its start: SIGKILL to its whole group
  double interrupt_s = 0;    // > 0: SIGINT to it at this (it may still write what it has), before timeout_s
  std::size_t max_stdout = std::size_t{1} << 20;
};

struct ProcessRun {
  std::string out;
  bool out_truncated = false;
  std::string stderr_tail;
  std::string start_error;  // non-empty: the process could not be started
  std::optional<int> exit_code;
  std::optional<int> signal;
  bool interrupted = false;  // the SIGINT of interrupt_s was sent
  bool timed_out = false;    // killed at timeout_s
  double seconds = 0;
};

// Never throws for what the program does; throws std::system_error only when pipes cannot be made.
ProcessRun RunProcess(const std::vector<std::string>& argv, const ProcessOptions& options);

// The signal's name ("SIGABRT"), or "signal N".
std::string SignalName(int sig);

// The gpu-worker next to the running executable (/proc/self/exe's folder + "/gpu-worker").
std::string DefaultWorkerPath();

}  // namespace gpuplan
