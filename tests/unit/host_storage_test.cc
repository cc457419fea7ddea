// Host and storage tests of gpuplan check (src/check/host.h, storage.h): parsing recorded /proc
// files (tests/fixtures/host), verdicts on hand-made measurements with hand-computed numbers,
// and the storage reads on a real temporary folder.
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "check/host.h"
#include "check/storage.h"
#include "core/error.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

std::string Read(const std::string& rel) {
  std::ifstream in(test::Fixture(rel));
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A copy: callers pass temporaries (Find(JudgeStorage(...), ...)).
CheckResult Find(const std::vector<CheckResult>& v, const std::string& name) {
  for (const auto& r : v) {
    if (r.name == name) {
      return r;
    }
  }
  throw std::runtime_error("no result " + name);
}

TEST(HostInfo, TheCiVirtualMachine) {
  HostTexts t;
  t.cpuinfo = Read("host/vm-2core.cpuinfo");
  t.meminfo = Read("host/vm-2core.meminfo");
  t.os_release = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
  t.hostname = "ci-vm\n";
  const HostInfo h = ParseHostInfo(t);
  EXPECT_EQ(h.cpu_model, "AMD EPYC");
  EXPECT_EQ(h.cpu_threads, 2);
  EXPECT_EQ(h.cpu_cores, 2);  // core id 0 and 1 on physical id 0
  EXPECT_EQ(h.cpu_sockets, 1);
  EXPECT_EQ(h.virtual_machine, true);
  EXPECT_EQ(h.memory_bytes, 24683548ull * 1024);  // MemTotal in KiB
  EXPECT_EQ(h.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(h.hostname, "ci-vm");
}

TEST(HostInfo, TwoSocketsWithHyperthreads) {
  HostTexts t;
  t.cpuinfo = Read("host/two-socket-ht.cpuinfo");
  const HostInfo h = ParseHostInfo(t);
  EXPECT_EQ(h.cpu_threads, 8);
  EXPECT_EQ(h.cpu_cores, 4);  // (physical id, core id) pairs: (0,0) (0,1) (1,0) (1,1)
  EXPECT_EQ(h.cpu_sockets, 2);
  EXPECT_EQ(h.virtual_machine, false);
  EXPECT_FALSE(h.memory_bytes.has_value());
  EXPECT_TRUE(h.not_measured.count("memory"));
}

TEST(HostInfo, ThisMachineReads) {
  const HostInfo h = ReadHostInfo();
  ASSERT_TRUE(h.cpu_threads.has_value());
  EXPECT_EQ(*h.cpu_threads, static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  ASSERT_TRUE(h.memory_bytes.has_value());
  EXPECT_EQ(*h.memory_bytes, static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)));
}

TEST(CpuSteal, FromTwoReadings) {
  const CpuTimes a = ParseCpuTimes(Read("host/steal-before.stat"));
  const CpuTimes b = ParseCpuTimes(Read("host/steal-after.stat"));
  ASSERT_TRUE(a.valid && b.valid);
  EXPECT_EQ(a.Total(), 10000u);
  EXPECT_EQ(b.Total(), 12000u);
  ASSERT_TRUE(StealFraction(a, b).has_value());
  EXPECT_DOUBLE_EQ(*StealFraction(a, b), 700.0 / 2000.0);
  EXPECT_FALSE(StealFraction(b, a).has_value());  // time went backwards
  EXPECT_FALSE(StealFraction(CpuTimes{}, b).has_value());
  EXPECT_TRUE(ParseCpuTimes(Read("host/vm-2core.stat")).valid);
}

TEST(JudgeHost, StealCoresRamAndPromise) {
  HostInfo h;
  h.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  h.cpu_cores = 4;
  h.cpu_threads = 8;
  h.memory_bytes = 64ull << 30;
  CheckThresholds th;
  CpuThroughput tp{4, 100, 200, 1};  // 2x with 4 threads on 4 cores: below 0.8 x 4
  const uint64_t gpu_mem = 8 * 80ull * 1000 * 1000 * 1000;
  auto r = JudgeHost(h, 8, gpu_mem, 16, 0.35, tp, th);
  EXPECT_EQ(Find(r, "cpu_steal").status, CheckStatus::kFail);
  EXPECT_DOUBLE_EQ(*Find(r, "cpu_steal").measured, 35.0);
  EXPECT_EQ(Find(r, "cpu_cores_promised").status, CheckStatus::kFail);  // 8 logical CPUs, 16 promised
  EXPECT_EQ(Find(r, "cpu_cores_per_gpu").status, CheckStatus::kWarn);   // 4 / 8 = 0.5 < 4
  EXPECT_DOUBLE_EQ(*Find(r, "cpu_cores_per_gpu").measured, 0.5);
  EXPECT_EQ(Find(r, "ram_per_gpu_memory").status, CheckStatus::kWarn);  // 68.7 GB < 640 GB
  EXPECT_NEAR(*Find(r, "ram_per_gpu_memory").measured, 68719476736.0 / 640e9, 1e-12);
  EXPECT_EQ(Find(r, "cpu_throughput").status, CheckStatus::kWarn);
  EXPECT_DOUBLE_EQ(*Find(r, "cpu_throughput").expected, 0.8 * 4);

  auto ok = JudgeHost(h, 1, 24ull << 30, std::nullopt, 0.01, CpuThroughput{4, 100, 390, 1}, th);
  EXPECT_EQ(Find(ok, "cpu_steal").status, CheckStatus::kPass);
  EXPECT_EQ(Find(ok, "cpu_cores_per_gpu").status, CheckStatus::kPass);
  EXPECT_EQ(Find(ok, "ram_per_gpu_memory").status, CheckStatus::kPass);
  EXPECT_EQ(Find(ok, "cpu_throughput").status, CheckStatus::kPass);
  EXPECT_THROW(Find(ok, "cpu_cores_promised"), std::runtime_error);  // nothing promised, nothing judged

  EXPECT_EQ(Find(JudgeHost(h, 1, 1, {}, 0.05, tp, th), "cpu_steal").status, CheckStatus::kWarn);  // 2% <= 5% < 10%
  auto no_gpu = JudgeHost(h, 0, 0, {}, std::nullopt, tp, th);
  EXPECT_EQ(Find(no_gpu, "cpu_cores_per_gpu").status, CheckStatus::kSkip);
  EXPECT_EQ(Find(no_gpu, "cpu_steal").status, CheckStatus::kSkip);
}

TEST(CpuThroughput, MeasuresBothRates) {
  // The rates themselves depend on the machine and its load; only their presence is asserted
  // here (the speed-up is judged by JudgeHost on hand-made numbers above).
  const CpuThroughput tp = MeasureCpuThroughput(2, 0.2);
  EXPECT_EQ(tp.threads, 2);
  EXPECT_GT(tp.single_rate, 0);
  EXPECT_GT(tp.parallel_rate, 0);
  EXPECT_GE(tp.seconds, 0.2);
}

TEST(CpuThroughput, ReportsProgress) {
  std::vector<double> seen;
  MeasureCpuThroughput(1, 0.6, [&](double f) { seen.push_back(f); });
  ASSERT_GE(seen.size(), 4u);  // about every 0.1 s over 0.6 s
  for (std::size_t i = 1; i < seen.size(); ++i) {
    EXPECT_GE(seen[i], seen[i - 1]);
  }
  EXPECT_LE(seen.back(), 1.0);
  EXPECT_GE(seen.back(), 0.9);
}

TEST(Storage, RandomBlockFollowsTheSample) {
  EXPECT_EQ(RandomBlockFor(std::nullopt), 128u << 10);
  EXPECT_EQ(RandomBlockFor(StorageNeed{100, 8000}), 8192u);  // 8000 rounded up to 4 KiB pages
  EXPECT_EQ(RandomBlockFor(StorageNeed{100, 100}), 4096u);
  EXPECT_EQ(RandomBlockFor(StorageNeed{1, 10e6}), 4u << 20);  // capped at 4 MiB
}

TEST(Storage, WritesLikeACheckpointSaveAndLeavesNothingBehind) {
  // A real folder: 4 threads write 4 x 4 MiB, synced; the rate is measured (its size depends on
  // the machine) and every file gpuplan wrote is gone afterwards.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("gpuplan-write-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  StorageRequest req;
  req.dir = dir.string();
  req.seconds = 2;
  req.threads = 4;
  req.test_file_bytes = 16ull << 20;
  const StorageResult s = MeasureStorage(req);
  ASSERT_TRUE(s.write_bytes_per_s.has_value()) << s.write_not_measured << s.not_measured;
  EXPECT_GT(*s.write_bytes_per_s, 0);
  EXPECT_EQ(s.write_bytes, 16ull << 20);  // 4 threads x 4 MiB, one block each
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  const auto judged = JudgeStorage(s, std::nullopt, std::nullopt, CheckThresholds{});
  const CheckResult w = Find(judged, "storage_seq_write");
  EXPECT_EQ(w.status, CheckStatus::kPass);
  EXPECT_NEAR(*w.measured, *s.write_bytes_per_s / 1e9, 1e-12);
  std::filesystem::remove_all(dir);
}

TEST(Storage, VerdictAgainstTraining) {
  StorageResult s;
  s.dir = "/data";
  s.read_from = "3 dataset files (1.0 GiB)";
  s.cache_bypass = "O_DIRECT";
  s.bypassed = true;
  s.threads = 4;
  s.random_block = 8192;
  s.sequential_bytes_per_s = 2.0e9;
  s.random_bytes_per_s = 0.4e9;
  s.free_bytes = 100'000'000'000ull;
  CheckThresholds th;
  // 150,000 samples/s x 8,000 bytes = 1.2 GB/s, read at random: 0.4 / 1.2 = 1/3 delivered.
  auto r = JudgeStorage(s, StorageNeed{150000, 8000}, 40'000'000'000ull, th);
  const CheckResult& feed = Find(r, "storage_feeds_training");
  EXPECT_EQ(feed.status, CheckStatus::kFail);
  EXPECT_DOUBLE_EQ(*feed.measured, 0.4);
  EXPECT_DOUBLE_EQ(*feed.expected, 1.2);
  EXPECT_NE(feed.evidence.find("storage delivers 0.4 GB/s"), std::string::npos) << feed.evidence;
  EXPECT_NE(feed.evidence.find("training needs 1.2 GB/s"), std::string::npos) << feed.evidence;
  EXPECT_NE(feed.evidence.find("the GPUs would wait 67% of the time"), std::string::npos) << feed.evidence;
  // Free space: 3 checkpoints of 40 GB = 120 GB > 100 GB free.
  EXPECT_EQ(Find(r, "disk_free").status, CheckStatus::kWarn);
  EXPECT_DOUBLE_EQ(*Find(r, "disk_free").expected, 120.0);
  EXPECT_EQ(Find(r, "storage_seq_read").status, CheckStatus::kPass);
  EXPECT_DOUBLE_EQ(*Find(r, "storage_seq_read").measured, 2.0);

  // 0.4 GB/s against 0.3 GB/s: enough, with 1.33x headroom (< 1.5): WARN.
  EXPECT_EQ(Find(JudgeStorage(s, StorageNeed{37500, 8000}, {}, th), "storage_feeds_training").status, CheckStatus::kWarn);
  // 0.4 GB/s against 0.2 GB/s: 2x: PASS.
  EXPECT_EQ(Find(JudgeStorage(s, StorageNeed{25000, 8000}, {}, th), "storage_feeds_training").status, CheckStatus::kPass);
  // Samples of 4 MiB stream: the sequential 2.0 GB/s against 100 x 4 MiB = 0.419 GB/s: PASS.
  const auto big = Find(JudgeStorage(s, StorageNeed{100, 4 << 20}, {}, th), "storage_feeds_training");
  EXPECT_EQ(big.status, CheckStatus::kPass);
  EXPECT_DOUBLE_EQ(*big.measured, 2.0);
  // No need given: measured, not judged.
  EXPECT_EQ(Find(JudgeStorage(s, std::nullopt, {}, th), "storage_feeds_training").status, CheckStatus::kSkip);
  EXPECT_EQ(Find(JudgeStorage(s, std::nullopt, {}, th), "disk_free").status, CheckStatus::kPass);
}

class StorageFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    // Under the build tree (a real disk; /tmp may be tmpfs, which refuses O_DIRECT).
    dir_ = fs::current_path() / ("storage-test-" + std::to_string(::getpid()) + "-" +
                                 ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(StorageFolder, WritesReadsAndRemovesATestFile) {
  StorageRequest q;
  q.dir = dir_.string();
  q.seconds = 0.4;
  q.threads = 2;
  q.test_file_bytes = 8u << 20;
  const StorageResult s = MeasureStorage(q);
  EXPECT_TRUE(s.not_measured.empty()) << s.not_measured;
  EXPECT_GT(s.sequential_bytes_per_s, 0);
  EXPECT_GT(s.random_bytes_per_s, 0);
  EXPECT_GT(s.random_iops, 0);
  EXPECT_EQ(s.bytes_in_files, 8u << 20);
  EXPECT_NE(s.read_from.find("test file"), std::string::npos);
  EXPECT_TRUE(s.free_bytes.has_value());
  EXPECT_TRUE(fs::is_empty(dir_)) << "the test file was not removed";
}

TEST_F(StorageFolder, ReadsTheDatasetFilesThere) {
  for (int i = 0; i < 3; ++i) {
    std::ofstream f(dir_ / ("shard-" + std::to_string(i) + ".bin"), std::ios::binary);
    const std::string block(1u << 20, static_cast<char>('a' + i));
    f << block << block;  // 2 MiB each
  }
  StorageRequest q;
  q.dir = dir_.string();
  q.seconds = 0.2;
  q.threads = 2;
  q.min_dataset_bytes = 4u << 20;
  const StorageResult s = MeasureStorage(q);
  EXPECT_TRUE(s.not_measured.empty()) << s.not_measured;
  EXPECT_EQ(s.bytes_in_files, 6u << 20);
  EXPECT_EQ(s.read_from.rfind("3 dataset files", 0), 0u) << s.read_from;
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3);  // nothing added or removed
}

TEST(Storage, MissingFolderNamesTheFlag) {
  StorageRequest q;
  q.dir = "/nonexistent/gpuplan-dataset";
  try {
    MeasureStorage(q);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--data");
    EXPECT_NE(e.message().find("/nonexistent/gpuplan-dataset"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpuplan
