#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/stop_cleanup.h"

namespace gpuplan {

void WriteFileAtomically(const std::string& path, const std::string& text, const std::string& what) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const RemoveOnStop remove_if_stopped(tmp);
  const auto fail = [&](const char* step) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.c_str());
    throw EnvironmentError("cannot write " + what + " " + path + ": " + step + ": " + why);
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    fail("open");
  }
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      ::close(fd);
      fail("write");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync");
  }
  if (::close(fd) != 0) {
    fail("close");
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    fail("rename");
  }
}

void CheckFileWritable(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw EnvironmentError("cannot write " + what + " " + path + ": it is a folder");
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  const RemoveOnStop remove_if_stopped(tmp);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw EnvironmentError("cannot write " + what + " " + path + ": open: " + std::strerror(errno));
  }
  ::close(fd);
  ::unlink(tmp.c_str());
}

}  // namespace gpuplan
