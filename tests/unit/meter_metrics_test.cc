// The agent's Prometheus state (meter/metrics.h) and its text exposition (meter/render/meter_prometheus.h):
// counters worked by hand, dcgm-exporter's names, units and labels, and the format's escaping
// and naming rules (docs/meter-metrics.md).
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "meter/render/meter_prometheus.h"
#include "meter/metrics.h"

namespace gpuplan {
namespace {

bool HasLine(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    if (l == line) {
      return true;
    }
  }
  return false;
}

GpuSample Sample(int gpu, int64_t second, int util) {
  GpuSample s;
  s.gpu = gpu;
  s.time = FromUnixMillis(second * 1000);
  s.utilization_gpu = util;
  return s;
}

TEST(MeterMetrics, CountersAddUpTheTicks) {
  MeterMetrics m;
  AlertRules price;
  price.gpu_hour_price = Money{36, "CNY"};
  m.SetPricing(price);
  // 10 one-second ticks of GPU 0: 4 billed with no process, then 6 with one process at 50%.
  for (int t = 1; t <= 4; ++t) {
    m.ObserveGpu(Sample(0, t, 0), 0, true, 1.0);
  }
  for (int t = 5; t <= 10; ++t) {
    m.ObserveGpu(Sample(0, t, 50), 1, true, 1.0);
  }
  // And 5 ticks of GPU 1 while the instance was not billed.
  for (int t = 1; t <= 5; ++t) {
    m.ObserveGpu(Sample(1, t, 0), 0, false, 1.0);
  }
  const auto s = m.Snapshot();
  ASSERT_EQ(s.gpus.size(), 2u);
  const GpuMetrics& g = s.gpus[0];
  EXPECT_DOUBLE_EQ(g.billed_seconds, 10);
  EXPECT_DOUBLE_EQ(g.idle_billed_seconds, 4);
  EXPECT_DOUBLE_EQ(g.busy_seconds, 3);  // 6 s x 0.5
  EXPECT_DOUBLE_EQ(g.idle_cost, 0.04);  // 4 s x 36 CNY / 3600 s
  EXPECT_EQ(g.last_active, FromUnixMillis(10000));
  EXPECT_DOUBLE_EQ(s.gpus[1].billed_seconds, 0);
  EXPECT_DOUBLE_EQ(s.gpus[1].idle_cost, 0);
  EXPECT_EQ(s.samples_total, 15u);
}

TEST(MeterMetrics, ExpositionUsesDcgmNamesUnitsAndLabels) {
  MeterMetrics m;
  m.SetHost("node-7");
  m.SetGpuIdentity(0, "GPU-abc", "NVIDIA H100 80GB HBM3", "00000000:18:00.0");
  GpuSample s = Sample(0, 1700000000, 87);
  s.memory_used = 42949672960ull;   // 40 GiB = 40,960 MiB
  s.memory_total = 85899345920ull;  // 80 GiB: 40,960 MiB free
  s.power = 312.5;
  s.energy_mj = 123456789;
  s.temperature = 61;
  s.sm_clock = 1980;
  m.ObserveGpu(s, 2, true, 1.0);
  m.ObserveAlert(Alert{});  // an idle_no_process alert
  const std::string text = RenderPrometheusText(m.Snapshot());
  const std::string labels =
      R"({gpu="0",UUID="GPU-abc",pci_bus_id="00000000:18:00.0",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"})";
  EXPECT_TRUE(HasLine(text, "# TYPE DCGM_FI_DEV_GPU_UTIL gauge"));
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_GPU_UTIL" + labels + " 87")) << text;
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_FB_USED" + labels + " 40960"));
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_FB_FREE" + labels + " 40960"));
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_POWER_USAGE" + labels + " 312.5"));
  EXPECT_TRUE(HasLine(text, "# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter"));
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels + " 123456789"));
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_GPU_TEMP" + labels + " 61"));
  EXPECT_TRUE(HasLine(text, "DCGM_FI_DEV_SM_CLOCK" + labels + " 1980"));
  // Not measured: no sample in the family, never 0.
  EXPECT_EQ(text.find("DCGM_FI_DEV_MEM_COPY_UTIL{"), std::string::npos);
  EXPECT_TRUE(HasLine(text, R"(gpuplan_gpu_processes{gpu="0",uuid="GPU-abc"} 2)"));
  EXPECT_TRUE(HasLine(text, R"(gpuplan_gpu_busy_seconds_total{gpu="0",uuid="GPU-abc"} 0.87)"));
  EXPECT_TRUE(HasLine(text, R"(gpuplan_alerts_total{kind="idle_no_process"} 1)"));
  EXPECT_TRUE(HasLine(text, R"(gpuplan_alerts_total{kind="budget"} 0)"));
  EXPECT_TRUE(HasLine(text, "gpuplan_gpu_last_active_timestamp_seconds{gpu=\"0\",uuid=\"GPU-abc\"} 1700000000"));
  // No price: no money families' samples (their HELP/TYPE only).
  EXPECT_EQ(text.find("gpuplan_gpu_idle_cost_total{"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
}

TEST(MeterMetrics, FormatRules) {
  EXPECT_TRUE(ValidMetricName("gpuplan_gpu_billed_seconds_total"));
  EXPECT_TRUE(ValidMetricName("DCGM_FI_DEV_GPU_UTIL"));
  EXPECT_TRUE(ValidMetricName("job:gpu_cost:sum"));
  EXPECT_FALSE(ValidMetricName("1gpu"));
  EXPECT_FALSE(ValidMetricName("gpu-util"));
  EXPECT_FALSE(ValidMetricName(""));
  EXPECT_TRUE(ValidLabelName("UUID"));
  EXPECT_FALSE(ValidLabelName("__name__"));
  EXPECT_FALSE(ValidLabelName("job:x"));
  EXPECT_EQ(EscapeLabelValue("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(EscapeHelp("a\"b\\c\nd"), "a\"b\\\\c\\nd");
  // A model name with a quote reaches the label escaped.
  MeterMetrics m;
  m.SetGpuIdentity(0, "GPU-x", "Card \"X\"", "");
  m.ObserveGpu(Sample(0, 1, 5), 1, true, 1);
  EXPECT_NE(RenderPrometheusText(m.Snapshot()).find(R"(modelName="Card \"X\"")"), std::string::npos);
}

}  // namespace
}  // namespace gpuplan
