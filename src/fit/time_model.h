// Step time and throughput for training, latency and throughput for inference.
// Formulas and their sources: docs/time-model.md (section numbers in comments).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "fit/batching.h"
#include "fit/memory_model.h"
#include "fit/op_model.h"
#include "fit/workload.h"

namespace gpuplan {

// The network between nodes. Named presets or a number of Gb/s per node.
struct Network {
  std::string name = "ib-400g";
  double node_gbps = 8 * 400.0;  // total NIC bandwidth of one node, Gb/s
  std::string basis = "--network";  // where the figure comes from (an option, or the card's server class)
  // The share of the line rate NCCL reaches across nodes: InfiniBand 96% (NCCL's all-reduce bus
  // bandwidth across DGX A100 nodes, 192 of 200 GB/s, NVIDIA/nccl#1576), Ethernet 80%.
  double efficiency = 0.96;
};
// "ib-400g" (8 x 400 Gb/s per node, the HGX H100 reference), "ib-200g" (8 x 200, HGX A100),
// "roce-100g" (2 x 100), "25gbe", "10gbe", "1gbe", or a bare number of Gb/s per node ("40",
// "40gbps"). Throws InputError naming --network.
Network ParseNetwork(const std::string& s);

// The server class a card is sold in, which decides the links inside and between nodes
// (docs/time-model.md §4, with sources).
enum class ServerClass {
  kNvlinkBaseboard,  // SXM / OAM: NVLink (or HCCS) switch baseboard, one InfiniBand/RoCE NIC per GPU
  kPcieDatacentre,   // PCIe data-centre cards in PCIe servers with Ethernet
  kConsumer,         // GeForce cards in PCIe servers with 10-25 GbE
};
ServerClass ServerClassOf(const Gpu& gpu);
const char* ToString(ServerClass c);
// The node network a server of this card usually has when --network is not given.
Network DefaultNetwork(const Gpu& gpu);

struct TimeConfig {
  std::optional<double> mfu;         // flat achievable fraction of dense peak; unset: per-operation costs (§3)
  AttentionKernel attention = AttentionKernel::kFa2;  // the fused attention kernel (framework profile)
  std::shared_ptr<const GemmTables> gemm_tables;      // measured GEMM rates by shape (data/gemm/)
  std::optional<Network> network;    // between nodes; default: DefaultNetwork(card)
  int64_t gpus_per_node = 8;
  double dp_overlap = 0.8;           // share of the overlappable passes that can hide data-parallel traffic
  bool tp_overlap = false;           // tensor-parallel collectives pipelined with the GEMMs (Megatron-Core
                                     // --tp-comm-overlap, Transformer Engine userbuffers)
  // The interleaved schedule's point-to-point sends run beside the other chunks' compute
  // (Megatron-Core's overlap_p2p_comm, on by default); false: each send is waited for, as
  // Megatron-LM's 2021 schedules did (batch_isend_irecv, wait, torch.cuda.synchronize).
  bool pp_overlap = true;
  // ZeRO 0-2: the gradient reduction runs bucketed beside the last micro-batch's backward pass
  // (PyTorch DDP, Megatron-Core's overlap_grad_reduce; ZeRO-2 beside every micro-batch's); false:
  // after the backward pass, all of it exposed, as Megatron-LM 2021's default `--DDP-impl local`
  // did (docs/time-model.md §4).
  bool dp_grad_overlap = true;
  // The gradients are reduced in fp32 whatever the training dtype (the framework's grad_dtype:
  // fp32, Megatron's main_grad buffers); false: in the training dtype.
  bool fp32_grad_reduce = false;
  // fp8 training with sequence parallelism: the tensor-parallel all-gathers (forward activations,
  // backward output gradients) move fp8, the reduce-scatters the activation dtype (torchao's
  // float8 tensor-parallel styles, which torchtitan uses; the framework's tp_gather: fp8; §4).
  bool fp8_tp_gather = false;
  // --fp8 training: the output head's GEMMs in fp8 too (the framework's fp8_head); false: bf16.
  bool fp8_head = true;
  // ZeRO-1/2's parameter all-gather runs at the end of the optimizer step (DeepSpeed), exposed
  // whatever dp_grad_overlap says; false: beside the next step's first forward when overlapped.
  bool param_gather_after_step = false;
  bool eager_elementwise = false;    // training's elementwise ops run as eager PyTorch ops (§3.3), not fused
  LossKind loss = LossKind::kFull;    // the framework's loss: how its cross-entropy kernels run (§3.3)
  // Inference decode: the engine's attention kernel reads a GQA model's K/V once per query head
  // instead of once per K/V head (TensorRT-LLM's masked MHA before the XQA kernel of v0.8: §5).
  bool decode_kv_per_query_head = false;
  // Serving (§5.3): > 0 when the engine's scheduler runs prompt tokens inside the decode steps, up
  // to this many tokens a step (vLLM V1's max_num_batched_tokens); 0: prefills are passes of their own.
  int64_t mixed_step_tokens = 0;
};
// The network a time estimate uses for this card: the configured one, else the card's default.
Network NetworkFor(const TimeConfig& c, const Gpu& gpu);

// Dense peak FLOP/s for the training precision (bf16/fp16 tensor cores, or fp32).
double PeakFlops(const Gpu& gpu, Precision p);
// Whether the catalog has the figure PeakFlops needs (a search skips cards without it).
bool HasPeakFlops(const Gpu& gpu, Precision p);

struct TrainingTime {
  double flops_per_token = 0;        // model FLOPs (6N + attention), the MFU numerator
  double hw_flops_per_token = 0;     // with recomputation and frozen-weight savings
  int64_t micro_batches = 0;         // per optimizer step per data-parallel rank
  int64_t global_batch = 0;          // sequences per optimizer step
  double compute_seconds = 0;        // forward/backward kernels + optimizer step + QLoRA dequantisation
  double matmul_seconds = 0;         // of which: the forward, backward and recompute kernels (§3)
  double gemm_seconds = 0;           //   of which: dense and expert matmuls
  double attention_seconds = 0;      //   of which: the attention core
  double elementwise_seconds = 0;    //   of which: norms, activations, residuals, rotary, dropout, loss
  double optimizer_seconds = 0;      // of which: optimizer step streaming states through HBM
  double tp_seconds = 0;             // tensor-parallel collectives on the critical path (exposed)
  double tp_seconds_total = 0;       // of which the whole collective time (more with --tp-overlap)
  double cp_seconds = 0;             // context-parallel K/V ring transfers not hidden by the attention core
  double cp_seconds_total = 0;       // of which the whole transfer time
  double pp_seconds = 0;             // pipeline point-to-point transfers on the critical path
  double pp_seconds_total = 0;       // of which the whole transfer time (interleaving overlaps it)
  double moe_seconds = 0;            // expert-parallel all-to-all
  double dp_seconds = 0;             // data-parallel traffic (gradients; ZeRO-3 parameter gathers), total
  double dp_exposed_seconds = 0;     // the part not hidden behind the forward/backward passes
  bool dp_overlapped = true;         // false: ZeRO 0-2 reduction after the backward pass (--dp-overlap off)
  double dp_node_link_bytes = 0;     // bytes one node's network link carries per step (each direction)
  double communication_seconds = 0;  // tp + pp + moe + exposed dp
  double bubble_seconds = 0;         // pipeline fill and drain
  double step_seconds = 0;
  double tokens_per_second = 0;      // whole job
  double mfu = 0;                    // model FLOPs / (step time x GPUs x peak)
  double efficiency = 0;             // hardware FLOPs / (matmul_seconds x peak): the kernels' achieved fraction
  double gemm_fraction = 0;          // the large-GEMM fraction of peak the kernels assume (§3.1)
  std::string gemm_basis;            // its source
  bool gemm_by_shape = false;        // rates from a table by shape (data/gemm/), not gemm_fraction (§3.1)
  std::string attention_kernel;      // fa2 | fa3 (§3.2); empty with --mfu
  std::string attention_basis;       // where its rate comes from
  bool attention_by_length = false;  // rates by sequence length from data/attention/ (§3.2), not one fraction
  std::string elementwise_kernels;   // fused | eager (§3.3); empty with --mfu
  std::string loss_kernels;          // log_softmax | megatron_ops | te_fused (§3.3); empty with --mfu
  std::string bottleneck;            // "compute", "communication" or "pipeline bubble"
  std::optional<double> total_hours; // for a token budget
  std::optional<double> gpu_hours;
  std::string network;               // the node network assumed (name)
  double network_gbps = 0;           // its Gb/s per node
};

// tokens: job size in tokens (0: no budget).
TrainingTime EstimateTrainingTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                  const TimeConfig& c, double tokens = 0);
// With the model summary and the layout's memory estimate already computed (layout search).
TrainingTime EstimateTrainingTime(const ModelSummary& sum, const MemoryEstimate& mem, const Workload& w,
                                  const Layout& l, const Gpu& gpu, const TimeConfig& c, double tokens);

struct InferenceTime {
  double prefill_seconds = 0;           // one prompt of prompt_tokens (time to first token)
  double prefill_flops = 0;             // of one prompt: 2N x P + causal attention
  double decode_step_seconds = 0;       // one decode step at the given concurrency (per-token latency)
  double decode_weight_seconds = 0;     // of which HBM time reading the weights (x pp)
  double decode_kv_seconds = 0;         // HBM time reading the KV cache of every sequence in flight
  double decode_compute_seconds = 0;    // matmul time of one step (the larger of this and the reads counts)
  double decode_tokens_per_second = 0;  // per replica at the given concurrency, while decoding
  double decode_tokens_per_second_per_gpu = 0;
  // Continuous batching (§5): prefills and decode steps share the replica's GPUs, so one request
  // costs its prefill plus its share (1 / concurrency) of output_tokens decode steps.
  double replica_seconds_per_request = 0;
  double requests_per_second = 0;       // per replica: 1 / replica_seconds_per_request
  // §5.3 with TimeConfig::mixed_step_tokens: every step decodes the c sequences and prefills the
  // prompt tokens of the c / O requests that replace those finishing (c x P / O tokens), in one
  // pass; the replica spends O x that step / c on a request. False where the step's token budget
  // cannot take them (prefills then run on their own, as without mixing).
  bool mixed = false;
  double mixed_prefill_tokens = 0;      // prompt tokens in each step
  double mixed_prefill_seconds = 0;     // their matmul time inside the step
  double mixed_step_seconds = 0;        // the whole step
  bool memory_bound = true;             // decode limited by HBM bandwidth (else by compute)
  double efficiency = 0;
};

InferenceTime EstimateInferenceTime(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                    const TimeConfig& c, int64_t prompt_tokens, int64_t output_tokens);

// §5.2 a static batch of w.concurrency requests that arrive together, each prompt_tokens in and
// exactly output_tokens out, run step by step under the engine's KV pool (admission and
// preemption by pool.policy), with this replica's decode-step and prefill costs.
StaticBatchRun EstimateStaticBatch(const ModelSpec& m, const Workload& w, const Layout& l, const Gpu& gpu,
                                   const TimeConfig& c, int64_t prompt_tokens, int64_t output_tokens,
                                   const KvPool& pool);

}  // namespace gpuplan
