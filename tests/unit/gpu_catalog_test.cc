// The shipped GPU catalog: names as nvidia-smi prints them resolve, memory equals what the card
// reports (real nvidia-smi -q outputs in tests/fixtures/nvidia-smi), datasheet spot checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "test_paths.h"

namespace gpuplan {
namespace {

const GpuCatalog& Catalog() {
  static const GpuCatalog cat = GpuCatalog::Load(test::DataDir() + "/gpus.yaml");
  return cat;
}

TEST(GpuCatalog, HasTheRequiredCards) {
  for (const char* name : {"V100 16GB", "V100 32GB", "A100 40GB SXM", "A100 80GB SXM", "A100 40GB PCIe",
                           "A100 80GB PCIe", "A800", "H100 SXM", "H100 PCIe", "H800", "H20", "H200", "B200", "L40S",
                           "L40", "L4", "T4", "A10", "A30", "RTX 3090", "RTX 4090", "RTX 5090", "Ascend 910B", "L20",
                           "RTX 4090 D", "RTX A6000", "RTX 6000 Ada"}) {
    EXPECT_NE(Catalog().TryFind(name), nullptr) << name;
  }
}

// Issue 7: China-market and workstation cards. Expected values are what the sources recorded in
// data/GPUS-SOURCES.md print: the nvidia-smi names and memory.total MiB of published outputs (S23), the
// pci.ids device ids (S20), the spec pages S29..S32.
TEST(GpuCatalog, Issue7CardsByNvidiaSmiNameAndPciId) {
  struct Card {
    const char* entry;
    const char* smi_name;
    const char* pci_id;
    int64_t mib;
  };
  for (const Card& c : {Card{"L20", "NVIDIA L20", "0x26BA", 46068},
                        Card{"RTX 4090 D", "NVIDIA GeForce RTX 4090 D", "0x2685", 24564},
                        Card{"RTX A6000", "NVIDIA RTX A6000", "0x2230", 49140},
                        Card{"RTX 6000 Ada", "NVIDIA RTX 6000 Ada Generation", "0x26B1", 49140}}) {
    const Gpu* by_name = Catalog().TryFind(c.smi_name);
    ASSERT_NE(by_name, nullptr) << c.smi_name;
    EXPECT_EQ(by_name, &Catalog().Find(c.entry)) << c.smi_name;
    EXPECT_EQ(Catalog().FindByPciId(c.pci_id), by_name) << c.pci_id;
    EXPECT_EQ(by_name->memory_bytes, c.mib * 1024 * 1024) << c.entry;
  }
  // pci.ids lists a second L20 device id; nvidia-smi truncates the 6000 Ada's name in its table.
  EXPECT_EQ(Catalog().FindByPciId("0x26B7"), &Catalog().Find("L20"));
  EXPECT_EQ(Catalog().TryFind("NVIDIA RTX 6000 Ada Gene..."), &Catalog().Find("RTX 6000 Ada"));
  // The 4090 D is its own SKU, not the 4090.
  EXPECT_NE(&Catalog().Find("4090D"), &Catalog().Find("RTX 4090"));
  // Datasheet-level figures read at the sources.
  const Gpu& a6000 = Catalog().Find("RTX A6000");
  EXPECT_DOUBLE_EQ(a6000.memory_bandwidth_gb_s, 768.0);  // S31 (NVIDIA spec table)
  EXPECT_DOUBLE_EQ(a6000.tdp_watts, 300.0);
  EXPECT_EQ(a6000.architecture, "ampere");
  EXPECT_TRUE(a6000.Supports("bf16"));
  EXPECT_FALSE(a6000.Supports("fp8"));  // Ampere: no fp8 tensor path (S28)
  const Gpu& d = Catalog().Find("RTX 4090 D");
  EXPECT_DOUBLE_EQ(d.memory_bandwidth_gb_s, 1008.0);
  EXPECT_DOUBLE_EQ(d.tdp_watts, 425.0);  // power cap in published nvidia-smi outputs
  for (const char* name : {"L20", "RTX 4090 D", "RTX 6000 Ada"}) {
    const Gpu& g = Catalog().Find(name);
    EXPECT_EQ(g.architecture, "ada") << name;
    EXPECT_TRUE(g.Supports("fp8")) << name;
    EXPECT_TRUE(g.Supports("int4")) << name;
    EXPECT_FALSE(g.Supports("fp4")) << name;
  }
  EXPECT_DOUBLE_EQ(Catalog().Find("L20").memory_bandwidth_gb_s, 864.0);  // S29
  EXPECT_DOUBLE_EQ(Catalog().Find("RTX 6000 Ada").memory_bandwidth_gb_s, 960.0);  // S32
}

TEST(GpuCatalog, NamesMatchCaseAndPunctuationInsensitively) {
  const Gpu* a = Catalog().TryFind("a100");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(Catalog().TryFind("A100-SXM4-80GB"), a);
  EXPECT_EQ(Catalog().TryFind("NVIDIA A100-SXM4-80GB"), a);
  EXPECT_EQ(Catalog().TryFind("a100 sxm4 80gb"), a);
  // A100 80GB reports 81920 MiB = 80 GiB.
  EXPECT_EQ(a->memory_bytes, 80LL * 1024 * 1024 * 1024);
}

TEST(GpuCatalog, NvidiaSmiNamesAndMemoryTotals) {
  const std::regex name_re(R"(^\s*Product Name\s*:\s*(.+?)\s*$)");
  const std::regex total_re(R"(^\s*Total\s*:\s*(\d+) MiB\s*$)");
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::Fixture("nvidia-smi"))) {
    if (e.path().extension() != ".txt") {
      continue;
    }
    std::ifstream in(e.path());
    std::string line;
    std::string name;
    int64_t mib = 0;
    bool fb = false;
    std::smatch m;
    while (std::getline(in, line)) {
      if (name.empty() && std::regex_match(line, m, name_re)) {
        name = m[1];
      }
      if (line.find("FB Memory Usage") != std::string::npos) {
        fb = true;
      } else if (fb && mib == 0 && std::regex_match(line, m, total_re)) {
        mib = std::stoll(m[1]);
      }
    }
    ASSERT_FALSE(name.empty()) << e.path();
    const Gpu* g = Catalog().TryFind(name);
    ASSERT_NE(g, nullptr) << name << " from " << e.path();
    EXPECT_EQ(g->memory_bytes, mib * 1024 * 1024) << name;
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

TEST(GpuCatalog, DatasheetSpotChecks) {
  // NVIDIA H100 SXM5 datasheet: 3.35 TB/s, 989 dense BF16 TFLOPS, 700 W, NVLink 900 GB/s.
  const Gpu& h100 = Catalog().Find("H100 SXM");
  EXPECT_DOUBLE_EQ(h100.memory_bandwidth_gb_s, 3350);
  EXPECT_NEAR(*h100.tflops.bf16, 989.4, 0.5);
  EXPECT_DOUBLE_EQ(h100.tdp_watts, 700);
  EXPECT_DOUBLE_EQ(h100.interconnect.bandwidth_gb_s, 900);
  EXPECT_FALSE(h100.sources.empty());
  // A100: no FP8; 312 dense BF16 (624 is the sparse figure).
  const Gpu& a100 = Catalog().Find("A100");
  EXPECT_FALSE(a100.tflops.fp8.has_value());
  EXPECT_DOUBLE_EQ(*a100.tflops.bf16, 312);
  EXPECT_EQ(a100.mig_max_instances, 7);
  // L40S has no NVLink and no MIG.
  const Gpu& l40s = Catalog().Find("L40S");
  EXPECT_EQ(l40s.mig_max_instances, 0);
  EXPECT_DOUBLE_EQ(l40s.interconnect.bandwidth_gb_s, 0);
}

TEST(GpuCatalog, DatatypesFollowTheArchitecture) {
  // Turing (T4): fp16, int8 and int4 tensor cores; no bf16, no tf32, no fp8 (bf16/tf32 came with
  // Ampere, sm_80; fp8 with Ada, sm_89).
  const Gpu& t4 = Catalog().Find("T4");
  EXPECT_TRUE(t4.Supports("fp16"));
  EXPECT_TRUE(t4.Supports("int8"));
  EXPECT_TRUE(t4.Supports("int4"));
  EXPECT_FALSE(t4.Supports("bf16"));
  EXPECT_FALSE(t4.Supports("tf32"));
  EXPECT_FALSE(t4.Supports("fp8"));
  // Volta: fp16 tensor only.
  const Gpu& v100 = Catalog().Find("V100");
  EXPECT_TRUE(v100.Supports("fp16"));
  EXPECT_FALSE(v100.Supports("bf16"));
  EXPECT_FALSE(v100.Supports("int8"));
  // Ampere: bf16 and tf32, no fp8.
  for (const char* name : {"A100", "A800", "A10", "A30", "RTX 3090"}) {
    const Gpu& g = Catalog().Find(name);
    EXPECT_TRUE(g.Supports("bf16")) << name;
    EXPECT_TRUE(g.Supports("tf32")) << name;
    EXPECT_FALSE(g.Supports("fp8")) << name;
    EXPECT_FALSE(g.Supports("fp4")) << name;
  }
  // Ada and Hopper: fp8; Blackwell adds fp4.
  for (const char* name : {"H100 SXM", "H100 PCIe", "H800", "H20", "H200", "L40S", "L40", "L4", "RTX 4090"}) {
    const Gpu& g = Catalog().Find(name);
    EXPECT_TRUE(g.Supports("fp8")) << name;
    EXPECT_TRUE(g.Supports("bf16")) << name;
    EXPECT_FALSE(g.Supports("fp4")) << name;
  }
  for (const char* name : {"B200", "RTX 5090"}) {
    const Gpu& g = Catalog().Find(name);
    EXPECT_TRUE(g.Supports("fp4")) << name;
    EXPECT_TRUE(g.Supports("FP8")) << name;  // case-insensitive
  }
  EXPECT_FALSE(Catalog().Find("H100").Supports("int4"));  // Hopper dropped the int4 tensor path
  EXPECT_FALSE(Catalog().Find("H100").Supports("float8"));  // not a catalog datatype name
}

TEST(GpuCatalog, EveryRatedPrecisionIsAListedDatatype) {
  for (const auto& g : Catalog().gpus()) {
    EXPECT_FALSE(g.datatypes.empty()) << g.name;
    const std::pair<const char*, bool> rated[] = {
        {"fp64", g.tflops.fp64.has_value()}, {"fp32", g.tflops.fp32.has_value()},
        {"tf32", g.tflops.tf32.has_value()}, {"bf16", g.tflops.bf16.has_value()},
        {"fp16", g.tflops.fp16.has_value()}, {"fp8", g.tflops.fp8.has_value()},
        {"fp4", g.tflops.fp4.has_value()},   {"int8", g.tflops.int8.has_value()}};
    for (const auto& [dtype, has] : rated) {
      if (has) {
        EXPECT_TRUE(g.Supports(dtype)) << g.name << " " << dtype;
      }
    }
  }
}

TEST(GpuCatalog, DatatypeErrorsCarryLineAndField) {
  const std::string head = "gpus:\n  - name: X\n    memory_bytes: 1\n    memory_bandwidth_gb_s: 1\n";
  try {
    GpuCatalog::Parse(head + "    tflops: {fp16: 10}\n    datatypes: [fp16,\n      bfloat16]\n", "dt.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "dt.yaml");
    EXPECT_EQ(e.line(), 7);
    EXPECT_EQ(e.field(), "gpus[X].datatypes");
    EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
  }
  try {  // a rate for fp8 but fp8 not listed
    GpuCatalog::Parse(head + "    tflops: {fp16: 10, fp8: 20}\n    datatypes: [fp16]\n", "dt.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.field(), "gpus[X].datatypes");
  }
  try {
    GpuCatalog::Parse(head + "    tflops: {}\n    datatypes: fp16\n", "dt.yaml");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "gpus[X].datatypes");
  }
  // Absent: the precisions with a rate; names are read case-insensitively.
  const GpuCatalog a = GpuCatalog::Parse(head + "    tflops: {fp32: 1, bf16: 2}\n", "a.yaml");
  EXPECT_EQ(a.gpus()[0].datatypes, (std::vector<std::string>{"fp32", "bf16"}));
  const GpuCatalog b = GpuCatalog::Parse(head + "    tflops: {}\n    datatypes: [INT4, Fp16]\n", "b.yaml");
  EXPECT_EQ(b.gpus()[0].datatypes, (std::vector<std::string>{"int4", "fp16"}));
  EXPECT_TRUE(b.gpus()[0].Supports("int4"));
}

TEST(GpuCatalog, PciDeviceIds) {
  // pci.ids: 10de:20b2 = GA100 [A100 SXM4 80GB]; 10de:2330 = GH100 [H100 SXM5 80GB].
  EXPECT_EQ(Catalog().FindByPciId("0x20B2"), &Catalog().Find("A100 80GB SXM"));
  EXPECT_EQ(Catalog().FindByPciId("0x233010DE"), &Catalog().Find("H100 SXM"));  // nvidia-smi pci.device_id form
  EXPECT_EQ(Catalog().FindByPciId("0xFFFF"), nullptr);
}

TEST(GpuCatalog, UnknownNameSuggestsClosest) {
  try {
    Catalog().Find("H10");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("H100"), std::string::npos) << e.what();
    EXPECT_EQ(e.field(), "gpu");
  }
}

TEST(GpuCatalog, YamlErrorsCarryLineAndField) {
  try {
    GpuCatalog::Parse("gpus:\n  - name: X\n    memory_bytes: [1\n", "bad.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "bad.yaml");
    EXPECT_GT(e.line(), 0);
  }
  try {
    GpuCatalog::Parse("gpus:\n  - name: X\n    memory_bytes: -5\n    memory_bandwidth_gb_s: 1\n    tflops: {}\n",
                      "neg.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_EQ(e.field(), "gpus[X].memory_bytes");
  }
  try {
    GpuCatalog::Parse("gpus:\n  - name: X\n    memory_bytes: 0\n    memory_bandwidth_gb_s: 1\n    tflops: {}\n",
                      "zero.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "gpus[X].memory_bytes");
  }
  try {
    GpuCatalog::Parse(
        "gpus:\n  - name: X\n    memory_bytes: 1\n    memory_bandwidth_gb_s: 1\n    tflops: {}\n"
        "  - name: Y\n    aliases: [x]\n    memory_bytes: 1\n    memory_bandwidth_gb_s: 1\n    tflops: {}\n",
        "dup.yaml");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("already"), std::string::npos);
    EXPECT_EQ(e.line(), 6);
  }
}

}  // namespace
}  // namespace gpuplan

namespace gpuplan {
namespace {

// nvidia-smi --query-gpu=name,pci.device_id,memory.total,power.limit,... captured on a real
// H200 (scripts/device-probe.sh): the catalog must resolve the card by name and by PCI id and
// agree on memory, power and PCIe.
TEST(GpuCatalog, RealH200QueryAgrees) {
  std::ifstream in(test::Fixture("nvidia-smi/nvidia-h200__580.159.04__query.csv"));
  std::string header;
  std::string row;
  std::getline(in, header);
  std::getline(in, row);
  std::vector<std::string> f;
  std::stringstream ss(row);
  for (std::string cell; std::getline(ss, cell, ',');) {
    f.push_back(cell.substr(cell.find_first_not_of(' ')));
  }
  ASSERT_GE(f.size(), 7u);
  const Gpu* by_name = Catalog().TryFind(f[0]);
  ASSERT_NE(by_name, nullptr) << f[0];
  EXPECT_EQ(Catalog().FindByPciId(f[1]), by_name);
  EXPECT_EQ(by_name->memory_bytes, std::stoll(f[2]) * 1024 * 1024);
  EXPECT_DOUBLE_EQ(by_name->tdp_watts, std::stod(f[3]));
  EXPECT_EQ(by_name->pcie_gen, std::stoi(f[5]));
  EXPECT_EQ(by_name->pcie_lanes, std::stoi(f[6]));
}

}  // namespace
}  // namespace gpuplan
