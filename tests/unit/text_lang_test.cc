// The CLI's text in Chinese (issue 12, requirement 3; docs/cli.md "Language"): the template
// matcher of the message catalogue (read/messages.h) on catalogues written here, the shipped
// catalogue's consistency, real library errors and check / meter watch results rendered in each
// language. Every Chinese line expected below is written out by hand from the inputs and the
// catalogue's words (data/messages.json), not copied from a run.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/check_request.h"
#include "check/expect.h"
#include "check/sold_as.h"
#include "check/thresholds.h"
#include "core/error.h"
#include "catalog/offer.h"
#include "cost/usage.h"
#include "check/render/check_json.h"
#include "check/render/check_text.h"
#include "meter/render/meter_watch.h"
#include "format/table.h"
#include "format/text_lang.h"
#include "meter/report.h"
#include "meter/watch.h"
#include "read/file_text.h"
#include "read/messages.h"
#include "telemetry/nvml_source.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

Messages Catalogue(const std::string& templates) {
  return Messages::Parse(R"({"messages": {}, "templates": )" + templates + "}", "t.json");
}

// The field an InputError of a malformed catalogue names.
std::string FieldOf(const std::string& templates) {
  try {
    Catalogue(templates);
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "t.json");
    return e.field();
  }
  return "(no error)";
}

// The shipped catalogue as the CLI loads it.
const Messages& Shipped() {
  static const Messages m = Messages::Load(test::DataDir() + "/messages.json");
  return m;
}

// Sets the text language for one test and puts English back after it.
class TextLanguage {
 public:
  explicit TextLanguage(Lang lang) { SetTextLanguage(Shipped(), lang); }
  ~TextLanguage() { SetTextLanguage(Messages(), Lang::kEn); }
  TextLanguage(const TextLanguage&) = delete;
  TextLanguage& operator=(const TextLanguage&) = delete;
};

// Every number in `text`, sorted: the two languages must show the same figures.
std::vector<std::string> Numbers(const std::string& text) {
  std::vector<std::string> out;
  const std::regex number("[0-9]+(\\.[0-9]+)?");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it) {
    out.push_back(it->str());
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// --- the template matcher ---------------------------------------------------------------------

TEST(MessageTemplates, AMessageNoTemplateMatchesIsUnchanged) {
  const Messages m = Catalogue(R"([{"en": "unknown GPU '{}'", "zh": "未知的 GPU '{}'"}])");
  EXPECT_EQ(m.Translate("unknown model 'x'", Lang::kZh), "unknown model 'x'");
  // A template matches the whole message, not a part of it.
  EXPECT_EQ(m.Translate("error: unknown GPU 'x'", Lang::kZh), "error: unknown GPU 'x'");
  EXPECT_EQ(m.Translate("unknown GPU 'x' here", Lang::kZh), "unknown GPU 'x' here");
  // English is the message itself.
  EXPECT_EQ(m.Translate("unknown GPU 'x'", Lang::kEn), "unknown GPU 'x'");
  EXPECT_EQ(Messages().Translate("unknown GPU 'x'", Lang::kZh), "unknown GPU 'x'");
}

TEST(MessageTemplates, FillsPlaceholdersInOrder) {
  const Messages m = Catalogue(R"([{"en": "unknown GPU '{}'; did you mean {}?", "zh": "未知的 GPU '{}'；是否指 {}？"}])");
  EXPECT_EQ(m.Translate("unknown GPU 'H10'; did you mean H100 or H200?", Lang::kZh),
            "未知的 GPU 'H10'；是否指 H100 或 H200？");
  // A list as JoinOr writes it the Chinese way (issue 25 req. 10: "or A30？" in a Chinese line).
  EXPECT_EQ(m.Translate("unknown GPU 'A3'; did you mean A30, L4, T4 or A10?", Lang::kZh),
            "未知的 GPU 'A3'；是否指 A30、L4、T4 或 A10？");
  // An empty part is a part.
  EXPECT_EQ(m.Translate("unknown GPU ''; did you mean ?", Lang::kZh), "未知的 GPU ''；是否指 ？");
}

TEST(MessageTemplates, ReorderedPlaceholders) {
  const Messages m = Catalogue(R"([{"en": "no offer '{}' in {}", "zh": "{1} 中没有报价 '{0}'"},
                                   {"en": "{} of {} NVLinks up", "zh": "{1} 条 NVLink 中 {0} 条在线，共 {1} 条"}])");
  EXPECT_EQ(m.Translate("no offer 'od' in offers.yaml", Lang::kZh), "offers.yaml 中没有报价 'od'");
  // A value may be used twice.
  EXPECT_EQ(m.Translate("12 of 18 NVLinks up", Lang::kZh), "18 条 NVLink 中 12 条在线，共 18 条");
}

TEST(MessageTemplates, EarlierPlaceholdersTakeAsLittleAsTheyCan) {
  const Messages m = Catalogue(R"([{"en": "{} to {}", "zh": "[{}|{}]"}])");
  EXPECT_EQ(m.Translate("a to b to c", Lang::kZh), "[a|b to c]");
  // The last literal is the end of the message, even where it also occurs earlier.
  const Messages end = Catalogue(R"([{"en": "{} GB", "zh": "<{}>"}])");
  EXPECT_EQ(end.Translate("3 GB and 4 GB", Lang::kZh), "<3 GB and 4>");
}

TEST(MessageTemplates, TheTemplateWithTheMostLiteralTextWins) {
  // "expected , got ''" is 17 characters of literal text, "expected a number, got ''" 25: the
  // longer wins in either order of the file.
  const std::string generic = R"({"en": "expected {}, got '{}'", "zh": "应为 {}，实际为 '{}'"})";
  const std::string number = R"({"en": "expected a number, got '{}'", "zh": "应为数字，实际为 '{}'"})";
  for (const Messages& m : {Catalogue("[" + generic + "," + number + "]"), Catalogue("[" + number + "," + generic + "]")}) {
    EXPECT_EQ(m.Translate("expected a number, got 'x'", Lang::kZh), "应为数字，实际为 'x'");
    EXPECT_EQ(m.Translate("expected on or off, got 'x'", Lang::kZh), "应为 on 或 off，实际为 'x'");
  }
}

TEST(MessageTemplates, ANestedTranslationCountsForItsTemplate) {
  // The storage evidence of gpuplan check: "4 MiB blocks, " + how the files were read + " (judged
  // ...)". The template of the inner part has more literal text (52 characters) than the outer
  // (23) and also matches the whole message, its first {} taking "4 MiB blocks, 4"; but the outer
  // with its part translated explains 23 + 52 + 19 ("O_DIRECT (bypassed)") = 94 characters, the
  // inner alone 52 (its last part, "O_DIRECT (bypassed) (judged)", is no message).
  const Messages m = Catalogue(
      R"j([{"en": "{} threads reading a test file (too little data) in {}; {msg}", "zh": "{0} 个线程读取 {1} 中的测试文件（数据太少）；{2}"},
          {"en": "4 MiB blocks, {msg} (judged)", "zh": "4 MiB 块，{}（已评判）"},
          {"en": "O_DIRECT (bypassed)", "zh": "O_DIRECT（绕过）"}])j");
  EXPECT_EQ(m.Translate("4 MiB blocks, 4 threads reading a test file (too little data) in /d; O_DIRECT (bypassed) (judged)",
                        Lang::kZh),
            "4 MiB 块，4 个线程读取 /d 中的测试文件（数据太少）；O_DIRECT（绕过）（已评判）");
}

TEST(MessageTemplates, TiesGoToTheFirstInTheFile) {
  // "a{}c" and "{}bc" both have two literal characters and both match "abc".
  const std::string first = R"({"en": "a{}c", "zh": "first {}"})";
  const std::string second = R"({"en": "{}bc", "zh": "second {}"})";
  EXPECT_EQ(Catalogue("[" + first + "," + second + "]").Translate("abc", Lang::kZh), "first b");
  EXPECT_EQ(Catalogue("[" + second + "," + first + "]").Translate("abc", Lang::kZh), "second a");
}

TEST(MessageTemplates, NestedMessagesAreTranslatedInTurn) {
  const Messages m = Catalogue(R"([{"en": "{msg}; without GPUs, replay", "zh": "{}；没有 GPU 时请回放"},
                                   {"en": "no driver: {}", "zh": "没有驱动：{}"},
                                   {"en": "seen {} times", "zh": "见到 {} 次"}])");
  EXPECT_EQ(m.Translate("no driver: libx.so; without GPUs, replay", Lang::kZh), "没有驱动：libx.so；没有 GPU 时请回放");
  // A nested part no template matches stays as it is; a plain {} is never translated.
  EXPECT_EQ(m.Translate("gone; without GPUs, replay", Lang::kZh), "gone；没有 GPU 时请回放");
  EXPECT_EQ(m.Translate("seen no driver: x times", Lang::kZh), "见到 no driver: x 次");
}

TEST(MessageTemplates, BracesAreWrittenTwice) {
  const Messages m = Catalogue(R"([{"en": "expected {{\"zh\": {}}}", "zh": "应为 {{\"zh\": {}}}"}])");
  EXPECT_EQ(m.Translate("expected {\"zh\": 1}", Lang::kZh), "应为 {\"zh\": 1}");
}

TEST(MessageTemplates, MalformedTemplatesNameTheirEntry) {
  EXPECT_EQ(FieldOf(R"({"en": "x"})"), "templates");
  EXPECT_EQ(FieldOf(R"([{"en": "x"}])"), "templates[0]");
  EXPECT_EQ(FieldOf(R"([{"en": "x", "zh": 1}])"), "templates[0]");
  EXPECT_EQ(FieldOf(R"([{"en": "x", "zh": "y", "fr": "z"}])"), "templates[0]");
  // Two placeholders side by side cannot be told apart; a text of placeholders only matches all.
  EXPECT_EQ(FieldOf(R"([{"en": "a", "zh": "b"}, {"en": "x {}{}", "zh": "{}{}"}])"), "templates[1].en");
  EXPECT_EQ(FieldOf(R"([{"en": "{}", "zh": "{}"}])"), "templates[0].en");
  EXPECT_EQ(FieldOf(R"([{"en": "x {0}", "zh": "{}"}])"), "templates[0].en");
  EXPECT_EQ(FieldOf(R"([{"en": "x {", "zh": "y"}])"), "templates[0].en");
  EXPECT_EQ(FieldOf(R"([{"en": "x }", "zh": "y"}])"), "templates[0].en");
  EXPECT_EQ(FieldOf(R"([{"en": "x {}", "zh": "y"}, {"en": "x {}", "zh": "z"}])"), "templates[1].en");
  // The Chinese names no value the English lacks, and does not mix {} with {0}.
  EXPECT_EQ(FieldOf(R"([{"en": "x {}", "zh": "{} {}"}])"), "templates[0].zh");
  EXPECT_EQ(FieldOf(R"([{"en": "x {}", "zh": "{1}"}])"), "templates[0].zh");
  EXPECT_EQ(FieldOf(R"([{"en": "x {} {}", "zh": "{} {1}"}])"), "templates[0].zh");
  EXPECT_EQ(FieldOf(R"([{"en": "x {}", "zh": "{msg}"}])"), "templates[0].zh");
  // A value the Chinese leaves out is allowed (an English plural "s", say).
  EXPECT_EQ(FieldOf(R"([{"en": "{} GPU{} in use", "zh": "{0} 块 GPU 在用"}])"), "(no error)");
}

TEST(MessageTemplates, ACatalogueWithoutTemplatesStillReads) {
  const Messages m = Messages::Parse(R"({"messages": {"a": {"zh": "甲", "en": "A"}}})", "t.json");
  EXPECT_EQ(m.TemplateCount(), 0u);
  EXPECT_EQ(m.Get("a", Lang::kZh, "?"), "甲");
  EXPECT_EQ(m.Translate("A", Lang::kZh), "A");
}

TEST(FillPlaceholders, InOrderByPositionAndBraces) {
  EXPECT_EQ(FillPlaceholders("{} of {}", {"3", "8"}), "3 of 8");
  EXPECT_EQ(FillPlaceholders("{1} 中 {0}", {"3", "8"}), "8 中 3");
  EXPECT_EQ(FillPlaceholders("{{{}}}", {"x"}), "{x}");
  EXPECT_EQ(FillPlaceholders("no values", {}), "no values");
  EXPECT_EQ(FillPlaceholders("{} {}", {"1"}), std::nullopt);   // a value too few
  EXPECT_EQ(FillPlaceholders("{2}", {"1", "2"}), std::nullopt);  // beyond the values
  EXPECT_EQ(FillPlaceholders("{} {0}", {"1"}), std::nullopt);   // mixed
  EXPECT_EQ(FillPlaceholders("{x}", {"1"}), std::nullopt);
  EXPECT_EQ(FillPlaceholders("{", {}), std::nullopt);
}

TEST(SayFormat, FallsBackToTheEnglishWhenTheTranslationDoesNotFill) {
  const Messages m = Messages::Parse(
      R"({"messages": {"ok": {"zh": "{1} 中 {0}", "en": "{} in {}"}, "bad": {"zh": "{5}", "en": "{} in {}"}}})", "t.json");
  SetTextLanguage(m, Lang::kZh);
  EXPECT_EQ(SayFormat("ok", "{} in {}", {"a", "b"}), "b 中 a");
  EXPECT_EQ(SayFormat("bad", "{} in {}", {"a", "b"}), "a in b");
  EXPECT_EQ(SayFormat("missing", "{} in {}", {"a", "b"}), "a in b");
  SetTextLanguage(Messages(), Lang::kEn);
  EXPECT_EQ(SayFormat("ok", "{} in {}", {"a", "b"}), "a in b");
}

// --- the shipped catalogue ----------------------------------------------------------------------

nlohmann::json ShippedJson() {
  return nlohmann::json::parse(ReadFileText(test::DataDir() + "/messages.json"));
}

std::size_t PlaceholdersIn(const std::string& english) {
  std::size_t n = 0;
  for (std::size_t i = 0; i + 1 < english.size(); ++i) {
    if (english[i] == '{' && english[i + 1] == '{') {
      ++i;
    } else if (english[i] == '{') {
      ++n;
    }
  }
  return n;
}

TEST(ShippedCatalogue, EveryCliMessageFillsWithItsEnglishValues) {
  const nlohmann::json j = ShippedJson();
  std::size_t cli = 0;
  for (const auto& [key, langs] : j["messages"].items()) {
    if (key.rfind("cli.", 0) != 0) {
      continue;
    }
    ++cli;
    const std::string en = langs.at("en").get<std::string>();
    const std::vector<std::string> values(PlaceholdersIn(en), "v");
    EXPECT_TRUE(FillPlaceholders(en, values).has_value()) << key;
    EXPECT_TRUE(FillPlaceholders(langs.at("zh").get<std::string>(), values).has_value()) << key;
  }
  EXPECT_GT(cli, 50u);
}

// The keys the renderers build from a library name ("cli.meter.bound." + "io-bound") exist for
// every name the library has.
TEST(ShippedCatalogue, EveryNameARendererLooksUpHasItsWords) {
  std::vector<std::string> keys;
  for (auto b : {WatchBound::kCompute, WatchBound::kMemory, WatchBound::kDataLoading, WatchBound::kCommunication,
                 WatchBound::kCpu, WatchBound::kIo, WatchBound::kWaiting, WatchBound::kTooShort}) {
    keys.push_back(std::string("cli.meter.bound.") + ToString(b));
  }
  for (auto g : {Granularity::kSecond, Granularity::kMinute, Granularity::kHour, Granularity::kDay}) {
    keys.push_back(std::string("cli.meter.granularity.") + ToString(g));
  }
  for (auto b : {BillingStart::kCreate, BillingStart::kStart, BillingStart::kTask}) {
    keys.push_back(std::string("cli.meter.billing_starts.") + ToString(b));
  }
  for (auto m : {BillingMode::kYearly, BillingMode::kMonthly, BillingMode::kWeekly, BillingMode::kDaily,
                 BillingMode::kOnDemand, BillingMode::kSpot}) {
    keys.push_back(std::string("mode.") + ToString(m));
  }
  for (auto by : {MeterGroupBy::kGpu, MeterGroupBy::kUser, MeterGroupBy::kJob, MeterGroupBy::kPod}) {
    keys.push_back("cli.meter.by." + std::string(ToString(by)));
  }
  for (auto m : {CheckMode::kQuick, CheckMode::kDefault, CheckMode::kFull}) {
    keys.push_back(std::string("cli.check.mode.") + ToString(m));
  }
  for (auto st : {CheckStatus::kPass, CheckStatus::kWarn, CheckStatus::kFail, CheckStatus::kSkip, CheckStatus::kError}) {
    keys.push_back(std::string("verdict.") + ToString(st));
  }
  for (const auto& k : keys) {
    EXPECT_TRUE(Shipped().Has(k)) << k;
    EXPECT_NE(Shipped().Get(k, Lang::kZh, ""), "") << k;
  }
}

// Each template, with a distinct token in each place, is translated by itself: no other template
// (with more literal text) takes its messages.
TEST(ShippedCatalogue, EveryTemplateTranslatesItsOwnMessages) {
  const nlohmann::json j = ShippedJson();
  ASSERT_TRUE(j["templates"].is_array());
  EXPECT_EQ(Shipped().TemplateCount(), j["templates"].size());
  for (const auto& t : j["templates"]) {
    std::string en = t.at("en").get<std::string>();
    for (std::size_t p; (p = en.find("{msg}")) != std::string::npos;) {
      en.replace(p, 5, "{}");
    }
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < PlaceholdersIn(en); ++i) {
      tokens.push_back("V" + std::to_string(i) + "V");
    }
    const auto sample = FillPlaceholders(en, tokens);
    const auto want = FillPlaceholders(t.at("zh").get<std::string>(), tokens);
    ASSERT_TRUE(sample && want) << en;
    EXPECT_EQ(Shipped().Translate(*sample, Lang::kZh), *want) << en;
  }
}

// --- real errors of the library ------------------------------------------------------------------

std::string LineOf(const std::exception& e, Lang lang) {
  TextLanguage language(lang);
  return ErrorLine(DescribeError(e));
}

TEST(TranslatedErrors, UnknownGpuKeepsTheFieldAndTheSuggestions) {
  try {
    test::Catalog().Find("H10");
    FAIL() << "H10 is not a GPU";
  } catch (const InputError& e) {
    ASSERT_FALSE(e.suggestions().empty());
    EXPECT_EQ(LineOf(e, Lang::kEn).rfind("error: field 'gpu': unknown GPU 'H10'; did you mean ", 0), 0u);
    const std::string zh = LineOf(e, Lang::kZh);
    EXPECT_EQ(zh.rfind("输入有误：字段 'gpu'：未知的 GPU 'H10'；是否指 ", 0), 0u) << zh;
    const std::string tail = "？（gpuplan gpus 列出全部显卡）";
    EXPECT_EQ(zh.compare(zh.size() - tail.size(), tail.size(), tail), 0) << zh;
    EXPECT_TRUE(Has(zh, e.suggestions().front())) << zh;
  }
}

TEST(TranslatedErrors, NegativePriceInAnOffersFileNamesFileLineAndField) {
  // The price is on line 6; the offer's fields are named by its id. The bounds are those of
  // offers' prices (src/catalog/offer.cc: 1e-9 to 1e12, printed with %g).
  const std::string yaml =
      "currency: CNY\n"
      "offers:\n"
      "  - id: od\n"
      "    gpu: A100 80GB SXM\n"
      "    mode: on_demand\n"
      "    price: -5\n";
  try {
    ParseOffers(yaml, "neg.yaml", test::Catalog());
    FAIL() << "a negative price was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(LineOf(e, Lang::kEn), "error: neg.yaml:6: field 'offers[od].price': must be between 1e-09 and 1e+12, got -5");
    EXPECT_EQ(LineOf(e, Lang::kZh), "输入有误：neg.yaml:6: 字段 'offers[od].price'：必须在 1e-09 到 1e+12 之间，实际为 -5");
  }
}

TEST(TranslatedErrors, MalformedUsageCsvLine) {
  const std::string csv = "timestamp,gpus\n2026-01-05T09:00,2\n2026-01-05T10:00,two\n";
  try {
    ParseUsageCsv(csv, "usage.csv");
    FAIL() << "'two' was read as a number of GPUs";
  } catch (const InputError& e) {
    EXPECT_EQ(LineOf(e, Lang::kZh), "输入有误：usage.csv:3: 字段 'gpus'：应为 GPU 数量（0 或以上），实际为 'two'");
  }
  try {
    ParseUsageCsv("timestamp,gpus\n5 Jan,2\n", "usage.csv");
    FAIL() << "'5 Jan' was read as an hour";
  } catch (const InputError& e) {
    EXPECT_EQ(LineOf(e, Lang::kZh),
              "输入有误：usage.csv:2: 字段 'timestamp'：应为 ISO 8601 整点时间，如 2026-01-05T09:00（时区偏移须为整小时），"
              "实际为 '5 Jan'");
  }
}

TEST(TranslatedErrors, NoDriverAndAnInternalError) {
  try {
    NvmlSource::Open("/nonexistent/libnvidia-ml.so.1");
    FAIL() << "opened a library that does not exist";
  } catch (const EnvironmentError& e) {
    const std::string zh = LineOf(e, Lang::kZh);
    EXPECT_EQ(zh.rfind("环境问题：没有 NVIDIA 驱动：找不到 /nonexistent/libnvidia-ml.so.1（dlopen：", 0), 0u) << zh;
    EXPECT_EQ(zh.substr(zh.size() - 3), "）");
  }
  EXPECT_EQ(LineOf(std::logic_error("table row of 2 cells for 3 columns"), Lang::kZh),
            "内部错误：table row of 2 cells for 3 columns（这是 gpuplan 的缺陷：请把命令行和输入文件提交到 gpuplan 的问题跟踪器）");
}

// --- a check report in each language ------------------------------------------------------------

// One H100 SXM 80GB in an x8 slot, read over NVML, "1x H100 SXM" ordered. By hand, from
// docs/check.md §3 and data/gpus.yaml (H100 SXM 80GB: 0x2330, 85520809984 bytes = 81559 MiB,
// PCIe Gen 5 x16, NVLink 4): gpu_count PASS (1 of 1), gpu_identity PASS (0x2330 is the card
// ordered), gpu_memory_total PASS (81559 of 81559 MiB), pcie_link_gen PASS (Gen 5 of 5),
// pcie_link_width FAIL (max x8 < x16), gpu_temperature PASS (41 C); not read, so SKIP:
// gpu_power_limit, nvlink_links_up, mig_mode, ecc_mode, ecc_errors, memory_remapping,
// clock_events; driver_cuda SKIP (no CUDA asked). 5 PASS, 0 WARN, 1 FAIL, 8 SKIP, 0 ERROR.
CheckReport X8Report() {
  SystemSnapshot sys;
  GpuSnapshot g;
  g.index = 0;
  g.name = "NVIDIA H100 80GB HBM3";
  g.pci_device_id = 0x233010DEu;
  g.memory_total = 85520809984ull;
  g.pcie_gen_max = 5;
  g.pcie_width_current = 8;
  g.pcie_width_max = 8;
  g.temperature_c = 41;
  sys.gpus = {g};
  const Expectation exp = ParseExpect("1x H100 SXM", test::Catalog());
  CheckReport r;
  r.mode = "quick";
  r.source = "NVML";
  r.expect = "1x H100 SXM";
  for (CheckResult& t : JudgeInventory(sys, exp, test::Catalog(), CheckThresholds{}, "NVML", true)) {
    r.Add(std::move(t));
  }
  return r;
}

std::string LiveView(const CheckReport& r, Lang lang) {
  TextLanguage language(lang);
  std::ostringstream os;
  CheckLiveView view(os, false);
  view.OnStart(r, {"inventory"});
  view.OnFinish(r);
  return os.str();
}

TEST(CheckTextLanguage, OneReportInEachLanguage) {
  const CheckReport r = X8Report();
  ASSERT_EQ(r.tests.size(), 14u);
  const std::string en = LiveView(r, Lang::kEn);
  const std::string zh = LiveView(r, Lang::kZh);
  // English.
  EXPECT_TRUE(Has(en, "gpuplan check (quick): NVML\nordered: 1x H100 SXM\ntests: inventory\n")) << en;
  EXPECT_TRUE(Has(en, "  FAIL  pcie_link_width          GPU 0    8 lanes (expected x16)  NVML: link width current x8, "
                      "max x8; H100 SXM 80GB is a x16 card\n      -> the slot is narrower than the card (x8 halves "
                      "host-to-GPU bandwidth): ask for a x16 slot\n"))
      << en;
  EXPECT_TRUE(Has(en, "verdict: FAIL (5 PASS, 0 WARN, 1 FAIL, 8 SKIP, 0 ERROR; exit 1)\n")) << en;
  // Chinese: the status is padded to the widest, 不通过 (6 columns); "GPU 0" to 8, then two spaces
  // before the evidence of a result with neither a measurement nor an expectation.
  EXPECT_TRUE(Has(zh, "gpuplan check（快速）：NVML\n订购：1x H100 SXM\n检测项：硬件清点\n")) << zh;
  EXPECT_TRUE(Has(zh, "  不通过 pcie_link_width          GPU 0    8 条通道（应为 x16）  NVML：链路宽度当前 x8，最大 x8；"
                      "H100 SXM 80GB 是 x16 显卡\n      -> 插槽比显卡窄（x8 会使主机到 GPU 的带宽减半）：请要求 x16 插槽\n"))
      << zh;
  EXPECT_TRUE(Has(zh, "  通过   gpu_count                主机     1 块 GPU（应为 1 块 GPU）  NVML 列出 1 块 GPU；订购了 1 块\n"))
      << zh;
  EXPECT_TRUE(Has(zh, "  跳过   gpu_power_limit          GPU 0     未测到 power_limit（NVML：数据中没有）\n")) << zh;
  EXPECT_TRUE(Has(zh, "NVML：显存总量 81559 MiB；H100 SXM 80GB 应有 81559 MiB")) << zh;
  EXPECT_TRUE(Has(zh, "结论：不通过（通过 5，警告 0，不通过 1，跳过 8，错误 0；退出码 1）\n")) << zh;
  for (const char* english : {"FAIL", "PASS", "SKIP", "verdict", "expected", "lanes", "not measured"}) {
    EXPECT_FALSE(Has(zh, english)) << english << " in\n" << zh;
  }
  EXPECT_EQ(Numbers(zh), Numbers(en));
  // The report's JSON is the same whatever the language.
  std::string json_en, json_zh;
  {
    TextLanguage language(Lang::kEn);
    json_en = CheckReportToJson(r).dump(2);
  }
  {
    TextLanguage language(Lang::kZh);
    json_zh = CheckReportToJson(r).dump(2);
  }
  EXPECT_EQ(json_zh, json_en);
}

// --- a meter watch summary in each language ------------------------------------------------------

// One GPU at 20 % (its memory busy 5 %), the command at 0.2 cores of 16 reading 40 MB/s: under
// the 30 % of a busy GPU, with the host reading (docs/meter-watch.md), it is data-loading-bound,
// with the GPU and the host evidence (meter/watch.cc).
WatchResult DataLoadingRun() {
  WatchResult w;
  w.command = {"python3", "train.py"};
  w.hostname = "node-a";
  w.duration_seconds = 12.5;
  w.gpus = 1;
  w.summary.gpu_util_mean = 20;
  w.summary.gpu_memory_util_mean = 5;
  w.summary.cpu_cores_mean = 0.2;
  w.summary.cpu_cores_peak = 0.2;
  w.summary.read_bytes_per_s_mean = 40e6;
  w.summary.cpus = 16;
  for (int i = 0; i < 4; ++i) {
    WatchSample s;
    s.t = i;
    s.gpu_util = 20;
    s.cpu_cores = 0.2;
    w.series.push_back(s);
  }
  w.diagnosis = DiagnoseWatch(w.summary, 1, w.series.size(), "");
  return w;
}

std::string WatchText(const WatchResult& w, Lang lang) {
  TextLanguage language(lang);
  std::ostringstream os;
  WatchResultToText(os, w);
  return os.str();
}

TEST(WatchTextLanguage, OneSummaryInEachLanguage) {
  const WatchResult w = DataLoadingRun();
  ASSERT_EQ(w.diagnosis.bound, WatchBound::kDataLoading);
  const std::string en = WatchText(w, Lang::kEn);
  const std::string zh = WatchText(w, Lang::kZh);
  EXPECT_TRUE(Has(en, "python3 train.py on node-a: 12.5 s, exit code 0\n")) << en;
  EXPECT_TRUE(Has(en, "Diagnosis: data-loading-bound\n")) << en;
  EXPECT_TRUE(Has(zh, "python3 train.py（node-a）：12.5 秒，退出码 0\n")) << zh;
  // "GPU 利用率" is 10 columns and "CPU 核数" 8: both padded to 16, then the sparklines.
  EXPECT_TRUE(Has(zh, "  GPU 利用率       ")) << zh;
  EXPECT_TRUE(Has(zh, "平均 20%\n")) << zh;
  EXPECT_TRUE(Has(zh, "  CPU 核数         ")) << zh;
  EXPECT_TRUE(Has(zh, "平均 0.20，峰值 0.20（刻度 0-1）\n")) << zh;
  EXPECT_TRUE(Has(zh, "诊断：数据加载受限\n")) << zh;
  EXPECT_TRUE(Has(zh, "  - GPU 利用率平均 20%（有内核在运行的时间占比）\n")) << zh;
  EXPECT_TRUE(Has(zh, "  - 显存有 5% 的时间在忙\n")) << zh;
  EXPECT_TRUE(Has(zh, "  - 命令的进程平均使用 0.20 个 CPU 核（峰值 0.20），共 16 个\n")) << zh;
  EXPECT_TRUE(Has(zh, "  - 平均读取 40.0 MB/s\n")) << zh;
  EXPECT_EQ(Numbers(zh), Numbers(en));
  std::string json_zh;
  {
    TextLanguage language(Lang::kZh);
    json_zh = WatchResultToJson(w).dump();
  }
  EXPECT_EQ(json_zh, WatchResultToJson(w).dump());
}

// --- display width and tables ---------------------------------------------------------------------

TEST(DisplayWidth, WideAndFullwidthCharactersTakeTwoColumns) {
  EXPECT_EQ(DisplayWidth("GPU"), 3);
  EXPECT_EQ(DisplayWidth("显存"), 4);
  EXPECT_EQ(DisplayWidth("（GiB）"), 7);  // U+FF08 and U+FF09 are fullwidth
  EXPECT_EQ(DisplayWidth("结论：通过"), 10);
  // Narrow though three bytes each: the ellipsis, a block of a sparkline, the arrow.
  EXPECT_EQ(DisplayWidth("…▁→"), 3);
  EXPECT_EQ(DisplayWidth("41 °C"), 5);
  EXPECT_EQ(PadRight("显存", 6), "显存  ");
  EXPECT_EQ(PadLeft("元", 3), " 元");
  EXPECT_EQ(PadRight("不通过", 4), "不通过");  // never cut
  // Cut between characters: "已禁用" is 6 columns, 5 hold two characters.
  EXPECT_EQ(CutToWidth("已禁用", 5), "已禁");
  EXPECT_EQ(CutToWidth("x16 条通道", 5), "x16 ");
  EXPECT_EQ(CutToWidth("nothing pending", 13), "nothing pendi");
  EXPECT_EQ(CutToWidth("短", 13), "短");
}

}  // namespace
}  // namespace gpuplan
