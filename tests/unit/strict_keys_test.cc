// Every YAML file gpuplan reads refuses a key it does not know (a misspelt key would otherwise drop
// the field it meant, silently): the error names file, line and the key's path, and suggests the
// key meant. The offers file's levels are covered in cost_test.cc (Offers.MisspeltKeys...).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "fit/framework.h"
#include "fit/gemm_table.h"
#include "meter/alerts.h"
#include "meter/webhook.h"
#include "read/file_text.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

InputError Catch(const std::function<void()>& read) {
  try {
    read();
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("none");
}

void ExpectUnknown(const InputError& e, int line, const std::string& field, const std::string& meant) {
  EXPECT_EQ(e.file(), "f.yaml");
  EXPECT_EQ(e.line(), line);
  EXPECT_EQ(e.field(), field);
  EXPECT_NE(e.message().find("unknown key"), std::string::npos) << e.message();
  ASSERT_FALSE(e.suggestions().empty()) << e.message();
  EXPECT_EQ(e.suggestions()[0], meant);
}

const char* kGpu = "gpus:\n  - name: X1\n    memory_bytes: 1000\n    memory_bandwidth_gb_s: 10\n    tflops: {bf16: 1}\n";

TEST(StrictKeys, GpuCatalog) {
  EXPECT_NO_THROW(GpuCatalog::Parse(kGpu, "f.yaml"));
  ExpectUnknown(Catch([] { GpuCatalog::Parse(std::string(kGpu) + "    tdp_wats: 300\n", "f.yaml"); }), 6,
                "gpus[X1].tdp_wats", "tdp_watts");
  ExpectUnknown(Catch([] { GpuCatalog::Parse(std::string("gpuss: []\n") + kGpu, "f.yaml"); }), 1, "gpuss",
                "gpus");
  ExpectUnknown(Catch([] {
                  GpuCatalog::Parse(std::string(kGpu) + "    pcie: {gen: 4, lane: 16}\n", "f.yaml");
                }),
                6, "gpus[X1].pcie.lane", "lanes");
}

TEST(StrictKeys, AlertsAndWebhooks) {
  ExpectUnknown(Catch([] { AlertRulesFromYaml("rule:\n  idle_minutes: 30\n", "f.yaml"); }), 1, "rule", "rules");
  ExpectUnknown(Catch([] {
                  WebhookTargetsFromYaml("webhooks:\n  - format: generic\n    urll: http://127.0.0.1/x\n", "f.yaml");
                }),
                3, "webhooks[0].urll", "url");
}

// The shipped frameworks.yaml with one key misspelt: its line is found in the text, not assumed.
TEST(StrictKeys, FrameworksAllocator) {
  std::string text = ReadFileText(test::DataDir() + "/frameworks.yaml");
  EXPECT_NO_THROW(FrameworkCatalog::Parse(text, "f.yaml"));
  const std::size_t at = text.find("  reserve_fraction:");
  ASSERT_NE(at, std::string::npos);
  const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  text.replace(at, 19, "  reserve_fractoin:");
  ExpectUnknown(Catch([&] { FrameworkCatalog::Parse(text, "f.yaml"); }), line, "allocator.reserve_fractoin",
                "reserve_fraction");
}

TEST(StrictKeys, GemmTable) {
  const std::string rows = "bf16:\n  - [1024, 1024, 1024, 500.0]\n";
  EXPECT_NO_THROW(GemmTable::Parse("gpu: H200\nsm_count: 132\ncublaslt_version: 130000\n" + rows, "f.yaml"));
  ExpectUnknown(Catch([&] { GemmTable::Parse("gpu: H200\nfp88:\n  - [1, 1, 1, 1.0]\n" + rows, "f.yaml"); }), 2,
                "fp88", "fp8");
}

}  // namespace
}  // namespace gpuplan
