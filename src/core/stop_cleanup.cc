#include "core/stop_cleanup.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace gpuplan {
namespace {

// A slot is free (0), being filled (1) or ready (2); the handler reads ready slots only. The
// states are lock-free atomics, so reading them in a signal handler is safe (POSIX allows
// lock-free atomics there), and unlink(2) and kill(2) are async-signal-safe.
enum : int { kFree = 0, kFilling = 1, kReady = 2 };

struct FileSlot {
  std::atomic<int> state{kFree};
  char path[PATH_MAX];
};
struct GroupSlot {
  std::atomic<int> state{kFree};
  pid_t pgid = 0;
};

FileSlot g_files[kStopCleanupSlots];
GroupSlot g_groups[kStopCleanupSlots];
static_assert(std::atomic<int>::is_always_lock_free);

template <class Slot, class Fill>
int Claim(Slot (&slots)[kStopCleanupSlots], Fill fill) {
  for (int i = 0; i < kStopCleanupSlots; ++i) {
    int expected = kFree;
    if (slots[i].state.compare_exchange_strong(expected, kFilling, std::memory_order_acq_rel)) {
      fill(slots[i]);
      slots[i].state.store(kReady, std::memory_order_release);
      return i;
    }
  }
  return -1;
}

void OnStop(int sig) {
  for (GroupSlot& g : g_groups) {
    if (g.state.load(std::memory_order_acquire) == kReady) {
      ::kill(-g.pgid, SIGKILL);
    }
  }
  for (FileSlot& f : g_files) {
    if (f.state.load(std::memory_order_acquire) == kReady) {
      ::unlink(f.path);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

void InstallStopCleanup() {
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = SA_RESETHAND;
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
}

RemoveOnStop::RemoveOnStop(const std::string& path) {
  if (path.empty() || path.size() >= PATH_MAX) {
    return;
  }
  slot_ = Claim(g_files, [&](FileSlot& s) { std::memcpy(s.path, path.c_str(), path.size() + 1); });
}

RemoveOnStop::~RemoveOnStop() {
  if (slot_ >= 0) {
    g_files[slot_].state.store(kFree, std::memory_order_release);
  }
}

KillGroupOnStop::KillGroupOnStop(int pgid) {
  if (pgid <= 0) {
    return;
  }
  slot_ = Claim(g_groups, [&](GroupSlot& s) { s.pgid = pgid; });
}

KillGroupOnStop::~KillGroupOnStop() {
  if (slot_ >= 0) {
    g_groups[slot_].state.store(kFree, std::memory_order_release);
  }
}

}  // namespace gpuplan
