// A slow disk for tests on a machine whose disks are fast (issue 24 req. 2): an LD_PRELOAD
// library that makes every write of the files whose path contains $GPUPLAN_SLOW_DISK_PATH take
// $GPUPLAN_SLOW_DISK_WRITE_MS longer and every sync (fsync, fdatasync) $GPUPLAN_SLOW_DISK_SYNC_MS
// longer (a failing drive, a congested network block device). The delay is not cut short by a
// signal (the sleep resumes after EINTR), as a process waiting on a slow device in state D is
// not: a stop request is seen only when the I/O call returns. Other files and other calls pass
// straight through to libc. This is the stand-in for hardware the test machine lacks; the
// process under test is the real gpuplan binary with the real SQLite library.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

const char* SlowPath() {
  static const char* path = std::getenv("GPUPLAN_SLOW_DISK_PATH");
  return path != nullptr && path[0] != '\0' ? path : nullptr;
}

// A delay in milliseconds from the environment: 0 when unset or outside 1..60000.
long Ms(const char* name) {
  const char* s = std::getenv(name);
  if (s == nullptr) {
    return 0L;
  }
  const long v = std::strtol(s, nullptr, 10);
  return v > 0 && v <= 60000 ? v : 0L;
}

long WriteMs() {
  static const long ms = Ms("GPUPLAN_SLOW_DISK_WRITE_MS");
  return ms;
}

long SyncMs() {
  static const long ms = Ms("GPUPLAN_SLOW_DISK_SYNC_MS");
  return ms;
}

// Whether fd is a regular file under the slow path; the check itself does not touch the disk.
bool IsSlow(int fd) {
  const char* want = SlowPath();
  if (want == nullptr || fd < 0) {
    return false;
  }
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[4096];
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) {
    return false;
  }
  target[n] = '\0';
  return std::strstr(target, want) != nullptr;
}

void Delay(int fd, long ms) {
  if (ms == 0 || !IsSlow(fd)) {
    return;
  }
  const int saved = errno;
  timespec left{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
  errno = saved;
}

template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

ssize_t write(int fd, const void* buf, size_t n) {
  static auto real = Next<ssize_t (*)(int, const void*, size_t)>("write");
  Delay(fd, WriteMs());
  return real(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  static auto real = Next<ssize_t (*)(int, const void*, size_t, off_t)>("pwrite");
  Delay(fd, WriteMs());
  return real(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void* buf, size_t n, off64_t off) {
  static auto real = Next<ssize_t (*)(int, const void*, size_t, off64_t)>("pwrite64");
  Delay(fd, WriteMs());
  return real(fd, buf, n, off);
}

int fsync(int fd) {
  static auto real = Next<int (*)(int)>("fsync");
  Delay(fd, SyncMs());
  return real(fd);
}

int fdatasync(int fd) {
  static auto real = Next<int (*)(int)>("fdatasync");
  Delay(fd, SyncMs());
  return real(fd);
}

}  // extern "C"
