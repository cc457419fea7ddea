// data/accuracy.yaml (src/fit/accuracy.h): what fit says beside a time about the published runs
// the model was checked against, on the card asked and over all.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "fit/accuracy.h"

namespace gpuplan {
namespace {

// Three training rows by hand: two on the A100 (errors +0.03 and -0.08: median |e| 0.055, worst
// -0.08) and one on the H100 (+0.02); over all three |e| = 0.02, 0.03, 0.08: median 0.03.
constexpr const char* kGoodTraining = R"(source: docs/validation.md
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
)";
// One inference row on the A100 (+0.24), in both files of these tests.
constexpr const char* kInference = R"(inference:
  rows: 1
  median_abs_error: 0.24
  worst_error: 0.24
  by_gpu:
    - gpu: "A100 80GB SXM"
      rows: 1
      median_abs_error: 0.24
      worst_error: 0.24
)";
const std::string kGood = std::string(kGoodTraining) + kInference;

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

// One MoE training row, on the H100: +1.19.
const std::string kMoeH100 = R"(training_moe:
  rows: 1
  median_abs_error: 1.19
  worst_error: 1.19
  by_gpu:
    - gpu: "H100 SXM 80GB"
      rows: 1
      median_abs_error: 1.19
      worst_error: 1.19
)";

// A mixture-of-experts model's training takes the MoE rows (one by hand: +1.19 on the H100), never
// the dense ones; a file without them says nothing of it (nullopt: no dense figures in its place).
TEST(TimeAccuracy, MixtureOfExpertsTrainingTakesItsOwnRows) {
  const std::string with_moe = kGood + kMoeH100;
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

// A time off by half or more on a checked run is said to be unfit for booking
// (kUnplannableError): the run's time over the modelled one is 1 + its error. By hand: the
// H100's MoE run +1.19 -> 2.19 times as long; a card without MoE runs takes every MoE run's
// worst (+1.19 again); the dense rows (worst -0.08, +0.02) and the A100's inference row (+0.24)
// give none. At the edge: an error of exactly -0.5 (a run in half the modelled time) is said,
// a ratio of 0.5; -0.49 is not.
TEST(TimeAccuracy, ATimeOffByHalfOrMoreIsSaidUnfitForBooking) {
  const std::string with_moe = kGood + kMoeH100;
  const TimeAccuracy a = ParseTimeAccuracy(with_moe, "accuracy.yaml");
  const auto h100 = AccuracyFor(&a, true, Card("H100 SXM 80GB"), /*moe=*/true);
  ASSERT_TRUE(h100 && h100->worst_run_time_ratio);
  EXPECT_DOUBLE_EQ(*h100->worst_run_time_ratio, 2.19);
  const auto a100 = AccuracyFor(&a, true, Card("A100 80GB SXM"), /*moe=*/true);
  ASSERT_TRUE(a100 && !a100->card && a100->worst_run_time_ratio);
  EXPECT_DOUBLE_EQ(*a100->worst_run_time_ratio, 2.19);
  EXPECT_FALSE(AccuracyFor(&a, true, Card("A100 80GB SXM"))->worst_run_time_ratio);
  EXPECT_FALSE(AccuracyFor(&a, true, Card("H100 SXM 80GB"))->worst_run_time_ratio);
  EXPECT_FALSE(AccuracyFor(&a, false, Card("A100 80GB SXM"))->worst_run_time_ratio);
  for (const auto& [worst, said] : {std::pair{-0.5, true}, std::pair{-0.49, false}}) {
    const std::string text = fmt::format(R"(source: docs/validation.md
training:
  rows: 1
  median_abs_error: {0}
  worst_error: {1}
  by_gpu:
    - gpu: "B200"
      rows: 1
      median_abs_error: {0}
      worst_error: {1}
)",
                                         -worst, worst) +
                             kInference;
    const TimeAccuracy edge = ParseTimeAccuracy(text, "accuracy.yaml");
    const auto b200 = AccuracyFor(&edge, true, Card("B200"));
    ASSERT_TRUE(b200);
    EXPECT_EQ(b200->worst_run_time_ratio.has_value(), said) << worst;
    if (said) {
      EXPECT_DOUBLE_EQ(*b200->worst_run_time_ratio, 0.5);
    }
  }
}

// One card's rows grouped by setup, by hand. Nine H100 rows: 16-bit -0.10, -0.02, +0.03, +0.05
// (|e| median (0.03 + 0.05) / 2 = 0.04, signed median (-0.02 + 0.03) / 2 = 0.005); fp8 -0.18,
// -0.16, -0.08 of megatron's family and +0.01, +0.06 of no named framework (all five: |e| median
// 0.08, signed -0.08; the three: |e| median 0.16, signed -0.16, all below the model's zero). All
// nine: |e| 0.01 0.02 0.03 0.05 0.06 0.08 0.10 0.16 0.18, median 0.06, worst -0.18.
constexpr const char* kSetupsTraining = R"(source: docs/validation.md
training:
  rows: 9
  median_abs_error: 0.06
  worst_error: -0.18
  by_gpu:
    - gpu: "H100 SXM 80GB"
      rows: 9
      median_abs_error: 0.06
      worst_error: -0.18
      by_setup:
        - precision: 16-bit
          framework: any
          rows: 4
          median_abs_error: 0.04
          median_error: 0.005
          lowest_error: -0.10
          highest_error: 0.05
          worst_error: -0.10
        - precision: fp8
          framework: any
          rows: 5
          median_abs_error: 0.08
          median_error: -0.08
          lowest_error: -0.18
          highest_error: 0.06
          worst_error: -0.18
        - precision: fp8
          framework: megatron
          rows: 3
          median_abs_error: 0.16
          median_error: -0.16
          lowest_error: -0.18
          highest_error: -0.08
          worst_error: -0.18
)";
const std::string kSetups = std::string(kSetupsTraining) + kInference;

// The request's family where its runs were checked, else any framework of its precision class;
// none without a setup or on a card whose rows are not grouped.
TEST(TimeAccuracy, TheRequestsSetupOrAnyFrameworkOfItsPrecision) {
  const TimeAccuracy a = ParseTimeAccuracy(kSetups, "accuracy.yaml");
  const AccuracySetup megatron_fp8{true, "megatron"};
  const auto m = AccuracyFor(&a, true, Card("H100 SXM 80GB"), false, &megatron_fp8);
  ASSERT_TRUE(m && m->card && m->setup);
  EXPECT_EQ(m->setup->precision, "fp8");
  EXPECT_EQ(m->setup->framework, "megatron");
  EXPECT_EQ(m->setup->errors.rows, 3);
  EXPECT_DOUBLE_EQ(m->setup->median_error, -0.16);
  EXPECT_DOUBLE_EQ(m->setup->highest_error, -0.08);  // every run faster than modelled
  EXPECT_EQ(m->card->rows, 9);
  // A family with no runs of its own, or none named: any framework's fp8 runs.
  for (const std::string family : {"torchtitan", "", "generic"}) {
    const AccuracySetup s{true, family};
    const auto n = AccuracyFor(&a, true, Card("H100 SXM 80GB"), false, &s);
    ASSERT_TRUE(n && n->setup) << family;
    EXPECT_EQ(n->setup->framework, "any") << family;
    EXPECT_EQ(n->setup->errors.rows, 5) << family;
    EXPECT_DOUBLE_EQ(n->setup->lowest_error, -0.18) << family;
  }
  // 16-bit with megatron: no such group, so any framework's 16-bit runs.
  const AccuracySetup megatron_bf16{false, "megatron"};
  const auto b = AccuracyFor(&a, true, Card("H100 SXM 80GB"), false, &megatron_bf16);
  ASSERT_TRUE(b && b->setup);
  EXPECT_EQ(b->setup->precision, "16-bit");
  EXPECT_EQ(b->setup->errors.rows, 4);
  EXPECT_DOUBLE_EQ(b->setup->median_error, 0.005);
  EXPECT_FALSE(AccuracyFor(&a, true, Card("H100 SXM 80GB"))->setup);  // no setup asked
  EXPECT_FALSE(AccuracyFor(&a, false, Card("A100 80GB SXM"), false, &megatron_fp8)->setup);  // none grouped
  // kGood has no by_setup at all: the card's figures alone.
  const TimeAccuracy plain = ParseTimeAccuracy(kGood, "accuracy.yaml");
  const auto p = AccuracyFor(&plain, true, Card("H100 SXM 80GB"), false, &megatron_fp8);
  ASSERT_TRUE(p && p->card);
  EXPECT_FALSE(p->setup);
}

// A setup that is every checked run of the card, on both sides of the model, repeats the card's
// own median and worst: it is not quoted (fit printed both sentences for a 16-bit A100 inference).
// All four runs below the model (one way): still quoted, it says which way.
TEST(TimeAccuracy, ASetupOfEveryRunOfTheCardOnBothSidesIsNotQuotedTwice) {
  const auto yaml = [](double lowest, double highest, double median) {
    return fmt::format(R"(source: docs/validation.md
training:
  rows: 4
  median_abs_error: 0.06
  worst_error: -0.10
  by_gpu:
    - gpu: "A100 80GB SXM"
      rows: 4
      median_abs_error: 0.06
      worst_error: -0.10
      by_setup:
        - precision: 16-bit
          framework: any
          rows: 4
          median_abs_error: 0.06
          median_error: {2}
          lowest_error: {0}
          highest_error: {1}
          worst_error: -0.10
)",
                       lowest, highest, median) + kInference;
  };
  const AccuracySetup bf16{false, ""};
  const TimeAccuracy both = ParseTimeAccuracy(yaml(-0.10, 0.05, -0.005), "accuracy.yaml");
  const auto b = AccuracyFor(&both, true, Card("A100 80GB SXM"), false, &bf16);
  ASSERT_TRUE(b && b->card);
  EXPECT_FALSE(b->setup);
  const TimeAccuracy below = ParseTimeAccuracy(yaml(-0.10, -0.02, -0.06), "accuracy.yaml");
  const auto w = AccuracyFor(&below, true, Card("A100 80GB SXM"), false, &bf16);
  ASSERT_TRUE(w && w->setup);
  EXPECT_DOUBLE_EQ(w->setup->highest_error, -0.02);
}

int LineOf(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  return at == std::string::npos ? -1 : 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

void ExpectRefused(const std::string& text, const std::string& field, int line);
std::string Replace(std::string s, const std::string& from, const std::string& to);

TEST(TimeAccuracy, BadSetupsNameFileLineAndField) {
  const std::string s = kSetups;
  const std::string third = "training.by_gpu[0].by_setup[2].";
  // Fewer than three runs: no distribution to quote.
  ExpectRefused(Replace(s, "          rows: 3", "          rows: 2"), third + "rows", LineOf(s, "          rows: 3"));
  // More runs than the card has.
  ExpectRefused(Replace(s, "          rows: 5", "          rows: 10"), "training.by_gpu[0].by_setup[1].rows",
                LineOf(s, "          rows: 5"));
  ExpectRefused(Replace(s, "precision: 16-bit", "precision: bf16"), "training.by_gpu[0].by_setup[0].precision",
                LineOf(s, "precision: 16-bit"));
  ExpectRefused(Replace(s, "          median_error: -0.16", "          median_error: -0.05"), third + "median_error",
                LineOf(s, "          median_error: -0.16"));
  // worst_error must be the larger in magnitude of the two ends, with its sign (-0.18 here, not +0.18).
  const std::string wrong_worst = Replace(s, "          highest_error: -0.08\n          worst_error: -0.18",
                                          "          highest_error: -0.08\n          worst_error: 0.18");
  ExpectRefused(wrong_worst, third + "worst_error", LineOf(s, "          highest_error: -0.08") + 1);
  ExpectRefused(Replace(s, "framework: megatron", "framework: any"), third + "framework",
                LineOf(s, "framework: megatron"));  // a second fp8 / any
  ExpectRefused(Replace(s, "framework: megatron", "framwork: megatron"), third + "framwork",
                LineOf(s, "framework: megatron"));
  // More entries than a card can have (2 precision classes x the families and any): refused at
  // the list, before 300 entries are read one by one.
  std::string many;
  for (int i = 0; i < 300; ++i) {
    many += "        - precision: fp8\n          framework: f" + std::to_string(i) +
            "\n          rows: 3\n          median_abs_error: 0.16\n          median_error: -0.16\n"
            "          lowest_error: -0.18\n          highest_error: -0.08\n          worst_error: -0.18\n";
  }
  ExpectRefused(Replace(s, "      by_setup:\n", "      by_setup:\n" + many), "training.by_gpu[0].by_setup",
                LineOf(s, "      by_setup:") + 1);  // the list's first line
  // Not a list: the card's by_setup cut to one word (the rest of the file as it was).
  const std::string not_list = s.substr(0, s.find("      by_setup:")) + "      by_setup: fp8\n" + s.substr(s.find("inference:"));
  ExpectRefused(not_list, "training.by_gpu[0].by_setup", LineOf(s, "      by_setup:"));
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
