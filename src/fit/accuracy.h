// How far the time model came from published measurements, so that a fit says beside its time
// how far to trust it (issue 28: "say plainly where it cannot be trusted").
//
// In:  data/accuracy.yaml, written by tests/unit/time_validation_test.cc from the rows of
//      docs/validation.md (never by hand; the test fails when it is stale).
// Out: for a training or inference fit on a card, that card's figures when published runs on it
//      were checked, and the figures over every checked run of the kind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "catalog/gpu_catalog.h"
#include "catalog/model.h"

namespace gpuplan {

// error = predicted / measured - 1 of a run's throughput (or, for a latency row, of its rate):
// + means the model was faster than the run.
struct ErrorFigures {
  int64_t rows = 0;
  double median_abs_error = 0;  // median of |error|
  double worst_error = 0;       // the error of largest magnitude, signed
};

// The runs on one card of one precision class and, where named, one framework family: which way
// the model leans there as well as how far (a time all of whose checked runs were faster than
// modelled says so).
struct SetupErrors {
  std::string precision;  // "fp8" (fp8 GEMMs or weights) or "16-bit"
  std::string framework;  // a framework family (FrameworkProfile::family) or "any"
  ErrorFigures errors;
  double median_error = 0;   // signed median
  double lowest_error = 0;   // the most negative error (signed)
  double highest_error = 0;  // the most positive error (signed)
};

struct CardErrors {
  std::string gpu;  // the catalog's card name
  ErrorFigures errors;
  std::vector<SetupErrors> by_setup;  // setups of at least kSetupMinRows runs, at most 256 (optional in the file)
};

// A setup's figures are quoted only over this many runs or more (fewer are no distribution).
constexpr int64_t kSetupMinRows = 3;

struct KindErrors {
  ErrorFigures all;
  std::vector<CardErrors> by_gpu;
};

struct TimeAccuracy {
  std::string file;
  std::string source;  // the document the rows are in
  KindErrors training;      // dense models: the rows no constant was fitted to (docs/validation.md)
  KindErrors training_moe;  // mixture-of-experts models (all.rows 0: none checked; the file's section is optional)
  KindErrors inference;
};

// Throws InputError naming file, line and field (unknown keys, numbers out of bounds).
TimeAccuracy LoadTimeAccuracy(const std::string& path);
TimeAccuracy ParseTimeAccuracy(const std::string& text, const std::string& path);
// data_dir/accuracy.yaml, or nullptr when the folder has none.
std::shared_ptr<const TimeAccuracy> LoadTimeAccuracyIn(const std::string& data_dir);

// What a request runs, to pick the setup figures: fp8 GEMMs (training `--fp8`, serving fp8
// weights) and the framework profile's family ("" or "generic": none named).
struct AccuracySetup {
  bool fp8 = false;
  std::string family;
};

// What a fit says about its time on `gpu`.
struct AccuracyNote {
  bool training = true;
  bool moe = false;  // training of a mixture-of-experts model: the figures of those rows
  std::string gpu;
  std::optional<ErrorFigures> card;  // this card's rows; nullopt: no published run on it was checked
  // The card's runs of the request's precision class and framework family, else of its precision
  // class with any framework; nullopt where fewer than kSetupMinRows such runs were checked.
  std::optional<SetupErrors> setup;
  ErrorFigures all;                  // every checked row of the kind
  std::vector<std::string> cards;    // the cards those rows ran on
  std::string source;
  // Where the worst checked run (of this card, else of every card) was off by kUnplannableError or
  // more: that run's time over the modelled time (1 + its error: 2.4 = it took 2.4 times as long;
  // 0.4 = it took 0.4 of it). A fit then says the time is for comparing layouts, not for booking.
  std::optional<double> worst_run_time_ratio;
};
// An error of half the modelled time or more (three times issue 28's worst-row goal of 15% for
// dense training): a time off by that much is said to be unfit for booking (docs/validation.md,
// "How fit quotes its accuracy").
constexpr double kUnplannableError = 0.5;
// `moe`: the model routes tokens to experts; its training takes the MoE rows' figures (where the
// file has none, nullopt: the dense rows say nothing of it).
// `setup`: what the request runs (nullptr: no setup figures).
std::optional<AccuracyNote> AccuracyFor(const TimeAccuracy* accuracy, bool training, const Gpu& gpu, bool moe = false,
                                        const AccuracySetup* setup = nullptr);
// "fp8" or "16-bit": the precision class a setup entry names.
const char* PrecisionClass(bool fp8);
// Whether a model's training takes the MoE rows' figures: it routes tokens to experts.
bool IsMoe(const ModelSpec& m);
// "training", "training_moe" or "inference": the note's kind as --json and the page name it.
const char* AccuracyKind(const AccuracyNote& a);

}  // namespace gpuplan
