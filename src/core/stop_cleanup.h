// What a process asked to stop must not leave behind. SIGINT and SIGTERM end a short command at
// once (nothing in it is worth finishing), but a destructor does not run when a signal ends a
// process: a 512 MiB storage-test file or a report's temporary file would stay in the user's
// folder, and a GPU worker in its own process group (so a timeout can kill all it started) would
// run on without its parent. Code that creates such a file or group registers it for as long as
// it exists; InstallStopCleanup's handler removes the files, SIGKILLs the groups and then ends
// the process by the same signal (exit status 128 + signal, as without it).
//
// Commands that stop gracefully (meter run, serve, check --net-listen) install their own
// handling, which replaces this one; the registrations then do nothing.
#pragma once

#include <string>

namespace gpuplan {

// Sets the SIGINT and SIGTERM handlers. Front ends call it once, before any work.
void InstallStopCleanup();

// A file removed if the process is stopped while this object lives. Registration is best effort:
// a path longer than PATH_MAX or more than kStopCleanupSlots live registrations are not kept.
class RemoveOnStop {
 public:
  explicit RemoveOnStop(const std::string& path);
  ~RemoveOnStop();
  RemoveOnStop(const RemoveOnStop&) = delete;
  RemoveOnStop& operator=(const RemoveOnStop&) = delete;
  RemoveOnStop(RemoveOnStop&& o) noexcept : slot_(o.slot_) { o.slot_ = -1; }
  RemoveOnStop& operator=(RemoveOnStop&&) = delete;

 private:
  int slot_ = -1;
};

// A process group (its leader's pid) SIGKILLed if the process is stopped while this object lives.
class KillGroupOnStop {
 public:
  explicit KillGroupOnStop(int pgid);
  ~KillGroupOnStop();
  KillGroupOnStop(const KillGroupOnStop&) = delete;
  KillGroupOnStop& operator=(const KillGroupOnStop&) = delete;
  KillGroupOnStop(KillGroupOnStop&& o) noexcept : slot_(o.slot_) { o.slot_ = -1; }
  KillGroupOnStop& operator=(KillGroupOnStop&&) = delete;

 private:
  int slot_ = -1;
};

inline constexpr int kStopCleanupSlots = 64;

}  // namespace gpuplan
