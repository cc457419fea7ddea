#!/usr/bin/env bash
# The link test over loopback (issue 29 req. 5 and 8; docs/check.md §12): a real
# `gpuplan check --net-listen` paced to 200 Mbit/s each way (--net-rate-mbps) and a real
# `gpuplan check --net` against it. The figures asserted come from the pacing, not from a run:
# 200 Mbit/s = 0.2 Gbit/s each way; a 20 MB checkpoint at 25 MB/s takes 0.8 s; 200 MB cut at
# 3 x 1 s is extrapolated to 8 s. Tolerance 15%: the token bucket's burst adds 64 KiB / 2 s
# (0.13%, tests/unit/check_net_test.cc), the rest is room for a loaded 2-core CI machine's
# scheduling. Also: a listener stops within 5 s of SIGTERM while streams run; bad input exits
# 2 naming the option; an unreachable listener or a wrong token exits 3 with a report whose
# net_link result says why; the listener off loopback needs a token; two links compare.
# usage: check_net_test.sh GPUPLAN DATA_DIR
set -uo pipefail
bin=$1
export GPUPLAN_DATA=$2
source "$(dirname "$0")/harness.sh"
# The link test needs no GPU: point NVML at nothing to prove it is never opened.
export GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
unset GPUPLAN_TOKEN

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_listener LOG ARGS...: a listener in the background ($listener), waiting for its line.
start_listener() {
  local log=$1
  shift
  "$bin" check "$@" >"$log" 2>&1 &
  listener=$!
  for _ in $(seq 100); do
    grep -q "link-test listener on" "$log" && return 0
    sleep 0.1
  done
  bad "listener $* did not start: $(cat "$log")"
}
stop_listener() { kill -TERM "$listener" 2>/dev/null; wait "$listener" 2>/dev/null; }
# check_json FILE PYTHON: runs PYTHON with `n` the report's net object and `r` the report; it
# prints nothing when the assertions hold, else what failed.
check_json() {
  python3 - "$1" "$2" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
n = r.get("net") or {}
def near(name, got, want, tol):
    if not (abs(got - want) <= tol * want):
        print(f"{name} = {got}, want {want} +- {tol * 100:.0f}%")
try:
    exec(sys.argv[2])
except Exception as e:
    print(f"{type(e).__name__}: {e}")
EOF
}
assert_json() {  # assert_json DESCRIPTION FILE PYTHON
  local msg
  msg=$(check_json "$2" "$3")
  if [ -z "$msg" ]; then ok; else bad "$1: $msg"; fi
}

port=$(free_port)
start_listener "$tmp/listen.log" --net-listen "127.0.0.1:$port" --net-rate-mbps 200

# 1. Throughput each way and a checkpoint that completes: 20 MB at 25 MB/s = 0.8 s.
expect_exit 0 "link test against a 200 Mbit/s listener" -- \
  "$bin" check --net "127.0.0.1:$port" --net-seconds 2 --net-bytes 20000000 --json "$tmp/a.json"
assert_json "paced loopback figures" "$tmp/a.json" '
near("throughput_gbps", n["throughput_gbps"], 0.2, 0.15)
near("reverse_gbps", n["reverse_gbps"], 0.2, 0.15)
if not (0 < n["rtt_ms"] < 50): print("rtt_ms", n["rtt_ms"])
if n["streams"] != 4 or n["seconds"] != 2: print("streams/seconds", n["streams"], n["seconds"])
if n["transfer_extrapolated"] or n["transfer_measured_bytes"] != 20000000: print("transfer", n)
near("transfer_seconds", n["transfer_seconds"], 20e6 / 25e6, 0.15)
if n["listener_rate_mbps"] != 200: print("listener_rate_mbps", n["listener_rate_mbps"])
names = [t["name"] for t in r["tests"]]
if names != ["net_rtt", "net_throughput", "net_reverse", "net_transfer"]: print("tests", names)
if r["verdict"] != "PASS" or r["exit_code"] != 0 or r["environment_problem"]: print("verdict", r["verdict"], r["exit_code"])
'

# 2. A checkpoint the time limit cuts: 200 MB, limit 3 x 1 s (75 MB arrive), extrapolated to 8 s.
expect_exit 0 "link test with an extrapolated transfer" -- \
  "$bin" check --net "127.0.0.1:$port" --net-seconds 1 --net-streams 2 --net-bytes 200000000 --json "$tmp/b.json"
assert_json "extrapolated transfer" "$tmp/b.json" '
if not n["transfer_extrapolated"]: print("not extrapolated", n)
near("transfer_seconds", n["transfer_seconds"], 200e6 / 25e6, 0.15)
near("transfer_measured_bytes", n["transfer_measured_bytes"], 3 * 25e6, 0.15)
near("reverse_gbps", n["reverse_gbps"], 0.2, 0.15)
'

# 3. Two links side by side (check compare).
expect_exit 0 "check compare of two links" -- "$bin" check compare "$tmp/a.json" "$tmp/b.json" --json -
if python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); rows={r["test"] for r in c["rows"]}; sys.exit(0 if {"net_rtt","net_throughput","net_reverse","net_transfer"} <= rows else 1)' "$tmp/out"; then ok; else bad "compare rows: $(head -c 600 "$tmp/out")"; fi

# 4. SIGTERM while four streams run: the listener is gone within 5 s; the client's stream
# breaks, and it reports ERROR (exit 3).
"$bin" check --net "127.0.0.1:$port" --net-seconds 10 --json "$tmp/c.json" >"$tmp/c.out" 2>&1 &
client=$!
sleep 1.5
t0=$(date +%s.%N)
kill -TERM "$listener"
for _ in $(seq 60); do kill -0 "$listener" 2>/dev/null || break; sleep 0.1; done
t1=$(date +%s.%N)
if kill -0 "$listener" 2>/dev/null; then
  bad "listener still running 6 s after SIGTERM"
  kill -KILL "$listener"
else
  wait "$listener"
  rc=$?
  if python3 -c "import sys; sys.exit(0 if $t1 - $t0 < 5 else 1)"; then ok; else bad "listener took $(python3 -c "print($t1 - $t0)") s to stop"; fi
  if [ "$rc" = 0 ]; then ok; else bad "listener exit $rc after SIGTERM, want 0"; fi
fi
wait "$client"
rc=$?
if [ "$rc" = 3 ]; then ok; else bad "client whose listener stopped: exit $rc, want 3: $(cat "$tmp/c.out")"; fi

# 5. Unreachable (the listener is gone): exit 3, the report says where and why.
expect_exit 3 "unreachable listener" -- "$bin" check --net "127.0.0.1:$port" --net-seconds 1 --json "$tmp/d.json"
assert_json "unreachable report" "$tmp/d.json" '
t = r["tests"]
if len(t) != 1 or t[0]["name"] != "net_link" or t[0]["status"] != "ERROR": print(t)
elif "127.0.0.1:'"$port"'" not in t[0]["evidence"] or "refused" not in t[0]["evidence"].lower(): print(t[0]["evidence"])
if r["net"] is not None: print("net", r["net"])
'

# 6. Bad input: exit 2, the option named.
expect_exit 2 "--net port 0" -- "$bin" check --net 127.0.0.1:0
grep -q -- "--net" "$tmp/err" && ok || bad "port 0: $(cat "$tmp/err")"
expect_exit 2 "--net port 70000" -- "$bin" check --net 127.0.0.1:70000
expect_exit 2 "--net-listen port 70000" -- "$bin" check --net-listen 127.0.0.1:70000
expect_exit 2 "--net-streams 0" -- "$bin" check --net 127.0.0.1:5201 --net-streams 0
expect_exit 2 "--net-streams 1000" -- "$bin" check --net 127.0.0.1:5201 --net-streams 1000
grep -q -- "--net-streams" "$tmp/err" && ok || bad "streams 1000: $(cat "$tmp/err")"
expect_exit 2 "--net-seconds 0.5" -- "$bin" check --net 127.0.0.1:5201 --net-seconds 0.5
expect_exit 2 "--net with --data" -- "$bin" check --net 127.0.0.1:5201 --data "$tmp"
expect_exit 2 "--net and --net-listen" -- "$bin" check --net 127.0.0.1:5201 --net-listen 5201
expect_exit 2 "listener off loopback without a token" -- "$bin" check --net-listen "0.0.0.0:$port"
grep -q -- "--net-token" "$tmp/err" && ok || bad "no token: $(cat "$tmp/err")"

# 7. A token: refused without it (exit 3, the reason named), accepted with it.
port=$(free_port)
start_listener "$tmp/listen2.log" --net-listen "127.0.0.1:$port" --net-token s3cret
expect_exit 3 "listener with a token, client without" -- "$bin" check --net "127.0.0.1:$port" --net-seconds 1 --json "$tmp/e.json"
grep -q "token" "$tmp/e.json" && ok || bad "no token named: $(head -c 800 "$tmp/e.json")"
expect_exit 0 "listener and client with the token" -- \
  "$bin" check --net "127.0.0.1:$port" --net-seconds 1 --net-bytes 1048576 --net-token s3cret --json -
stop_listener

finish check_net
