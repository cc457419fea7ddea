#include "fit/render/fit_json.h"

#include "format/numbers.h"

#include <cmath>

namespace gpuplan {
namespace {

// Bytes as a whole number; past 2^53 (8 PiB, where a double no longer holds every integer, and
// long before llround's int64 range ends at 8 EiB) as a number. A 10-million-token sequence with
// micro-batch 100,000 on a 405B model needs ~10^20 bytes of activations: llround made that
// -9223372036854775808.
nlohmann::json Round(Bytes b) {
  constexpr double kExactIntegers = 9007199254740992.0;  // 2^53
  if (std::isfinite(b.value) && std::fabs(b.value) < kExactIntegers) {
    return static_cast<int64_t>(std::llround(b.value));
  }
  return b.value;
}

}  // namespace

nlohmann::json MemoryToJson(const MemoryBreakdown& m) {
  return {{"weights", Round(m.weights)},         {"gradients", Round(m.gradients)},
          {"optimizer", Round(m.optimizer)},     {"activations", Round(m.activations)},
          {"kv_cache", Round(m.kv_cache)},       {"overhead", Round(m.overhead)},
          {"total", Round(m.Total())}};
}

nlohmann::json LayoutToJson(const Layout& l, const Workload& w, const Gpu* gpu) {
  nlohmann::json j = {{"gpu", gpu ? nlohmann::json(gpu->name) : nlohmann::json(nullptr)},
                      {"gpus", l.gpus},
                      {"tp", l.tp},
                      {"pp", l.pp},
                      {"vpp", l.vpp},
                      {"dp", l.dp()},
                      {"cp", l.cp},
                      {"ep", l.ep},
                      {"zero", l.zero},
                      {"sp", l.sp},
                      {"recompute", ToString(w.recompute)},
                      {"micro_batch", w.micro_batch},
                      {"offload_optimizer", l.offload_optimizer},
                      {"offload_params", l.offload_params}};
  return j;
}

nlohmann::json FitToJson(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu* gpu,
                         const MemoryEstimate& e, const std::vector<Suggestion>& suggestions) {
  nlohmann::json j;
  j["model"] = {{"name", m.name},
                {"architecture", m.architecture},
                {"model_type", m.model_type},
                {"params_total", e.params_total},
                {"params_active", e.params_active},
                {"params_trainable", e.params_trainable}};
  nlohmann::json workload = {{"task", ToString(w.task)}};
  if (IsTraining(w.task)) {
    workload["precision"] = ToString(w.precision);
    // The floating-point type the matmuls run in: fp32, or the card's 16-bit type (bf16 from
    // Ampere, fp16 on Volta and Turing); null without a card.
    workload["compute_dtype"] = w.precision == Precision::kFp32 ? nlohmann::json("fp32")
                                : gpu                           ? nlohmann::json(HalfDtype(*gpu))
                                                                : nlohmann::json(nullptr);
    workload["optimizer"] = ToString(w.optimizer);
    workload["seq"] = w.seq;
    workload["flash_attn"] = w.flash_attn;
    if (w.task == Task::kLora || w.task == Task::kQlora) {
      workload["lora_rank"] = w.lora_rank;
    }
  } else {
    workload["weight_dtype"] = ToString(w.weight_dtype);
    workload["kv_dtype"] = ToString(w.kv_dtype);
    workload["context"] = w.context;
    workload["concurrency"] = w.concurrency;
  }
  j["workload"] = workload;
  j["layout"] = LayoutToJson(l, w, gpu);
  j["memory_per_gpu"] = MemoryToJson(e.per_gpu);
  // docs/memory-model.md §8.4: what torch reports, what nvidia-smi shows, the load-time peak.
  j["memory_per_gpu"]["peak_allocated"] = Round(e.peak_allocated);
  j["memory_per_gpu"]["nvidia_smi"] = Round(e.nvidia_smi);
  j["memory_per_gpu"]["load_peak"] = Round(e.load_peak);
  j["memory_per_gpu"]["comm_buffers"] = Round(e.comm_buffers);
  j["peak_stage"] = e.peak_stage;
  j["framework"] = e.framework;
  j["cpu_offload_per_gpu"] = Round(e.cpu_offload);
  j["gpu_memory"] = gpu ? nlohmann::json(gpu->memory_bytes) : nlohmann::json(nullptr);
  j["fits"] = gpu ? nlohmann::json(Fits(e, *gpu)) : nlohmann::json(nullptr);
  if (!IsTraining(w.task)) {
    j["inference"] = {{"kv_cache_per_sequence", Round(e.kv_per_sequence)},
                      {"max_concurrency", OptionalToJson(e.max_concurrency)}};
    if (e.kv_cache_tokens) {
      // A server profile: its KV cache in tokens and the sequences of --context it holds, and
      // the values of the profile on this card that gave it (docs/memory-model.md §8.5).
      j["inference"]["kv_cache_tokens"] = *e.kv_cache_tokens;
      j["inference"]["max_concurrency_ratio"] = OptionalToJson(e.server_concurrency);
      j["inference"]["kv_fraction"] = OptionalToJson(e.server_kv_fraction);
      j["inference"]["kv_block_tokens"] = OptionalToJson(e.server_block_tokens);
      j["inference"]["max_num_seqs"] = OptionalToJson(e.server_max_num_seqs);
      j["inference"]["batched_tokens"] = OptionalToJson(e.server_batched_tokens);
      j["inference"]["cuda_graphs"] = Round(e.server_cuda_graphs);
    }
  }
  nlohmann::json sug = nlohmann::json::array();
  for (const auto& s : suggestions) {
    sug.push_back({{"change", s.change},
                   {"result", s.result},
                   {"gpu", s.gpu->name},
                   {"gpu_memory", s.gpu->memory_bytes},
                   {"layout", LayoutToJson(s.layout, s.workload, s.gpu)},
                   {"memory_per_gpu_total", Round(s.estimate.per_gpu.Total())}});
  }
  j["suggestions"] = sug;
  j["notes"] = e.notes;
  return j;
}

nlohmann::json GpuToJson(const Gpu& g) {
  return {{"name", g.name},
          {"aliases", g.aliases},
          {"vendor", g.vendor},
          {"architecture", g.architecture},
          {"memory_bytes", g.memory_bytes},
          {"memory_bandwidth_gb_s", g.memory_bandwidth_gb_s},
          {"tflops",
           {{"fp64", OptionalToJson(g.tflops.fp64)},
            {"fp32", OptionalToJson(g.tflops.fp32)},
            {"tf32", OptionalToJson(g.tflops.tf32)},
            {"bf16", OptionalToJson(g.tflops.bf16)},
            {"fp16", OptionalToJson(g.tflops.fp16)},
            {"fp8", OptionalToJson(g.tflops.fp8)},
            {"int8", OptionalToJson(g.tflops.int8)}}},
          {"interconnect",
           {{"kind", g.interconnect.kind},
            {"bandwidth_gb_s", g.interconnect.bandwidth_gb_s},
            {"links", g.interconnect.links}}},
          {"pcie", {{"gen", g.pcie_gen}, {"lanes", g.pcie_lanes}}},
          {"tdp_watts", g.tdp_watts},
          {"mig", {{"max_instances", g.mig_max_instances}, {"profiles", g.mig_profiles}}},
          {"pci_device_ids", g.pci_device_ids},
          {"datatypes", g.datatypes},
          {"price_cny_per_card_hour", g.price_cny_per_card_hour},
          {"confidence", g.confidence},
          {"sources", g.sources}};
}

nlohmann::json TrainingTimeToJson(const TrainingTime& t) {
  return {{"step_seconds", t.step_seconds},
          {"tokens_per_second", t.tokens_per_second},
          {"mfu", t.mfu},
          {"efficiency", t.efficiency},
          {"compute_seconds", t.compute_seconds},
          {"kernels",
           {{"seconds", t.matmul_seconds},
            {"gemm_seconds", t.gemm_seconds},
            {"attention_seconds", t.attention_seconds},
            {"elementwise_seconds", t.elementwise_seconds},
            {"optimizer_seconds", t.optimizer_seconds},
            {"gemm_fraction", t.gemm_fraction},
            {"gemm_basis", t.gemm_basis},
            {"gemm_by_shape", t.gemm_by_shape},
            {"attention_kernel", t.attention_kernel},
            {"attention_basis", t.attention_basis},
            {"attention_by_length", t.attention_by_length},
            {"elementwise_kernels", t.elementwise_kernels},
            {"loss_kernels", t.loss_kernels}}},
          {"communication_seconds", t.communication_seconds},
          {"bubble_seconds", t.bubble_seconds},
          {"communication",
           {{"tensor_parallel_seconds", t.tp_seconds},
            {"tensor_parallel_total_seconds", t.tp_seconds_total},
            {"context_parallel_seconds", t.cp_seconds},
            {"context_parallel_total_seconds", t.cp_seconds_total},
            {"pipeline_p2p_seconds", t.pp_seconds},
            {"pipeline_p2p_total_seconds", t.pp_seconds_total},
            {"expert_all_to_all_seconds", t.moe_seconds},
            {"data_parallel_seconds", t.dp_seconds},
            {"data_parallel_exposed_seconds", t.dp_exposed_seconds},
            {"data_parallel_overlapped", t.dp_overlapped},
            {"data_parallel_node_link_bytes", t.dp_node_link_bytes}}},
          {"network", t.network},
          {"network_gbps", t.network_gbps},
          {"bottleneck", t.bottleneck},
          {"flops_per_token", t.flops_per_token},
          {"hardware_flops_per_token", t.hw_flops_per_token},
          {"global_batch", t.global_batch},
          {"micro_batches", t.micro_batches},
          {"total_hours", OptionalToJson(t.total_hours)},
          {"gpu_hours", OptionalToJson(t.gpu_hours)}};
}

nlohmann::json CandidateToJson(const Candidate& c) {
  return {{"gpu", c.gpu->name},
          {"gpus", c.layout.gpus},
          {"tp", c.layout.tp},
          {"pp", c.layout.pp},
          {"vpp", c.layout.vpp},
          {"cp", c.layout.cp},
          {"dp", c.layout.dp()},
          {"ep", c.layout.ep},
          {"zero", c.layout.zero},
          {"sp", c.layout.sp},
          {"recompute", ToString(c.workload.recompute)},
          {"micro_batch", c.workload.micro_batch},
          {"global_batch", c.workload.global_batch},
          {"memory_per_gpu_total", Round(c.memory.per_gpu.Total())},
          {"gpu_memory", c.gpu->memory_bytes},
          {"step_seconds", c.time.step_seconds},
          {"tokens_per_second", c.time.tokens_per_second},
          {"mfu", c.time.mfu},
          {"total_hours", OptionalToJson(c.time.total_hours)},
          {"gpu_hours", OptionalToJson(c.time.gpu_hours)},
          {"cost", {{"amount", c.cost.amount}, {"currency", c.cost.currency}, {"per", c.cost_per}, {"basis", c.cost_basis}}}};
}

namespace {
nlohmann::json LinkToJson(const std::optional<LinkRate>& l) {
  if (!l) {
    return nullptr;
  }
  return {{"name", l->name}, {"gbps", l->bits_per_second / 1e9}, {"goodput_bytes_per_second", l->GoodputBytesPerSecond()}};
}
}  // namespace

nlohmann::json CheckpointPlanToJson(const CheckpointPlan& p) {
  nlohmann::json j = {{"training", p.training},
                      {"bytes", p.bytes},
                      {"bytes_per_rank", p.bytes_per_rank},
                      {"node_bytes", p.node_bytes},
                      {"weights_bytes", p.weights_bytes},
                      {"restore_seconds", p.restore_seconds},
                      {"node_wait_seconds", p.node_wait_seconds},
                      {"node_wait_source", p.node_wait_source},
                      {"resume_seconds", p.resume_seconds},
                      {"storage_gbps", p.storage_gbps},
                      {"storage_read_gbps", OptionalToJson(p.storage_read_gbps)},
                      {"storage_assumed", p.storage_assumed},
                      {"sync_link", LinkToJson(p.sync_link)},
                      {"notes", p.notes}};
  if (p.sync_link) {
    j["sync_link"]["source"] = p.sync_link_source;
  }
  if (!p.training) {
    for (const char* k : {"save_seconds", "write_seconds", "sync_seconds", "interval_seconds", "lost_fraction"}) {
      j[k] = nullptr;
    }
    return j;
  }
  j["bytes_per_param"] = p.bytes_per_param;
  j["save_mode"] = p.save_mode;
  j["half_and_master"] = p.half_and_master;
  j["async"] = p.async;
  j["save_seconds"] = p.save_seconds;
  j["write_seconds"] = p.write_seconds;
  j["sync_seconds"] = OptionalToJson(p.sync_seconds);
  j["interval_seconds"] = OptionalToJson(p.interval_seconds);
  j["young_seconds"] = OptionalToJson(p.young_seconds);
  j["sync_bound"] = p.sync_bound;
  j["failures_per_hour"] = p.failures_per_hour;
  j["failure_basis"] = p.failure_basis;
  j["lost_fraction"] = p.lost_fraction;
  j["lost_hours"] = OptionalToJson(p.lost_hours);
  return j;
}

nlohmann::json DataPlanToJson(const DataPlan& d) {
  return {{"dataset_bytes", d.dataset_bytes}, {"uplink", LinkToJson(d.uplink)},
          {"upload_seconds", OptionalToJson(d.upload_seconds)}};
}

}  // namespace gpuplan
