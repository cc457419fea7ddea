// §3.2 cuDNN's published attention rates by sequence length (data/attention/, converted from the
// CSVs of github.com/NVIDIA/cudnn-frontend@3929da2 kept as tests/fixtures/attention/). Expected
// values are the CSVs' own: H200, cuDNN 9.19.1, causal bf16, seq 8,192: forward 644, backward 541
// TFLOP/s; 4,096: 591 / 474; 2,048: 484 / 370; 32,768: 688 / 581. GB200 (2,500 TFLOP/s dense bf16,
// 1,200 W), cuDNN 9.22.0, seq 8,192: 1,574 / 1,332; a B200 (2,250) takes 0.9 of them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"
#include "core/error.h"
#include "fit/attention_table.h"
#include "fit/gemm_table.h"
#include "fit/op_model.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const Gpu& H100() { return test::Catalog().Find("H100 SXM"); }

TEST(AttentionTable, CudnnRatesBySequenceLengthStandForTheirArchitecture) {
  const GemmTables tables = LoadGemmTables(test::DataDir());
  const AttentionTable* hopper = tables.AttentionFor(H100());
  ASSERT_NE(hopper, nullptr);
  EXPECT_EQ(hopper->gpu, "NVIDIA H200");
  EXPECT_EQ(hopper->Tflops(8192), std::make_pair(644.0, 541.0));
  EXPECT_EQ(hopper->Tflops(1024), std::make_pair(484.0, 370.0));    // below the rows: the first row's
  EXPECT_EQ(hopper->Tflops(131072), std::make_pair(688.0, 581.0));  // above: the last row's
  // Halfway in log2 between 4,096 and 8,192 (5,792.6): halfway between the rates.
  const auto [f, b] = hopper->Tflops(4096 * std::sqrt(2.0));
  EXPECT_NEAR(f, (591.0 + 644.0) / 2, 1e-9);
  EXPECT_NEAR(b, (474.0 + 541.0) / 2, 1e-9);
  EXPECT_EQ(tables.AttentionFor(test::Catalog().Find("A100 80GB SXM")), nullptr);  // no Ampere table

  // Llama-3.1-8B, one sequence of 8,192 tokens on an H100 with the Hopper kernel (fa3): forward
  // 2 x 8,192 x 4,096.5 x 32 heads x 256 FLOPs at 644 TFLOP/s, backward 2.5x at 541.
  const ModelSpec& m = test::Llama8b();
  const KernelRates r = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa3, &tables);
  EXPECT_NE(r.attention_basis.find("cuDNN 9.19.1"), std::string::npos) << r.attention_basis;
  OpShape s;
  s.tokens = 8192;
  s.seq = 8192;
  const double flops = 2.0 * 8192 * 4096.5 * 32 * 256;
  LayerPasses p = LayerOpTimes(m, s, r);
  EXPECT_NEAR(p.forward.attention, flops / 644e12, 1e-12);
  EXPECT_NEAR(p.backward.attention, 2.5 * flops / 541e12, 1e-12);
  // Context parallel 2: a rank's kernels run its 4,096 queries, at 4,096's rates.
  s.tokens = 4096;
  s.cp = 2;
  p = LayerOpTimes(m, s, r);
  EXPECT_NEAR(p.forward.attention, flops / 2 / 591e12, 1e-12);
  EXPECT_NEAR(p.backward.attention, 2.5 * flops / 2 / 474e12, 1e-12);
  // FlashAttention-2 (fa2) is not what the table times: the flat fraction stays.
  const KernelRates fa2 = RatesFor(H100(), Precision::kMixed, false, AttentionKernel::kFa2, &tables);
  EXPECT_EQ(fa2.attention_table, nullptr);
  // A B200 takes the GB200's rates at 2,250 / 2,500 of them.
  const KernelRates b200 =
      RatesFor(test::Catalog().Find("B200"), Precision::kMixed, true, AttentionKernel::kFa3, &tables);
  s.tokens = 8192;
  s.cp = 1;
  p = LayerOpTimes(m, s, b200);
  EXPECT_NEAR(p.forward.attention, flops / (1574e12 * 0.9), 1e-12);
  EXPECT_NEAR(p.backward.attention, 2.5 * flops / (1332e12 * 0.9), 1e-12);
}

TEST(AttentionTable, BadFilesNameFileLineAndField) {
  const std::string head = "kernel: cudnn\ngpu: x\narchitecture: hopper\npeak_tflops_bf16: 989.4\nsource: s\n";
  EXPECT_NO_THROW(AttentionTable::Parse(head + "causal_bf16:\n  - [2048, 484, 370]\n", "a.yaml"));
  auto fails = [&](const std::string& text, int line, const std::string& field, const std::string& words) {
    try {
      AttentionTable::Parse(text, "a.yaml");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "a.yaml");
      EXPECT_EQ(e.line(), line) << e.what();
      EXPECT_EQ(e.field(), field) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  fails(head + "causal_bf16:\n  - [2048, 484, 370]\n  - [4096, 1000, 474]\n", 8, "causal_bf16[1]",
        "no kernel runs faster than its peak");
  fails(head + "causal_bf16:\n  - [4096, 591, 474]\n  - [2048, 484, 370]\n", 8, "causal_bf16[1]", "must ascend");
  fails(head + "causal_bf16:\n  - [2048, 484]\n", 7, "causal_bf16[0]", "expected [seq");
  fails(head + "causal_bf16:\n  - [2048, fast, 370]\n", 7, "causal_bf16[0]", "expected a number");
  fails(head + "causal_bf16:\n  - [1e9, 484, 370]\n", 7, "causal_bf16[0]", "sequence length");
  fails(head + "causal_bf16: []\n", 6, "causal_bf16", "expected a list");
  std::string many = head + "causal_bf16:\n";
  for (int i = 1; i <= 1001; ++i) {
    many += "  - [" + std::to_string(i) + ", 100, 100]\n";
  }
  fails(many, 7, "causal_bf16", "1001 rows, more than 1000 sequence lengths");
  fails(head + "causal_bf16:\n  - [2048, 484, 370]\nnoncausal: 1\n", 8, "noncausal", "unknown");
  fails("kernel: fa4\n" + head.substr(head.find('\n') + 1) + "causal_bf16:\n  - [2048, 484, 370]\n", 1, "kernel",
        "expected cudnn");
  // Two tables for one architecture in a data folder: refused, naming the second file.
  char pattern[] = "/tmp/gpuplan-attn-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  std::filesystem::create_directories(dir + "/attention");
  std::ofstream(dir + "/attention/a.yaml") << head + "causal_bf16:\n  - [2048, 484, 370]\n";
  EXPECT_EQ(LoadGemmTables(dir).AttentionFor(H100())->Tflops(4096).first, 484.0);
  std::ofstream(dir + "/attention/b.yaml") << head + "causal_bf16:\n  - [2048, 400, 300]\n";
  try {
    LoadGemmTables(dir);
    ADD_FAILURE() << "two Hopper attention tables";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), dir + "/attention/b.yaml");
    EXPECT_EQ(e.field(), "architecture");
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuplan
