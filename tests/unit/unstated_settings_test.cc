// Settings a training fit is not given (docs/time-model.md §10): vpp and tensor-parallel overlap,
// where the framework offers them, chosen for speed within memory, and the range over them.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "plan/fit_job.h"
#include "plan/render/fit_job_json.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

FitJobResult Fit(const FitRequest& r) { return RunFit(r, test::Catalog(), test::DataDir()); }

// Llama-3.1-70B (80 layers) on 32 H100: tp 8 with sequence parallelism, pp 4, so vpp may be 1,
// 2, 4 or 8 (4 x 8 = 32 virtual stages of 2.5 layers) and the tp collectives may overlap.
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
  ASSERT_EQ(u.choices.size(), 2u);
  EXPECT_EQ(u.choices[0].name, "vpp");
  EXPECT_EQ(u.choices[0].tried, (std::vector<std::string>{"1", "2", "4", "8"}));
  EXPECT_EQ(u.choices[1].name, "tp_overlap");
  EXPECT_EQ(u.combinations, 8);

  // Every combination given explicitly (as --vpp and --tp-overlap would): the choice is the
  // fastest of them, the range their fastest and slowest.
  double fastest = 0, slowest = 1e300;
  std::string fastest_vpp, fastest_overlap;
  int fitting = 0;
  for (int64_t v : {1, 2, 4, 8}) {
    for (const char* o : {"off", "on"}) {
      FitRequest q = Pipeline("megatron");
      q.vpp = v;
      q.pinned.vpp = v;
      q.tp_overlap = o;
      q.tp_overlap_given = true;
      const FitJobResult g = Fit(q);
      EXPECT_FALSE(g.single->unstated) << v << o;  // nothing left to choose
      if (!g.single->fits) {
        continue;
      }
      ++fitting;
      const double tps = g.single->training->tokens_per_second;
      if (tps > fastest) {
        fastest = tps;
        fastest_vpp = std::to_string(v);
        fastest_overlap = o;
      }
      slowest = std::min(slowest, tps);
    }
  }
  EXPECT_EQ(u.fitting, fitting);
  EXPECT_DOUBLE_EQ(u.best_tokens_per_second, fastest);
  EXPECT_DOUBLE_EQ(u.worst_tokens_per_second, slowest);
  EXPECT_EQ(u.choices[0].chosen, fastest_vpp);
  EXPECT_EQ(u.choices[1].chosen, fastest_overlap);
  EXPECT_EQ(std::to_string(f.single->layout.vpp), fastest_vpp);
  EXPECT_DOUBLE_EQ(f.single->training->tokens_per_second, fastest);
  EXPECT_LT(slowest, fastest);  // the answer hangs on them: the JSON says by how much

  const nlohmann::json j = FitJobToJson(f);
  EXPECT_EQ(j["unstated"]["choices"][0]["chosen"], fastest_vpp);
  EXPECT_DOUBLE_EQ(j["unstated"]["tokens_per_second"]["worst"].get<double>(), slowest);
  EXPECT_EQ(j["layout"]["vpp"], f.single->layout.vpp);
}

TEST(UnstatedSettings, InterleavingDividesTheBubbleByVpp) {
  // Narayanan et al. 2021 §2.2.2: the interleaved schedule's bubble is (pp - 1) / vpp micro-batch
  // slots against (pp - 1) for 1F1B, the micro-batch's time per stage being the same.
  FitRequest one = Pipeline("megatron");
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
  const FitJobResult ds = Fit(Pipeline("deepspeed"));
  EXPECT_FALSE(ds.single->unstated);
  EXPECT_EQ(ds.single->layout.vpp, 1);
  // Megatron with both given: kept.
  FitRequest given = Pipeline("megatron");
  given.vpp = 2;
  given.tp_overlap = "off";
  given.tp_overlap_given = true;  // --tp-overlap off on the command line (off is also the default)
  const FitJobResult g = Fit(given);
  EXPECT_FALSE(g.single->unstated);
  EXPECT_EQ(g.single->layout.vpp, 2);
  // Without sequence parallelism Megatron cannot overlap: only vpp is chosen.
  FitRequest no_sp = Pipeline("megatron");
  no_sp.sp = false;
  const FitJobResult n = Fit(no_sp);
  ASSERT_TRUE(n.single->unstated);
  ASSERT_EQ(n.single->unstated->choices.size(), 1u);
  EXPECT_EQ(n.single->unstated->choices[0].name, "vpp");
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
  EXPECT_TRUE(best.layout.vpp == 1 || best.layout.vpp == 2 || best.layout.vpp == 4 || best.layout.vpp == 8);
  EXPECT_EQ(FitJobToJson(free)["candidates"][0]["vpp"], best.layout.vpp);
}

}  // namespace
}  // namespace gpuplan
