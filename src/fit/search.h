// Layout search: every GPU type x count x tp x pp x dp x ZeRO x micro-batch x recomputation
// (x expert parallel for MoE) that fits with a safety margin, ranked by time, GPU-hours or cost.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "core/money.h"
#include "catalog/model.h"
#include "fit/memory_model.h"
#include "fit/time_model.h"

namespace gpuplan {

enum class Objective { kTime, kGpuHours, kCost };
Objective ParseObjective(const std::string& s);
const char* ToString(Objective o);

// Layout dimensions the user fixed (options given on the command line). The search varies only
// the dimensions left empty here; a pinned one is used as given (even beyond max_gpus or a node).
struct SearchPins {
  std::optional<int64_t> gpus;         // GPU count (training: the whole job; inference: one replica)
  std::optional<int64_t> tp;
  std::optional<int64_t> pp;
  std::optional<int64_t> ep;
  std::optional<int64_t> vpp;
  std::optional<int64_t> cp;  // context parallel: only when given (the search does not vary it)
  std::optional<int> zero;
  std::optional<int64_t> micro_batch;
  std::optional<Recompute> recompute;
  std::optional<bool> sp;
  std::optional<bool> offload_optimizer;
  std::optional<bool> offload_params;
  bool Any() const {
    return gpus || tp || pp || ep || vpp || cp || zero || micro_batch || recompute || sp || offload_optimizer || offload_params;
  }
  std::string Describe() const;  // "gpus=1 zero=0", for messages
};

struct SearchOptions {
  std::vector<const Gpu*> gpus;  // card types to consider
  SearchPins pinned;             // dimensions the user chose; the search varies only the rest
  bool each_card = false;        // rank the best layout of every card too, even below `top`
  int64_t max_gpus = 64;
  double margin = 0.05;          // keep only layouts using at most (1 - margin) of the card's memory
  Objective objective = Objective::kTime;
  std::size_t top = 5;
  double tokens = 0;             // job size; 0 = rank per token
  TimeConfig time;
  OverheadConfig overhead;
  std::function<void(double)> progress;  // fraction done, called now and then
  // Price per card-hour by card (e.g. from an offers file); cards missing here use the
  // catalog's illustrative price.
  std::map<const Gpu*, double> price_per_card_hour;
  std::size_t keep_extra = 0;  // keep this many more candidates (for re-pricing afterwards)
};

struct Candidate {
  const Gpu* gpu = nullptr;
  Workload workload;
  Layout layout;
  MemoryEstimate memory;
  TrainingTime time;
  Money cost;  // for the token budget (or per million tokens without one), in the basis' currency
  std::string cost_basis = "illustrative catalog price per card-hour";
  std::string cost_per = "1M tokens";  // what `cost` buys: "job" (the token budget) or "1M tokens"
  double score = 0;          // lower is better, by the objective
};

struct SearchResult {
  std::vector<Candidate> ranked;        // best first: top + a few runners-up
  std::vector<Candidate> best_per_gpu;  // the best layout of each card that has one, best first
  int64_t evaluated = 0;                // layouts whose memory was estimated
  int64_t fitting = 0;                  // of those, layouts that fit with the margin
  std::string closest;                  // when nothing fits: the nearest miss and why
  std::vector<std::string> notes;       // cards not searched and why
  // With offers: layouts fit but no offer may run any of them (spot only, the job not
  // interruptible), and why; `ranked` is then empty.
  std::string unserved;
  // With SearchOptions::keep_extra (an exact re-pricing follows): for each card and GPU count the
  // fastest layout that fits. A job's rental on a fixed card and count costs more the longer it
  // runs (the same start, a longer usage: docs/cost-model.md §8), so the cheapest layout of each
  // card and count is among these, whatever the instance sizes and night windows.
  std::vector<Candidate> fastest_per_count;
};

// True when a and b are the same layout of the same card (count, tp, pp, cp, ep, vpp, ZeRO,
// micro-batch, recomputation).
bool SameLayout(const Candidate& a, const Candidate& b);

// Training search (pretrain, full, lora, qlora). The base workload's global batch is kept
// (rounded up to a multiple of micro-batch x dp); without one, 4M tokens per step for
// pretraining and 64 sequences otherwise.
SearchResult SearchTraining(const ModelSpec& m, const Workload& base, const SearchOptions& o);

// One line on why `c` lost to `best` ("34% slower: communication 1.2 s vs 0.3 s per step").
std::string WhyLost(const Candidate& c, const Candidate& best, Objective objective);

}  // namespace gpuplan

namespace gpuplan {

// Serving plan for one replica layout: the concurrency to run at, and how many replicas a
// request rate needs.
struct InferencePlan {
  const Gpu* gpu = nullptr;
  Workload workload;           // concurrency = the one chosen
  Layout layout;               // one replica
  MemoryEstimate memory;
  InferenceTime time;
  bool fits = false;           // at least one sequence of the context fits next to the weights
  bool meets_latency = true;
  int64_t replicas = 1;
  int64_t gpus_total = 0;
  Money cost_per_hour;  // the replicas per hour: the catalog's illustrative price, or the offers file's
  std::string cost_basis = "illustrative catalog price per card-hour";
  // What decides the replica count (docs/time-model.md §5): "compute" (prefill and decode
  // matmuls fill the GPUs), "memory bandwidth" (decode reads, mostly the KV cache, which more
  // concurrency cannot amortise), "KV capacity" (the weights' reads would amortise over more
  // sequences, but no more fit), "scheduler (max_num_seqs)" (more would fit, but the server runs
  // no more at once: vLLM) or "latency" (the per-token target caps the concurrency).
  std::string bound;
  double prefill_share = 0;  // fraction of a replica's busy time spent on prefill
  int64_t max_concurrency = 0;  // sequences of the context that fit next to the weights (and the
                                // server's scheduler runs at once)
  int64_t scheduler_cap = 0;    // the server's max_num_seqs where it, not the KV space, set max_concurrency
  // §5.2 the engine's policy when its KV pool runs short ("preempt", "reserve"; empty: not
  // modelled) and the sequences the pool keeps in flight under it at steady state (0: not modelled).
  std::string kv_overflow;
  int64_t kv_in_flight = 0;
  int64_t kv_full_length = 0;  // requests of prompt + output tokens the pool holds at full length
  // With qps > 0: the server at the offered load rather than full (docs/time-model.md §5.4).
  // `time` and `workload.concurrency` are the replica at the concurrency it is sized for (the
  // most in flight, which sets the replica count); spread over the replicas, the qps keeps
  // fewer in flight, by Little's law L = (qps / replicas) x (prefill + O x step(L)), and a
  // request sees the step at L. 0 / default without qps.
  double load_in_flight = 0;   // L, sequences in flight a replica (mean)
  InferenceTime at_load;       // the replica's step and prefill at ceil(L)
  // The mean time between a sequence's tokens at that load: the step at ceil(L), stretched by the
  // share of the replica's time its scheduler spends on other requests' prefills (a
  // prefill-first engine stops decoding to run them); the mixed step as it is for an engine that
  // runs prompts inside its steps (§5.3).
  double load_token_seconds = 0;
};

// qps <= 0: one replica at the requested concurrency (capped by what fits). With qps > 0 the
// concurrency is the largest that fits and keeps the per-token latency within latency_ms
// (when > 0), and replicas = ceil(qps / requests per second of one replica).
InferencePlan PlanInference(const ModelSpec& m, const Workload& base, const Layout& replica, const Gpu& gpu,
                            const TimeConfig& t, const OverheadConfig& o, int64_t prompt_tokens, int64_t output_tokens,
                            double qps, double latency_ms);

struct InferenceSearch {
  std::vector<InferencePlan> ranked;
  std::vector<InferencePlan> best_per_gpu;  // the best plan of each card that has one, best first
  int64_t evaluated = 0;
  std::string closest;
  std::vector<std::string> notes;  // cards not searched and why
};

InferenceSearch SearchInference(const ModelSpec& m, const Workload& base, const SearchOptions& o,
                                int64_t prompt_tokens, int64_t output_tokens, double qps, double latency_ms);

}  // namespace gpuplan
