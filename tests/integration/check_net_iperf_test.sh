#!/usr/bin/env bash
# The link test with iperf3 over loopback (issue 29 req. 5: "or with iperf3 when installed";
# docs/check.md §12): a real `iperf3 -s` and `gpuplan check --net 127.0.0.1:PORT --net-tool
# iperf3`, which runs the installed iperf3 client three times (-t, -R -t, -R -n). The server is a
# plain `iperf3 -s` (not -1: a -1 server serves one test, gpuplan runs three). The figures
# asserted come from iperf3's own -b cap, not from a run: --net-rate-mbps 200 is -b 200/streams
# Mbit/s per stream, 0.2 Gbit/s in all each way; a 20 MB checkpoint at 25 MB/s takes 0.8 s;
# 200 MB cut at 3 x 1 s is extrapolated to 8 s. Tolerance 15% (as check_net_test.sh): room for
# a loaded 2-core CI machine. Also: a stopped server is a net_link ERROR naming host:port and
# iperf3's message (exit 3); no iperf3 on PATH is the same, naming it; bad input exits 2.
# Without iperf3 installed the iperf3 parts skip (a failure under GPUPLAN_CI=1: docs/testing.md).
# usage: check_net_iperf_test.sh GPUPLAN DATA_DIR
set -uo pipefail
bin=$1
export GPUPLAN_DATA=$2
source "$(dirname "$0")/harness.sh"
export GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
unset GPUPLAN_TOKEN

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
check_json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
n = r.get("net") or {}
def near(name, got, want, tol):
    if not (abs(got - want) <= tol * want):
        print(f"{name} = {got}, want {want} +- {tol * 100:.0f}%")
try:
    exec(sys.argv[2])
except Exception as e:
    # No net figures: the check ERRORed; its tests' evidence says why (a CI run failed here once,
    # 2026-12-08, and passed on the rerun: the evidence was lost with the scratch folder).
    print(f"{type(e).__name__}: {e}; tests: " + "; ".join(
        f"{t.get('name')} {t.get('status')}: {t.get('evidence')}" for t in r.get("tests", [])))
PY
}
assert_json() {  # assert_json DESCRIPTION FILE PYTHON
  local msg
  msg=$(check_json "$2" "$3")
  if [ -z "$msg" ]; then ok; else bad "$1: $msg"; fi
}

# Needs no iperf3: bad input, and no iperf3 on PATH.
expect_exit 2 "--net-tool nc" -- "$bin" check --net 127.0.0.1:5201 --net-tool nc
grep -q -- "--net-tool" "$tmp/err" && ok || bad "--net-tool nc: $(cat "$tmp/err")"
expect_exit 2 "--net-listen with --net-tool iperf3" -- "$bin" check --net-listen 5201 --net-tool iperf3
grep -q -- "iperf3 -s" "$tmp/err" && ok || bad "listen iperf3: $(cat "$tmp/err")"
expect_exit 2 "--net-rate-mbps on a gpuplan client" -- "$bin" check --net 127.0.0.1:5201 --net-rate-mbps 200
grep -q -- "--net-rate-mbps" "$tmp/err" && ok || bad "rate on client: $(cat "$tmp/err")"
expect_exit 3 "no iperf3 on PATH" -- env PATH=/nonexistent "$bin" check --net 127.0.0.1:5201 --net-tool iperf3 \
  --net-seconds 1 --json "$tmp/none.json"
assert_json "no iperf3 report" "$tmp/none.json" '
t = r["tests"]
if len(t) != 1 or t[0]["name"] != "net_link" or t[0]["status"] != "ERROR": print(t)
elif "no iperf3 on PATH" not in t[0]["evidence"] or "apt-get install iperf3" not in t[0]["advice"]: print(t[0])
if r["net"] is not None or r["exit_code"] != 3: print("net", r["net"], r["exit_code"])
'

if ! command -v iperf3 >/dev/null; then
  missing_dep "iperf3 is not installed (scripts/install-deps.sh installs it): the real iperf3 link test did not run"
  finish check_net_iperf
fi

port=$(free_port)
iperf3 -s -p "$port" --forceflush >"$tmp/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
  grep -q "Server listening on $port" "$tmp/server.log" && break
  sleep 0.1
done
grep -q "Server listening on $port" "$tmp/server.log" || bad "iperf3 -s did not start: $(cat "$tmp/server.log")"

# 1. Unlimited: figures there, from iperf3, the checkpoint complete.
expect_exit 0 "iperf3 link test" -- \
  "$bin" check --net "127.0.0.1:$port" --net-tool iperf3 --net-seconds 1 --net-bytes 20000000 --json "$tmp/a.json"
assert_json "iperf3 loopback figures" "$tmp/a.json" '
if n["tool"] != "iperf3": print("tool", n["tool"])
if not n["throughput_gbps"] > 0 or not n["reverse_gbps"] > 0: print("rates", n)
if not n["throughput_bytes"] > 0 or not n["reverse_bytes"] > 0: print("bytes", n)
if n["streams"] != 4 or n["seconds"] != 1: print("streams/seconds", n["streams"], n["seconds"])
# Linux: the sending streams report mean_rtt, so no ping and no connect was made.
if not (0 < n["rtt_ms"] < 50) or n["pings"] != 0: print("rtt", n["rtt_ms"], n["pings"])
if n["transfer_extrapolated"] or n["transfer_measured_bytes"] != 20000000: print("transfer", n)
if n["listener_rate_mbps"] is not None: print("rate", n["listener_rate_mbps"])
names = [t["name"] for t in r["tests"]]
if names != ["net_rtt", "net_throughput", "net_reverse", "net_transfer"]: print("tests", names)
if "mean_rtt" not in r["tests"][0]["evidence"]: print(r["tests"][0]["evidence"])
if r["verdict"] != "PASS" or r["exit_code"] != 0: print("verdict", r["verdict"], r["exit_code"])
'

# 2. Capped by iperf3's -b: 200 Mbit/s in all (-b 50M on each of 4 streams), each way.
expect_exit 0 "iperf3 link test capped at 200 Mbit/s" -- \
  "$bin" check --net "127.0.0.1:$port" --net-tool iperf3 --net-rate-mbps 200 --net-seconds 2 --net-bytes 20000000 \
  --json "$tmp/b.json"
assert_json "capped iperf3 figures" "$tmp/b.json" '
near("throughput_gbps", n["throughput_gbps"], 0.2, 0.15)
near("reverse_gbps", n["reverse_gbps"], 0.2, 0.15)
near("throughput_bytes", n["throughput_bytes"], 25e6 * 2, 0.15)
if n["transfer_extrapolated"] or n["transfer_measured_bytes"] != 20000000: print("transfer", n)
near("transfer_seconds", n["transfer_seconds"], 20e6 / 25e6, 0.15)
if n["listener_rate_mbps"] != 200: print("listener_rate_mbps", n["listener_rate_mbps"])
'

# 3. A checkpoint the limit cuts: 200 MB at 25 MB/s, iperf3 stopped at 3 x 1 s, extrapolated to 8 s.
expect_exit 0 "iperf3 extrapolated transfer" -- \
  "$bin" check --net "127.0.0.1:$port" --net-tool iperf3 --net-rate-mbps 200 --net-seconds 1 --net-streams 2 \
  --net-bytes 200000000 --json "$tmp/c.json"
assert_json "iperf3 extrapolated transfer" "$tmp/c.json" '
if not n["transfer_extrapolated"]: print("not extrapolated", n)
near("transfer_seconds", n["transfer_seconds"], 200e6 / 25e6, 0.15)
near("transfer_measured_bytes", n["transfer_measured_bytes"], 3 * 25e6, 0.15)
if n["streams"] != 2: print("streams", n["streams"])
'

# 4. The server stopped: iperf3 cannot connect; exit 3, the report names host:port and the reason.
kill -TERM "$server"
wait "$server" 2>/dev/null
expect_exit 3 "iperf3 server gone" -- \
  "$bin" check --net "127.0.0.1:$port" --net-tool iperf3 --net-seconds 1 --json "$tmp/d.json"
assert_json "iperf3 server gone" "$tmp/d.json" '
t = r["tests"]
if len(t) != 1 or t[0]["name"] != "net_link" or t[0]["status"] != "ERROR": print(t)
elif "127.0.0.1:'"$port"'" not in t[0]["evidence"] or "unable to connect" not in t[0]["evidence"]: print(t[0]["evidence"])
elif "iperf3 -s" not in t[0]["advice"]: print(t[0]["advice"])
if r["net"] is not None: print("net", r["net"])
'

finish check_net_iperf
