#include "fit/data_movement.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "core/error.h"
#include "telemetry/pcie.h"

namespace gpuplan {
namespace {

constexpr double kMaxLinkBps = 3.2e12;

double GbpsToBytes(double gbps) { return gbps * 1e9 / 8.0; }

}  // namespace

double LinkRate::GoodputBytesPerSecond() const { return bits_per_second / 8.0 * kTcpGoodputShare; }

LinkRate ParseLinkRate(const std::string& text, const std::string& key) {
  std::string t;
  for (char ch : text) {
    if (!std::isspace(static_cast<unsigned char>(ch))) {
      t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(ch))));
    }
  }
  const auto fail = [&]() -> LinkRate {
    throw InputError::Option(key,
                             "'" + text + "' is not a link rate: give 1gbe, 10gbe, 25gbe, 40gbe, 100gbe, 200gbe, "
                             "400gbe or a rate with its unit (100mbps, 2.5gbps)");
  };
  struct Unit {
    const char* suffix;
    double scale;
  };
  static const Unit kUnits[] = {{"gbe", 1e9}, {"tbps", 1e12}, {"gbps", 1e9}, {"mbps", 1e6}, {"kbps", 1e3},
                                {"bps", 1.0}};
  for (const Unit& u : kUnits) {
    const std::string suffix = u.suffix;
    if (t.size() <= suffix.size() || t.compare(t.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    const std::string number = t.substr(0, t.size() - suffix.size());
    double v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc() || end != number.data() + number.size() || !std::isfinite(v) || v <= 0) {
      return fail();
    }
    if (suffix == "gbe") {
      static const double kEthernet[] = {1, 10, 25, 40, 50, 100, 200, 400, 800};
      if (std::find(std::begin(kEthernet), std::end(kEthernet), v) == std::end(kEthernet)) {
        throw InputError::Option(key, "'" + text + "' is not an Ethernet rate: 1, 10, 25, 40, 50, 100, 200, 400 "
                                                   "or 800gbe (or give the rate: 2.5gbps)");
      }
    }
    const double bps = v * u.scale;
    if (bps < 1e3 || bps > kMaxLinkBps) {
      throw InputError::Option(key, "'" + text + "' is outside 1 kbit/s to 3.2 Tbit/s");
    }
    return LinkRate{t, bps};
  }
  return fail();
}

double YoungIntervalSeconds(double save_seconds, double mtbf_seconds) {
  return std::sqrt(2.0 * save_seconds * mtbf_seconds);
}

double LostFraction(double save_seconds, double interval_seconds, double lag_seconds, double restart_seconds,
                    double mtbf_seconds) {
  return save_seconds / interval_seconds + (interval_seconds / 2.0 + lag_seconds + restart_seconds) / mtbf_seconds;
}

CheckpointPlan EstimateCheckpoint(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                  const FrameworkProfile& fw, const MemoryEstimate& mem,
                                  const DataMovementConfig& c, double job_hours) {
  CheckpointPlan p;
  p.storage_gbps = c.storage_gbps;
  p.storage_assumed = !c.storage_given;
  p.sync_link = c.sync_link;
  p.sync_link_source = c.sync_link ? c.sync_link_source : "";
  const double storage = GbpsToBytes(c.storage_gbps);
  const double read = GbpsToBytes(c.storage_read_gbps.value_or(c.storage_gbps));
  p.storage_read_gbps = c.storage_read_gbps;
  const double gpus = static_cast<double>(std::max<int64_t>(1, l.gpus));
  const double per_node = std::min(gpus, static_cast<double>(std::max<int64_t>(1, c.gpus_per_node)));
  const double goodput = c.sync_link ? c.sync_link->GoodputBytesPerSecond() : 0.0;
  p.node_wait_seconds = c.node_wait_seconds.value_or(0.0);
  p.node_wait_source = c.node_wait_seconds ? c.node_wait_source : "assumed: a spare node at hand";

  if (!IsTraining(w.task)) {
    // Inference: nothing is saved; a replica's GPUs load their weights (the most loaded GPU's
    // share on each of them, an upper bound for the replica).
    p.training = false;
    const double per_gpu = mem.per_gpu.weights.value;
    p.bytes = per_gpu * static_cast<double>(l.tp * l.pp);
    p.weights_bytes = p.bytes;
    p.bytes_per_rank = per_gpu;
    p.node_bytes = per_gpu * per_node;
    p.restore_seconds = p.node_bytes / read + (c.sync_link ? p.node_bytes / goodput : 0.0);
    p.resume_seconds = p.node_wait_seconds + p.restore_seconds;
    p.save_mode = "none";
    return p;
  }

  const bool adapters = w.task == Task::kLora || w.task == Task::kQlora;
  const double trained = static_cast<double>(mem.params_trainable);
  const double saved_weights = adapters ? trained : static_cast<double>(mem.params_total);
  // DeepSpeed ZeRO-3 saves no half copy by default (stage3_gather_16bit_weights_on_model_save
  // false): every rank writes its fp32 partition, which is the weights.
  const bool zero3_partitions = fw.checkpoint_half_weights && l.zero == 3 && fw.checkpoint_save == "replica0";
  p.half_and_master = fw.checkpoint_half_weights && !zero3_partitions;
  const double master = w.precision == Precision::kMixed ? kFp32Bytes : 0.0;
  // Per saved weight and per trained parameter: a half copy beside the fp32 master, or the
  // parameters as trained (fp32 under autocast: the master is the weights; bf16 when pure).
  const double weight_bytes = p.half_and_master ? ElementBytes(w.precision) : (master > 0 ? kFp32Bytes : ElementBytes(w.precision));
  const double master_bytes = p.half_and_master ? master : 0.0;
  // Adafactor's factored accumulators of the whole model; for adapters, one per parameter (an
  // upper bound: their matrices are thin).
  double factored = trained;
  if (w.optimizer == Optimizer::kAdafactor && !adapters) {
    factored = 0;
    for (const TensorClass& t : Summarize(m, w.lora_targets).classes) {
      factored += t.factored;
    }
  }
  const double states = OptimizerStateBytes(w.optimizer, w.precision, trained, factored);
  const double weights_total = saved_weights * weight_bytes;
  const double optimizer_total = trained * master_bytes + states;
  p.bytes = weights_total + optimizer_total;
  p.bytes_per_param = trained > 0 ? p.bytes / trained : 0.0;
  p.weights_bytes = saved_weights * (adapters ? std::max(weight_bytes, ElementBytes(w.precision)) : ElementBytes(w.precision));
  p.save_mode = c.consolidated ? "rank0" : fw.checkpoint_save;

  const double mp = static_cast<double>(std::max<int64_t>(1, l.tp * l.pp));
  if (p.save_mode == "rank0") {
    p.bytes_per_rank = p.bytes;
    p.node_bytes = p.bytes;
  } else if (p.save_mode == "sharded" || zero3_partitions) {  // (consolidated: rank0 above)
    p.bytes_per_rank = p.bytes / gpus;
    p.node_bytes = p.bytes * per_node / gpus;
  } else {  // replica0: the first replica writes the weights, the optimizer as ZeRO partitions it
    const bool opt_sharded = l.zero >= 1;
    p.bytes_per_rank = weights_total / mp + optimizer_total / (opt_sharded ? gpus : mp);
    const double replica_share = std::min(1.0, per_node / mp);
    p.node_bytes = weights_total * replica_share + optimizer_total * (opt_sharded ? per_node / gpus : replica_share);
  }

  p.write_seconds = p.node_bytes / storage;
  if (c.async) {
    if (!fw.checkpoint_async) {
      throw InputError::Option("checkpoint_async",
                               fw.Label() + " saves checkpoints synchronously; asynchronous saving is modelled for "
                                            "fsdp, megatron and torchtitan");
    }
    const auto pcie = PcieTheoryGBs(gpu.pcie_gen, gpu.pcie_lanes);
    if (!pcie) {
      throw InputError::Option("checkpoint_async", gpu.name + " has no PCIe generation in the catalog to time the "
                                                              "copy to host memory");
    }
    p.async = true;
    p.save_seconds = p.bytes_per_rank / (*pcie * 1e9 * kHostCopyShare);
  } else {
    p.save_seconds = p.write_seconds;
  }
  if (c.sync_link) {
    p.sync_seconds = p.node_bytes / goodput;
  } else {
    p.notes.push_back("no --sync-link: the checkpoint stays on the node's storage, and a lost node loses it");
  }
  p.restore_seconds = (c.sync_link ? p.node_bytes / goodput : 0.0) + p.node_bytes / read;
  p.resume_seconds = p.node_wait_seconds + p.restore_seconds;

  p.failures_per_hour = c.failures_per_gpu_hour * gpus;
  p.failure_basis = c.failures_given ? "given" : "Llama 3 pre-training, 419 unexpected interruptions in 54 days on 16,384 H100";
  if (p.failures_per_hour > 0) {
    const double mtbf = 3600.0 / p.failures_per_hour;
    const double young = YoungIntervalSeconds(p.save_seconds, mtbf);
    const double lag = (p.async ? p.write_seconds : 0.0) + p.sync_seconds.value_or(0.0);
    const double floor = std::max(p.async ? p.write_seconds : 0.0, p.sync_seconds.value_or(0.0));
    const double interval = std::max(young, floor);
    p.young_seconds = young;
    p.interval_seconds = interval;
    p.sync_bound = interval > young;
    p.lost_fraction = LostFraction(p.save_seconds, interval, lag, p.resume_seconds, mtbf);
    if (p.lost_fraction >= 1) {
      p.notes.push_back("saves and rework take all the time: the job would not finish between failures");
    } else if (job_hours > 0) {
      p.lost_hours = job_hours * p.lost_fraction / (1.0 - p.lost_fraction);
    }
  }
  if (p.sync_bound) {
    p.notes.push_back(fmt::format("the sync link sets the interval: a checkpoint takes {:.0f} s to leave the node, "
                                  "longer than the {:.0f} s the failure rate alone would call for",
                                  p.sync_seconds.value_or(p.write_seconds), *p.young_seconds));
  }
  return p;
}

DataPlan EstimateDataUpload(const DataMovementConfig& c) {
  DataPlan d;
  d.dataset_bytes = c.dataset_bytes;
  d.uplink = c.uplink;
  if (c.dataset_bytes > 0 && c.uplink) {
    d.upload_seconds = c.dataset_bytes / c.uplink->GoodputBytesPerSecond();
  }
  return d;
}

}  // namespace gpuplan
