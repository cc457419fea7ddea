#!/usr/bin/env bash
# The agent's /metrics scraped by a real Prometheus (Debian's package) and answered by PromQL with
# the replayed value; the exposition linted by promtool; the agent's alerts on the example week
# (known idle periods, data/traces/README.md) counted against the schedule by hand, and delivered
# to a real local webhook listener. docs/meter-metrics.md, docs/meter-alerts.md.
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

if command -v prometheus >/dev/null && command -v promtool >/dev/null; then
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
  # promtool's lint: only dcgm-exporter's own names (kept for the dashboards) may be flagged.
  promtool check metrics <"$tmp/metrics.txt" >"$tmp/lint.txt" 2>&1
  if grep -v '^DCGM_FI_DEV_' "$tmp/lint.txt" | grep -q .; then bad "promtool lint: $(cat "$tmp/lint.txt")"; else ok; fi
  # From another host name the agent refuses (DNS rebinding), and a token off loopback is required.
  code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Host: evil.example' "http://127.0.0.1:$port/metrics")
  [ "$code" = 403 ] && ok || bad "foreign Host header: HTTP $code"
  expect_exit 2 "listen off loopback without a token" -- "$bin" meter run --db "$tmp/t.db" --replay "$tmp/steady.jsonl" \
    --listen 0.0.0.0:0 --duration 1

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
  echo "SKIP: prometheus and promtool are not installed (scripts/install-deps.sh installs them)"
  exit 77
fi

# Alerts on the example week replayed at full speed, with a generic webhook to a real listener.
# Rules: idle 60 min, low utilisation under 5 % for 30 min, no repeat within the week. By hand
# from the schedule (data/traces/README.md): idle stretches of an hour or more: GPU 0 2 (Mon
# 00-09, Thu 21-end), GPU 1 none (its pod holds it all week), GPU 2 4, GPU 3 2 = 8; GPU 1 at 0 %
# with its process every night: Mon 00-08 and the seven nights from 20:00 = 8. 16 alerts.
wport=$(free_port)
python3 - "$wport" "$tmp/hooks.jsonl" >"$tmp/listener.log" 2>&1 <<'PY' &
import http.server, sys
port, out = int(sys.argv[1]), sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        with open(out, "ab") as f:
            f.write(body + b"\n")
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
pids+=($!)
sleep 0.5
cat >"$tmp/alerts.yaml" <<YAML
rules:
  idle_minutes: 60
  low_util_minutes: 30
  repeat_minutes: 10080
  gpu_hour_price: 30
webhooks:
  - format: generic
    url: http://127.0.0.1:$wport/alerts
YAML
expect_exit 0 "replay the week with alerts" -- "$bin" meter run --db "$tmp/week.db" \
  --replay "$data/traces/lab-4xa100-week.jsonl" --speed 1e9 --alerts "$tmp/alerts.yaml"
n_idle=$(grep -c 'billed with no process' "$tmp/err")
n_low=$(grep -c 'under 5% utilisation' "$tmp/err")
[ "$n_idle" = 8 ] && ok || bad "idle alerts: $n_idle, want 8"
[ "$n_low" = 8 ] && ok || bad "low-utilisation alerts: $n_low, want 8"
[ "$(grep -c 'alert: GPU 3: billed with no process for 60 min, 30.00 CNY/h (30 CNY so far)' "$tmp/err")" = 2 ] && ok ||
  bad "GPU 3's idle alerts: $(grep 'GPU 3' "$tmp/err")"
[ "$(grep 'under 5%' "$tmp/err" | grep -vc 'GPU 1:')" = 0 ] && ok || bad "low-utilisation alerts on other GPUs"
[ "$(wc -l <"$tmp/hooks.jsonl")" = 16 ] && ok || bad "webhook bodies received: $(wc -l <"$tmp/hooks.jsonl"), want 16"
[ "$(jq -s '[.[] | select(.kind == "idle_no_process" and .gpu == 3)] | length' "$tmp/hooks.jsonl")" = 2 ] && ok ||
  bad "GPU 3 idle webhook bodies"

# The month's budget from the store and the offer: a budget of 1 CNY is crossed at 80 % and at
# 100 % at the first projection with data, once each for March; a budget of 1e12 never.
cat >"$tmp/offers.yaml" <<YAML
currency: CNY
timezone: "+08:00"
offers:
  - id: lab
    gpu: A100 80GB SXM
    gpus_per_instance: 4
    mode: on_demand
    price: 120
    granularity: hour
    billing_starts: create
YAML
for budget in 1 1000000000000; do
  printf 'rules:\n  monthly_budget: %s\n' "$budget" >"$tmp/budget.yaml"
  expect_exit 0 "replay with a budget of $budget" -- "$bin" meter run --db "$tmp/budget-$budget.db" \
    --replay "$data/traces/lab-4xa100-week.jsonl" --speed 1e9 --alerts "$tmp/budget.yaml" --offers "$tmp/offers.yaml"
  cp "$tmp/err" "$tmp/budget-$budget.err"
done
[ "$(grep -c 'alert: budget 2026-03: projected' "$tmp/budget-1.err")" = 2 ] && ok || bad "budget alerts at 1 CNY: $(grep budget "$tmp/budget-1.err")"
grep -q 'reaches 80% of 1 CNY' "$tmp/budget-1.err" && grep -q 'reaches 100% of 1 CNY' "$tmp/budget-1.err" && ok || bad "80 and 100 %"
[ "$(grep -c 'alert: budget' "$tmp/budget-1000000000000.err")" = 0 ] && ok || bad "budget alerts at 1e12 CNY"
# The offer's GPU-hour price (120 / 4 = 30 CNY) names the idle money when the alerts file has none.
grep -q 'GPU 3: billed with no process for 30 min, 30.00 CNY/h (15 CNY so far)' "$tmp/budget-1.err" && ok ||
  bad "idle alert priced from the offer: $(grep 'GPU 3' "$tmp/budget-1.err" | head -2)"

echo "meter prometheus and alerts: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
