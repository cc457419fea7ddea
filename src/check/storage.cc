#include "check/storage.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "core/error.h"
#include "core/stop_cleanup.h"
#include "check/cells.h"
#include "check/verdict.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;
constexpr uint64_t kAlign = 4096;  // O_DIRECT alignment of offsets, sizes and buffers (open(2))

struct OpenFile {
  std::string path;
  uint64_t size = 0;
  int fd = -1;
  bool direct = false;
};

struct AlignedBuffer {
  explicit AlignedBuffer(uint64_t bytes) : data(static_cast<char*>(std::aligned_alloc(kAlign, bytes))) {}
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  char* data;
};

// A test file gpuplan writes (too little data in the folder; the write test); removed on every
// path, a stop by SIGINT or SIGTERM included (core/stop_cleanup.h).
struct TestFile {
  std::string path;
  std::optional<RemoveOnStop> on_stop;
  void Set(std::string p) {
    path = std::move(p);
    on_stop.emplace(path);
  }
  ~TestFile() {
    if (!path.empty()) {
      ::unlink(path.c_str());
    }
  }
};

std::string Gib(uint64_t b) { return fmt::format("{:.1f} GiB", static_cast<double>(b) / (1ull << 30)); }

// Writes `bytes` of pseudo-random data (not zeros: compressing file systems would cheat) and
// syncs it to the device. Returns an error text, empty on success.
std::string WriteTestFile(const std::string& path, uint64_t bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    return fmt::format("cannot create {}: {}", path, std::strerror(errno));
  }
  std::vector<uint64_t> block((4ull << 20) / sizeof(uint64_t));
  std::mt19937_64 rng(20261201);
  uint64_t written = 0;
  std::string err;
  while (written < bytes && err.empty()) {
    for (auto& w : block) {
      w = rng();
    }
    const uint64_t n = std::min<uint64_t>(bytes - written, block.size() * sizeof(uint64_t));
    const ssize_t r = ::write(fd, block.data(), n);
    if (r <= 0) {
      err = fmt::format("cannot write {}: {}", path, r < 0 ? std::strerror(errno) : "no space");
    } else {
      written += static_cast<uint64_t>(r);
    }
  }
  if (err.empty() && ::fsync(fd) != 0) {
    err = fmt::format("cannot sync {}: {}", path, std::strerror(errno));
  }
  ::close(fd);
  return err;
}

struct Phase {
  double bytes_per_s = 0;
  double ops_per_s = 0;
  std::string error;
};

// Reads one range and, when O_DIRECT was refused, drops it from the page cache again so the
// next pass reads the device. Returns bytes read, -1 on error.
ssize_t ReadRange(const OpenFile& f, char* buf, uint64_t len, uint64_t off) {
  const ssize_t n = ::pread(f.fd, buf, len, static_cast<off_t>(off));
  if (n > 0 && !f.direct) {
    ::posix_fadvise(f.fd, static_cast<off_t>(off), n, POSIX_FADV_DONTNEED);
  }
  return n;
}

template <typename NextRange>
Phase RunPhase(const std::vector<OpenFile>& files, int threads, uint64_t block, double seconds, NextRange next,
               const std::function<void(double)>& progress) {
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> ops{0};
  std::mutex mu;
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      AlignedBuffer buf(block);
      std::mt19937_64 rng(static_cast<uint64_t>(t) * 7919 + 1);
      while (std::chrono::steady_clock::now() < deadline) {
        const auto [file, off] = next(rng);
        const ssize_t n = ReadRange(files[file], buf.data, block, off);
        if (n < 0) {
          std::lock_guard<std::mutex> lock(mu);
          if (error.empty()) {
            error = fmt::format("read error on {}: {}", files[file].path, std::strerror(errno));
          }
          return;
        }
        bytes += static_cast<uint64_t>(n);
        ++ops;
      }
    });
  }
  // The calling thread reports progress while the readers read.
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::min(std::chrono::steady_clock::duration(std::chrono::milliseconds(100)),
                                         deadline - std::chrono::steady_clock::now()));
    if (progress) {
      progress(std::min(1.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / seconds));
    }
  }
  for (auto& th : pool) {
    th.join();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  Phase p;
  p.bytes_per_s = static_cast<double>(bytes.load()) / elapsed;
  p.ops_per_s = static_cast<double>(ops.load()) / elapsed;
  p.error = error;
  return p;
}

// Sequential writes as a checkpoint save makes them: each thread writes its own new file in
// `block` pieces of pseudo-random data until `bytes_per_thread` or the deadline, opened with
// O_DIRECT where the file system allows it, then fsyncs it; the rate is all bytes written over
// the time to the last fsync. The files are removed on every path.
void MeasureWrites(const std::string& dir, int threads, uint64_t bytes_per_thread, uint64_t block, double seconds,
                   StorageResult& res) {
  std::vector<TestFile> files(static_cast<std::size_t>(threads));
  std::atomic<uint64_t> written{0};
  std::atomic<int> refused{0};
  std::mutex mu;
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  const auto deadline =
      t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    files[static_cast<std::size_t>(t)].Set((fs::path(dir) / fmt::format(".gpuplan-write-test-{}-{}", ::getpid(), t)).string());
    pool.emplace_back([&, t] {
      const std::string& path = files[static_cast<std::size_t>(t)].path;
      const auto fail = [&](const std::string& what) {
        std::lock_guard<std::mutex> lock(mu);
        if (error.empty()) {
          error = fmt::format("{} {}: {}", what, path, std::strerror(errno));
        }
      };
      int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_DIRECT, 0600);
      if (fd < 0 && errno == EINVAL) {  // O_DIRECT refused (tmpfs, some FUSE)
        ++refused;
        fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
      }
      if (fd < 0) {
        fail("cannot create");
        return;
      }
      AlignedBuffer buf(block);
      std::mt19937_64 rng(20261204 + static_cast<uint64_t>(t));
      uint64_t done = 0;
      while (done < bytes_per_thread && std::chrono::steady_clock::now() < deadline) {
        auto* words = reinterpret_cast<uint64_t*>(buf.data);
        for (uint64_t i = 0; i < block / sizeof(uint64_t); ++i) {
          words[i] = rng();
        }
        const ssize_t n = ::pwrite(fd, buf.data, block, static_cast<off_t>(done));
        if (n <= 0) {
          fail("cannot write");
          break;
        }
        done += static_cast<uint64_t>(n);
        written += static_cast<uint64_t>(n);
      }
      if (::fsync(fd) != 0) {
        fail("cannot sync");
      }
      ::close(fd);
    });
  }
  for (auto& th : pool) {
    th.join();
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  res.write_bytes = written.load();
  if (!error.empty()) {
    res.write_not_measured = error;
    return;
  }
  res.write_bytes_per_s = static_cast<double>(res.write_bytes) / elapsed;
  res.write_how = refused == 0 ? "O_DIRECT"
                               : fmt::format("O_DIRECT refused on {} of {} files: through the page cache, timed "
                                             "to fsync", refused.load(), threads);
}

}  // namespace

uint64_t RandomBlockFor(const std::optional<StorageNeed>& need) {
  if (!need || !(need->bytes_per_sample > 0)) {
    return 128ull << 10;
  }
  const double b = std::ceil(need->bytes_per_sample / static_cast<double>(kAlign)) * static_cast<double>(kAlign);
  return static_cast<uint64_t>(std::clamp(b, static_cast<double>(kAlign), static_cast<double>(4ull << 20)));
}

StorageResult MeasureStorage(const StorageRequest& req) {
  std::error_code ec;
  if (!fs::is_directory(req.dir, ec)) {
    throw InputError(fs::exists(req.dir, ec) ? "not a folder: " + req.dir : "no such folder: " + req.dir, "", 0, "--data");
  }
  const auto t0 = std::chrono::steady_clock::now();
  StorageResult res;
  res.dir = req.dir;
  res.threads = std::max(1, req.threads);
  res.random_block = std::max<uint64_t>(kAlign, req.random_block / kAlign * kAlign);
  const uint64_t seq_block = std::max<uint64_t>(kAlign, req.sequential_block / kAlign * kAlign);
  struct statvfs sv {};
  if (::statvfs(req.dir.c_str(), &sv) == 0) {
    res.free_bytes = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
  }

  // The dataset files, up to 4096 of them.
  std::vector<OpenFile> files;
  for (auto it = fs::recursive_directory_iterator(req.dir, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator() && files.size() < 4096; it.increment(ec)) {
    std::error_code e2;
    if (it->is_regular_file(e2) && it->file_size(e2) >= kAlign) {
      files.push_back({it->path().string(), it->file_size(e2), -1, false});
    }
  }
  uint64_t total = 0;
  for (const auto& f : files) {
    total += f.size;
  }
  TestFile test_file;
  if (total >= req.min_dataset_bytes) {
    res.read_from = fmt::format("{} dataset file{} ({})", files.size(), files.size() == 1 ? "" : "s", Gib(total));
  } else {
    test_file.Set((fs::path(req.dir) / fmt::format(".gpuplan-storage-test-{}", ::getpid())).string());
    const uint64_t bytes = std::max<uint64_t>(kAlign, req.test_file_bytes / kAlign * kAlign);
    if (std::string err = WriteTestFile(test_file.path, bytes); !err.empty()) {
      ::unlink(test_file.path.c_str());
      test_file.path.clear();
      if (files.empty()) {
        res.not_measured = "the folder holds no data to read and a test file could not be written: " + err;
        res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return res;
      }
      res.read_from = fmt::format("{} dataset file{} ({}; too little to be sure, and no test file: {})", files.size(),
                                  files.size() == 1 ? "" : "s", Gib(total), err);
    } else {
      files = {{test_file.path, bytes, -1, false}};
      total = bytes;
      res.read_from = fmt::format("a {} test file gpuplan wrote and then removed (too little data in the folder)", Gib(bytes));
    }
  }

  // Open every file with O_DIRECT; where the file system refuses it (tmpfs, some FUSE), read
  // normally and drop each range from the page cache after reading it.
  int refused = 0;
  std::string refused_why;
  for (auto& f : files) {
    f.fd = ::open(f.path.c_str(), O_RDONLY | O_DIRECT);
    f.direct = f.fd >= 0;
    if (f.fd < 0) {
      refused_why = std::strerror(errno);
      f.fd = ::open(f.path.c_str(), O_RDONLY);
      if (f.fd >= 0) {
        ++refused;
        ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
      }
    }
  }
  std::erase_if(files, [&](const OpenFile& f) {
    if (f.fd < 0) {
      refused_why = "cannot open " + f.path;
    }
    return f.fd < 0;
  });
  struct Closer {
    std::vector<OpenFile>& f;
    ~Closer() {
      for (auto& x : f) {
        ::close(x.fd);
      }
    }
  } closer{files};
  if (files.empty()) {
    res.not_measured = "no file in the folder could be opened: " + refused_why;
    return res;
  }
  res.bytes_in_files = total;
  res.bypassed = refused == 0;
  res.cache_bypass = refused == 0 ? "O_DIRECT (page cache bypassed)"
                                  : fmt::format("O_DIRECT refused on {} of {} files ({}): read with the page cache "
                                                "dropped after every block (posix_fadvise DONTNEED)",
                                                refused, files.size(), refused_why);

  // Sequential: the threads take consecutive blocks of the files in turn.
  std::vector<std::pair<std::size_t, uint64_t>> chunks;
  for (std::size_t i = 0; i < files.size() && chunks.size() < (1u << 22); ++i) {
    for (uint64_t off = 0; off < files[i].size; off += seq_block) {
      chunks.emplace_back(i, off);
    }
  }
  std::atomic<uint64_t> cursor{0};
  const Phase seq = RunPhase(files, res.threads, seq_block, req.seconds / 2, [&](std::mt19937_64&) {
    return chunks[cursor.fetch_add(1) % chunks.size()];
  }, [&](double f) { if (req.progress) req.progress(f / 2); });
  // Random: a block at a uniformly random aligned place of the data.
  std::vector<uint64_t> starts;
  uint64_t acc = 0;
  for (const auto& f : files) {
    starts.push_back(acc);
    acc += f.size;
  }
  const uint64_t rblock = res.random_block;
  const Phase rnd = RunPhase(files, res.threads, rblock, req.seconds / 2, [&](std::mt19937_64& rng) {
    const uint64_t at = std::uniform_int_distribution<uint64_t>(0, acc - 1)(rng);
    const std::size_t i = static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin() - 1);
    const uint64_t room = files[i].size > rblock ? files[i].size - rblock : 0;
    const uint64_t off = std::min(at - starts[i], room) / kAlign * kAlign;
    return std::pair<std::size_t, uint64_t>(i, off);
  }, [&](double f) { if (req.progress) req.progress(0.5 + f / 2); });
  res.sequential_bytes_per_s = seq.bytes_per_s;
  res.random_bytes_per_s = rnd.bytes_per_s;
  res.random_iops = rnd.ops_per_s;
  if (!seq.error.empty() || !rnd.error.empty()) {
    res.not_measured = !seq.error.empty() ? seq.error : rnd.error;
  }
  MeasureWrites(req.dir, res.threads,
                std::max<uint64_t>(seq_block, req.test_file_bytes / static_cast<uint64_t>(res.threads) / seq_block * seq_block),
                seq_block, req.seconds / 2, res);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

namespace {
// The figures of the storage verdicts: 3 significant digits (6 for settings), never an exponent
// for an ordinary magnitude (check_cells::Number).
std::string N3(double v) { return check_cells::Number(v, 3); }
std::string N6(double v) { return check_cells::Number(v, 6); }
}  // namespace

std::vector<CheckResult> JudgeStorage(const StorageResult& s, const std::optional<StorageNeed>& need,
                                      const std::optional<uint64_t>& checkpoint_bytes, const CheckThresholds& th) {
  std::vector<CheckResult> out;
  const std::string dflt = "default (docs/check.md §5)";
  const std::string how = fmt::format("{} threads reading {} in {}; {}", s.threads, s.read_from, s.dir, s.cache_bypass);
  auto base = [&](const std::string& name) {
    CheckResult r = Make(name, -1, {});
    r.unit = "GB/s";
    r.seconds = s.seconds / 2;
    return r;
  };
  const bool measured = s.not_measured.empty();
  {
    CheckResult r = base("storage_seq_read");
    if (!measured) {
      Skip(r, "not measured: " + s.not_measured);
    } else {
      Pass(r);
      r.measured = s.sequential_bytes_per_s / 1e9;
      r.evidence = "4 MiB blocks, " + how + " (judged against training in storage_feeds_training)";
    }
    out.push_back(r);
  }
  {
    CheckResult r = base("storage_random_read");
    if (!measured) {
      Skip(r, "not measured: " + s.not_measured);
    } else {
      Pass(r);
      r.measured = s.random_bytes_per_s / 1e9;
      r.evidence = fmt::format("{} KiB blocks at random places, {:.0f} reads/s, {} (judged against training in "
                               "storage_feeds_training)",
                               s.random_block / 1024, s.random_iops, how);
    }
    out.push_back(r);
  }
  {
    CheckResult r = base("storage_seq_write");
    if (!s.write_bytes_per_s) {
      Skip(r, "not measured: " + (s.write_not_measured.empty() ? s.not_measured : s.write_not_measured));
    } else {
      Pass(r);
      r.measured = *s.write_bytes_per_s / 1e9;
      r.evidence = fmt::format("{} threads each writing its own file in 4 MiB blocks to {} ({} MiB in all, {}), timed "
                               "to the last fsync: the pattern of a checkpoint save (fit --check-report takes it as "
                               "the save rate)",
                               s.threads, s.dir, s.write_bytes >> 20, s.write_how);
    }
    out.push_back(r);
  }
  {
    CheckResult r = base("storage_feeds_training");
    r.expectation_source = "the training rate given (--samples-per-second x --bytes-per-sample, or --fit)";
    if (!need || !(need->BytesPerSecond() > 0)) {
      Skip(r, "no training rate given: --samples-per-second and --bytes-per-sample, or --fit FILE");
    } else if (!measured) {
      Skip(r, "not measured: " + s.not_measured);
    } else {
      // Samples of 1 MiB and more are read as streams; smaller ones at random (a shuffled
      // dataset reads one sample at a time).
      const bool sequential = need->bytes_per_sample >= static_cast<double>(1u << 20);
      const double have = sequential ? s.sequential_bytes_per_s : s.random_bytes_per_s;
      const double want = need->BytesPerSecond();
      const double ratio = have / want;
      r.measured = have / 1e9;
      r.expected = want / 1e9;
      r.expected_text = fmt::format(">= {} GB/s (PASS from {}x headroom)", N3(want / 1e9), N6(th.storage_warn_fraction));
      Fraction(r, have, want, th.storage_warn_fraction, th.storage_fail_fraction);
      const std::string pattern = sequential ? "sequential" : fmt::format("random {} KiB", s.random_block / 1024);
      if (ratio < 1) {
        r.evidence = fmt::format(
            "storage delivers {} GB/s ({} reads), training needs {} GB/s ({} samples/s x {:.0f} bytes): "
            "the GPUs would wait {:.0f}% of the time",
            N3(have / 1e9), pattern, N3(want / 1e9), N6(need->samples_per_second), need->bytes_per_sample, (1 - ratio) * 100);
        r.advice = "copy the dataset to local NVMe, pack small samples into shards, or add data-loader workers";
      } else {
        r.evidence = fmt::format("storage delivers {} GB/s ({} reads), training needs {} GB/s: {:.1f}x headroom",
                                 N3(have / 1e9), pattern, N3(want / 1e9), ratio);
        if (r.status == CheckStatus::kWarn) {
          r.advice = "little headroom: other jobs on the same storage or a checkpoint write will make the GPUs wait";
        }
      }
      if (!s.bypassed) {
        r.evidence += " (" + s.cache_bypass + ")";
      }
    }
    out.push_back(r);
  }
  {
    CheckResult r = Make("disk_free", -1, {});
    r.unit = "GB";
    if (!s.free_bytes) {
      Skip(r, "not measured: statvfs failed on " + s.dir);
    } else {
      r.measured = static_cast<double>(*s.free_bytes) / 1e9;
      if (checkpoint_bytes && *checkpoint_bytes > 0) {
        const double want = th.disk_free_checkpoints * static_cast<double>(*checkpoint_bytes);
        r.expected = want / 1e9;
        r.expected_text = fmt::format(">= {} checkpoints of {} GB", N6(th.disk_free_checkpoints),
                                      N3(static_cast<double>(*checkpoint_bytes) / 1e9));
        r.expectation_source = dflt;
        AtLeast(r, static_cast<double>(*s.free_bytes), want, CheckStatus::kWarn,
                "a full disk kills the run at the next checkpoint: ask for more disk or keep fewer checkpoints");
        r.evidence = fmt::format("{} GB free on the file system of {}; one checkpoint of the fit is {} GB",
                                 N3(static_cast<double>(*s.free_bytes) / 1e9), s.dir,
                                 N3(static_cast<double>(*checkpoint_bytes) / 1e9));
      } else {
        Pass(r);
        r.evidence = fmt::format("{} GB free on the file system of {} (no checkpoint size to hold it to: give --fit)",
                                 N3(static_cast<double>(*s.free_bytes) / 1e9), s.dir);
      }
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuplan
