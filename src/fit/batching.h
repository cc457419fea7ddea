// How an inference engine runs sequences when its KV cache cannot hold them all at full length
// (docs/time-model.md §5.2): whom it admits, whom it preempts, and what the batch then costs.
// In: the engine's KV pool (tokens, block size, overflow policy, from the framework profile and
// the memory model), the sequences and their lengths, and the cost of a decode step and of a
// prefill (from the time model). Out: sequences in flight (continuous serving) or the time of a
// whole batch run step by step (a static batch, as engines' benchmarks run).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpuplan {

// What an engine does when the next token of a running sequence finds no free KV block.
enum class KvOverflow {
  kUnlimited,  // no KV pool modelled (the generic profile): every sequence asked for runs
  kPreempt,    // admit on the tokens a sequence holds now; when a step's tokens find no block, the
               // newest running sequence is preempted (its blocks freed) and later recomputes its
               // prompt and output so far (vLLM V1 FCFS, TurboMind, SGLang's retraction)
  kReserve,    // admit only when the pool holds the prompt plus every output token (TGI v3's block
               // allocator, TensorRT-LLM's GUARANTEED_NO_EVICT): nothing is ever preempted
};
const char* ToString(KvOverflow p);
// "unlimited", "preempt" or "reserve"; throws InputError naming `field` otherwise.
KvOverflow ParseKvOverflow(const std::string& s, const std::string& field);

struct KvPool {
  double tokens = 0;         // the KV cache's capacity, tokens (whole blocks)
  int64_t block_tokens = 1;  // tokens per block: a sequence holds ceil(tokens / block) blocks
  KvOverflow policy = KvOverflow::kUnlimited;
};

// Continuous serving at steady state (requests arriving all the time, at every stage of their
// output): the sequences the pool keeps in flight. kReserve: whole pool / blocks of prompt +
// output; kPreempt: whole pool / the blocks a sequence holds on average over its life (prompt +
// half the output, half a block of slack), preemptions then being rare; kUnlimited: infinity.
double SteadyInFlight(const KvPool& pool, int64_t prompt_tokens, int64_t output_tokens);

// The cost of one engine step: a decode step of `running` sequences holding `context_tokens`
// tokens of KV between them, plus the prefill of `prefill_tokens` tokens (new or recomputed
// sequences admitted in that step; 0 when none).
struct StepCosts {
  std::function<double(double running, double context_tokens)> decode;
  std::function<double(double prefill_tokens, double sequences)> prefill;
};

struct StaticBatchRun {
  double seconds = 0;             // from the first prefill to the last token
  double output_tokens_per_second = 0;
  int64_t steps = 0;              // engine steps
  int64_t preemptions = 0;        // sequences preempted (each recomputes later)
  double recomputed_tokens = 0;   // prompt + output tokens prefilled again after a preemption
  int64_t max_running = 0;        // the most sequences decoding at once
  double mean_running = 0;        // averaged over the steps
  bool kv_limited = false;        // the pool stopped some sequence from running at some step
  bool simulated = true;          // false: over the work bound (kMaxGroupSteps), not run
};

// A static batch: `sequences` requests of `prompt_tokens` arrive at once and each generates
// exactly `output_tokens`, run step by step under the pool's policy, lowest index first.
// Sequences in the same state move as one group, so the cost is steps x groups, bounded by
// kMaxGroupSteps (a run over it returns simulated = false).
inline constexpr int64_t kMaxGroupSteps = 20'000'000;
StaticBatchRun RunStaticBatch(int64_t sequences, int64_t prompt_tokens, int64_t output_tokens, const KvPool& pool,
                              const StepCosts& costs);

}  // namespace gpuplan
