#include "meter/processes.h"

#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <sstream>
#include <vector>

#include "read/file_text.h"

namespace gpuplan {

namespace {

constexpr std::size_t kContainerIdLength = 64;
constexpr std::size_t kPodUidLength = 36;  // 8-4-4-4-12
constexpr std::size_t kPasswdBufferBytes = 16384;
constexpr int kStatStartTimeField = 22;  // proc(5): starttime, clock ticks after boot

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A run of exactly 64 lowercase hex digits starting at `at` (not part of a longer run).
bool HexRunAt(const std::string& s, std::size_t at) {
  if (at + kContainerIdLength > s.size() || (at > 0 && IsHex(s[at - 1]))) {
    return false;
  }
  for (std::size_t i = at; i < at + kContainerIdLength; ++i) {
    if (!IsHex(s[i])) {
      return false;
    }
  }
  return at + kContainerIdLength == s.size() || !IsHex(s[at + kContainerIdLength]);
}

// The last 64-hex-digit run of a cgroup path: the container's id in every runtime's naming.
std::optional<std::string> ContainerIdOf(const std::string& path) {
  std::optional<std::string> found;
  for (std::size_t i = 0; i + kContainerIdLength <= path.size(); ++i) {
    if (HexRunAt(path, i)) {
      found = path.substr(i, kContainerIdLength);
      i += kContainerIdLength - 1;
    }
  }
  return found;
}

// "pod" followed by a UID, dashes (cgroupfs driver) or underscores (systemd driver).
std::optional<std::string> PodUidOf(const std::string& path) {
  if (path.find("kubepods") == std::string::npos) {
    return std::nullopt;
  }
  for (std::size_t at = path.find("pod"); at != std::string::npos; at = path.find("pod", at + 1)) {
    const std::size_t begin = at + 3;
    if (begin + kPodUidLength > path.size()) {
      break;
    }
    std::string uid = path.substr(begin, kPodUidLength);
    bool ok = true;
    for (std::size_t i = 0; i < uid.size() && ok; ++i) {
      if (i == 8 || i == 13 || i == 18 || i == 23) {
        ok = uid[i] == '-' || uid[i] == '_';
        uid[i] = '-';
      } else {
        ok = IsHex(uid[i]);
      }
    }
    if (ok) {
      return uid;
    }
  }
  return std::nullopt;
}

std::optional<std::string> SlurmJobOf(const std::string& path) {
  for (std::size_t at = path.find("/job_"); at != std::string::npos; at = path.find("/job_", at + 1)) {
    std::size_t end = at + 5;
    while (end < path.size() && std::isdigit(static_cast<unsigned char>(path[end])) != 0) {
      ++end;
    }
    if (end > at + 5 && (end == path.size() || path[end] == '/')) {
      return path.substr(at + 5, end - at - 5);
    }
  }
  return std::nullopt;
}

std::string UserName(unsigned uid) {
  struct passwd pw {};
  struct passwd* result = nullptr;
  std::vector<char> buffer(kPasswdBufferBytes);
  if (getpwuid_r(static_cast<uid_t>(uid), &pw, buffer.data(), buffer.size(), &result) == 0 && result != nullptr &&
      result->pw_name != nullptr) {
    return result->pw_name;
  }
  return std::to_string(uid);
}

std::optional<unsigned> RealUid(const std::string& status) {
  std::istringstream in(status);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) == 0) {
      std::istringstream fields(line.substr(4));
      unsigned uid = 0;
      if (fields >> uid) {
        return uid;
      }
    }
  }
  return std::nullopt;
}

std::optional<uint64_t> StartTime(const std::string& stat) {
  // The command (field 2) is in parentheses and may hold spaces: count from the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) {
    return std::nullopt;
  }
  std::istringstream in(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= kStatStartTimeField; ++i) {
    if (!(in >> field)) {
      return std::nullopt;
    }
  }
  try {
    return std::stoull(field);
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

CgroupIdentity ParseCgroup(const std::string& text) {
  CgroupIdentity id;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    // hierarchy-ID:controller-list:path; the path may itself contain ':' (cri-containerd:ID).
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) {
      continue;
    }
    const std::string path = line.substr(second + 1);
    if (!id.container_id) {
      id.container_id = ContainerIdOf(path);
    }
    if (!id.pod_uid) {
      id.pod_uid = PodUidOf(path);
    }
    if (!id.slurm_job_id) {
      id.slurm_job_id = SlurmJobOf(path);
    }
  }
  return id;
}

std::optional<std::string> EnvironValue(const std::string& environ, const std::string& name) {
  const std::string prefix = name + "=";
  std::size_t at = 0;
  while (at < environ.size()) {
    std::size_t end = environ.find('\0', at);
    if (end == std::string::npos) {
      end = environ.size();
    }
    if (environ.compare(at, prefix.size(), prefix) == 0) {
      return environ.substr(at + prefix.size(), end - at - prefix.size());
    }
    at = end + 1;
  }
  return std::nullopt;
}

ProcessIdentity ReadProcessIdentity(int pid, const std::string& proc_root) {
  ProcessIdentity p;
  p.pid = pid;
  const std::string dir = proc_root + "/" + std::to_string(pid) + "/";
  if (const auto status = TryReadFileText(dir + "status")) {
    if (const auto uid = RealUid(*status)) {
      p.user = UserName(*uid);
    }
  }
  if (const auto cmdline = TryReadFileText(dir + "cmdline"); cmdline && !cmdline->empty()) {
    std::string command = *cmdline;
    while (!command.empty() && command.back() == '\0') {
      command.pop_back();
    }
    for (char& c : command) {
      if (c == '\0') {
        c = ' ';
      }
    }
    p.command = command;
  } else if (auto comm = TryReadFileText(dir + "comm")) {
    while (!comm->empty() && (comm->back() == '\n' || comm->back() == '\0')) {
      comm->pop_back();
    }
    if (!comm->empty()) {
      p.command = "[" + *comm + "]";
    }
  }
  if (const auto cgroup = TryReadFileText(dir + "cgroup")) {
    const CgroupIdentity c = ParseCgroup(*cgroup);
    p.container_id = c.container_id;
    p.pod_uid = c.pod_uid;
    p.slurm_job_id = c.slurm_job_id;
  }
  if (!p.slurm_job_id) {
    if (const auto environ = TryReadFileText(dir + "environ")) {  // readable for our own user or root
      p.slurm_job_id = EnvironValue(*environ, "SLURM_JOB_ID");
    }
  }
  return p;
}

const ProcessIdentity& ProcessIdentityCache::Lookup(int pid) {
  const auto stat = TryReadFileText(proc_root_ + "/" + std::to_string(pid) + "/stat");
  const std::optional<uint64_t> start = stat ? StartTime(*stat) : std::nullopt;
  auto it = entries_.find(pid);
  if (it != entries_.end() && it->second.start_time == start && start.has_value()) {
    it->second.used = true;
    return it->second.identity;
  }
  ++reads_;
  Entry e;
  e.start_time = start;
  e.identity = ReadProcessIdentity(pid, proc_root_);
  auto [pos, inserted] = entries_.insert_or_assign(pid, std::move(e));
  (void)inserted;
  return pos->second.identity;
}

void ProcessIdentityCache::Sweep() {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (!it->second.used) {
      it = entries_.erase(it);
    } else {
      it->second.used = false;
      ++it;
    }
  }
}

}  // namespace gpuplan
