// An engine's batch under a KV limit (src/fit/batching.h, docs/time-model.md §5.2): every figure
// below is worked by hand from the policies as the engines' schedulers run them (vLLM V1's
// Scheduler.schedule, TGI v3's queue), step by step, not taken from the program.
#include <gtest/gtest.h>

#include <vector>

#include "core/error.h"
#include "fit/batching.h"

namespace gpuplan {
namespace {

struct Call {
  double a = 0;
  double b = 0;
};

// Unit costs that record their calls: a decode step 1 s, a prefill 0.5 s.
struct Recorder {
  std::vector<Call> decodes;
  std::vector<Call> prefills;
  StepCosts Costs() {
    StepCosts c;
    c.decode = [this](double running, double context) {
      decodes.push_back({running, context});
      return 1.0;
    };
    c.prefill = [this](double tokens, double sequences) {
      prefills.push_back({tokens, sequences});
      return 0.5;
    };
    return c;
  }
};

// 3 requests of 2 prompt tokens, 3 output tokens each, a pool of 10 one-token blocks (a whole
// request is 5 tokens: two fit at full length, not three).
constexpr int64_t kSeqs = 3;
constexpr int64_t kPrompt = 2;
constexpr int64_t kOut = 3;

TEST(Batching, PreemptRunsTheNewestAgainFromItsPrompt) {
  // By hand, as vLLM V1 schedules it (running requests first, in order; a request whose slot
  // finds no block pops the newest running one; no admission in a step that preempted):
  // step 1: all three admitted on 3 tokens each (prompt + the token the prefill makes): 9 of
  //   10 held; one prefill of 6 tokens over 3 sequences.
  // step 2: each needs a 4th token, 1 free: the newest (3 tokens) is preempted -> 4 free; the
  //   other two decode (context 2 x 3 = 6), 2 free; nothing admitted (a preemption this step).
  // step 3: the two decode (context 2 x 4 = 8) and finish; the waiting one needs 4 blocks, 0
  //   free before they finish: stays.
  // step 4: it is admitted again: prefill of its prompt and its 1 output token (3 tokens).
  // step 5: it decodes (context 4) and finishes.
  Recorder rec;
  const StaticBatchRun r = RunStaticBatch(kSeqs, kPrompt, kOut, KvPool{10, 1, KvOverflow::kPreempt}, rec.Costs());
  ASSERT_TRUE(r.simulated);
  EXPECT_EQ(r.steps, 5);
  EXPECT_EQ(r.preemptions, 1);
  EXPECT_DOUBLE_EQ(r.recomputed_tokens, 3);
  EXPECT_EQ(r.max_running, 2);
  EXPECT_TRUE(r.kv_limited);
  ASSERT_EQ(rec.decodes.size(), 3u);
  EXPECT_DOUBLE_EQ(rec.decodes[0].a, 2);
  EXPECT_DOUBLE_EQ(rec.decodes[0].b, 6);
  EXPECT_DOUBLE_EQ(rec.decodes[1].a, 2);
  EXPECT_DOUBLE_EQ(rec.decodes[1].b, 8);
  EXPECT_DOUBLE_EQ(rec.decodes[2].a, 1);
  EXPECT_DOUBLE_EQ(rec.decodes[2].b, 4);
  ASSERT_EQ(rec.prefills.size(), 2u);
  EXPECT_DOUBLE_EQ(rec.prefills[0].a, 6);
  EXPECT_DOUBLE_EQ(rec.prefills[0].b, 3);
  EXPECT_DOUBLE_EQ(rec.prefills[1].a, 3);
  EXPECT_DOUBLE_EQ(rec.prefills[1].b, 1);
  // 3 decode seconds + 2 prefills of 0.5 s = 4 s for 9 output tokens.
  EXPECT_DOUBLE_EQ(r.seconds, 4.0);
  EXPECT_DOUBLE_EQ(r.output_tokens_per_second, 9.0 / 4.0);
}

TEST(Batching, ReserveAdmitsOnlyWholeRequests) {
  // TGI v3 allocates prompt + max_new_tokens when a request joins: 5 blocks each, two admitted
  // (prefill of 4 tokens over 2), the third waits; they decode at contexts 2 x 3 and 2 x 4 and
  // finish in step 3, after that step's admission; step 4 admits the third (prefill 2 tokens),
  // which decodes at contexts 3 and 4 in steps 5 and 6. 4 decodes + 2 prefills = 5 s.
  Recorder rec;
  const StaticBatchRun r = RunStaticBatch(kSeqs, kPrompt, kOut, KvPool{10, 1, KvOverflow::kReserve}, rec.Costs());
  EXPECT_EQ(r.steps, 6);
  EXPECT_EQ(r.preemptions, 0);
  EXPECT_DOUBLE_EQ(r.recomputed_tokens, 0);
  ASSERT_EQ(rec.decodes.size(), 4u);
  EXPECT_DOUBLE_EQ(rec.decodes[0].b, 6);
  EXPECT_DOUBLE_EQ(rec.decodes[1].b, 8);
  EXPECT_DOUBLE_EQ(rec.decodes[2].a, 1);
  EXPECT_DOUBLE_EQ(rec.decodes[2].b, 3);
  EXPECT_DOUBLE_EQ(rec.decodes[3].b, 4);
  ASSERT_EQ(rec.prefills.size(), 2u);
  EXPECT_DOUBLE_EQ(rec.prefills[0].a, 4);
  EXPECT_DOUBLE_EQ(rec.prefills[1].a, 2);
  EXPECT_DOUBLE_EQ(r.seconds, 5.0);
  EXPECT_DOUBLE_EQ(r.output_tokens_per_second, 9.0 / 5.0);
}

TEST(Batching, UnlimitedRunsEveryRequestTogether) {
  // One prefill of 3 x 2 tokens makes each request's first token; two decode steps of all
  // three at contexts 3 x 3 and 3 x 4 make the other two: 2.5 s for 9 tokens.
  Recorder rec;
  const StaticBatchRun r = RunStaticBatch(kSeqs, kPrompt, kOut, KvPool{}, rec.Costs());
  EXPECT_EQ(r.steps, 3);
  EXPECT_FALSE(r.kv_limited);
  ASSERT_EQ(rec.decodes.size(), 2u);
  EXPECT_DOUBLE_EQ(rec.decodes[0].a, 3);
  EXPECT_DOUBLE_EQ(rec.decodes[0].b, 9);
  EXPECT_DOUBLE_EQ(rec.decodes[1].b, 12);
  EXPECT_DOUBLE_EQ(r.seconds, 2.5);
  EXPECT_DOUBLE_EQ(r.mean_running, 2.0 / 3.0 * 3.0);  // 0, 3, 3 over three steps
}

TEST(Batching, BlocksRoundUpPerSequence) {
  // Blocks of 4 tokens, 8 blocks; 5 requests of 2 + 3 tokens. Reserving: a whole request is
  // ceil(5 / 4) = 2 blocks, so 4 of 5 are admitted at once.
  Recorder a;
  const StaticBatchRun reserve = RunStaticBatch(5, 2, 3, KvPool{32, 4, KvOverflow::kReserve}, a.Costs());
  ASSERT_FALSE(a.prefills.empty());
  EXPECT_DOUBLE_EQ(a.prefills[0].b, 4);
  EXPECT_EQ(reserve.preemptions, 0);
  // Preempting: all 5 admitted on 3 tokens (1 block each, 3 free). Step 2 takes each to 4
  // tokens, still one block (context 5 x 3 = 15). Step 3 takes each to 5 tokens: 5 new blocks,
  // 3 free; preempting the newest frees 1 block and needs 1 fewer, so one preemption closes the
  // gap of 2: 4 decode (context 4 x 4 = 16) and finish; step 4 recomputes the fifth (2 + 2
  // tokens) and its prefill makes its last token.
  Recorder b;
  const StaticBatchRun preempt = RunStaticBatch(5, 2, 3, KvPool{32, 4, KvOverflow::kPreempt}, b.Costs());
  EXPECT_DOUBLE_EQ(b.prefills[0].b, 5);
  EXPECT_EQ(preempt.preemptions, 1);
  ASSERT_EQ(b.decodes.size(), 2u);
  EXPECT_DOUBLE_EQ(b.decodes[0].a, 5);
  EXPECT_DOUBLE_EQ(b.decodes[0].b, 15);
  EXPECT_DOUBLE_EQ(b.decodes[1].a, 4);
  EXPECT_DOUBLE_EQ(b.decodes[1].b, 16);
  ASSERT_EQ(b.prefills.size(), 2u);
  EXPECT_DOUBLE_EQ(b.prefills[1].a, 4);
  EXPECT_DOUBLE_EQ(preempt.recomputed_tokens, 4);
  EXPECT_EQ(preempt.steps, 4);
}

TEST(Batching, SteadyStateInFlight) {
  // 1000 tokens, prompt 10, output 100. Reserve: whole requests of 110: floor(1000 / 110) = 9.
  // Preempt: a request holds 10 + (100 + 1) / 2 = 60.5 tokens on average: floor(1000 / 60.5) = 16.
  EXPECT_DOUBLE_EQ(SteadyInFlight(KvPool{1000, 1, KvOverflow::kReserve}, 10, 100), 9);
  EXPECT_DOUBLE_EQ(SteadyInFlight(KvPool{1000, 1, KvOverflow::kPreempt}, 10, 100), 16);
  // 16-token blocks: 62 blocks; reserve ceil(110 / 16) = 7 each: 8; preempt 60.5 / 16 + 0.5 =
  // 4.28 blocks each: floor(62 / 4.28125) = 14.
  EXPECT_DOUBLE_EQ(SteadyInFlight(KvPool{1000, 16, KvOverflow::kReserve}, 10, 100), 8);
  EXPECT_DOUBLE_EQ(SteadyInFlight(KvPool{1000, 16, KvOverflow::kPreempt}, 10, 100), 14);
}

TEST(Batching, APoolTooSmallForOneRequestIsNotRun) {
  Recorder rec;
  const StaticBatchRun r = RunStaticBatch(2, 4, 4, KvPool{7, 1, KvOverflow::kPreempt}, rec.Costs());
  EXPECT_FALSE(r.simulated);
  EXPECT_TRUE(rec.decodes.empty());
  EXPECT_THROW(RunStaticBatch(0, 4, 4, KvPool{}, rec.Costs()), InputError);
  EXPECT_THROW(ParseKvOverflow("evict", "kv_overflow"), InputError);
  EXPECT_EQ(ParseKvOverflow("reserve", "kv_overflow"), KvOverflow::kReserve);
}

}  // namespace
}  // namespace gpuplan
