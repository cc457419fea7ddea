// Fuzz the meter alerts file (rules and webhooks, as LoadMeterMonitorOptions reads it) and the
// webhook messages built for the targets read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/error.h"
#include "meter/alerts.h"
#include "meter/webhook.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpuplan::AlertRules rules = gpuplan::AlertRulesFromYaml(text, "fuzz.yaml");
    const auto targets = gpuplan::WebhookTargetsFromYaml(text, "fuzz.yaml");
    const gpuplan::UtcMillis at = gpuplan::FromUnixMillis(1772359200000);  // 2026-03-01T10:00Z
    (void)rules.GpuHourPriceAt(at);
    (void)rules.GpuMoneyBetween(at, at + std::chrono::milliseconds{5400000});
    gpuplan::Alert a;
    a.gpu = 0;
    a.since = at;
    a.at = at + std::chrono::milliseconds{1800000};
    a.minutes = 30;
    a.severity = "warning";
    a.summary = "GPU 0 idle for 30 minutes";
    for (const auto& t : targets) {
      (void)gpuplan::BuildWebhookMessage(a, t, a.at);
    }
  } catch (const gpuplan::InputError&) {
  }
  return 0;
}
