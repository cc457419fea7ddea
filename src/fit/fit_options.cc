#include "fit/fit_options.h"

#include <algorithm>

#include "core/error.h"
#include "fit/search.h"
#include "fit/time_model.h"
#include "fit/workload.h"

namespace gpuplan {

const OptionTable<FitRequest>& FitOptionTable() {
  using R = FitRequest;
  static const OptionTable<R> table = [] {
    OptionTable<R> t;
    auto on_off = [](const std::string& s) {
      if (s != "on" && s != "off" && s != "true" && s != "false" && s != "1" && s != "0" && s != "yes" && s != "no") {
        throw InputError("expected on or off, got '" + s + "'");
      }
    };
    t.push_back(Option<R>("--model", "model", "preset name (gpuplan models), config.json path, or checkpoint folder "
                          "(config.json + *.safetensors)", &R::model).Required());
    t.push_back(Option<R>("--task", "task", "what to size: pretraining, fine-tuning (full, lora, qlora) or inference", &R::task)
                    .Choices({"pretrain", "full", "lora", "qlora", "infer"}, [](const std::string& s) { ParseTask(s); }));
    t.push_back(Option<R>("--gpu", "gpu", "GPU name from the catalog (gpuplan gpus); without it, with a comma-separated "
                          "list, or with --max-gpus, fit searches", &R::gpu).Unset("none (search)"));
    t.push_back(Option<R>("--gpus", "gpus", "GPU count; dp = gpus / (tp x pp); in a search, given = kept (for inference: one replica's GPUs)", &R::gpus).Min(0, true).Max(100000));
    t.push_back(Option<R>("--seq", "seq", "training sequence length", &R::seq).Unit("tokens").Min(0, true).Max(1e7));
    t.push_back(Option<R>("--micro-batch", "micro_batch", "sequences per GPU per micro-step; not given: 1, 2, 4 or 8, the fastest that fits within the global batch (docs/time-model.md §10)", &R::micro_batch).Min(0, true).Max(1e5));
    t.push_back(Option<R>("--global-batch", "global_batch", "sequences per optimizer step (0: fill the pipeline)",
                          &R::global_batch).Min(0).Max(1e8));
    t.push_back(Option<R>("--precision", "precision", "training precision (mixed: bf16/fp16 + fp32 master weights; bf16: pure)",
                          &R::precision)
                    .Choices({"fp32", "mixed", "bf16"}, [](const std::string& s) { ParsePrecision(s); }));
    t.push_back(Option<R>("--optimizer", "optimizer", "optimizer (its states per parameter)", &R::optimizer)
                    .Choices({"adamw", "adamw8bit", "sgd", "adafactor"}, [](const std::string& s) { ParseOptimizer(s); }));
    t.push_back(Option<R>("--zero", "zero", "ZeRO stage 0-3 over the data-parallel group; in a search, given = kept", &R::zero)
                    .Min(0).Max(3)
                    .Unset("0, or the framework's (megatron-bridge pretraining and full fine-tuning: 1, its distributed optimizer)"));
    t.push_back(Option<R>("--tp", "tp", "tensor-parallel size; in a search, given = kept", &R::tp).Min(0, true).Max(100000));
    t.push_back(Option<R>("--pp", "pp", "pipeline-parallel size; in a search, given = kept", &R::pp).Min(0, true).Max(100000));
    t.push_back(Option<R>("--ep", "ep", "expert-parallel size (MoE); in a search, given = kept", &R::ep).Min(0, true).Max(100000));
    t.push_back(Option<R>("--tp-overlap", "tp_overlap", "tensor-parallel collectives overlapped with the GEMMs (Megatron-Core --tp-comm-overlap); docs/time-model.md §4; not given: on where the framework offers it and it is faster (§10)", &R::tp_overlap)
                    .Choices({"on", "off"}, on_off));
    t.push_back(Option<R>("--dp-overlap", "dp_overlap", "data-parallel gradient reduction (and ZeRO-1/2's parameter gather) run beside the backward (and next forward) pass: PyTorch DDP and FSDP by default, Megatron --overlap-grad-reduce/--overlap-param-gather, DeepSpeed overlap_comm; off: all of it after the backward pass; docs/time-model.md §4; not given: on, with off in the range (§10)", &R::dp_overlap)
                    .Choices({"on", "off"}, on_off));
    t.push_back(Option<R>("--cp", "cp", "context-parallel size (training; ring attention over sequence chunks); in a search, given = kept", &R::cp).Min(0, true).Max(100000));
    t.push_back(Option<R>("--vpp", "vpp", "interleaved virtual pipeline stages per GPU; in a search, given = kept; not given: the fastest that fits where the framework interleaves, of 1, 2, 4, 8 and each other value up to 8 that divides a stage's layers (Megatron: only those that divide; docs/time-model.md §10)", &R::vpp).Min(0, true).Max(100000));
    t.push_back(Option<R>("--sp", "sp", "sequence parallelism (with tp > 1); in a search, given = kept (otherwise on whenever tp > 1)", &R::sp));
    t.push_back(Option<R>("--recompute", "recompute", "activation recomputation: none, selective (the attention core), op (every second matmul of a block, torchtitan's op-level policy) or full; docs/memory-model.md §4.3; not given: the framework's default, or the least that fits (docs/time-model.md §10)", &R::recompute)
                    .Choices({"none", "selective", "op", "full"}, [](const std::string& s) { ParseRecompute(s); }));
    t.push_back(Option<R>("--flash-attn", "flash_attn", "FlashAttention (no attention-score activations)", &R::flash_attn).Choices({"on", "off"}, on_off));
    t.push_back(Option<R>("--fp8", "fp8", "training GEMMs in fp8 (Transformer Engine / torchao float8; Hopper and later; docs/time-model.md §3.1)", &R::fp8)
                    .Choices({"on", "off"}, on_off));
    t.push_back(Option<R>("--attention", "attention", "fused attention kernel: fa2 (FlashAttention-2, SDPA) or fa3 (FlashAttention-3, cuDNN via Transformer Engine: on Hopper and Blackwell at cuDNN's published rates by sequence length, data/attention); docs/time-model.md §3.2", &R::attention)
                    .Choices({"fa2", "fa3"}, [](const std::string& s) { ParseAttentionKernel(s); }).Unset("the framework's (fa2)"));
    t.push_back(Option<R>("--compile", "compile", "training's elementwise kernels fused (torch.compile, Transformer Engine, fused kernels) or off: eager PyTorch, each op reading and writing its tensors; docs/time-model.md §3.3", &R::compile)
                    .Choices({"on", "off"}, on_off).Unset("the framework's (on unless it runs eager)"));
    t.push_back(Option<R>("--lora-rank", "lora_rank", "LoRA rank", &R::lora_rank).Min(1).Max(65536));
    t.push_back(Option<R>("--lora-dropout", "lora_dropout", "LoRA dropout probability", &R::lora_dropout)
                    .Min(0).Max(1, true));
    t.push_back(Option<R>("--lora-targets", "lora_targets", "all-linear or module names, comma separated",
                          &R::lora_targets));
    t.push_back(Option<R>("--weight-dtype", "weight_dtype",
                          "inference weights (bf16 becomes fp16 on cards without bf16: T4, V100; "
                          "docs/memory-model.md §7)", &R::weight_dtype)
                    .Choices({"bf16", "fp16", "fp8", "int8", "int4", "fp32"},
                             [](const std::string& s) { ParseWeightDtype(s); }));
    t.push_back(Option<R>("--kv-dtype", "kv_dtype", "KV cache (bf16 becomes fp16 as for the weights)", &R::kv_dtype)
                    .Choices({"bf16", "fp16", "fp8"}, [](const std::string& s) { ParseKvDtype(s); }));
    t.push_back(Option<R>("--context", "context", "inference: tokens per sequence (prompt + output; without --context, "
                          "--prompt-tokens + --output-tokens when either or --qps is given)", &R::context).Unit("tokens").Min(0, true).Max(1e7));
    t.push_back(Option<R>("--concurrency", "concurrency", "inference: sequences in flight per replica",
                          &R::concurrency).Min(0, true).Max(1e6));
    t.push_back(Option<R>("--batched-tokens", "batched_tokens", "inference: tokens per forward pass",
                          &R::batched_tokens).Unit("tokens").Min(0, true).Max(1e7));
    t.push_back(Option<R>("--offload-optimizer", "offload_optimizer", "ZeRO-Offload optimizer states to CPU RAM",
                          &R::offload_optimizer));
    t.push_back(Option<R>("--offload-params", "offload_params", "ZeRO-Infinity parameter offload (zero 3)",
                          &R::offload_params));
    t.push_back(Option<R>("--framework", "framework",
                          "framework profile of data/frameworks.yaml (docs/memory-model.md §8): generic, hf-trainer, "
                          "peft, deepspeed, fsdp, torchtune, litgpt, megatron, megatron-bridge, torchtitan, llama-factory; vllm, "
                          "sglang, "
                          "lmdeploy, tgi, llama.cpp", &R::framework));
    t.push_back(Option<R>("--loss", "loss", "training: cross-entropy as the framework runs it (docs/memory-model.md "
                          "§8.3): full (fp32 logits), chunked (8 chunks unless the profile says), fused", &R::loss)
                    .Choices({"full", "chunked", "fused"})
                    .Unset("the profile's"));
    t.push_back(Option<R>("--gguf-type", "gguf_type", "llama.cpp: GGUF type of the weights (Q4_K_M, Q5_K_M, Q6_K, "
                          "Q8_0, Q4_0, F16, ...; data/frameworks.yaml)", &R::gguf_type));
    t.push_back(Option<R>("--gpu-memory-utilization", "gpu_memory_utilization",
                          "inference server profiles: the KV fraction (vLLM gpu_memory_utilization, SGLang "
                          "mem_fraction_static, lmdeploy cache_max_entry_count)", &R::gpu_memory_utilization)
                    .Min(0, true)
                    .Max(1)
                    .Unset("the profile's"));
    t.push_back(Option<R>("--cuda-context-mib", "cuda_context_mib", "CUDA context and library workspaces (docs/memory-model.md §6)",
                          &R::cuda_context_mib).Unit("MiB").Min(0).Max(1e6));
    t.push_back(Option<R>("--nccl-mib", "nccl_mib", "NCCL buffers per communicator (docs/memory-model.md §6)", &R::nccl_mib).Unit("MiB").Min(0).Max(1e6));
    t.push_back(Option<R>("--fragmentation", "fragmentation", "allocator slack as a fraction of dynamic tensors (docs/memory-model.md §6)",
                          &R::fragmentation).Min(0).Max(1));
    t.push_back(Option<R>("--mfu", "mfu", "a flat achievable fraction of dense peak instead of the per-operation kernel costs (docs/time-model.md §3)", &R::mfu).Min(0, true).Max(1).Unset("per-operation costs"));
    t.push_back(Option<R>("--network", "network",
                          "node network: ib-400g, ib-200g, ib-100g, ib-100g-x4, roce-400g, roce-200g, roce-100g, 100gbe, "
                          "25gbe, 10gbe, 1gbe or Gb/s per node (default: by the card's server class, docs/time-model.md "
                          "§4)", &R::network)
                    .Choices({}, [](const std::string& s) { ParseNetwork(s); })
                    .Unset("by card"));
    t.push_back(Option<R>("--tokens", "tokens", "training job size (for total and GPU-hours; 0: per token)", &R::tokens)
                    .Unit("tokens").Min(0).Max(1e18).Unset("none"));
    t.push_back(Option<R>("--epochs", "epochs", "epochs over --dataset-tokens (instead of --tokens)", &R::epochs)
                    .Min(0, true).Max(1e6).Unset("none"));
    t.push_back(Option<R>("--dataset-tokens", "dataset_tokens", "tokens in one epoch", &R::dataset_tokens)
                    .Unit("tokens").Min(0, true).Max(1e18).Unset("none"));
    t.push_back(Option<R>("--prompt-tokens", "prompt_tokens", "inference: prompt length", &R::prompt_tokens)
                    .Unit("tokens").Min(0, true).Max(1e7));
    t.push_back(Option<R>("--output-tokens", "output_tokens", "inference: generated tokens per request",
                          &R::output_tokens).Unit("tokens").Min(0, true).Max(1e7));
    t.push_back(Option<R>("--qps", "qps", "inference: requests per second to serve", &R::qps).Unset("none").Min(0, true).Max(1e6));
    t.push_back(Option<R>("--latency-ms", "latency_ms", "inference: per-output-token latency target", &R::latency_ms)
                    .Unit("ms").Min(0, true).Max(1e6).Unset("none"));
    // A search tries every whole node up to it: 4,096 GPUs take a few seconds for an 8B model,
    // 16,384 fifteen (issue 26 req. 8); --gpus pins a larger count.
    t.push_back(Option<R>("--max-gpus", "max_gpus", "search: largest GPU count (whole nodes of 8 beyond one node)",
                          &R::max_gpus).Min(1).Max(4096));
    t.push_back(Option<R>("--margin", "margin", "search: memory safety margin (fraction of the card)", &R::margin).Min(0).Max(1, true));
    t.push_back(Option<R>("--objective", "objective", "search: what to rank by", &R::objective)
                    .Choices({"time", "gpu-hours", "cost"}, [](const std::string& s) { ParseObjective(s); }));
    t.push_back(Option<R>("--top", "top", "search: candidates to show", &R::top).Min(1).Max(1000));
    t.push_back(Option<R>("--offers", "offers",
                          "price with this offers file (docs/offers.md): a search ranks only its cards by the cheapest "
                          "rental; one card prices the job (with --tokens) or the serving plan (with --qps)",
                          &R::offers).Unset("none"));
    t.push_back(Option<R>("--start", "start",
                          "with --offers: when the job starts, HH:MM today or YYYY-MM-DDTHH:MM in the offers' time "
                          "zone, or now", &R::start).Unset("09:00 on the first Monday of next month"));
    t.push_back(Option<R>("--interruptible", "interruptible",
                          "with --offers: the job checkpoints and can restart, so spot offers may run it (their rework "
                          "from the interruption rate, restart and checkpoint minutes is priced: docs/cost-model.md §3)",
                          &R::interruptible));
    t.push_back(Option<R>("--storage-gbps", "storage_gbps",
                          "checkpoint storage write and read rate per node (docs/data-movement.md §2)",
                          &R::storage_gbps).Unit("Gbit/s").Min(0.001).Max(10000).Unset("16, assumed (one NVMe drive)"));
    t.push_back(Option<R>("--sync-link", "sync_link",
                          "each node's link to shared or object storage: 1gbe, 10gbe, 25gbe, 100gbe ... or a rate "
                          "(2.5gbps, 500mbps)", &R::sync_link)
                    .Choices({}, [](const std::string& s) { ParseLinkRate(s, "sync_link"); })
                    .Unset("none: checkpoints stay on the node"));
    t.push_back(Option<R>("--checkpoint-async", "checkpoint_async",
                          "save checkpoints asynchronously (copy to host memory, write behind: fsdp, megatron, "
                          "torchtitan)", &R::checkpoint_async).Choices({"on", "off"}, on_off));
    t.push_back(Option<R>("--checkpoint-consolidated", "checkpoint_consolidated",
                          "save one consolidated checkpoint (rank 0 gathers the shards and writes it all: FSDP's "
                          "full state dict, DeepSpeed's zero_to_fp32) instead of the framework's sharded save",
                          &R::checkpoint_consolidated).Choices({"on", "off"}, on_off));
    t.push_back(Option<R>("--failures-per-gpu-hour", "failures_per_gpu_hour",
                          "node failures per GPU-hour, for the checkpoint interval (docs/data-movement.md §3)",
                          &R::failures_per_gpu_hour).Min(0).Max(1).Unset("1.97e-5 (Llama 3 pre-training)"));
    t.push_back(Option<R>("--node-wait-minutes", "node_wait_minutes",
                          "after a node fails, the minutes until a replacement runs the job again, before the "
                          "restore (0: a spare node at hand; docs/data-movement.md §2)",
                          &R::node_wait_minutes)
                    .Unit("minutes")
                    .Min(0)
                    .Max(43200)
                    .Unset("0, assumed; with --offers the offers' terms.node_replacement_hours"));
    t.push_back(Option<R>("--dataset-bytes", "dataset_bytes", "dataset to upload from the office before the job",
                          &R::dataset_bytes).Unit("bytes").Min(0).Max(1e17).Unset("none"));
    t.push_back(Option<R>("--uplink", "uplink", "the office's link to the data centre: 100mbps, 1gbe ... (upload time)",
                          &R::uplink)
                    .Choices({}, [](const std::string& s) { ParseLinkRate(s, "uplink"); })
                    .Unset("none"));
    t.push_back(Option<R>("--check-report", "check_report",
                          "a gpuplan check --json report of the rented machine: its measured link (check --net, "
                          "instead of --sync-link) and storage read rate (instead of --storage-gbps)",
                          &R::check_report).Unset("none"));
    t.push_back(Option<R>("--egress-gb", "egress_gb",
                          "with --offers: data the job takes out of the data centre, priced at the offers' "
                          "bandwidth.price_per_gb", &R::egress_gb)
                    .Unit("GB").Min(0).Max(1e9).Unset("the trained weights (checkpoint.weights_bytes)"));
    return t;
  }();
  return table;
}

void MarkGivenFitOptions(FitRequest& r, const std::function<bool(const std::string& key)>& given) {
  r.pinned = {};
  r.given.clear();
  for (const auto& o : FitOptionTable()) {
    if (given(o.key)) {
      r.given.push_back(o.key);
    }
  }
  if (given("gpus")) r.pinned.gpus = r.gpus;
  if (given("tp")) r.pinned.tp = r.tp;
  if (given("pp")) r.pinned.pp = r.pp;
  if (given("ep")) r.pinned.ep = r.ep;
  if (given("vpp")) r.pinned.vpp = r.vpp;
  if (given("cp")) r.pinned.cp = r.cp;
  if (given("zero")) r.pinned.zero = r.zero;
  if (given("micro_batch")) r.pinned.micro_batch = r.micro_batch;
  if (given("recompute")) r.pinned.recompute = ParseRecompute(r.recompute);
  if (given("sp")) r.pinned.sp = r.sp;
  if (given("offload_optimizer")) r.pinned.offload_optimizer = r.offload_optimizer;
  if (given("offload_params")) r.pinned.offload_params = r.offload_params;
  r.max_gpus_given = given("max_gpus");
  r.context_given = given("context");
  r.request_lengths_given = given("prompt_tokens") || given("output_tokens");
  r.cuda_context_given = given("cuda_context_mib");
  r.batched_tokens_given = given("batched_tokens");
  r.precision_given = given("precision");
  r.recompute_given = given("recompute");
  r.tp_overlap_given = given("tp_overlap");
  r.dp_overlap_given = given("dp_overlap");
}

void ReadJson(const nlohmann::json& j, FitRequest& r) {
  const std::vector<std::string> keys = ReadJsonOptions(FitOptionTable(), j, r);
  MarkGivenFitOptions(r, [&keys](const std::string& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); });
}

void CheckFitRequest(const FitRequest& r, const std::string& data_dir) {
  try {
    CheckGivenOptions(FitOptionTable(), r, r.given);
  } catch (const InputError&) {
    // An error PrepareFit finds (an unknown model, a framework that does not fit the task)
    // comes first, as fit has always reported them.
    PrepareFit(r, data_dir);
    throw;
  }
}

}  // namespace gpuplan
