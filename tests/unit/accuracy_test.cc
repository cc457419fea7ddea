// data/accuracy.yaml (src/fit/accuracy.h): what fit says beside a time about the published runs
// the model was checked against, on the card asked and over all.
#include <gtest/gtest.h>

#include "core/error.h"
#include "fit/accuracy.h"

namespace gpuplan {
namespace {

// Three training rows by hand: two on the A100 (errors +0.03 and -0.08: median |e| 0.055, worst
// -0.08) and one on the H100 (+0.02); over all three |e| = 0.02, 0.03, 0.08: median 0.03.
constexpr const char* kGood = R"(source: docs/validation.md
training:
  rows: 3
  median_abs_error: 0.03
  worst_error: -0.08
  by_gpu:
    - gpu: "A100 80GB SXM"
      rows: 2
      median_abs_error: 0.055
      worst_error: -0.08
    - gpu: "H100 SXM 80GB"
      rows: 1
      median_abs_error: 0.02
      worst_error: 0.02
inference:
  rows: 1
  median_abs_error: 0.24
  worst_error: 0.24
  by_gpu:
    - gpu: "A100 80GB SXM"
      rows: 1
      median_abs_error: 0.24
      worst_error: 0.24
)";

Gpu Card(const std::string& name) {
  Gpu g;
  g.name = name;
  return g;
}

TEST(TimeAccuracy, TheCardsOwnRowsOrNone) {
  const TimeAccuracy a = ParseTimeAccuracy(kGood, "accuracy.yaml");
  const auto a100 = AccuracyFor(&a, true, Card("A100 80GB SXM"));
  ASSERT_TRUE(a100 && a100->card);
  EXPECT_EQ(a100->card->rows, 2);
  EXPECT_DOUBLE_EQ(a100->card->median_abs_error, 0.055);
  EXPECT_DOUBLE_EQ(a100->card->worst_error, -0.08);
  EXPECT_EQ(a100->all.rows, 3);
  EXPECT_EQ(a100->source, "docs/validation.md");
  // A card no published run was checked on: no figures of its own, the cards that were named.
  const auto l40s = AccuracyFor(&a, true, Card("L40S"));
  ASSERT_TRUE(l40s);
  EXPECT_FALSE(l40s->card);
  EXPECT_EQ(l40s->cards, (std::vector<std::string>{"A100 80GB SXM", "H100 SXM 80GB"}));
  // Inference has its own rows: none on the H100 here.
  const auto h100 = AccuracyFor(&a, false, Card("H100 SXM 80GB"));
  ASSERT_TRUE(h100);
  EXPECT_FALSE(h100->card);
  EXPECT_EQ(h100->all.rows, 1);
  EXPECT_FALSE(AccuracyFor(nullptr, true, Card("A100 80GB SXM")));
}

// A mixture-of-experts model's training takes the MoE rows (one by hand: +1.19 on the H100), never
// the dense ones; a file without them says nothing of it (nullopt: no dense figures in its place).
TEST(TimeAccuracy, MixtureOfExpertsTrainingTakesItsOwnRows) {
  const std::string with_moe = std::string(kGood) + R"(training_moe:
  rows: 1
  median_abs_error: 1.19
  worst_error: 1.19
  by_gpu:
    - gpu: "H100 SXM 80GB"
      rows: 1
      median_abs_error: 1.19
      worst_error: 1.19
)";
  const TimeAccuracy a = ParseTimeAccuracy(with_moe, "accuracy.yaml");
  const auto moe = AccuracyFor(&a, true, Card("H100 SXM 80GB"), /*moe=*/true);
  ASSERT_TRUE(moe && moe->card);
  EXPECT_TRUE(moe->moe);
  EXPECT_STREQ(AccuracyKind(*moe), "training_moe");
  EXPECT_DOUBLE_EQ(moe->card->worst_error, 1.19);
  EXPECT_EQ(moe->all.rows, 1);
  const auto dense = AccuracyFor(&a, true, Card("H100 SXM 80GB"));
  ASSERT_TRUE(dense && dense->card);
  EXPECT_FALSE(dense->moe);
  EXPECT_STREQ(AccuracyKind(*dense), "training");
  EXPECT_DOUBLE_EQ(dense->card->worst_error, 0.02);
  // Serving a MoE model: the inference rows (the engines' decode is priced alike).
  const auto serving = AccuracyFor(&a, false, Card("A100 80GB SXM"), /*moe=*/true);
  ASSERT_TRUE(serving);
  EXPECT_STREQ(AccuracyKind(*serving), "inference");
  const TimeAccuracy without = ParseTimeAccuracy(kGood, "accuracy.yaml");
  EXPECT_FALSE(AccuracyFor(&without, true, Card("H100 SXM 80GB"), /*moe=*/true));
}

void ExpectRefused(const std::string& text, const std::string& field, int line) {
  try {
    ParseTimeAccuracy(text, "accuracy.yaml");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), field) << e.what();
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.file(), "accuracy.yaml");
  }
}

std::string Replace(std::string s, const std::string& from, const std::string& to) {
  s.replace(s.find(from), from.size(), to);
  return s;
}

TEST(TimeAccuracy, BadFilesNameFileLineAndField) {
  ExpectRefused(Replace(kGood, "training:", "trainng:"), "trainng", 2);          // misspelt: not skipped
  ExpectRefused(Replace(kGood, "      rows: 2", "      rowz: 2"), "training.by_gpu[0].rowz", 8);
  ExpectRefused(Replace(kGood, "      rows: 2", "      rows: 5"), "training.rows", 3);  // 5 + 1 != 3
  ExpectRefused(Replace(kGood, "  rows: 3", "  rows: 0"), "training.rows", 3);          // at least 1
  ExpectRefused(Replace(kGood, "  worst_error: -0.08", "  worst_error: -2"), "training.worst_error", 5);
  ExpectRefused(Replace(kGood, "  median_abs_error: 0.03", "  median_abs_error: 0.5"), "training.median_abs_error", 4);
  ExpectRefused(Replace(kGood, "\"H100 SXM 80GB\"", "\"A100 80GB SXM\""), "training.by_gpu[1].gpu", 11);
  ExpectRefused(Replace(kGood,
                        "  by_gpu:\n    - gpu: \"A100 80GB SXM\"\n      rows: 2\n      median_abs_error: 0.055\n"
                        "      worst_error: -0.08\n    - gpu: \"H100 SXM 80GB\"\n      rows: 1\n"
                        "      median_abs_error: 0.02\n      worst_error: 0.02\n",
                        "  by_gpu: A100\n"),
                "training.by_gpu", 6);  // not a list
  ExpectRefused(Replace(kGood, "  by_gpu:\n    - gpu: \"A100 80GB SXM\"\n      rows: 1", "  by_gpu: A100\n  y:\n    - gpu: \"A\"\n      rows: 1"),
                "inference.y", 20);
}

}  // namespace
}  // namespace gpuplan
