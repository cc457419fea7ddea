#include "check/worker_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "core/stop_cleanup.h"

extern char** environ;

namespace gpuplan {
namespace {

using Clock = std::chrono::steady_clock;

struct Live {
  pid_t pid = -1;
  int out = -1;  // stdout pipe, read end
  int err = -1;  // stderr pipe, read end
  std::string out_buf;
  bool running = false;
  Clock::time_point started;
  std::optional<KillGroupOnStop> group;  // killed if gpuplan is stopped while it runs
};

void MakePipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe2");
  }
}

void CloseFd(int& fd) {
  if (fd >= 0) {
    close(fd);
    fd = -1;
  }
}

void Spawn(const WorkerCommand& cmd, Live& live, WorkerRun& run) {
  if (cmd.argv.empty()) {
    run.start_error = "no command";
    return;
  }
  int out[2];
  int err[2];
  MakePipe(out);
  MakePipe(err);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, err[1], STDERR_FILENO);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group (pgid = its pid), so a timeout kills it and everything it started.
  posix_spawnattr_setpgroup(&attr, 0);
  short flags = POSIX_SPAWN_SETPGROUP;
  // Default signal handling in the child even if we ignore some (SIGPIPE).
  sigset_t all;
  sigfillset(&all);
  posix_spawnattr_setsigdefault(&attr, &all);
  flags |= POSIX_SPAWN_SETSIGDEF;
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  flags |= POSIX_SPAWN_SETSIGMASK;
  posix_spawnattr_setflags(&attr, flags);

  std::vector<std::string> env_store;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env_store.emplace_back(*e);
  }
  for (const std::string& add : cmd.env) {
    const std::string key = add.substr(0, add.find('=') + 1);
    std::erase_if(env_store, [&key](const std::string& s) { return s.rfind(key, 0) == 0; });
    env_store.push_back(add);
  }
  std::vector<char*> envp;
  for (auto& s : env_store) {
    envp.push_back(s.data());
  }
  envp.push_back(nullptr);
  std::vector<std::string> argv_store = cmd.argv;
  std::vector<char*> argv;
  for (auto& s : argv_store) {
    argv.push_back(s.data());
  }
  argv.push_back(nullptr);

  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, &attr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(out[1]);
  close(err[1]);
  if (rc != 0) {
    close(out[0]);
    close(err[0]);
    run.start_error = "cannot start " + cmd.argv[0] + ": " + std::strerror(rc);
    return;
  }
  live.pid = pid;
  live.group.emplace(pid);
  live.out = out[0];
  live.err = err[0];
  live.running = true;
  live.started = Clock::now();
}

void TakeLine(std::string line, std::size_t index, WorkerRun& run, const WorkerRunOptions& opt) {
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  if (line.empty()) {
    return;
  }
  std::string why;
  if (auto parsed = ParseWorkerLine(line, &why)) {
    if (opt.on_line) {
      opt.on_line(index, *parsed);
    }
    run.lines.push_back(std::move(*parsed));
  } else {
    run.unreadable.push_back(line.substr(0, 200) + (line.size() > 200 ? "..." : "") + ": " + why);
  }
}

// Reads what is there; false at end of file.
bool Drain(int fd, std::string& buf) {
  char chunk[65536];
  const ssize_t n = read(fd, chunk, sizeof chunk);
  if (n > 0) {
    buf.append(chunk, static_cast<std::size_t>(n));
    return true;
  }
  return n < 0 && (errno == EINTR || errno == EAGAIN);
}

void SplitLines(Live& live, std::size_t index, WorkerRun& run, const WorkerRunOptions& opt, bool eof) {
  std::size_t pos = 0;
  for (std::size_t nl; (nl = live.out_buf.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    TakeLine(live.out_buf.substr(pos, nl - pos), index, run, opt);
  }
  live.out_buf.erase(0, pos);
  if (live.out_buf.size() > kMaxLineBytes) {
    run.unreadable.push_back(live.out_buf.substr(0, 200) + "...: a line longer than 1 MiB");
    live.out_buf.clear();
  }
  if (eof && !live.out_buf.empty()) {
    TakeLine(live.out_buf, index, run, opt);
    live.out_buf.clear();
  }
}

void Reap(Live& live, WorkerRun& run, int status) {
  if (WIFEXITED(status)) {
    run.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.signal = WTERMSIG(status);
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - live.started).count();
  live.running = false;
}

}  // namespace

bool WorkerRun::Finished(const std::string& test) const {
  for (const auto& l : lines) {
    if (l.type == WorkerLineType::kDone && (test.empty() || l.test == test)) {
      return true;
    }
  }
  return false;
}

std::string WorkerRun::CommandLine() const {
  std::string s;
  for (const auto& a : command.argv) {
    s += (s.empty() ? "" : " ") + a;
  }
  return s;
}

std::string SignalName(int sig) {
  switch (sig) {
    case SIGABRT: return "SIGABRT";
    case SIGSEGV: return "SIGSEGV";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGINT: return "SIGINT";
    case SIGPIPE: return "SIGPIPE";
    default: return "signal " + std::to_string(sig);
  }
}

std::string DefaultWorkerPath() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) {
    return "gpu-worker";
  }
  return (self.parent_path() / "gpu-worker").string();
}

std::vector<WorkerRun> RunWorkers(const std::vector<WorkerCommand>& commands, const WorkerRunOptions& opt) {
  std::vector<WorkerRun> runs(commands.size());
  std::vector<Live> live(commands.size());
  const auto start = Clock::now();
  for (std::size_t i = 0; i < commands.size(); ++i) {
    runs[i].command = commands[i];
    Spawn(commands[i], live[i], runs[i]);
  }
  const auto tick = std::chrono::duration<double>(opt.tick_s > 0 ? opt.tick_s : 1.0);
  auto next_tick = start + std::chrono::duration_cast<Clock::duration>(tick);
  for (;;) {
    bool any = false;
    for (std::size_t i = 0; i < live.size(); ++i) {
      Live& l = live[i];
      if (l.pid < 0) {
        continue;
      }
      if (l.running) {
        int status = 0;
        siginfo_t info{};
        // Exited? Asked without reaping it, so its process group id cannot have been reused
        // when whatever it started and left behind is killed with the group.
        if (waitid(P_PID, static_cast<id_t>(l.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == l.pid) {
          kill(-l.pid, SIGKILL);
          l.group.reset();  // before waitpid frees the group id for reuse
          waitpid(l.pid, &status, 0);
          Reap(l, runs[i], status);
        } else if (std::chrono::duration<double>(Clock::now() - l.started).count() >= opt.timeout_s) {
          runs[i].timed_out = true;
          kill(-l.pid, SIGKILL);
          kill(l.pid, SIGKILL);
          l.group.reset();  // before waitpid frees the group id for reuse
          waitpid(l.pid, &status, 0);
          Reap(l, runs[i], status);
        }
      }
      // Read until both pipes close; once the process is gone (its group killed), they close.
      if (l.out >= 0 || l.err >= 0) {
        any = true;
      } else if (l.running) {
        any = true;
      }
    }
    if (!any) {
      break;
    }
    std::vector<pollfd> fds;
    std::vector<std::pair<std::size_t, bool>> who;  // (worker, is stdout)
    for (std::size_t i = 0; i < live.size(); ++i) {
      if (live[i].out >= 0) {
        fds.push_back({live[i].out, POLLIN, 0});
        who.emplace_back(i, true);
      }
      if (live[i].err >= 0) {
        fds.push_back({live[i].err, POLLIN, 0});
        who.emplace_back(i, false);
      }
    }
    // Wake for the next tick, and at least every 50 ms to notice exits and timeouts.
    const auto now = Clock::now();
    double wait_s = std::chrono::duration<double>(next_tick - now).count();
    wait_s = std::max(0.0, std::min(wait_s, 0.05));
    const int n = poll(fds.data(), fds.size(), static_cast<int>(wait_s * 1000));
    if (n > 0) {
      for (std::size_t f = 0; f < fds.size(); ++f) {
        if (fds[f].revents == 0) {
          continue;
        }
        const auto [i, is_out] = who[f];
        Live& l = live[i];
        if (is_out) {
          const bool open = Drain(l.out, l.out_buf);
          SplitLines(l, i, runs[i], opt, !open);
          if (!open) {
            CloseFd(l.out);
          }
        } else {
          std::string buf;
          const bool open = Drain(l.err, buf);
          runs[i].stderr_tail += buf;
          if (runs[i].stderr_tail.size() > kStderrKeep) {
            runs[i].stderr_tail.erase(0, runs[i].stderr_tail.size() - kStderrKeep);
          }
          if (!open) {
            CloseFd(l.err);
          }
        }
      }
    }
    // A worker that exited (or was killed) but whose pipes a stray child still holds open: the
    // group was killed in Reap, so the pipes close shortly; a pipe still open a second later is
    // closed here.
    for (auto& l : live) {
      if (!l.running && l.pid >= 0 && (l.out >= 0 || l.err >= 0)) {
        if (std::chrono::duration<double>(Clock::now() - l.started).count() > opt.timeout_s + 1) {
          CloseFd(l.out);
          CloseFd(l.err);
        }
      }
    }
    if (Clock::now() >= next_tick) {
      if (opt.tick) {
        opt.tick(std::chrono::duration<double>(Clock::now() - start).count());
      }
      next_tick += std::chrono::duration_cast<Clock::duration>(tick);
      if (next_tick < Clock::now()) {
        next_tick = Clock::now() + std::chrono::duration_cast<Clock::duration>(tick);
      }
    }
  }
  for (std::size_t i = 0; i < live.size(); ++i) {
    if (live[i].pid >= 0 && runs[i].seconds == 0) {
      runs[i].seconds = std::chrono::duration<double>(Clock::now() - live[i].started).count();
    }
  }
  return runs;
}

ProcessRun RunProcess(const std::vector<std::string>& argv, const ProcessOptions& opt) {
  ProcessRun out;
  WorkerCommand cmd;
  cmd.argv = argv;
  WorkerRun run;
  Live l;
  Spawn(cmd, l, run);
  if (!run.start_error.empty()) {
    out.start_error = run.start_error;
    return out;
  }
  auto since = [&] { return std::chrono::duration<double>(Clock::now() - l.started).count(); };
  while (l.running || l.out >= 0 || l.err >= 0) {
    if (l.running) {
      int status = 0;
      siginfo_t info{};
      if (waitid(P_PID, static_cast<id_t>(l.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == l.pid) {
        kill(-l.pid, SIGKILL);  // whatever it left behind, before the group id can be reused
        l.group.reset();  // before waitpid frees the group id for reuse
        waitpid(l.pid, &status, 0);
        Reap(l, run, status);
      } else if (since() >= opt.timeout_s) {
        out.timed_out = true;
        kill(-l.pid, SIGKILL);
        kill(l.pid, SIGKILL);
        l.group.reset();  // before waitpid frees the group id for reuse
        waitpid(l.pid, &status, 0);
        Reap(l, run, status);
      } else if (opt.interrupt_s > 0 && !out.interrupted && since() >= opt.interrupt_s) {
        out.interrupted = true;
        kill(l.pid, SIGINT);
      }
    } else if (since() > run.seconds + 1) {  // a stray child holds the pipes: its group was killed
      CloseFd(l.out);
      CloseFd(l.err);
      break;
    }
    std::vector<pollfd> fds;
    if (l.out >= 0) {
      fds.push_back({l.out, POLLIN, 0});
    }
    if (l.err >= 0) {
      fds.push_back({l.err, POLLIN, 0});
    }
    if (fds.empty()) {
      continue;
    }
    if (poll(fds.data(), fds.size(), 50) <= 0) {
      continue;
    }
    for (const pollfd& f : fds) {
      if (f.revents == 0) {
        continue;
      }
      std::string buf;
      const bool open = Drain(f.fd, buf);
      if (f.fd == l.out) {
        const std::size_t room = opt.max_stdout - std::min(opt.max_stdout, out.out.size());
        out.out_truncated = out.out_truncated || buf.size() > room;
        out.out.append(buf, 0, std::min(room, buf.size()));
        if (!open) {
          CloseFd(l.out);
        }
      } else {
        out.stderr_tail += buf;
        if (out.stderr_tail.size() > kStderrKeep) {
          out.stderr_tail.erase(0, out.stderr_tail.size() - kStderrKeep);
        }
        if (!open) {
          CloseFd(l.err);
        }
      }
    }
  }
  out.exit_code = run.exit_code;
  out.signal = run.signal;
  out.seconds = run.seconds;
  return out;
}

}  // namespace gpuplan
