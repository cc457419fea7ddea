// Data that has to move for a job (docs/data-movement.md): how big a training checkpoint is and
// who writes it, how long it takes to save, to sync off the node and to restore on another one,
// the checkpoint interval that balances lost work against save time (Young 1974), and the time to
// upload the dataset from the office. Pure arithmetic on the fit's memory estimate, the framework
// profile's checkpoint rules (data/frameworks.yaml) and the links and storage given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/framework.h"
#include "fit/memory_model.h"
#include "fit/workload.h"

namespace gpuplan {

// A network link's line rate. Named Ethernet rates (1gbe, 10gbe, 25gbe, 40gbe, 100gbe, 200gbe,
// 400gbe) or a rate with its unit (100mbps, 2.5gbps, 1e9bps); at most 3.2 Tbit/s.
struct LinkRate {
  std::string name;           // as given, lower case ("10gbe", "100mbps")
  double bits_per_second = 0;  // line rate
  // TCP payload over Ethernet at this line rate: 1448 of every 1538 bytes on the wire with a
  // 1500-byte MTU (IPv4 + TCP headers with timestamps, Ethernet header, FCS, preamble and gap).
  double GoodputBytesPerSecond() const;
};
inline constexpr double kTcpGoodputShare = 1448.0 / 1538.0;
// Throws InputError naming `key` (an option key) for text that is not a rate.
LinkRate ParseLinkRate(const std::string& text, const std::string& key);

// Node failures per GPU-hour when neither the user nor a spot offer gives a rate: Llama 3's
// 54-day snapshot of pre-training on 16,384 H100 GPUs, 419 unexpected interruptions (Dubey et al.
// 2024, "The Llama 3 Herd of Models", §3.3.4): 419 / (54 x 24 x 16,384) = 1.97e-5.
inline constexpr double kLlama3FailuresPerGpuHour = 419.0 / (54.0 * 24.0 * 16384.0);
// The checkpoint storage's write and read rate per node when none is given: one datacentre NVMe
// drive at 2 GB/s (an assumption, said so in the answer: give --storage-gbps, or measure).
inline constexpr double kDefaultStorageGbps = 16.0;
// GPU to host copies of an asynchronous save run at this share of the PCIe link's theoretical
// rate (pinned memory; docs/data-movement.md §2).
inline constexpr double kHostCopyShare = 0.8;

struct DataMovementConfig {
  double storage_gbps = kDefaultStorageGbps;  // the checkpoint storage, per node, Gbit/s
  bool storage_given = false;
  // Read rate for the restore when it differs from the write rate (a check report measures both);
  // unset: storage_gbps.
  std::optional<double> storage_read_gbps;
  std::optional<LinkRate> sync_link;  // each node to shared or object storage
  std::string sync_link_source = "given";  // or where a measured figure came from
  bool async = false;                 // --checkpoint-async on (the framework must offer it)
  bool consolidated = false;          // --checkpoint-consolidated on: rank 0 writes it all
  double failures_per_gpu_hour = kLlama3FailuresPerGpuHour;
  bool failures_given = false;
  // After a node fails, the time until a replacement runs (0: a spare node at hand); unset: 0,
  // said to be assumed. A priced fit takes the offers' terms.node_replacement_hours.
  std::optional<double> node_wait_seconds;
  std::string node_wait_source = "given";
  double dataset_bytes = 0;           // to upload before the job starts
  std::optional<LinkRate> uplink;     // office to data centre
  int64_t gpus_per_node = 8;
};

struct CheckpointPlan {
  bool training = true;          // false: inference, only the weights to load (restore)
  double bytes = 0;              // one checkpoint, all ranks together
  double bytes_per_rank = 0;     // the most any rank writes
  double node_bytes = 0;         // the most any node writes (or, for inference, loads)
  double weights_bytes = 0;      // the weights alone in bf16 (adapters: in their dtype): the export
  double bytes_per_param = 0;    // per trained parameter (weights + master + states; 0 for inference)
  std::string save_mode;         // rank0 | replica0 | sharded (the profile's checkpoint_save)
  bool half_and_master = true;   // a half copy saved beside the fp32 master
  bool async = false;            // staged in host memory, written behind the training
  double save_seconds = 0;       // the time training stops for one save (blocking)
  double write_seconds = 0;      // the node's write to storage (behind the training when async)
  std::optional<double> sync_seconds;     // the node's share over the sync link
  double restore_seconds = 0;    // fetch over the sync link (when given) and load on another node
  double node_wait_seconds = 0;  // until a replacement node runs (DataMovementConfig)
  std::string node_wait_source;  // "given", "assumed: a spare node at hand", or the offer's terms
  double resume_seconds = 0;     // node wait + restore: the restart after a failure
  std::optional<double> interval_seconds;  // optimum between saves (none without failures)
  std::optional<double> young_seconds;     // sqrt(2 C M) before the write and sync bounds
  bool sync_bound = false;       // the interval was raised to the sync (or write) time
  double failures_per_hour = 0;  // the job's: per GPU-hour x GPUs
  double lost_fraction = 0;      // of wall time: saves + rework + restarts
  std::optional<double> lost_hours;  // with a job size: the wall hours lost
  double storage_gbps = 0;       // as used (saves; restores too unless storage_read_gbps)
  std::optional<double> storage_read_gbps;  // the restore's read rate, when measured apart
  bool storage_assumed = true;
  std::optional<LinkRate> sync_link;  // as used
  std::string sync_link_source;       // "given", or the offer whose stated link it is
  std::string failure_basis;     // where the failure rate comes from
  std::vector<std::string> notes;
};

struct DataPlan {
  std::optional<double> upload_seconds;  // dataset over the uplink
  double dataset_bytes = 0;
  std::optional<LinkRate> uplink;
};

// The checkpoint of a training job of `gpu` cards laid out as `l`, with the framework profile's
// rules; `job_hours` (0: none) turns the lost fraction into hours. For inference, the weights the
// replica loads and the time to load them on another node.
CheckpointPlan EstimateCheckpoint(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                  const FrameworkProfile& fw, const MemoryEstimate& mem,
                                  const DataMovementConfig& c, double job_hours);

// Young's interval sqrt(2 C M) for a save of C seconds and a mean time between failures of M
// seconds, and the wall-time share lost at interval T: C / T (saves) + (T / 2 + lag + restart) / M
// (rework after a failure, on average half an interval plus the time until the last checkpoint
// was safe off the node, plus the restart: waiting for a node and restoring on it).
double YoungIntervalSeconds(double save_seconds, double mtbf_seconds);
double LostFraction(double save_seconds, double interval_seconds, double lag_seconds, double restart_seconds,
                    double mtbf_seconds);

DataPlan EstimateDataUpload(const DataMovementConfig& c);

}  // namespace gpuplan
