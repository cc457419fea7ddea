// The options tables (issue 8 requirement 2; read/options.h, fit/fit_options.h,
// cost/cost_options.h): a JSON request gives the same request as the equivalent flags, errors
// name the option as the user wrote it (the key in JSON, the flag on the command line), and the
// option tables of docs/cli.md are generated from them (GPUPLAN_UPDATE_DOCS=1 rewrites them).
#include <gtest/gtest.h>

#include "check/check_options.h"
#include "meter/meter_options.h"
#include "plan/plan_request.h"
#include "serve/serve_options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli_options.h"
#include "core/error.h"
#include "cost/cost_options.h"
#include "plan/fit_job.h"
#include "doc_table.h"
#include "fit/fit_options.h"
#include "http/http_server.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

// Parses `args` (after the program name) into a request through the table's CLI11 flags.
template <typename Req>
Req FromFlags(const OptionTable<Req>& table, std::vector<std::string> args) {
  Req r;
  CLI::App app;
  cli::AddOptions(&app, table, r);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments in reverse order
  app.parse(args);
  cli::CheckGivenFlags(&app, table, r);
  return r;
}

// Every option's value, as text, for comparing two requests.
template <typename Req>
std::vector<std::string> Values(const OptionTable<Req>& table, const Req& r) {
  std::vector<std::string> out;
  for (const auto& o : table) {
    out.push_back(o.key + "=" + OptionValueText(o.get(r)));
  }
  return out;
}

// The InputError `f` throws (fails the test when none).
template <typename F>
InputError ErrorOf(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "no InputError";
  return InputError("none");
}

// A fit request from a JSON object as the serve API takes it: ReadJson, then the checks RunFit
// makes first (CheckFitRequest).
FitRequest FitFromJson(const nlohmann::json& j) {
  FitRequest r;
  ReadJson(j, r);
  CheckFitRequest(r, test::DataDir());
  return r;
}

// A cost request from a JSON object as the serve API takes it: ReadJsonOptions (the keys given
// in `given`), then the checks Run* makes first (CheckCostRequest).
template <typename Req>
void CostFromJson(const OptionTable<Req>& table, const nlohmann::json& j, Req& r) {
  r.given = ReadJsonOptions(table, j, r);
  CheckCostRequest(r, test::Catalog());
}

// The error `f` throws as the serve API answers it (the HTTP server's ErrorResponse: options
// named by their JSON keys): the answer's "error" object.
template <typename F>
nlohmann::json ApiErrorOf(F f) {
  try {
    f();
  } catch (...) {
    return nlohmann::json::parse(ErrorResponse(std::current_exception()).body)["error"];
  }
  ADD_FAILURE() << "no error";
  return nlohmann::json::object();
}

template <typename Req>
void ExpectWellFormed(const OptionTable<Req>& table) {
  std::set<std::string> flags, keys;
  for (const auto& o : table) {
    EXPECT_EQ(o.flag.rfind("--", 0), 0u) << o.flag;
    EXPECT_TRUE(flags.insert(o.flag).second) << "flag twice: " << o.flag;
    EXPECT_TRUE(keys.insert(o.key).second) << "key twice: " << o.key;
    EXPECT_EQ(o.key.find('-'), std::string::npos) << o.key;
    EXPECT_FALSE(o.help.empty()) << o.flag;
  }
}

TEST(OptionsTable, FlagsAndKeysAreUnique) {
  ExpectWellFormed(FitOptionTable());
  ExpectWellFormed(BreakevenOptionTable());
  ExpectWellFormed(CompareOptionTable());
  ExpectWellFormed(OptimizeOptionTable());
  ExpectWellFormed(TcoOptionTable());
  ExpectWellFormed(CheckOptionTable());
  ExpectWellFormed(CompareReportsOptionTable());
  ExpectWellFormed(MergeReportsOptionTable());
  ExpectWellFormed(MeterReportOptionTable());
  ExpectWellFormed(MeterExportOptionTable());
  ExpectWellFormed(MeterTimelineOptionTable());
  ExpectWellFormed(MeterAlertsOptionTable());
  ExpectWellFormed(MeterRunOptionTable());
  ExpectWellFormed(MeterRecordOptionTable());
  ExpectWellFormed(PlanOptionTable());
}

// The command line spells a key by the flag registered for it (SpellFlags, read/options.h): one
// flag per key across every table the CLI registers, so the spelling does not depend on which
// table came last.
TEST(OptionsTable, AKeyHasOneFlagAcrossTheTables) {
  std::map<std::string, std::string> flag_of;
  const auto add = [&flag_of](const auto& table) {
    for (const auto& o : table) {
      const auto [it, added] = flag_of.emplace(o.key, o.flag);
      EXPECT_EQ(it->second, o.flag) << "key " << o.key;
    }
  };
  add(FitOptionTable());
  add(BreakevenOptionTable());
  add(CompareOptionTable());
  add(OptimizeOptionTable());
  add(TcoOptionTable());
  add(CheckOptionTable());
  add(CompareReportsOptionTable());
  add(MergeReportsOptionTable());
  add(MeterReportOptionTable());
  add(MeterExportOptionTable());
  add(MeterTimelineOptionTable());
  add(MeterAlertsOptionTable());
  add(MeterRunOptionTable());
  add(MeterRecordOptionTable());
  add(MeterWatchOptionTable());
  add(ServeOptionTable());
  add(PlanOptionTable());
  // The tests' spelling is the CLI's: --allow-host, not the default spelling's --allow-hosts.
  EXPECT_EQ(test::AsCli(InputError::Option("allow_hosts", "x")).field(), "--allow-host");
  EXPECT_EQ(test::AsCli(InputError::Option("timeout_seconds", "x")).field(), "--timeout");
}

TEST(OptionsTable, DefaultsComeFromTheRequest) {
  for (const auto& o : FitOptionTable()) {
    if (o.key == "seq") {
      EXPECT_EQ(o.DefaultText(), "2048");
    }
    if (o.key == "fragmentation") {
      EXPECT_EQ(o.DefaultText(), "0.05");
    }
    if (o.key == "flash_attn") {
      EXPECT_EQ(o.DefaultText(), "on");
    }
    if (o.key == "sp") {
      EXPECT_EQ(o.DefaultText(), "off");
    }
    if (o.key == "mfu") {
      EXPECT_EQ(o.DefaultText(), "per-operation costs");
    }
    if (o.key == "model") {
      EXPECT_EQ(o.DefaultText(), "(required)");
    }
  }
  for (const auto& o : TcoOptionTable()) {
    if (o.key == "pue") {
      EXPECT_EQ(o.DefaultText(), "1.4");
    }
    if (o.key == "horizon_months") {
      EXPECT_EQ(o.DefaultText(), "36");
    }
  }
}

TEST(OptionsTable, FitJsonGivesTheSameRequestAsFlags) {
  const FitRequest flags = FromFlags(FitOptionTable(),
                                     {"--model", "qwen2.5-7b", "--task", "lora", "--gpu", "A100", "--gpus", "8", "--tp",
                                      "2", "--sp", "--lora-dropout", "0.1", "--mfu", "0.4", "--recompute", "selective",
                                      "--max-gpus", "16", "--offload-optimizer", "--context", "8192"});
  const FitRequest json = FitFromJson(nlohmann::json::parse(R"({"model": "qwen2.5-7b", "task": "lora", "gpu": "A100",
      "gpus": 8, "tp": 2, "sp": true, "lora_dropout": 0.1, "mfu": 0.4, "recompute": "selective", "max_gpus": 16,
      "offload_optimizer": true, "context": 8192})"));
  EXPECT_EQ(Values(FitOptionTable(), json), Values(FitOptionTable(), flags));
  EXPECT_EQ(json.tp, 2);
  ASSERT_TRUE(json.mfu.has_value());
  EXPECT_DOUBLE_EQ(*json.mfu, 0.4);
  // What was given pins the search, both ways (as the CLI's runner marks it).
  FitRequest pinned;
  CLI::App app;
  cli::AddOptions(&app, FitOptionTable(), pinned);
  std::vector<std::string> args{"--model", "qwen2.5-7b", "--task", "lora", "--gpu", "A100", "--gpus", "8", "--tp",
                                "2", "--sp", "--lora-dropout", "0.1", "--mfu", "0.4", "--recompute", "selective",
                                "--max-gpus", "16", "--offload-optimizer", "--context", "8192"};
  std::reverse(args.begin(), args.end());
  app.parse(args);
  MarkGivenFitOptions(pinned, cli::GivenByKey(&app, FitOptionTable()));
  EXPECT_EQ(json.pinned.Describe(), pinned.pinned.Describe());
  EXPECT_EQ(json.pinned.gpus, pinned.pinned.gpus);
  EXPECT_EQ(json.pinned.tp, std::optional<int64_t>(2));
  EXPECT_TRUE(json.max_gpus_given);
  EXPECT_TRUE(json.context_given);
  EXPECT_TRUE(json.IsSearch());
}

TEST(OptionsTable, FitJsonErrorsNameTheKey) {
  // A model that loads: a table check's error comes after the model's (CheckFitRequest).
  const std::string model = "Qwen2.5-7B";
  InputError e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"tpp", 2}}); });
  EXPECT_EQ(e.field(), "tpp");
  EXPECT_NE(e.message().find("unknown key 'tpp'"), std::string::npos) << e.message();
  ASSERT_FALSE(e.suggestions().empty());
  EXPECT_EQ(e.suggestions().front(), "tp");

  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"tp", 0}}); });
  EXPECT_EQ(e.field(), "tp");
  EXPECT_EQ(e.message(), "must be a positive number, got 0");
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"tp", "2"}}); });
  EXPECT_EQ(e.field(), "tp");
  EXPECT_NE(e.message().find("expected an integer"), std::string::npos) << e.message();
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"task", "pretrian"}}); });
  EXPECT_EQ(e.field(), "task");
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"flash_attn", "maybe"}}); });
  EXPECT_EQ(e.field(), "flash_attn");
  // lora_dropout is checked by PrepareFit too, whose error comes first (CheckFitRequest), with
  // the same words as the table's.
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"lora_dropout", 1.0}}); });
  EXPECT_EQ(e.field(), "lora_dropout");
  EXPECT_EQ(e.message(), "must be in [0, 1), got 1");
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", model}, {"sp", 1}}); });
  EXPECT_EQ(e.field(), "sp");
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"task", "infer"}}); });
  EXPECT_EQ(e.field(), "model");
  e = ErrorOf([&] { FitFromJson(nlohmann::json::array()); });
  EXPECT_EQ(e.field(), "");
  // Aliases the domain accepts are accepted (the table validates with the domain's parser).
  EXPECT_NO_THROW(FitFromJson(nlohmann::json{{"model", model}, {"optimizer", "adam"}, {"objective", "gpu-hours"}}));
}

TEST(OptionsTable, FlagErrorsNameTheFlag) {
  InputError e = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--tp", "0"}); });
  EXPECT_EQ(e.field(), "--tp");
  e = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--task", "pretrian"}); });
  EXPECT_EQ(e.field(), "--task");
  e = ErrorOf([] { FromFlags(CompareOptionTable(), {"--offers", "o.yaml", "--extrapolate", "week"}); });
  EXPECT_EQ(e.field(), "--extrapolate");
  EXPECT_EQ(e.message(), "expected month or year, got 'week'");
}

TEST(OptionsTable, CostJsonGivesTheSameRequestAsFlags) {
  const TcoRequest flags = FromFlags(TcoOptionTable(), {"--offers", "o.yaml", "--hours-per-month", "300", "--gpus", "4",
                                                        "--spot-for-all", "--pue", "1.2", "--buy-gpus", "6",
                                                        "--horizon-months", "24", "--month", "2027-01"});
  TcoRequest json;
  CostFromJson(TcoOptionTable(),
               nlohmann::json::parse(R"({"offers": "o.yaml", "hours_per_month": 300, "gpus": 4, "spot_for_all": true,
      "pue": 1.2, "buy_gpus": 6, "horizon_months": 24, "month": "2027-01"})"),
               json);
  EXPECT_EQ(Values(TcoOptionTable(), json), Values(TcoOptionTable(), flags));
  EXPECT_DOUBLE_EQ(json.own.pue, 1.2);
  EXPECT_EQ(json.own.gpus, 6);
  EXPECT_EQ(json.hours_per_month, std::optional<double>(300));
  EXPECT_DOUBLE_EQ(json.own.card_price, OwnershipCosts{}.card_price);

  const BreakevenRequest be_flags =
      FromFlags(BreakevenOptionTable(), {"--offers", "o.yaml", "--usage", "u.csv", "--extrapolate", "month"});
  BreakevenRequest be;
  CostFromJson(BreakevenOptionTable(), nlohmann::json{{"offers", "o.yaml"}, {"usage", "u.csv"}, {"extrapolate", "month"}},
               be);
  EXPECT_EQ(Values(BreakevenOptionTable(), be), Values(BreakevenOptionTable(), be_flags));

  const OptimizeRequest opt_flags = FromFlags(OptimizeOptionTable(), {"--offers", "o.yaml", "--release-idle"});
  OptimizeRequest opt;
  CostFromJson(OptimizeOptionTable(), nlohmann::json{{"offers", "o.yaml"}, {"release_idle", true}}, opt);
  EXPECT_EQ(Values(OptimizeOptionTable(), opt), Values(OptimizeOptionTable(), opt_flags));
  EXPECT_TRUE(opt.release_idle);

  CompareRequest cmp;
  CostFromJson(CompareOptionTable(), nlohmann::json{{"offers", "o.yaml"}, {"usage", "u.csv"}}, cmp);
  EXPECT_EQ(cmp.usage, "u.csv");
}

TEST(OptionsTable, CostJsonErrorsNameTheKey) {
  // An offers file that loads: a table check's error comes after the offers' (CheckCostRequest).
  const std::string o = test::DataDir() + "/offers/nanjing-a100.yaml";
  TcoRequest r;
  InputError e = ErrorOf([&] { CostFromJson(TcoOptionTable(), nlohmann::json{{"offers", o}, {"pue", "high"}}, r); });
  EXPECT_EQ(e.field(), "pue");
  e = ErrorOf([&] { CostFromJson(TcoOptionTable(), nlohmann::json{{"offers", o}, {"card_prise", 1}}, r); });
  EXPECT_EQ(e.field(), "card_prise");
  ASSERT_FALSE(e.suggestions().empty());
  EXPECT_EQ(e.suggestions().front(), "card_price");
  e = ErrorOf([&] { CostFromJson(TcoOptionTable(), nlohmann::json{{"usage", "u.csv"}}, r); });
  EXPECT_EQ(e.field(), "offers");
  BreakevenRequest be;
  e = ErrorOf([&] { CostFromJson(BreakevenOptionTable(), nlohmann::json{{"offers", o}, {"extrapolate", "week"}}, be); });
  EXPECT_EQ(e.field(), "extrapolate");
  // breakeven has no optimiser options
  e = ErrorOf([&] { CostFromJson(BreakevenOptionTable(), nlohmann::json{{"offers", o}, {"spot_for_all", true}}, be); });
  EXPECT_EQ(e.field(), "spot_for_all");
}

// docs/cli.md's option tables are the tables' own.
// Checks that only the domain can make (they depend on the model, the offers file or each
// other) name the option by its key in src/; on the JSON path (the serve API's ErrorResponse
// spells every error) the error names the key the user wrote, in the field and the text, and on
// the command line (SpellFlags, as main.cc reports every error) the flag.
TEST(OptionsTable, DomainErrorsOnTheJsonPathNameTheKey) {
  const auto fit_error = [](const nlohmann::json& j) {
    FitRequest r;
    ReadJson(j, r);
    return ApiErrorOf([&] { RunFit(r, test::Catalog(), test::DataDir()); });
  };
  nlohmann::json e = fit_error({{"model", "qwen2.5-7bb"}});
  EXPECT_EQ(e["field"], "model");
  ASSERT_FALSE(e["suggestions"].empty());
  EXPECT_EQ(e["suggestions"][0], "Qwen2.5-7B");
  // Qwen2.5-7B has 28 attention heads: tp=8 cannot split them (a check on the model).
  e = fit_error({{"model", "Qwen2.5-7B"}, {"gpu", "A100"}, {"gpus", 8}, {"tp", 8}});
  EXPECT_EQ(e["field"], "tp");
  e = fit_error({{"model", "Qwen2.5-7B"}, {"gpu", "A100"}, {"gpus", 3}, {"tp", 2}});
  EXPECT_EQ(e["field"], "gpus");
  e = fit_error({{"model", "Qwen2.5-7B"}, {"gpu", "A100"}, {"epochs", 2}});
  EXPECT_EQ(e["field"], "epochs");
  EXPECT_EQ(e["message"], "epochs and dataset_tokens go together");
  // On the command line (the CLI spells the library's keys as flags) the same error names flags.
  InputError flags = ErrorOf([] {
    FitRequest r = FromFlags(FitOptionTable(), {"--model", "Qwen2.5-7B", "--gpu", "A100", "--epochs", "2"});
    RunFit(r, test::Catalog(), test::DataDir());
  });
  flags = SpellFlags(flags);
  EXPECT_EQ(flags.field(), "--epochs");
  EXPECT_EQ(flags.message(), "--epochs and --dataset-tokens go together");

  const std::string offers = test::DataDir() + "/offers/nanjing-a100.yaml";
  CompareRequest c;
  c.given = ReadJsonOptions(CompareOptionTable(),
                            nlohmann::json{{"offers", offers}, {"hours_per_month", 200}, {"month", "2026-13"}}, c);
  e = ApiErrorOf([&] { RunCompare(c, test::Catalog()); });
  EXPECT_EQ(e["field"], "month");
  c.given = ReadJsonOptions(CompareOptionTable(),
                            nlohmann::json{{"offers", offers}, {"month", "2027-02"}, {"hours_per_month", 731}}, c);
  e = ApiErrorOf([&] { RunCompare(c, test::Catalog()); });
  EXPECT_EQ(e["field"], "hours_per_month");  // per average month: 730 h is every hour

  TcoRequest t;
  t.given = ReadJsonOptions(
      TcoOptionTable(), nlohmann::json{{"offers", offers}, {"hours_per_month", 200}, {"gpus", 4}, {"buy_gpu", "RTX 409"}},
      t);
  e = ApiErrorOf([&] { RunTco(t, test::Catalog()); });
  EXPECT_EQ(e["field"], "buy_gpu");  // an unknown card, named by its JSON key
  t.buy_gpu_name.clear();
  // Ownership values the table already bounds: PUE is facility over IT power, at least 1.
  e = ApiErrorOf([&] { CostFromJson(TcoOptionTable(), nlohmann::json{{"offers", offers}, {"pue", 0.9}}, t); });
  EXPECT_EQ(e["field"], "pue");
  InputError flag = ErrorOf([] { FromFlags(TcoOptionTable(), {"--offers", "o.yaml", "--resale", "1.5"}); });
  EXPECT_EQ(flag.field(), "--resale");
  flag = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--fragmentation", "-0.1"}); });
  EXPECT_EQ(flag.field(), "--fragmentation");
}

// The library names an option by its key; each front end spells it its own way, by the table
// (docs/cli.md's serve table: --allow-host is allow_hosts, --timeout is timeout_seconds).
TEST(OptionsTable, EachFrontEndSpellsTheKey) {
  ServeRequest r;
  CLI::App app;
  cli::AddOptions(&app, ServeOptionTable(), r);
  const InputError e = InputError::Option("allow_hosts", "not with `timeout_seconds` and `max_gpus`");
  const InputError flags = SpellFlags(e);
  EXPECT_EQ(flags.field(), "--allow-host");
  EXPECT_EQ(flags.message(), "not with --timeout and --max-gpus");
  EXPECT_FALSE(flags.names_option());
  const InputError keys = SpellOptions(e, [](const std::string& key) { return key; });
  EXPECT_EQ(keys.field(), "allow_hosts");
  EXPECT_EQ(keys.message(), "not with timeout_seconds and max_gpus");
  // A field that is not an option (a file's key) and quoted text that is not a key stay as they are.
  const InputError file = InputError("expected a mapping with `rules:`", "alerts.yaml", 3, "rules");
  EXPECT_EQ(SpellFlags(file).field(), "rules");
  EXPECT_EQ(SpellFlags(file).message(), "expected a mapping with `rules:`");
}

// "Every number has bounds" (the brief's input rules): each integer and number option of every
// table declares a least and a greatest value, so 1e400, inf, nan and -3 are refused at the
// option (named as the user wrote it) on every front end, not carried into the model.
template <typename Req>
void ExpectBounded(const OptionTable<Req>& table, std::vector<std::string>& unbounded) {
  for (const auto& o : table) {
    if ((o.kind == OptionKind::kInt || o.kind == OptionKind::kDouble) && (!o.check.min || !o.check.max)) {
      unbounded.push_back(o.flag + (o.check.min ? " (no greatest value)" : o.check.max ? " (no least value)" : " (none)"));
    }
  }
}

TEST(OptionsTable, EveryNumberHasBounds) {
  std::vector<std::string> unbounded;
  ExpectBounded(FitOptionTable(), unbounded);
  ExpectBounded(BreakevenOptionTable(), unbounded);
  ExpectBounded(CompareOptionTable(), unbounded);
  ExpectBounded(OptimizeOptionTable(), unbounded);
  ExpectBounded(TcoOptionTable(), unbounded);
  ExpectBounded(CheckOptionTable(), unbounded);
  ExpectBounded(CompareReportsOptionTable(), unbounded);
  ExpectBounded(MergeReportsOptionTable(), unbounded);
  ExpectBounded(MeterReportOptionTable(), unbounded);
  ExpectBounded(MeterExportOptionTable(), unbounded);
  ExpectBounded(MeterTimelineOptionTable(), unbounded);
  ExpectBounded(MeterAlertsOptionTable(), unbounded);
  ExpectBounded(MeterRunOptionTable(), unbounded);
  ExpectBounded(MeterRecordOptionTable(), unbounded);
  ExpectBounded(MeterWatchOptionTable(), unbounded);
  ExpectBounded(ServeOptionTable(), unbounded);
  ExpectBounded(PlanOptionTable(), unbounded);
  std::string list;
  for (const auto& u : unbounded) {
    list += "\n  " + u;
  }
  EXPECT_TRUE(unbounded.empty()) << unbounded.size() << " options without bounds:" << list;

  // What the bounds refuse, on the command line and in JSON: before them these ran (an epochs of
  // -1 ignored, a body limit of 1e300 MiB cast to a size, a stage of 2^32 + 2 wrapped to 2).
  InputError e = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--epochs", "-1"}); });
  EXPECT_EQ(e.field(), "--epochs");
  EXPECT_EQ(e.message(), "must be in (0, 1e+06], got -1");
  e = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--mfu", "nan"}); });
  EXPECT_EQ(e.message(), "must be in (0, 1], got nan");
  e = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--tokens", "1e400"}); });
  EXPECT_EQ(e.field(), "--tokens");
  e = ErrorOf([] { FromFlags(FitOptionTable(), {"--model", "x", "--zero", "4294967298"}); });
  EXPECT_EQ(e.field(), "--zero");  // an int field: held at 2^31 - 1, not wrapped to 2
  EXPECT_EQ(e.message(), "must be in [0, 3], got 2147483647");
  e = ErrorOf([] { FromFlags(ServeOptionTable(), {"--body-limit-mib", "1e300"}); });
  EXPECT_EQ(e.field(), "--body-limit-mib");
  e = ErrorOf([&] { FitFromJson(nlohmann::json{{"model", "Qwen2.5-7B"}, {"margin", 2}}); });
  EXPECT_EQ(e.field(), "margin");
  EXPECT_EQ(e.message(), "must be in [0, 1), got 2");
  // No bound at all (a table this test would flag): NaN is still refused, in words.
  OptionCheck none;
  e = ErrorOf([&] { CheckOptionValue(none, OptionValue(std::nan("")), "x"); });
  EXPECT_EQ(e.message(), "must be a number, got nan");
}

TEST(OptionsTable, DocsCliIsCurrent) {
  const std::string doc = test::DataDir() + "/../docs/cli.md";
  auto check = [&doc](const std::string& name, const std::string& table) {
    test::CheckGeneratedBlock(doc, "<!-- BEGIN GENERATED OPTIONS " + name + " (tests/unit/options_table_test.cc) -->\n",
                              "<!-- END GENERATED OPTIONS " + name + " -->", table);
  };
  check("fit", OptionsMarkdown(FitOptionTable()));
  check("cost breakeven", OptionsMarkdown(BreakevenOptionTable()));
  check("cost compare", OptionsMarkdown(CompareOptionTable()));
  check("cost optimize", OptionsMarkdown(OptimizeOptionTable()));
  check("cost tco", OptionsMarkdown(TcoOptionTable()));
  check("check", OptionsMarkdown(CheckOptionTable()));
  check("check compare", OptionsMarkdown(CompareReportsOptionTable()));
  check("check merge", OptionsMarkdown(MergeReportsOptionTable()));
  check("meter report", OptionsMarkdown(MeterReportOptionTable()));
  check("meter export", OptionsMarkdown(MeterExportOptionTable()));
  check("meter timeline", OptionsMarkdown(MeterTimelineOptionTable()));
  check("meter alerts", OptionsMarkdown(MeterAlertsOptionTable()));
  check("serve", OptionsMarkdown(ServeOptionTable()));
  check("meter run", OptionsMarkdown(MeterRunOptionTable()));
  check("meter record", OptionsMarkdown(MeterRecordOptionTable()));
  check("meter watch", OptionsMarkdown(MeterWatchOptionTable()));
  check("plan", OptionsMarkdown(PlanOptionTable()));
}

}  // namespace
}  // namespace gpuplan
