// Settings a training fit is not given (docs/time-model.md §10): vpp and tensor-parallel overlap
// where the framework offers them, data-parallel overlap, the micro-batch within the global batch and the recomputation,
// chosen for speed within memory, and the range over them.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "plan/fit_job.h"
#include "fit/fit_options.h"
#include "plan/render/fit_job_json.h"
#include "plan/render/fit_text.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

FitJobResult Fit(const FitRequest& r) { return RunFit(r, test::Catalog(), test::DataDir()); }

// Llama-3.1-70B (80 layers) on 32 H100: tp 8 with sequence parallelism, pp 4, so under Megatron's
// even split (20 layers a stage) vpp may be 1, 2, 4 or 5 (not 8: 2.5 layers a chunk), and the tp
// collectives may overlap.
FitRequest Pipeline(const std::string& framework) {
  FitRequest r;
  r.model = "Llama-3.1-70B";
  r.task = "pretrain";
  r.gpu = "H100 SXM";
  r.gpus = 32;
  r.tp = 8;
  r.pp = 4;
  r.sp = true;
  r.global_batch = 256;
  r.tokens = 1e10;
  r.framework = framework;
  return r;
}

TEST(UnstatedSettings, TheFastestCombinationThatFitsIsTakenAndTheRangeShown) {
  const FitJobResult f = Fit(Pipeline("megatron"));
  ASSERT_TRUE(f.single && f.single->unstated);
  const UnstatedSettings& u = *f.single->unstated;
  ASSERT_EQ(u.choices.size(), 4u);
  EXPECT_EQ(u.choices[0].name, "vpp");
  EXPECT_EQ(u.choices[0].tried, (std::vector<std::string>{"1", "2", "4", "5"}));
  EXPECT_EQ(u.choices[1].name, "tp_overlap");
  // dp = 32 / (8 x 4) = 1, so every micro-batch 1-8 divides the global batch of 256.
  EXPECT_EQ(u.choices[2].name, "micro_batch");
  EXPECT_EQ(u.choices[2].tried, (std::vector<std::string>{"1", "2", "4", "8"}));
  // Megatron has no recomputation by default; selective is skipped with flash attention (it is
  // what flash attention does), and Megatron offers no op-level policy.
  EXPECT_EQ(u.choices[3].name, "recompute");
  EXPECT_EQ(u.choices[3].tried, (std::vector<std::string>{"none", "full"}));
  EXPECT_EQ(u.combinations, 4 * 2 * 4 * 2);

  // Every combination given explicitly (as --vpp, --tp-overlap, --micro-batch and --recompute
  // would): the choice is the fastest of them (the first in the tried order on a tie), the range
  // their fastest and slowest.
  double fastest = 0, slowest = 1e300;
  std::string fastest_vpp, fastest_overlap, fastest_mb, fastest_rc;
  std::string slowest_vpp, slowest_overlap, slowest_mb, slowest_rc;
  int fitting = 0;
  for (const char* rc : {"none", "full"}) {
    for (int64_t mb : {1, 2, 4, 8}) {
      for (int64_t v : {1, 2, 4, 5}) {
        for (const char* o : {"off", "on"}) {
          FitRequest q = Pipeline("megatron");
          q.vpp = v;
          q.pinned.vpp = v;
          q.tp_overlap = o;
          q.tp_overlap_given = true;
          q.micro_batch = mb;
          q.pinned.micro_batch = mb;
          q.recompute = rc;
          q.recompute_given = true;
          const FitJobResult g = Fit(q);
          EXPECT_FALSE(g.single->unstated) << v << o << mb << rc;  // nothing left to choose
          if (!g.single->fits) {
            continue;
          }
          ++fitting;
          const double tps = g.single->training->tokens_per_second;
          if (tps > fastest) {
            fastest = tps;
            fastest_vpp = std::to_string(v);
            fastest_overlap = o;
            fastest_mb = std::to_string(mb);
            fastest_rc = rc;
          }
          if (tps < slowest) {
            slowest = tps;
            slowest_vpp = std::to_string(v);
            slowest_overlap = o;
            slowest_mb = std::to_string(mb);
            slowest_rc = rc;
          }
        }
      }
    }
  }
  EXPECT_EQ(u.fitting, fitting);
  EXPECT_DOUBLE_EQ(u.best_tokens_per_second, fastest);
  EXPECT_DOUBLE_EQ(u.worst_tokens_per_second, slowest);
  EXPECT_EQ(u.choices[0].chosen, fastest_vpp);
  EXPECT_EQ(u.choices[1].chosen, fastest_overlap);
  EXPECT_EQ(u.choices[2].chosen, fastest_mb);
  EXPECT_EQ(u.choices[3].chosen, fastest_rc);
  // Each choice's value in the slowest combination (the page names them one by one).
  EXPECT_EQ(u.choices[0].slowest, slowest_vpp);
  EXPECT_EQ(u.choices[1].slowest, slowest_overlap);
  EXPECT_EQ(u.choices[2].slowest, slowest_mb);
  EXPECT_EQ(u.choices[3].slowest, slowest_rc);
  EXPECT_EQ(u.worst, "vpp " + slowest_vpp + ", tp_overlap " + slowest_overlap + ", micro_batch " + slowest_mb +
                         ", recompute " + slowest_rc);
  EXPECT_EQ(std::to_string(f.single->layout.vpp), fastest_vpp);
  EXPECT_EQ(std::to_string(f.single->workload.micro_batch), fastest_mb);
  EXPECT_DOUBLE_EQ(f.single->training->tokens_per_second, fastest);
  EXPECT_LT(slowest, fastest);  // the answer hangs on them: the JSON says by how much
  // Recomputation only adds work: the fastest recomputes nothing. (The micro-batch is a trade:
  // with 4 stages fewer, larger micro-batches lengthen the bubble, (pp - 1) / (micro-batches x
  // vpp), Narayanan et al. 2021, but their GEMMs have more rows and run faster on a card with a
  // table by shape, docs/time-model.md §3.1; which wins is what the loop above checked.)
  EXPECT_EQ(fastest_rc, "none");

  const nlohmann::json j = FitJobToJson(f);
  EXPECT_EQ(j["unstated"]["choices"][0]["chosen"], fastest_vpp);
  EXPECT_EQ(j["unstated"]["choices"][3]["name"], "recompute");
  EXPECT_EQ(j["unstated"]["choices"][3]["slowest"], slowest_rc);
  // The text names each as the flag that would pin it, so the line can be pasted back.
  std::ostringstream text;
  FitJobToText(text, f);
  const std::string chosen = "--vpp " + fastest_vpp + ", --tp-overlap " + fastest_overlap + ", --micro-batch " +
                             fastest_mb + ", --recompute " + fastest_rc;
  const std::string slowest_flags = "--vpp " + slowest_vpp + ", --tp-overlap " + slowest_overlap +
                                    ", --micro-batch " + slowest_mb + ", --recompute " + slowest_rc;
  EXPECT_NE(text.str().find("chosen for speed within memory: " + chosen + " (the slowest that fits, " + slowest_flags),
            std::string::npos)
      << text.str();
  for (const char* flag : {"--vpp", "--tp-overlap", "--dp-overlap", "--micro-batch", "--recompute"}) {
    const auto& table = FitOptionTable();
    EXPECT_TRUE(std::any_of(table.begin(), table.end(), [&](const auto& o) { return o.flag == flag; })) << flag;
  }
  EXPECT_DOUBLE_EQ(j["unstated"]["tokens_per_second"]["worst"].get<double>(), slowest);
  EXPECT_EQ(j["layout"]["vpp"], f.single->layout.vpp);
}

// The given micro-batch and recomputation of the tests below, so that only vpp and overlap vary.
FitRequest PinnedBatch(FitRequest r) {
  r.micro_batch = 1;
  r.pinned.micro_batch = 1;
  r.recompute = "none";
  r.recompute_given = true;
  return r;
}

bool Chose(const FitJobResult& f, const std::string& name) {
  if (!f.single->unstated) {
    return false;
  }
  const auto& c = f.single->unstated->choices;
  return std::any_of(c.begin(), c.end(), [&](const UnstatedChoice& x) { return x.name == name; });
}

// A full fine-tune of `model` at `seq` tokens on `gpus` cards with ZeRO `zero` and a global batch,
// the recomputation given.
FitRequest FullFineTune(const char* model, int64_t seq, const char* gpu, int64_t gpus, int zero, int64_t global_batch,
                        const char* recompute) {
  FitRequest r;
  r.model = model;
  r.task = "full";
  r.seq = seq;
  r.gpu = gpu;
  r.gpus = gpus;
  r.zero = zero;
  r.global_batch = global_batch;
  r.recompute = recompute;
  r.recompute_given = true;
  return r;
}

// Qwen2.5-7B full fine-tune on 2 nodes of 8 A100 80GB over 2 x 100 Gb/s RoCE, ZeRO-1, --mfu 0.5,
// 16 micro-batches of 1 a step (global batch 256, dp 16), full recomputation given: only the
// data-parallel overlap is left unstated.
FitRequest DataParallelOnTwoNodes() {
  FitRequest r = FullFineTune("Qwen2.5-7B", 2048, "A100", 16, 1, 256, "full");
  r.network = "roce-100g";
  r.mfu = 0.5;
  r.micro_batch = 1;
  r.pinned.micro_batch = 1;
  return r;
}

// `r` with --dp-overlap given as `value`.
FitRequest GivenDpOverlap(FitRequest r, const char* value) {
  r.dp_overlap = value;
  r.dp_overlap_given = true;
  return r;
}

TEST(UnstatedSettings, DataParallelOverlapIsOnWithOffInTheRange) {
  // Every framework offers the reduction beside the backward pass (PyTorch DDP and FSDP by
  // default, Megatron --overlap-grad-reduce/--overlap-param-gather, DeepSpeed overlap_comm), and it
  // is never slower, so an unstated one is on; off (Megatron-LM's own default) bounds the range.
  const FitRequest on = GivenDpOverlap(DataParallelOnTwoNodes(), "on");
  const FitRequest off = GivenDpOverlap(DataParallelOnTwoNodes(), "off");
  const FitJobResult chosen = Fit(DataParallelOnTwoNodes()), f_on = Fit(on), f_off = Fit(off);
  ASSERT_TRUE(chosen.single->fits);
  EXPECT_FALSE(f_on.single->unstated);  // given: nothing left to choose
  EXPECT_FALSE(f_off.single->unstated);
  ASSERT_TRUE(chosen.single->unstated);
  const UnstatedSettings& u = *chosen.single->unstated;
  ASSERT_EQ(u.choices.size(), 1u);
  EXPECT_EQ(u.choices[0].name, "dp_overlap");
  EXPECT_EQ(u.choices[0].tried, (std::vector<std::string>{"on", "off"}));
  EXPECT_EQ(u.choices[0].chosen, "on");
  EXPECT_EQ(u.worst, "dp_overlap off");

  // By hand (docs/time-model.md §4): one half (reduce-scatter or all-gather) of B bytes a GPU is
  // 7/8 x B over NVLink at 300 GB/s x 0.8 + 7 hops of 5 us, then B/2 across the 2 nodes at
  // 2 x 100 Gb/s x 0.8 = 20 GB/s + one 15 us hop. ZeRO-1 reduce-scatters the bf16 gradients and
  // gathers the bf16 parameters: B = 2 x 7,615,616,512 bytes each.
  const double b = 2.0 * 7'615'616'512.0;
  const double half = 7.0 / 8.0 * b / 240e9 + 7 * 5e-6 + b / 2.0 / 20e9 + 15e-6;
  const TrainingTime& t_off = *f_off.single->training;
  const TrainingTime& t_on = *f_on.single->training;
  EXPECT_NEAR(t_off.dp_seconds, 2.0 * half, 1e-9);
  EXPECT_NEAR(t_off.dp_exposed_seconds, 2.0 * half, 1e-9);  // off: all of it after the backward pass
  EXPECT_FALSE(t_off.dp_overlapped);
  EXPECT_TRUE(t_on.dp_overlapped);
  EXPECT_LT(t_on.dp_exposed_seconds, t_off.dp_exposed_seconds);
  // The rest of the step is the same: off is slower by exactly the part overlap hides.
  EXPECT_NEAR(t_off.step_seconds - t_on.step_seconds, t_off.dp_exposed_seconds - t_on.dp_exposed_seconds, 1e-9);
  EXPECT_DOUBLE_EQ(u.best_step_seconds, t_on.step_seconds);
  EXPECT_DOUBLE_EQ(u.worst_step_seconds, t_off.step_seconds);
  EXPECT_DOUBLE_EQ(chosen.single->training->step_seconds, t_on.step_seconds);
  const nlohmann::json j = FitJobToJson(f_off);
  EXPECT_EQ(j["time"]["communication"]["data_parallel_overlapped"], false);
  const nlohmann::json jc = FitJobToJson(chosen);
  EXPECT_EQ(jc["unstated"]["choices"][0]["name"], "dp_overlap");
  EXPECT_DOUBLE_EQ(jc["unstated"]["step_seconds"]["worst"].get<double>(), t_off.step_seconds);

  // Not a choice where it changes nothing: one data-parallel rank, or ZeRO-3, whose parameter
  // prefetching is not this switch.
  FitRequest one = DataParallelOnTwoNodes();
  one.gpus = 1;
  one.global_batch = 16;
  one.gpu = "H200";
  EXPECT_FALSE(Chose(Fit(one), "dp_overlap"));
  FitRequest z3 = DataParallelOnTwoNodes();
  z3.zero = 3;
  EXPECT_FALSE(Chose(Fit(z3), "dp_overlap"));
}

TEST(UnstatedSettings, DeepSpeedOverlapNeedsItsSecondBucketInMemory) {
  // DeepSpeed ZeRO-1/2 overlaps only with overlap_comm, which allocates a second reduce bucket of
  // reduce_bucket_size = 5e8 elements (stage_1_and_2.py setup_buckets; frameworks.yaml DS-CONFIG,
  // DS-STAGE2): 5e8 x 2 bytes (bf16) = 1,000,000,000 bytes more a GPU. Llama-3.2-3B full, ZeRO-2,
  // 16 A100 40GB, 6,912 tokens, no recomputation: with it the estimate is just over the card's
  // 40 GiB, without it just under, so the unstated overlap is off, the fastest that fits.
  FitRequest r = FullFineTune("Llama-3.2-3B", 6912, "A100 40GB", 16, 2, 256, "none");
  r.framework = "deepspeed";
  r.micro_batch = 1;
  r.pinned.micro_batch = 1;
  FitRequest on = GivenDpOverlap(r, "on");
  const FitRequest off = GivenDpOverlap(r, "off");
  const FitJobResult f_on = Fit(on), f_off = Fit(off), chosen = Fit(r);
  EXPECT_DOUBLE_EQ(f_on.single->memory.per_gpu.Total().value - f_off.single->memory.per_gpu.Total().value, 1e9);
  ASSERT_FALSE(f_on.single->fits);
  ASSERT_TRUE(f_off.single->fits);
  ASSERT_TRUE(chosen.single->unstated);
  ASSERT_EQ(chosen.single->unstated->choices.size(), 1u);
  EXPECT_EQ(chosen.single->unstated->choices[0].name, "dp_overlap");
  EXPECT_EQ(chosen.single->unstated->choices[0].chosen, "off");
  EXPECT_EQ(chosen.single->unstated->fitting, 1);
  EXPECT_TRUE(chosen.single->fits);
  EXPECT_DOUBLE_EQ(chosen.single->memory.per_gpu.Total().value, f_off.single->memory.per_gpu.Total().value);
  EXPECT_FALSE(chosen.single->training->dp_overlapped);
  // With room (2,048 tokens) overlap is on, and the memory answer counts its bucket.
  r.seq = on.seq = 2048;
  const FitJobResult roomy = Fit(r), roomy_on = Fit(on);
  ASSERT_TRUE(roomy.single->unstated);
  EXPECT_EQ(roomy.single->unstated->choices[0].chosen, "on");
  EXPECT_DOUBLE_EQ(roomy.single->memory.per_gpu.Total().value, roomy_on.single->memory.per_gpu.Total().value);
}

TEST(UnstatedSettings, RecomputationIsTheLeastThatFits) {
  // Llama-3.1-8B LoRA at 8,192 tokens on one A100 40GB (generic: no recomputation by default).
  // The activations without recomputation are far beyond the card (about 70 GiB in all), with
  // full recomputation each layer keeps only its input (about 30 GiB). Given explicitly: none does
  // not fit, full does. Unstated: full is taken, and the memory answer is the one with it.
  FitRequest r;
  r.model = "Llama-3.1-8B";
  r.task = "lora";
  r.seq = 8192;
  r.gpu = "A100 40GB";
  r.gpus = 1;
  r.micro_batch = 1;
  r.pinned.micro_batch = 1;
  FitRequest none = r, full = r;
  none.recompute = "none";
  none.recompute_given = true;
  full.recompute = "full";
  full.recompute_given = true;
  const FitJobResult n = Fit(none), fu = Fit(full), chosen = Fit(r);
  ASSERT_FALSE(n.single->fits);
  ASSERT_TRUE(fu.single->fits);
  ASSERT_TRUE(chosen.single->unstated);
  ASSERT_EQ(chosen.single->unstated->choices.size(), 1u);
  EXPECT_EQ(chosen.single->unstated->choices[0].name, "recompute");
  EXPECT_EQ(chosen.single->unstated->choices[0].chosen, "full");
  EXPECT_TRUE(chosen.single->fits);
  EXPECT_EQ(chosen.single->workload.recompute, Recompute::kFull);
  EXPECT_DOUBLE_EQ(chosen.single->memory.per_gpu.Total().value, fu.single->memory.per_gpu.Total().value);
  EXPECT_EQ(chosen.single->unstated->fitting, 1);  // only full fits: best and worst are the same
  EXPECT_EQ(chosen.single->unstated->worst, "recompute full");
}

TEST(UnstatedSettings, TheMicroBatchNeverChangesTheGlobalBatch) {
  // 8 GPUs of data parallelism and a global batch of 24: micro-batch x 8 must divide 24, so only
  // 1 (24 = 3 x 8) is possible (2 x 8 = 16 and 4 x 8 do not divide 24): nothing to choose.
  FitRequest r = FullFineTune("Llama-3.1-8B", 2048, "H100 SXM", 8, 3, 24, "full");
  const FitJobResult f = Fit(r);
  EXPECT_FALSE(Chose(f, "micro_batch"));
  EXPECT_EQ(f.single->workload.micro_batch, 1);
  // A global batch of 64: 1, 2, 4 and 8 all divide it (64 = 8 x 8 x 1), each tried.
  r.global_batch = 64;
  const FitJobResult g = Fit(r);
  ASSERT_TRUE(Chose(g, "micro_batch"));
  EXPECT_EQ(g.single->unstated->choices[0].tried, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(g.single->workload.global_batch, 64);
}

TEST(UnstatedSettings, InterleavingDividesTheBubbleByVpp) {
  // Narayanan et al. 2021 §2.2.2: the interleaved schedule's bubble is (pp - 1) / vpp micro-batch
  // slots against (pp - 1) for 1F1B, the micro-batch's time per stage being the same.
  FitRequest one = PinnedBatch(Pipeline("megatron"));
  one.vpp = 1;
  one.pinned.vpp = 1;
  one.tp_overlap_given = true;
  FitRequest four = one;
  four.vpp = 4;
  four.pinned.vpp = 4;
  const double b1 = Fit(one).single->training->bubble_seconds;
  const double b4 = Fit(four).single->training->bubble_seconds;
  ASSERT_GT(b1, 0);
  EXPECT_NEAR(b4 * 4, b1, 1e-9 * b1);
}

TEST(UnstatedSettings, GivenValuesAndFrameworksWithoutTheScheduleAreKept) {
  // DeepSpeed's pipeline engine runs 1F1B only and has no tensor-parallel overlap.
  const FitJobResult ds = Fit(PinnedBatch(Pipeline("deepspeed")));
  EXPECT_FALSE(ds.single->unstated);
  EXPECT_EQ(ds.single->layout.vpp, 1);
  // Unstated micro-batch and recomputation are still chosen for DeepSpeed, never vpp or overlap.
  const FitJobResult ds2 = Fit(Pipeline("deepspeed"));
  EXPECT_TRUE(Chose(ds2, "micro_batch"));
  EXPECT_FALSE(Chose(ds2, "vpp"));
  EXPECT_FALSE(Chose(ds2, "tp_overlap"));
  // Megatron with all given: kept.
  FitRequest given = PinnedBatch(Pipeline("megatron"));
  given.vpp = 2;
  given.tp_overlap = "off";
  given.tp_overlap_given = true;  // --tp-overlap off on the command line (off is also the default)
  const FitJobResult g = Fit(given);
  EXPECT_FALSE(g.single->unstated);
  EXPECT_EQ(g.single->layout.vpp, 2);
  // Without sequence parallelism Megatron cannot overlap: only vpp is chosen.
  FitRequest no_sp = PinnedBatch(Pipeline("megatron"));
  no_sp.sp = false;
  const FitJobResult n = Fit(no_sp);
  ASSERT_TRUE(n.single->unstated);
  ASSERT_EQ(n.single->unstated->choices.size(), 1u);
  EXPECT_EQ(n.single->unstated->choices[0].name, "vpp");
  // LLaMA-Factory turns full recomputation on by default: that is what runs, not a choice.
  FitRequest lf;
  lf.model = "Llama-3.1-8B";
  lf.task = "lora";
  lf.seq = 2048;
  lf.gpu = "H100 SXM";
  lf.gpus = 1;
  lf.framework = "llama-factory";
  const FitJobResult l = Fit(lf);
  EXPECT_FALSE(Chose(l, "recompute"));
  EXPECT_EQ(l.single->workload.recompute, Recompute::kFull);
}

TEST(UnstatedSettings, TheSearchTriesVirtualStagesToo) {
  // The search over the same fixed shape: with vpp free it can only do as well or better than
  // with vpp pinned to 1 (a superset of layouts), and its best row names the vpp it took.
  FitRequest s = Pipeline("megatron");
  s.gpu = "H100 SXM";
  s.pinned.gpus = 32;
  s.pinned.tp = 8;
  s.pinned.pp = 4;
  s.max_gpus = 32;
  s.max_gpus_given = true;
  s.gpus = 1;  // a search: the count comes from the pin
  FitRequest pinned = s;
  pinned.pinned.vpp = 1;
  pinned.vpp = 1;
  const FitJobResult free = Fit(s);
  const FitJobResult one = Fit(pinned);
  ASSERT_TRUE(free.search && one.search);
  ASSERT_FALSE(free.search->training->ranked.empty());
  ASSERT_FALSE(one.search->training->ranked.empty());
  const Candidate& best = free.search->training->ranked.front();
  EXPECT_GE(best.time.tokens_per_second, one.search->training->ranked.front().time.tokens_per_second);
  EXPECT_TRUE(best.layout.vpp == 1 || best.layout.vpp == 2 || best.layout.vpp == 4 || best.layout.vpp == 5);
  EXPECT_EQ(FitJobToJson(free)["candidates"][0]["vpp"], best.layout.vpp);
}

}  // namespace
}  // namespace gpuplan
