// The storage test of `gpuplan check --data DIR` (docs/check.md §5): sequential large reads and
// random reads of the sample size that bypass the page cache, on several threads, judged
// against what training will consume; sequential writes as a checkpoint save makes them; and the
// free space against the checkpoint size.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/report.h"
#include "check/thresholds.h"

namespace gpuplan {

struct StorageRequest {
  std::string dir;               // the dataset folder (must exist)
  double seconds = 20;           // reads: half sequential, half random; writes: at most half again
  int threads = 4;
  // Files already in `dir` are read when they hold at least this many bytes (the real dataset
  // on its real storage); otherwise a test file of test_file_bytes is written there, read and
  // removed.
  uint64_t min_dataset_bytes = 256ull << 20;
  uint64_t test_file_bytes = 512ull << 20;
  uint64_t sequential_block = 4ull << 20;  // 4 MiB
  uint64_t random_block = 128ull << 10;    // 128 KiB; the suite sets the sample size
  std::function<void(double)> progress;    // called about every 0.1 s with the fraction done
};

struct StorageResult {
  std::string dir;
  std::string read_from;      // "12 dataset files (3.2 GiB)" or "a 512 MiB test file gpuplan wrote"
  std::string cache_bypass;   // "O_DIRECT" or the fallback used and why
  bool bypassed = false;      // true when O_DIRECT was used on every file
  uint64_t bytes_in_files = 0;
  int threads = 0;
  uint64_t random_block = 0;
  double sequential_bytes_per_s = 0;
  double random_bytes_per_s = 0;
  double random_iops = 0;
  // Sequential writes (every thread its own file, 4 MiB blocks, timed to the last fsync); unset
  // when they could not run (write_not_measured says why).
  std::optional<double> write_bytes_per_s;
  uint64_t write_bytes = 0;       // written in all
  std::string write_how;          // O_DIRECT or the fallback
  std::string write_not_measured;
  std::optional<uint64_t> free_bytes;  // on the folder's file system (statvfs f_bavail)
  double seconds = 0;
  std::string not_measured;  // why the reads could not run (empty when they did)
};

// Throws InputError (field "--data") when the folder does not exist or is not a folder. An
// unwritable folder with too little data, or a read error, is reported in not_measured.
StorageResult MeasureStorage(const StorageRequest& request);

// What training reads: samples per second x bytes per sample.
struct StorageNeed {
  double samples_per_second = 0;
  double bytes_per_sample = 0;
  double BytesPerSecond() const { return samples_per_second * bytes_per_sample; }
};

// The random block the test should use for this need: the sample size rounded up to 4 KiB, in
// [4 KiB, 4 MiB]; 128 KiB without a need.
uint64_t RandomBlockFor(const std::optional<StorageNeed>& need);

// storage_seq_read, storage_random_read, storage_seq_write (measured, no expectation), storage_feeds_training
// (against the need: the sequential rate for samples of 1 MiB and more, the random rate below;
// SKIP without a need), disk_free (against disk_free_checkpoints x checkpoint_bytes).
std::vector<CheckResult> JudgeStorage(const StorageResult& result, const std::optional<StorageNeed>& need,
                                      const std::optional<uint64_t>& checkpoint_bytes, const CheckThresholds& th);

}  // namespace gpuplan
