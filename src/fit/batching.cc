#include "fit/batching.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/enum_names.h"
#include "core/error.h"

namespace gpuplan {

// One table (core/enum_names.h): printing and parsing read the same names.
constexpr EnumName<KvOverflow> kKvOverflows[] = {
    {"unlimited", KvOverflow::kUnlimited}, {"preempt", KvOverflow::kPreempt}, {"reserve", KvOverflow::kReserve}};

const char* ToString(KvOverflow p) { return NameOf(kKvOverflows, p); }

KvOverflow ParseKvOverflow(const std::string& s, const std::string& field) {
  return ParseEnumName(kKvOverflows, s, field);
}

namespace {

int64_t Blocks(int64_t tokens, int64_t block) { return (tokens + block - 1) / block; }

}  // namespace

double SteadyInFlight(const KvPool& pool, int64_t prompt_tokens, int64_t output_tokens) {
  const double block = static_cast<double>(std::max<int64_t>(pool.block_tokens, 1));
  const double blocks = std::floor(pool.tokens / block);
  switch (pool.policy) {
    case KvOverflow::kReserve:
      return std::floor(blocks / static_cast<double>(Blocks(prompt_tokens + output_tokens, pool.block_tokens)));
    case KvOverflow::kPreempt: {
      // §5.2 a sequence holds prompt + g tokens while it has generated g of O: on average over
      // its life prompt + (O + 1) / 2, in whole blocks half a block more.
      const double mean_tokens =
          static_cast<double>(prompt_tokens) + (static_cast<double>(output_tokens) + 1.0) / 2.0;
      const double mean_blocks = mean_tokens / block + (block > 1 ? 0.5 : 0.0);
      return std::floor(blocks / mean_blocks);
    }
    case KvOverflow::kUnlimited: break;
  }
  return std::numeric_limits<double>::infinity();
}

StaticBatchRun RunStaticBatch(int64_t sequences, int64_t prompt_tokens, int64_t output_tokens, const KvPool& pool,
                              const StepCosts& costs) {
  if (sequences <= 0 || prompt_tokens <= 0 || output_tokens <= 0) {
    throw InputError::Option(sequences <= 0 ? "sequences" : prompt_tokens <= 0 ? "prompt_tokens" : "output_tokens",
                             "must be positive");
  }
  const int64_t B = std::max<int64_t>(pool.block_tokens, 1);
  const int64_t P = prompt_tokens;
  const int64_t O = output_tokens;
  const KvOverflow policy = pool.policy;
  const bool limited = policy != KvOverflow::kUnlimited;
  int64_t free = limited ? static_cast<int64_t>(std::floor(pool.tokens / static_cast<double>(B))) : 0;
  StaticBatchRun r;
  // A pool that cannot hold one whole sequence never finishes it (an engine refuses the request).
  if (limited && Blocks(P + O, B) > free) {
    r.simulated = false;
    r.kv_limited = true;
    r.seconds = std::numeric_limits<double>::infinity();
    return r;
  }
  // Sequences in the same state move together: groups in index (priority) order, the running
  // ones first (admission is first come, first served and preemption takes the newest, so no
  // waiting sequence ever precedes a running one).
  struct Group {
    int64_t count = 0;
    int64_t generated = 0;  // output tokens so far
    bool running = false;
  };
  std::vector<Group> groups{{sequences, 0, false}};
  auto held = [&](int64_t g) { return policy == KvOverflow::kReserve ? Blocks(P + O, B) : Blocks(P + g, B); };
  double running_sum = 0;
  int64_t work = 0;
  while (!groups.empty()) {
    if (work > kMaxGroupSteps) {
      r.simulated = false;
      r.seconds = std::numeric_limits<double>::infinity();
      return r;
    }
    work += static_cast<int64_t>(groups.size());
    std::size_t n_running = 0;
    while (n_running < groups.size() && groups[n_running].running) {
      ++n_running;
    }
    // 1. The running sequences' next tokens, in new blocks where a block fills; when the pool
    // is short, preempt the newest (vLLM V1: `self.running.pop()`, then no admission this step).
    bool preempted = false;
    if (policy == KvOverflow::kPreempt) {
      int64_t need = 0;
      for (std::size_t i = 0; i < n_running; ++i) {
        need += groups[i].count * (held(groups[i].generated + 1) - held(groups[i].generated));
      }
      while (need > free && n_running > 0) {
        Group& last = groups[n_running - 1];
        const int64_t h = held(last.generated);
        const int64_t d = held(last.generated + 1) - h;
        const int64_t k = std::min(last.count, (need - free + h + d - 1) / (h + d));
        free += k * h;
        need -= k * d;
        r.preemptions += k;
        r.kv_limited = true;
        preempted = true;
        if (k == last.count) {
          last.running = false;
          --n_running;
        } else {
          last.count -= k;
          groups.insert(groups.begin() + static_cast<std::ptrdiff_t>(n_running), Group{k, last.generated, false});
        }
      }
      free -= need;
    }
    // 2. Decode: every sequence running before this step's admissions makes one token.
    double running = 0;
    double context = 0;
    for (std::size_t i = 0; i < n_running; ++i) {
      running += static_cast<double>(groups[i].count);
      context += static_cast<double>(groups[i].count) * static_cast<double>(P + groups[i].generated);
      groups[i].generated += 1;
    }
    // 3. Admission, first come first served, while the pool holds the head of the queue: its
    // prompt and the output so far (recomputed) and the token its prefill makes; reserve: the
    // whole request. None in a step that preempted.
    double prefill_tokens = 0;
    double admitted = 0;
    if (!preempted) {
      for (std::size_t i = n_running; i < groups.size(); ++i) {
        Group& g = groups[i];
        const int64_t per = held(g.generated + 1);
        const int64_t k = limited ? std::min(g.count, free / per) : g.count;
        if (k == 0) {
          r.kv_limited = true;
          break;
        }
        free -= limited ? k * per : 0;
        prefill_tokens += static_cast<double>(k) * static_cast<double>(P + g.generated);
        if (g.generated > 0) {
          r.recomputed_tokens += static_cast<double>(k) * static_cast<double>(P + g.generated);
        }
        admitted += static_cast<double>(k);
        if (k < g.count) {
          groups.insert(groups.begin() + static_cast<std::ptrdiff_t>(i), Group{k, g.generated + 1, true});
          groups[i + 1].count -= k;
          r.kv_limited = true;
          break;
        }
        g.running = true;
        g.generated += 1;
      }
    }
    if (running > 0) {
      r.seconds += costs.decode(running, context);
    }
    if (prefill_tokens > 0) {
      r.seconds += costs.prefill(prefill_tokens, admitted);
    }
    r.steps += 1;
    running_sum += running;
    r.max_running = std::max(r.max_running, static_cast<int64_t>(running));
    // 4. Finished sequences free their blocks; equal neighbours merge.
    std::vector<Group> next;
    next.reserve(groups.size());
    for (const Group& g : groups) {
      if (g.running && g.generated >= O) {
        free += limited ? g.count * held(O) : 0;
        continue;
      }
      if (!next.empty() && next.back().running == g.running && next.back().generated == g.generated) {
        next.back().count += g.count;
      } else {
        next.push_back(g);
      }
    }
    groups = std::move(next);
  }
  r.mean_running = r.steps > 0 ? running_sum / static_cast<double>(r.steps) : 0;
  r.output_tokens_per_second =
      r.seconds > 0 ? static_cast<double>(sequences) * static_cast<double>(O) / r.seconds : 0;
  return r;
}

}  // namespace gpuplan
