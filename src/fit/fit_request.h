// The fit job as a request: `gpuplan fit` and any other front end (the serve API) fill a
// FitRequest; plan/fit_job.h runs it (it prices with an offers file, so the function lives one
// layer up) and fit/render/fit_json.h maps the result to JSON. Every default of the fit options is
// defined here, once; a front end binds its options to these fields and does not restate them.
// Errors name an option by its key (InputError::Option: gpus, flash_attn, epochs, ...); each front
// end spells it (the CLI as the flag --gpus, the serve API as the JSON key).
//
// Lifetime: results hold `const Gpu*` into the GpuCatalog the job ran on; the caller owns the
// catalog and keeps it alive as long as the result.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "core/time.h"
#include "catalog/model_loader.h"
#include "fit/accuracy.h"
#include "fit/advisor.h"
#include "fit/data_movement.h"
#include "fit/memory_model.h"
#include "fit/search.h"
#include "fit/time_model.h"
#include "fit/workload.h"

namespace gpuplan {

struct FitRequest {
  std::string model;  // preset name, config.json path or checkpoint folder; required
  std::string task = "full";
  std::string gpu;  // one card; empty or a comma-separated list: a search
  int64_t gpus = 1;
  int64_t seq = 2048;
  int64_t micro_batch = 1;
  int64_t global_batch = 0;  // 0: fill the pipeline
  std::string precision = "mixed";
  std::string optimizer = "adamw";
  int zero = 0;
  int64_t tp = 1, pp = 1, ep = 1, vpp = 1, cp = 1;
  bool sp = false;
  std::string recompute = "none";
  std::string flash_attn = "on";
  std::string fp8 = "off";
  std::string tp_overlap = "off";
  std::string dp_overlap = "on";  // data-parallel reduction beside the backward pass (§4, §10)
  std::string attention;  // empty: the framework profile's kernel (fa2 unless it says fa3)
  std::string compile;    // on | off; empty: the framework profile's (fused unless it says eager)
  int64_t lora_rank = 16;
  double lora_dropout = 0;
  std::string lora_targets = "all-linear";
  std::string weight_dtype = "bf16";
  std::string kv_dtype = "bf16";
  int64_t context = 4096;
  int64_t concurrency = 1;
  int64_t batched_tokens = 8192;
  bool offload_optimizer = false;
  bool offload_params = false;
  std::string framework = "generic";  // a profile of data/frameworks.yaml (docs/memory-model.md §8)
  std::string gguf_type = "Q4_K_M";   // llama.cpp profile: the GGUF type of the weights
  std::string loss;                   // cross-entropy: full, chunked, fused (empty: the profile's; §8.3)
  std::optional<double> gpu_memory_utilization;  // server profiles' KV fraction (unset: the profile's)
  double cuda_context_mib = 500;
  double nccl_mib = 256;
  double fragmentation = 0.05;
  std::optional<double> mfu;  // unset: per-operation kernel costs (docs/time-model.md §3)
  std::string network;        // empty: the card's server class decides (DefaultNetwork)
  double tokens = 0;          // training job size (0: per token)
  double epochs = 0;          // with dataset_tokens, instead of tokens
  double dataset_tokens = 0;
  int64_t prompt_tokens = 1024;
  int64_t output_tokens = 256;
  double qps = 0;
  double latency_ms = 0;
  int64_t max_gpus = 64;
  double margin = 0.05;
  std::string objective = "time";
  int64_t top = 5;
  std::string offers;  // offers file: prices the job, the serving plan or the search
  std::string start;   // with offers: when the job starts (empty: DefaultJobStart, read/time_text.h)
  bool interruptible = false;  // with offers: the job checkpoints, so spot may run it
  // Data movement (fit/data_movement.h, docs/data-movement.md): the checkpoint storage and the
  // links a checkpoint and the dataset travel over.
  std::optional<double> storage_gbps;           // unset: kDefaultStorageGbps, said to be assumed
  std::string sync_link;                        // node to shared storage (empty: none)
  std::string checkpoint_async = "off";         // on: stage in host memory, write behind
  std::string checkpoint_consolidated = "off";  // on: one rank gathers and writes the whole checkpoint
  std::optional<double> failures_per_gpu_hour;  // unset: Llama 3's rate
  std::optional<double> node_wait_minutes;      // after a failure, until a replacement node runs
  double dataset_bytes = 0;                     // to upload from the office before the start
  std::string uplink;                           // office to data centre (empty: none)
  std::optional<double> egress_gb;              // with offers: GB taken out (unset: the trained weights)
  std::string check_report;  // a gpuplan check --json report: its measured link and storage (plan/fit_job.cc)
  std::optional<UtcSeconds> now;  // for `start` and the serving month (unset: the clock)

  // A network front end (the serve API) never lets a request name a file on the server: the
  // model is a preset or a config.json's text, the offers are the file's text.
  bool presets_only = false;                // `model` must name a preset (LoadPresetModel)
  std::optional<std::string> model_config;  // config.json text, used instead of `model`'s file
  std::optional<std::string> offers_text;   // the offers file's text; `offers` then only names it
  std::optional<std::string> check_report_text;  // a check report's JSON text; `check_report` names it

  // Which options were given explicitly: the layout pins constrain a search (docs/time-model.md
  // §6); max_gpus given makes one card a search over counts; context given keeps the window
  // when sizing for a request rate.
  SearchPins pinned;
  bool max_gpus_given = false;
  bool context_given = false;
  bool request_lengths_given = false;  // --prompt-tokens or --output-tokens given: a request's own length
  bool cuda_context_given = false;
  bool batched_tokens_given = false;  // else a server profile's default on the card (vLLM)
  bool precision_given = false;       // else the framework's default precision (transformers v5: bf16)
  bool tp_overlap_given = false;      // else chosen for speed where the framework offers it
  bool dp_overlap_given = false;      // else on (the faster), with off in the range (§10)
  bool recompute_given = false;       // else the framework's default (LLaMA-Factory: full)  // else a framework profile takes the card generation's context
  // The options given, by key (MarkGivenFitOptions): RunFit checks their values against the
  // options table (CheckFitRequest), the same way for every front end.
  std::vector<std::string> given;

  std::function<void(double)> progress;  // a search's progress, fraction done (may be empty)

  // A search without a card, over a list of cards, or over counts of one card (max_gpus given).
  bool IsSearch() const;
  // The job size in tokens: tokens, or epochs x dataset_tokens. Throws InputError.
  double JobTokens() const;
};

// The request's domain inputs, checked in the order the CLI always reported errors: the model,
// the workload's names, the overheads, the network, the job size, the layout. Throws InputError
// (naming the option by its key) or what LoadModel throws.
struct FitInputs {
  LoadedModel model;
  Workload workload;  // before ForCard
  Layout layout;
  OverheadConfig overhead;
  TimeConfig time;
  double tokens = 0;  // JobTokens()
  // With a framework profile and no --cuda-context-mib: the CUDA context by GPU architecture
  // (data/frameworks.yaml allocator.cuda_context_mib); empty otherwise.
  std::map<std::string, double> cuda_context_mib;
  DataMovementConfig data;  // storage, links, failure rate, dataset
  std::shared_ptr<const TimeAccuracy> accuracy;  // data/accuracy.yaml; nullptr without one
};
FitInputs PrepareFit(const FitRequest& r, const std::string& data_dir);

// The search's options without offers (plan/fit_job.h adds their prices). Throws InputError
// for an unknown card or objective.
SearchOptions SearchOptionsOf(const FitRequest& r, const FitInputs& in, const GpuCatalog& catalog);

// One card, one layout.
// A setting a training fit's request left unstated, chosen for speed within memory
// (docs/time-model.md §10).
struct UnstatedChoice {
  std::string name;                // "vpp", "tp_overlap", "dp_overlap", "micro_batch", "recompute"
  std::string chosen;              // "4", "on", "2", "selective"
  std::vector<std::string> tried;  // every value tried, in order
  std::string slowest;             // its value in the slowest combination that fits (`worst`)
};
// Over every combination of the unstated settings that fits: the fastest (the one taken) and the
// slowest, so a user sees how much the answer hangs on what they did not say.
struct UnstatedSettings {
  std::vector<UnstatedChoice> choices;
  int combinations = 0;  // tried
  int fitting = 0;       // of those, fitting the card
  double best_step_seconds = 0, worst_step_seconds = 0;
  double best_tokens_per_second = 0, worst_tokens_per_second = 0;
  double best_mfu = 0, worst_mfu = 0;
  std::optional<double> best_total_hours, worst_total_hours;
  std::string worst;  // the slowest combination, "vpp 1, tp_overlap off, recompute full"
};

// Which of the settings ChooseUnstatedSettings may choose the request gave (each true: kept).
struct GivenSettings {
  bool vpp = true;
  bool tp_overlap = true;
  bool dp_overlap = true;
  bool micro_batch = true;
  bool recompute = true;
};

// The settings a training request left unstated that its framework offers (docs/time-model.md
// §10), each combination estimated on the card; the fastest that fits is taken (`w`, `l` and
// `time` are set to it; a tie keeps the earlier value: the smaller vpp and micro-batch, tensor-
// parallel overlap off, data-parallel overlap on, the least recomputation) and the range over
// all that fit is returned:
// - vpp with a pipeline where the profile runs the interleaved schedule: 1, 2, 4, 8;
// - tensor-parallel overlap with sequence parallelism where the profile offers it: off, on;
// - data-parallel overlap with ZeRO 0-2 and more than one data-parallel rank: on, off (every
//   framework offers it: PyTorch DDP, FSDP, Megatron --overlap-grad-reduce, DeepSpeed overlap_comm,
//   whose second reduce bucket the memory of "on" counts: `overhead` is set to the choice);
// - micro-batch 1, 2, 4, 8 within the global batch (the given one, or the one the current
//   micro-batch gives: a micro-batch is tried only where micro-batch x dp divides it, so the
//   global batch, a training hyperparameter, never changes);
// - recomputation where the profile has no default of its own: none, selective (skipped with
//   flash attention, which already does it), op (where the profile offers it), full.
// Nullopt when nothing was left to choose or nothing fits (then `w`, `l` and `time` are unchanged).
std::optional<UnstatedSettings> ChooseUnstatedSettings(const GivenSettings& given, const ModelSpec& spec, Workload& w,
                                                       Layout& l, const Gpu& gpu, OverheadConfig& overhead,
                                                       TimeConfig& time, double tokens);

struct FitSingle {
  const Gpu* gpu = nullptr;
  Workload workload;  // after ForCard
  Layout layout;
  MemoryEstimate memory;  // notes include the dtype changes and checkpoint mismatch
  std::vector<Suggestion> suggestions;  // when it does not fit
  bool fits = false;                    // memory fits and, with a latency target, it is met
  Network network;                      // between nodes, for the training time
  std::optional<TrainingTime> training;
  std::optional<InferencePlan> plan;  // inference: the serving plan
  // Inference at the concurrency the server runs (plan->fits): the one asked for, or fewer where
  // that is all its KV cache holds in flight (§5.2) or its scheduler admits (max_num_seqs, §5).
  InferenceTime shown;
  int64_t shown_concurrency = 0;
  CheckpointPlan checkpoint;          // its size, save, sync and restore times, the interval
  std::optional<UnstatedSettings> unstated;  // training: settings chosen because none was given
  // How far the time model came from published runs on this card and over all (not with --mfu,
  // the user's own efficiency).
  std::optional<AccuracyNote> accuracy;
};

// A search over cards and layouts: training or inference.
struct FitSearch {
  SearchOptions options;  // as run (cards searched, pins, objective, top); progress cleared
  bool cards_named = false;  // the request named its cards (a list, or one card over counts)
  std::string currency = "CNY";  // of the candidates' costs
  std::optional<SearchResult> training;
  std::optional<InferenceSearch> inference;
  // How far the time model came from published runs on each card ranked (shown or best of its
  // card), in order of first appearance; empty with --mfu or without data/accuracy.yaml.
  std::vector<AccuracyNote> accuracy;
  bool Found() const;
};

// What a front end renders (plan/fit_job.h adds the job's price).
struct FitResult {
  LoadedModel model;
  Workload workload;  // the request's (a single fit's own, after ForCard, is in `single`)
  double tokens = 0;  // the job size used
  double qps = 0;     // the request's rate and latency target, shown beside the plans
  double latency_ms = 0;
  std::optional<FitSingle> single;
  std::optional<FitSearch> search;
  DataPlan data;  // the dataset's upload from the office
  bool Positive() const;  // fits (single) or something found (search): exit 0, else 1
};

// One card: ForCard, memory, suggestions, training time or the serving plan (unpriced).
FitSingle FitOnCard(const FitRequest& r, const FitInputs& in, const Gpu& gpu, const GpuCatalog& catalog);
// A search with `options` (SearchOptionsOf, maybe priced by offers): training or inference.
FitSearch SearchFit(const FitRequest& r, const FitInputs& in, SearchOptions options);

}  // namespace gpuplan
