#!/usr/bin/env bash
# The agent's /metrics answered with the replayed value, and its Host and token checks; the
# exposition linted by promtool and scraped by a real Prometheus (Debian's package), answered by
# PromQL. Only the promtool and Prometheus part needs them: without them that part is a skip (a
# failure under GPUPLAN_CI=1, tests/integration/harness.sh) and the rest still runs. The alerts,
# webhooks and budget, which need no Prometheus, are meter_alerts_test.sh. docs/meter-metrics.md.
# usage: meter_prometheus_test.sh GPUPLAN DATA_DIR
set -uo pipefail
bin=$1
data=$2
export GPUPLAN_DATA=$data
source "$(dirname "$0")/harness.sh"
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# A 1 Hz trace of one GPU held at 73 % for 3 minutes.
cat >"$tmp/steady.jsonl" <<'TRACE'
{"format":"gpuplan-meter-trace","version":1,"host":"promtest","interval_seconds":1,"gpus":[{"index":0,"name":"NVIDIA H100 80GB HBM3","uuid":"GPU-prom-0","memory_total":85899345920}]}
{"time_ms":1772409600000,"gpus":[{"gpu":0,"utilization_gpu":73,"utilization_memory":31,"memory_used":42949672960,"power":412,"temperature":66,"sm_clock":1980,"clock_event_reasons":4,"energy_mj":1000000,"processes":[{"pid":4242,"user":"alice","command":"python train.py","gpu_memory":42949672960}]}]}
{"repeat": 180}
TRACE

"$bin" meter run --db "$tmp/steady.db" --replay "$tmp/steady.jsonl" --speed 1 --listen 127.0.0.1:0 \
  >"$tmp/agent.out" 2>"$tmp/agent.err" &
pids+=($!)
port=""
for _ in $(seq 100); do
  port=$(sed -n 's/^metrics on port \([0-9]*\).*/\1/p' "$tmp/agent.err")
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] && ok || bad "the agent did not say its metrics port: $(cat "$tmp/agent.err")"
sleep 1.5
curl -fsS "http://127.0.0.1:$port/metrics" >"$tmp/metrics.txt" && ok || bad "GET /metrics"
grep -q '^DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-prom-0",pci_bus_id="",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="promtest"} 73$' \
  "$tmp/metrics.txt" && ok || bad "DCGM_FI_DEV_GPU_UTIL line: $(grep GPU_UTIL "$tmp/metrics.txt")"
# From another host name the agent refuses (DNS rebinding), and a token off loopback is required.
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "http://127.0.0.1:$port/metrics")
[ "$code" = 403 ] && ok || bad "foreign Host header: HTTP $code"
expect_exit 2 "listen off loopback without a token" -- "$bin" meter run --db "$tmp/t.db" --replay "$tmp/steady.jsonl" \
  --listen 0.0.0.0:0 --duration 1

if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
  # promtool's lint: only dcgm-exporter's own names (kept for the dashboards) may be flagged.
  promtool check metrics <"$tmp/metrics.txt" >"$tmp/lint.txt" 2>&1
  if grep -v '^DCGM_FI_DEV_' "$tmp/lint.txt" | grep -q .; then bad "promtool lint: $(cat "$tmp/lint.txt")"; else ok; fi
  # A real Prometheus scraping the agent every second; PromQL answers with the replayed value.
  pport=$(free_port)
  cat >"$tmp/prometheus.yml" <<CONF
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
  - job_name: gpuplan-meter
    static_configs: [{targets: ["127.0.0.1:$port"], labels: {team: nlp}}]
CONF
  prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
    --web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
  pids+=($!)
  value=""
  for _ in $(seq 60); do
    value=$(curl -fsS "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=DCGM_FI_DEV_GPU_UTIL{gpu="0",team="nlp"}' 2>/dev/null |
      jq -r '.data.result[0].value[1] // empty' 2>/dev/null)
    [ -n "$value" ] && break
    sleep 0.5
  done
  [ "$value" = 73 ] && ok || bad "PromQL DCGM_FI_DEV_GPU_UTIL = '$value', want 73; prometheus: $(tail -3 "$tmp/prom.log")"
  # Billed seconds grow one per second of trace: the rate over the last 10 s is 1 (rate divides
  # by the whole window, so the window must be full of scrapes first).
  sleep 12
  rate=$(curl -fsS "http://127.0.0.1:$pport/api/v1/query" --data-urlencode 'query=rate(gpuplan_gpu_billed_seconds_total[10s])' |
    jq -r '.data.result[0].value[1] // empty')
  awk -v r="$rate" 'BEGIN { exit !(r > 0.8 && r < 1.2) }' && ok || bad "rate of billed seconds = '$rate', want about 1"
else
  missing_dep "prometheus and promtool are not installed: the exposition is not linted nor scraped (scripts/install-deps.sh installs them)"
fi

finish meter_prometheus
