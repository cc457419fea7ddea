#!/usr/bin/env bash
# deploy/meter (docs/meter-metrics.md): the Prometheus configuration and rules checked by
# Debian's promtool, the rules' figures by `promtool test rules` on hand-worked series, the
# Grafana dashboard and Kubernetes manifests parsed, the systemd unit verified.
# Usage: meter_deploy_test.sh DEPLOY_DIR TESTS_DIR
deploy=$1
tests=$2
. "$(dirname "$0")/harness.sh"

# promtool resolves rule_files and credentials_file next to the config: check a copy whose
# token file exists.
cp "$deploy/meter/prometheus.yml" "$deploy/meter/gpuplan-rules.yml" "$tmp/"
echo token >"$tmp/gpuplan-token"
sed -i "s|/etc/prometheus/gpuplan-token|$tmp/gpuplan-token|" "$tmp/prometheus.yml"
expect_exit 0 "promtool check config" -- promtool check config "$tmp/prometheus.yml"
expect_exit 0 "promtool check rules" -- promtool check rules "$deploy/meter/gpuplan-rules.yml"
expect_exit 0 "promtool test rules" -- promtool test rules "$tests/prometheus/gpuplan-rules.test.yml"
# A planted mistake in a rule must be caught by the rules test (it can fail).
sed 's/gpuplan_gpu_hourly_cost$/gpuplan_gpu_hourly_cost * 2/' "$deploy/meter/gpuplan-rules.yml" >"$tmp/bad-rules.yml"
sed "s|../../deploy/meter/gpuplan-rules.yml|$tmp/bad-rules.yml|" "$tests/prometheus/gpuplan-rules.test.yml" >"$tmp/bad.test.yml"
expect_exit 1 "promtool test rules on a planted mistake" -- promtool test rules "$tmp/bad.test.yml"

expect_exit 0 "dashboard is JSON" -- jq -e '.panels | length > 0' "$deploy/meter/grafana-dashboard.json"
# Every panel query names a metric that the agent exports or a rule records.
recorded=$(yq -r '.groups[].rules[].record // empty' "$deploy/meter/gpuplan-rules.yml")
for m in $(jq -r '.panels[].targets[].expr' "$deploy/meter/grafana-dashboard.json" | grep -oE '[A-Za-z_:][A-Za-z0-9_:]*' | grep -E '^(DCGM_|gpuplan_|team:)' | sort -u); do
  if echo "$recorded" | grep -qx "$m" || grep -q "\"$m\"" "$(dirname "$0")/../../src/meter/render/meter_prometheus.cc"; then ok; else bad "dashboard uses $m, which nothing exports or records"; fi
done

expect_exit 0 "daemonset parses" -- yq -e '.kind == "DaemonSet"' "$deploy/meter/kubernetes-daemonset.yaml"
expect_exit 0 "kubernetes scrape job parses" -- yq -e '.scrape_configs[0].job_name' "$deploy/meter/prometheus-kubernetes.yml"
if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/local/bin/gpuplan|/bin/true|" "$deploy/meter/gpuplan-meter.service" >"$tmp/gpuplan-meter.service"
  expect_exit 0 "systemd unit verifies" -- systemd-analyze verify "$tmp/gpuplan-meter.service"
fi

echo "meter deploy: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
