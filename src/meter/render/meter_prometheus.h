// Prometheus text exposition (format 0.0.4) of the meter agent's state (meter/metrics.h), served
// at /metrics by `gpuplan meter run --listen`. Where dcgm-exporter has the figure, its metric
// name, unit and labels (gpu, UUID, pci_bus_id, device, modelName, Hostname) are used, so
// existing Grafana dashboards work; the rest follows Prometheus naming (gpuplan_ prefix, base
// units, _total counters, _info identity). Every family and label: docs/meter-metrics.md.
#pragma once

#include <string>

#include "meter/metrics.h"

namespace gpuplan {

inline constexpr const char* kPrometheusTextContentType = "text/plain; version=0.0.4; charset=utf-8";

std::string RenderPrometheusText(const MeterMetricsSnapshot& s);

// The exposition format's rules, exposed for tests: metric names [a-zA-Z_:][a-zA-Z0-9_:]*,
// label names [a-zA-Z_][a-zA-Z0-9_]* not starting with "__"; label values escape \, " and
// newline; HELP text escapes \ and newline.
bool ValidMetricName(const std::string& name);
bool ValidLabelName(const std::string& name);
std::string EscapeLabelValue(const std::string& v);
std::string EscapeHelp(const std::string& v);

}  // namespace gpuplan
