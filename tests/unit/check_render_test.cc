// Markdown and HTML forms of check reports, comparisons and merges (src/check/render/check_markdown.h,
// check_html.h). The reports are built by hand below; every expected line is written out from
// those inputs (80 GiB = 85899345920 bytes, "0x233110DE" is device 0x2331 of vendor 0x10de, ...).
// The last tests open the HTML in headless Chromium, when it is installed, to see that a real
// parser finds the verdict, every result row and no script.
#include <unistd.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "check/compare.h"
#include "check/report.h"
#include "ci_skip.h"
#include "check/render/check_html.h"
#include "check/render/check_markdown.h"

namespace gpuplan {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kGiB = 1024ull * 1024 * 1024;
constexpr const char* kEvil = "<script>alert(1)</script> | pipe";

std::size_t Count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + needle.size())) {
    ++n;
  }
  return n;
}

// Position of `needle`, failing the test when absent (so comparisons of positions mean something).
std::size_t At(const std::string& hay, const std::string& needle) {
  const auto p = hay.find(needle);
  EXPECT_NE(p, std::string::npos) << "missing: " << needle;
  return p;
}

GpuSnapshot H100(int index, const std::string& bus, int width) {
  GpuSnapshot g;
  g.index = index;
  g.name = "NVIDIA H100 PCIe";
  g.pci_bus_id = bus;
  g.pci_device_id = 0x233110DEu;
  g.memory_total = 80 * kGiB;
  g.pcie_gen_current = 5;
  g.pcie_gen_max = 5;
  g.pcie_width_current = width;
  g.pcie_width_max = 16;
  g.power_limit = 350;
  g.mig_enabled = false;
  return g;
}

// Two H100 PCIe, GPU 1 at x8. Results in report order: PASS, WARN, FAIL, SKIP.
CheckReport TwoGpuReport() {
  CheckReport r;
  r.tool_version = "0.9.0";
  r.mode = "default";
  r.started = "2025-03-01T10:00:00Z";
  r.finished = "2025-03-01T10:05:00Z";
  r.source = "NVML 12.550.54.15";
  r.expect = "2x H100 PCIe";
  r.expected_card = "H100 PCIe 80GB";
  r.offer_id = "lab-h100";
  r.notes = {"A&B \"quoted\" note"};
  r.host.hostname = "gpu-a";
  r.host.os = "Debian GNU/Linux 12 (bookworm)";
  r.host.cpu_cores = 64;
  r.host.memory_bytes = 512 * kGiB;
  r.host.not_measured["virtual_machine"] = "no flags line in /proc/cpuinfo";

  SystemSnapshot node;
  node.hostname = "gpu-a";
  node.driver_version = "550.54.15";
  GpuSnapshot g0 = H100(0, "00000000:18:00.0", 16);
  g0.serial = "1650923000001";
  g0.ecc_enabled = true;
  g0.ecc_pending = true;
  g0.nvlink_links = 0;
  g0.nvlink_up = 0;
  GpuSnapshot g1 = H100(1, "00000000:41:00.0", 8);
  g1.not_measured["ecc_enabled"] = "NVML_ERROR_NOT_SUPPORTED";
  node.gpus = {g0, g1};
  r.nodes = {node};
  r.events.push_back(GpuEvent{1, 0x8, 79, 12.5});

  CheckResult pass;
  pass.name = "memory_total";
  pass.gpu = 0;
  pass.status = CheckStatus::kPass;
  pass.measured = 80;
  pass.expected = 80;
  pass.unit = "GiB";
  pass.evidence = "nvmlDeviceGetMemoryInfo_v2";
  r.Add(pass);

  CheckResult warn;
  warn.name = "gpu_temperature";
  warn.gpu = 0;
  warn.status = CheckStatus::kWarn;
  warn.measured = 83.25;
  warn.expected = 80;
  warn.unit = "C";
  warn.evidence = "idle temperature above 80 C";
  warn.advice = "check the airflow";
  r.Add(warn);

  CheckResult fail;
  fail.name = "pcie_link_width";
  fail.gpu = 1;
  fail.status = CheckStatus::kFail;
  fail.measured_text = "x8";
  fail.expected_text = "x16";
  fail.unit = "lanes";
  fail.evidence = kEvil;
  fail.advice = "reseat the GPU or ask the provider's support";
  r.Add(fail);

  CheckResult skip;
  skip.name = "nvlink_bandwidth";
  skip.gpu = -1;
  skip.status = CheckStatus::kSkip;
  skip.evidence = "skipped: PCIe cards\nno NVLink";
  r.Add(skip);
  return r;
}

std::string Markdown(const CheckReport& r) {
  std::ostringstream s;
  CheckReportToMarkdown(r, s);
  return s.str();
}

std::string Html(const CheckReport& r) {
  std::ostringstream s;
  CheckReportToHtml(r, s);
  return s.str();
}

// Nothing that reaches out: no script, no stylesheet or image link, no URL.
void ExpectSelfContained(const std::string& html) {
  for (const char* bad : {"<script", "<link", "<img", "<iframe", "http://", "https://", "url(", "@import"}) {
    EXPECT_EQ(html.find(bad), std::string::npos) << "found " << bad;
  }
}

TEST(CheckMarkdown, ReportHasTitleSummaryInventoryAndResults) {
  const CheckReport r = TwoGpuReport();
  ASSERT_EQ(r.verdict, CheckStatus::kFail);
  const std::string md = Markdown(r);
  EXPECT_EQ(md.rfind("# GPU check: FAIL\n", 0), 0u);
  EXPECT_NE(md.find("mode: default · source: NVML 12.550.54.15 · ordered: 2x H100 PCIe · judged against: H100 PCIe "
                    "80GB · offer: lab-h100 · started: 2025-03-01T10:00:00Z · finished: 2025-03-01T10:05:00Z · tool: "
                    "gpuplan 0.9.0 · results: 4 (1 PASS, 1 WARN, 1 FAIL, 1 SKIP)\n"),
            std::string::npos);
  EXPECT_NE(md.find("- A&B \"quoted\" note\n"), std::string::npos);
  // Host: 512 GiB, the VM flag not measured (and why, below the inventory).
  EXPECT_NE(md.find("| memory | 512.0 GiB |\n"), std::string::npos);
  EXPECT_NE(md.find("| virtual machine | - |\n"), std::string::npos);
  EXPECT_NE(md.find("- host virtual_machine: no flags line in /proc/cpuinfo\n"), std::string::npos);
  // Inventory of one node: no node column.
  EXPECT_NE(md.find("| GPU | name | serial | PCI bus | device id | memory | PCIe gen | PCIe width | NVLink up | "
                    "power limit | driver | ECC | MIG | temp | NUMA (CPUs) |\n"),
            std::string::npos);
  EXPECT_NE(md.find("| 0 | NVIDIA H100 PCIe | 1650923000001 | 00000000:18:00.0 | 0x2331 | 80.0 GiB | 5/5 | x16/x16 | "
                    "0/0 | 350 W | 550.54.15 | on | off | - | - |\n"),
            std::string::npos);
  EXPECT_NE(md.find("| 1 | NVIDIA H100 PCIe | - | 00000000:41:00.0 | 0x2331 | 80.0 GiB | 5/5 | x8/x16 | - | 350 W | "
                    "550.54.15 | - | off | - | - |\n"),
            std::string::npos);
  EXPECT_NE(md.find("- ecc_enabled: NVML_ERROR_NOT_SUPPORTED (GPU 1)\n"), std::string::npos);
  EXPECT_NE(md.find("## Events\n\n- GPU 1: XID 79 at 12.5 s\n"), std::string::npos);
  // Results, in report order; the pipe and '<' of the evidence escaped, the SKIP's line break a <br>.
  const std::string header =
      "| status | test | GPU | measured | expected | evidence | advice |\n"
      "| --- | --- | --- | --- | --- | --- | --- |\n";
  const std::string rows =
      "| PASS | memory_total | 0 | 80 GiB | 80 GiB | nvmlDeviceGetMemoryInfo_v2 |  |\n"
      "| WARN | gpu_temperature | 0 | 83.25 C | 80 C | idle temperature above 80 C | check the airflow |\n"
      "| FAIL | pcie_link_width | 1 | x8 | x16 | \\<script>alert(1)\\</script> \\| pipe | reseat the GPU or ask the "
      "provider's support |\n"
      "| SKIP | nvlink_bandwidth | host | - | - | skipped: PCIe cards<br>no NVLink |  |\n";
  EXPECT_NE(md.find("## Results\n\n" + header + rows), std::string::npos) << md;
  EXPECT_EQ(md.find(" | pipe"), std::string::npos);
}

TEST(CheckMarkdown, ProblemsListFailBeforeWarnAheadOfTheTable) {
  const std::string md = Markdown(TwoGpuReport());
  const std::size_t problems = At(md, "## Problems\n");
  const std::size_t fail = At(md, "- **FAIL** pcie_link_width (GPU 1): measured x8, expected x16. \\<script>alert(1)"
                                  "\\</script> \\| pipe. Advice: reseat the GPU or ask the provider's support\n");
  const std::size_t warn = At(md, "- **WARN** gpu_temperature (GPU 0): measured 83.25 C, expected 80 C. idle "
                                  "temperature above 80 C. Advice: check the airflow\n");
  const std::size_t host = At(md, "## Host\n");
  const std::size_t results = At(md, "## Results\n");
  EXPECT_LT(problems, fail);
  EXPECT_LT(fail, warn);  // the WARN comes first in the report, the FAIL first in Problems
  EXPECT_LT(warn, host);
  EXPECT_LT(host, results);
  EXPECT_EQ(Count(md, "**PASS**") + Count(md, "**SKIP**"), 0u);
}

TEST(CheckMarkdown, ReportWithoutProblemsSaysSo) {
  CheckReport r;
  r.mode = "quick";
  CheckResult pass;
  pass.name = "driver_loaded";
  pass.status = CheckStatus::kPass;
  r.Add(pass);
  const std::string md = Markdown(r);
  EXPECT_NE(md.find("# GPU check: PASS\n"), std::string::npos);
  EXPECT_NE(md.find("## Problems\n\nNone: no result is FAIL, ERROR or WARN.\n"), std::string::npos);
  EXPECT_NE(md.find("No GPU in the inventory.\n"), std::string::npos);
  EXPECT_NE(md.find("finished: (running)"), std::string::npos);
}

TEST(CheckHtml, ReportIsEscapedSelfContainedAndMarked) {
  const CheckReport r = TwoGpuReport();
  const std::string html = Html(r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n", 0), 0u);
  EXPECT_NE(html.find("<title>GPU check: FAIL</title>"), std::string::npos);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("id=\"verdict\" class=\"status-fail\" data-verdict=\"FAIL\">FAIL</span>"), std::string::npos);
  EXPECT_EQ(Count(html, "data-verdict="), 1u);
  EXPECT_NE(html.find("<table id=\"gpus\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"tests\">"), std::string::npos);
  ExpectSelfContained(html);

  // The evidence is text: every special character escaped.
  EXPECT_NE(html.find("<td>&lt;script&gt;alert(1)&lt;/script&gt; | pipe</td>"), std::string::npos);
  EXPECT_NE(html.find("<td>reseat the GPU or ask the provider&#39;s support</td>"), std::string::npos);
  EXPECT_NE(html.find("<li>A&amp;B &quot;quoted&quot; note</li>"), std::string::npos);

  // One row per result, with its status and test name, in report order.
  EXPECT_EQ(Count(html, "class=\"result\""), r.tests.size());
  const std::size_t p = At(html, "<tr class=\"result\" data-status=\"PASS\" data-test=\"memory_total\">"
                                 "<td><span class=\"status-pass\">PASS</span></td><td>memory_total</td><td>0</td>"
                                 "<td>80 GiB</td><td>80 GiB</td>");
  const std::size_t w = At(html, "<tr class=\"result\" data-status=\"WARN\" data-test=\"gpu_temperature\">");
  const std::size_t f = At(html, "<tr class=\"result\" data-status=\"FAIL\" data-test=\"pcie_link_width\">"
                                 "<td><span class=\"status-fail\">FAIL</span></td><td>pcie_link_width</td><td>1</td>"
                                 "<td>x8</td><td>x16</td>");
  const std::size_t s = At(html, "<tr class=\"result\" data-status=\"SKIP\" data-test=\"nvlink_bandwidth\">"
                                 "<td><span class=\"status-skip\">SKIP</span></td>");
  EXPECT_LT(p, w);
  EXPECT_LT(w, f);
  EXPECT_LT(f, s);
  // Problems: the FAIL first.
  EXPECT_LT(At(html, "<li><span class=\"status-fail\">FAIL</span> <b>pcie_link_width</b> (GPU 1)"),
            At(html, "<li><span class=\"status-warn\">WARN</span> <b>gpu_temperature</b> (GPU 0)"));
  // The inventory row of GPU 1.
  EXPECT_NE(html.find("<tr><td>1</td><td>NVIDIA H100 PCIe</td><td>-</td><td>00000000:41:00.0</td><td>0x2331</td>"
                      "<td>80.0 GiB</td><td>5/5</td><td>x8/x16</td>"),
            std::string::npos);
  const std::string end = "</body>\n</html>\n";
  EXPECT_EQ(html.substr(html.size() - end.size()), end);
}

TEST(CheckHtml, EscapesEveryCharacterHtmlGivesMeaningTo) {
  std::ostringstream s;
  HtmlEscape(s, "a&b<c>d\"e'f");
  EXPECT_EQ(s.str(), "a&amp;b&lt;c&gt;d&quot;e&#39;f");
  std::ostringstream t;
  HtmlEscape(t, std::string("x\x01y", 3));
  EXPECT_EQ(t.str(), "x\xEF\xBF\xBDy");
}

TEST(CheckRender, ProblemLineEndsEachSentenceOnce) {
  CheckResult r;
  r.measured = 3.5;
  r.expected = 4;
  r.unit = "GB/s";
  r.evidence = "fio read 3.5 GB/s.";
  r.advice = "ask for NVMe";
  EXPECT_EQ(check_cells::Problem(r), "measured 3.5 GB/s, expected 4 GB/s. fio read 3.5 GB/s. Advice: ask for NVMe");
  r.evidence.clear();
  r.advice.clear();
  EXPECT_EQ(check_cells::Problem(r), "measured 3.5 GB/s, expected 4 GB/s");
}

TEST(CheckRender, NumbersHaveFourSignificantDigitsWithoutExponentsForLargeOnes) {
  EXPECT_EQ(check_cells::Number(3350), "3350");
  EXPECT_EQ(check_cells::Number(0.91237), "0.9124");
  EXPECT_EQ(check_cells::Number(83.25), "83.25");
  EXPECT_EQ(check_cells::Number(98900), "98900");
  EXPECT_EQ(check_cells::Number(0.0000152), "1.52e-05");
}

// Two machines: gpu-a with an offer stating some terms, gpu-b with none.
ComparisonResult TwoMachines() {
  ComparisonResult c;
  c.currency = "CNY";
  ComparedMachine a;
  a.file = "a.json";
  a.label = "gpu-a";
  a.card = "H100 PCIe 80GB";
  a.gpus = 2;
  a.verdict = CheckStatus::kFail;
  a.offer_id = "lab-h100";
  Offer o;
  o.id = "lab-h100";
  o.provider = "Lab Cloud";
  o.terms.sla_response_minutes = 30;
  o.terms.node_replacement_hours = 24;
  o.terms.resume_from_checkpoint = true;
  o.terms.private_network = true;
  o.terms.disk_encryption = false;
  a.offer = o;
  a.price_per_hour = 42.5;
  a.bf16_tflops = 1500;
  a.per_bf16_pflop_hour = 28.33333;
  a.rank = 1;
  ComparedMachine b;
  b.file = "b.json";
  b.label = "gpu-b";
  b.card = "H100 PCIe 80GB";
  b.gpus = 2;
  b.verdict = CheckStatus::kPass;
  c.machines = {a, b};

  ComparedRow width;
  width.test = "pcie_link_width";
  width.unit = "lanes";
  ComparedCell wa;
  wa.status = CheckStatus::kFail;
  wa.text = "x8";
  wa.results = 2;
  wa.failing = 1;
  ComparedCell wb;
  wb.status = CheckStatus::kPass;
  wb.text = "x16";
  wb.results = 2;
  width.cells = {wa, wb};
  ComparedRow gemm;
  gemm.test = "gemm_bf16";
  gemm.unit = "TFLOP/s";
  ComparedCell ga;
  ga.status = CheckStatus::kPass;
  ga.measured = 750;
  ga.results = 2;
  gemm.cells = {ga, std::nullopt};
  c.rows = {width, gemm};
  c.rank_basis = "price per measured bf16 PFLOP-hour";
  c.notes = {"fewer than two reports have a known offer"};
  return c;
}

TEST(CheckMarkdown, ComparisonShowsMachinesTermsAndTests) {
  std::ostringstream s;
  ComparisonToMarkdown(TwoMachines(), s);
  const std::string md = s.str();
  EXPECT_NE(md.find("|  | gpu-a | gpu-b |\n| --- | --- | --- |\n| verdict | FAIL | PASS |\n"), std::string::npos);
  EXPECT_NE(md.find("| card | H100 PCIe 80GB | H100 PCIe 80GB |\n"), std::string::npos);
  EXPECT_NE(md.find("| GPUs | 2 | 2 |\n"), std::string::npos);
  EXPECT_NE(md.find("| offer | lab-h100 | - |\n"), std::string::npos);
  EXPECT_NE(md.find("| provider | Lab Cloud | - |\n"), std::string::npos);
  EXPECT_NE(md.find("| price per hour | 42.5 CNY | - |\n"), std::string::npos);
  EXPECT_NE(md.find("| bf16 measured | 1500 TFLOP/s | - |\n"), std::string::npos);
  EXPECT_NE(md.find("| per bf16 PFLOP-hour | 28.33 CNY | - |\n"), std::string::npos);
  EXPECT_NE(md.find("| rank | 1 | - |\n"), std::string::npos);
  EXPECT_NE(md.find("Ranked by price per measured bf16 PFLOP-hour"), std::string::npos);
  // Terms: numbers with units, yes/no, "not stated" for what the offer leaves out, "no offer" for gpu-b.
  EXPECT_NE(md.find("| term | gpu-a | gpu-b |\n"), std::string::npos);
  EXPECT_NE(md.find("| first response to a fault (SLA) | 30 min | no offer |\n"), std::string::npos);
  EXPECT_NE(md.find("| failed node replaced within | 24 h | no offer |\n"), std::string::npos);
  EXPECT_NE(md.find("| resume from checkpoint on a replacement | yes | no offer |\n"), std::string::npos);
  EXPECT_NE(md.find("| disk encryption | no | no offer |\n"), std::string::npos);
  EXPECT_NE(md.find("| data erasure on release | not stated | no offer |\n"), std::string::npos);
  EXPECT_NE(md.find("| itemised billing | not stated | no offer |\n"), std::string::npos);
  // Tests.
  EXPECT_NE(md.find("| test | gpu-a | gpu-b |\n| --- | --- | --- |\n"
                    "| pcie_link_width | FAIL x8 (1 of 2 failing) | PASS x16 |\n"
                    "| gemm_bf16 | PASS 750 TFLOP/s | not run |\n"),
            std::string::npos);
  EXPECT_NE(md.find("- fewer than two reports have a known offer\n"), std::string::npos);
}

TEST(CheckHtml, ComparisonShowsTermsPriceAndCells) {
  std::ostringstream s;
  ComparisonToHtml(TwoMachines(), s);
  const std::string html = s.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  ExpectSelfContained(html);
  EXPECT_NE(html.find("<tr><th scope=\"row\">price per hour</th><td>42.5 CNY</td><td>-</td></tr>"), std::string::npos);
  EXPECT_NE(html.find("<tr><th scope=\"row\">data erasure on release</th><td>not stated</td><td>no offer</td></tr>"),
            std::string::npos);
  EXPECT_NE(html.find("<td data-status=\"FAIL\"><span class=\"status-fail\">FAIL</span> x8 (1 of 2 failing)</td>"),
            std::string::npos);
  EXPECT_NE(html.find("<td class=\"not-run\">not run</td>"), std::string::npos);
}

TEST(CheckRender, ComparisonWithoutOffersHasNoTermsTable) {
  ComparisonResult c = TwoMachines();
  c.machines[0].offer.reset();
  std::ostringstream md;
  ComparisonToMarkdown(c, md);
  EXPECT_EQ(md.str().find("## Provider terms"), std::string::npos);
  std::ostringstream html;
  ComparisonToHtml(c, html);
  EXPECT_EQ(html.str().find("id=\"terms\""), std::string::npos);
}

// Two nodes, one outlier: the node column appears in the inventory and the results.
MergeResult TwoNodes() {
  MergeResult m;
  m.nodes = 2;
  m.outlier_z = 3.5;
  CheckReport a = TwoGpuReport();
  SystemSnapshot b = a.nodes.front();
  b.hostname = "gpu-b";
  a.nodes.push_back(b);
  for (auto& t : a.tests) {
    t.node = "gpu-a";
  }
  CheckResult slow;
  slow.name = "outlier_gemm_bf16";
  slow.gpu = 1;
  slow.node = "gpu-b";
  slow.status = CheckStatus::kWarn;
  slow.measured = 512;
  slow.expected = 750;
  slow.unit = "TFLOP/s";
  slow.expected_text = "median of 4 results";
  a.Add(slow);
  m.merged = a;
  m.outliers.push_back(Outlier{"gemm_bf16", "gpu-b", 1, 512, 750, 10, -16.0531, "TFLOP/s", 4});
  return m;
}

TEST(CheckMarkdown, MergeHasOutliersThenTheReportWithNodes) {
  std::ostringstream s;
  MergeToMarkdown(TwoNodes(), s);
  const std::string md = s.str();
  EXPECT_EQ(md.rfind("# GPU check of 2 nodes: FAIL\n", 0), 0u);
  EXPECT_NE(md.find("|modified z| > 3.5"), std::string::npos);
  EXPECT_NE(md.find("| test | node | GPU | value | unit | median | modified z | peers |\n| --- | --- | --- | --- | --- | "
                    "--- | --- | --- |\n| gemm_bf16 | gpu-b | 1 | 512 | TFLOP/s | 750 | -16.05 | 4 |\n"),
            std::string::npos);
  EXPECT_LT(At(md, "## Outliers"), At(md, "## Results"));
  EXPECT_NE(md.find("| node | GPU | name |"), std::string::npos);
  EXPECT_NE(md.find("| gpu-b | 1 | NVIDIA H100 PCIe |"), std::string::npos);
  EXPECT_NE(md.find("| status | test | GPU | node | measured | expected | evidence | advice |\n"), std::string::npos);
  EXPECT_NE(md.find("| WARN | outlier_gemm_bf16 | 1 | gpu-b | 512 TFLOP/s | median of 4 results |  |  |\n"),
            std::string::npos);
  EXPECT_NE(md.find("- **FAIL** pcie_link_width (gpu-a GPU 1)"), std::string::npos);
  // One line for both nodes' GPU 1, not one per GPU.
  EXPECT_NE(md.find("- ecc_enabled: NVML_ERROR_NOT_SUPPORTED (gpu-a GPU 1, gpu-b GPU 1)\n"), std::string::npos);
}

TEST(CheckHtml, MergeHasOutlierTableAndVerdict) {
  const MergeResult m = TwoNodes();
  std::ostringstream s;
  MergeToHtml(m, s);
  const std::string html = s.str();
  EXPECT_NE(html.find("<title>GPU check of 2 nodes: FAIL</title>"), std::string::npos);
  EXPECT_NE(html.find("data-verdict=\"FAIL\""), std::string::npos);
  EXPECT_NE(html.find("<table id=\"outliers\">"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>gemm_bf16</td><td>gpu-b</td><td>1</td><td>512</td><td>TFLOP/s</td><td>750</td>"
                      "<td>-16.05</td><td>4</td></tr>"),
            std::string::npos);
  EXPECT_EQ(Count(html, "class=\"result\""), m.merged.tests.size());
  ExpectSelfContained(html);
}

// 100 nodes x 8 GPUs x 20 tests: every row rendered, the not-measured lines grouped.
TEST(CheckRender, LargeMergeRendersEveryRow) {
  MergeResult m;
  m.nodes = 100;
  m.outlier_z = 3.5;
  for (int n = 0; n < 100; ++n) {
    SystemSnapshot node;
    node.hostname = "node-" + std::to_string(n);
    node.driver_version = "550.54.15";
    for (int g = 0; g < 8; ++g) {
      GpuSnapshot gpu = H100(g, "00000000:18:00.0", 16);
      gpu.not_measured["nvlink_links"] = "NVML_ERROR_NOT_SUPPORTED";
      node.gpus.push_back(gpu);
      for (int t = 0; t < 20; ++t) {
        CheckResult r;
        r.name = "test_" + std::to_string(t);
        r.gpu = g;
        r.node = *node.hostname;
        r.status = t == 7 ? CheckStatus::kWarn : CheckStatus::kPass;
        r.measured = 1000.0 + t;
        r.expected = 900;
        r.unit = "GB/s";
        r.evidence = "read from NVML <ok>";
        m.merged.Add(std::move(r));
      }
    }
    m.merged.nodes.push_back(std::move(node));
  }
  // Speed is measured by bench/check_bench.cc (BM_RenderMerge1000Nodes), not here.
  std::ostringstream html;
  MergeToHtml(m, html);
  std::ostringstream md;
  MergeToMarkdown(m, md);
  EXPECT_EQ(Count(html.str(), "class=\"result\""), 16000u);  // 100 x 8 x 20
  EXPECT_EQ(Count(md.str(), "| PASS | test_"), 15200u);  // all but test_7 (WARN)
  EXPECT_NE(md.str().find("- nvlink_links: NVML_ERROR_NOT_SUPPORTED (800 GPUs)\n"), std::string::npos);
}

// Headless Chromium (Debian's `chromium`) loads the file and dumps the DOM it parsed. As root
// in a container it needs --no-sandbox, and a fresh --user-data-dir so no profile is shared.
std::string DumpDom(const fs::path& file, const fs::path& profile) {
  const std::string cmd = "timeout 60 chromium --headless --no-sandbox --disable-gpu --user-data-dir='" +
                          profile.string() + "' --dump-dom 'file://" + file.string() + "' 2>/dev/null";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) {
    return out;
  }
  std::array<char, 65536> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
    out.append(buf.data(), n);
  }
  ::pclose(p);
  return out;
}

// The skip helper itself (ci_skip.h): under GPUPLAN_CI=1 a missing dependency is a failure that
// names it, not a skip.
void SkipForAMissingTool() { GPUPLAN_SKIP_MISSING_DEPENDENCY("tool-x is not installed"); }

TEST(CiSkipPolicy, MissingDependencyFailsUnderCi) {
  const char* was = std::getenv("GPUPLAN_CI");
  const std::string before = was != nullptr ? was : "";
  ::setenv("GPUPLAN_CI", "1", 1);
  EXPECT_FATAL_FAILURE(SkipForAMissingTool(), "tool-x is not installed (GPUPLAN_CI=1: scripts/install-deps.sh");
  if (was != nullptr) {
    ::setenv("GPUPLAN_CI", before.c_str(), 1);
  } else {
    ::unsetenv("GPUPLAN_CI");
  }
}

TEST(CheckHtml, ChromiumParsesTheReport) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0) {
    GPUPLAN_SKIP_MISSING_DEPENDENCY(
        "chromium is not on PATH (Debian package chromium): the HTML is not opened in a browser");
  }
  const CheckReport r = TwoGpuReport();
  const fs::path dir = fs::temp_directory_path() / ("gpuplan_html_test_" + std::to_string(::getpid()));
  fs::create_directories(dir / "profile");
  const fs::path file = dir / "report.html";
  {
    std::ofstream f(file);
    CheckReportToHtml(r, f);
  }
  const std::string dom = DumpDom(file, dir / "profile");
  fs::remove_all(dir);
  ASSERT_FALSE(dom.empty()) << "chromium printed no DOM";
  EXPECT_NE(dom.find("data-verdict=\"FAIL\""), std::string::npos) << dom;
  EXPECT_EQ(Count(dom, "class=\"result\""), r.tests.size());
  // The evidence stayed text: the parser made no script element of it.
  EXPECT_NE(dom.find("&lt;script&gt;alert(1)&lt;/script&gt; | pipe"), std::string::npos);
  EXPECT_EQ(dom.find("<script"), std::string::npos);
  EXPECT_NE(dom.find("<table id=\"gpus\">"), std::string::npos);
  EXPECT_NE(dom.find("<table id=\"tests\">"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
