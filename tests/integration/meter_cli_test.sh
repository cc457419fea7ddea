#!/usr/bin/env bash
# gpuplan meter run / record from the command line (docs/meter.md §8): exit codes without a
# driver, bad flags and traces, the loop replay -> report -> export -> cost optimize on the
# example week (figures by hand in data/traces/README.md), and a SIGKILL during writes.
# usage: meter_cli_test.sh GPUPLAN DATA_DIR FIXTURES_DIR FAKE_NVML_LIB
set -uo pipefail
bin=$1
data=$2
fixtures=$3
fake=$4
export GPUPLAN_DATA=$data
source "$(dirname "$0")/harness.sh"
json_is() {  # json_is JQ_FILTER EXPECTED (on the last command's stdout)
  local got
  got=$(jq -r "$1" "$tmp/out" 2>&1)
  if [ "$got" = "$2" ]; then ok; else bad "$1 = $got, want $2"; fi
}
week=$data/traces/lab-4xa100-week.jsonl

# No driver: exit 3 (environment), one clear line, no database created.
expect_exit 3 "run without NVML" -- env GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  "$bin" meter run --db "$tmp/none.db" --duration 1
grep -q "no NVIDIA driver" "$tmp/err" && ok || bad "no-driver message: $(cat "$tmp/err")"
[ ! -e "$tmp/none.db" ] && ok || bad "a database was created without a driver"
expect_exit 3 "record without NVML" -- env GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  "$bin" meter record --out "$tmp/none.jsonl" --duration 1

# Bad flags and traces: exit 2, naming the flag or file:line:field.
expect_exit 2 "speed without replay" -- "$bin" meter run --db "$tmp/x.db" --speed 5
grep -q -- "--speed" "$tmp/err" && ok || bad "speed error: $(cat "$tmp/err")"
expect_exit 2 "flush over 10 s" -- "$bin" meter run --db "$tmp/x.db" --replay "$week" --flush-seconds 30
head -2 "$week" >"$tmp/bad.jsonl"
echo '{"time_ms":1772409610000,"gpus":[{"gpu":0,"temperature":"hot"}]}' >>"$tmp/bad.jsonl"
# /metrics off loopback without a token: the error names meter run's own flag, not serve's.
expect_exit 2 "listen off loopback without a token" -- "$bin" meter run --db "$tmp/x.db" --replay "$week" --listen 0.0.0.0:0
grep -q -- "--token-file" "$tmp/err" && ok || bad "listen error names --token-file: $(cat "$tmp/err")"
grep -q "GPUPLAN_TOKEN\|--token " "$tmp/err" && bad "listen error names serve's flags: $(cat "$tmp/err")" || ok
# A token file of two lines could never match a header: refused, naming file and line 2.
printf 'abc123\nsecond\n' >"$tmp/token2"
expect_exit 2 "two-line token file" -- "$bin" meter run --db "$tmp/x.db" --replay "$week" --listen 127.0.0.1:0 --token-file "$tmp/token2"
grep -q "token2:2" "$tmp/err" && ok || bad "two-line token error names file:2: $(cat "$tmp/err")"
printf 'abc 123\n' >"$tmp/token3"
expect_exit 2 "token with a space" -- "$bin" meter run --db "$tmp/x.db" --replay "$week" --listen 127.0.0.1:0 --token-file "$tmp/token3"
# Bounds: a token of 1,025 characters, and a 5 MB file (refused before it is read).
head -c 1025 /dev/zero | tr '\0' a >"$tmp/token4"
expect_exit 2 "token too long" -- "$bin" meter run --db "$tmp/x.db" --replay "$week" --listen 127.0.0.1:0 --token-file "$tmp/token4"
grep -q "more than 1024" "$tmp/err" && ok || bad "long token error: $(cat "$tmp/err")"
head -c 5000000 /dev/zero | tr '\0' a >"$tmp/token5"
expect_exit 2 "token file too big" -- "$bin" meter run --db "$tmp/x.db" --replay "$week" --listen 127.0.0.1:0 --token-file "$tmp/token5"
grep -q "5000000 bytes" "$tmp/err" && ok || bad "big token file error: $(cat "$tmp/err")"
expect_exit 2 "bad trace" -- "$bin" meter run --db "$tmp/bad.db" --replay "$tmp/bad.jsonl"
grep -q "bad.jsonl:3: field 'gpus\[0\].temperature'" "$tmp/err" && ok || bad "bad trace error: $(cat "$tmp/err")"
expect_exit 2 "missing trace" -- "$bin" meter run --db "$tmp/bad.db" --replay "$tmp/nope.jsonl"

# Live through the fake NVML library (the H100 recording): 2 ticks.
expect_exit 0 "run on fake NVML" -- env GPUPLAN_NVML_LIBRARY="$fake" \
  GPUPLAN_FAKE_NVML="$fixtures/nvml/h100-590.recording.json" \
  "$bin" meter run --db "$tmp/live.db" --duration 2 --interval 1
[ "$(sqlite3 "$tmp/live.db" 'SELECT count(*) FROM gpu_sample')" = 2 ] && ok || bad "live: want 2 samples"
expect_exit 0 "record on fake NVML" -- env GPUPLAN_NVML_LIBRARY="$fake" \
  GPUPLAN_FAKE_NVML="$fixtures/nvml/h100-590.recording.json" \
  "$bin" meter record --out "$tmp/rec.jsonl" --duration 2 --interval 1
expect_exit 0 "replay the recording" -- "$bin" meter run --db "$tmp/rec.db" --replay "$tmp/rec.jsonl" --speed 1e9
[ "$(sqlite3 "$tmp/rec.db" 'SELECT count(*) FROM gpu_sample')" = 2 ] && ok || bad "recorded replay: want 2 samples"

# The loop: replay the week as fast as possible, report, export, optimise.
expect_exit 0 "replay the week" -- "$bin" meter run --db "$tmp/week.db" --replay "$week" --speed 1e9
[ "$(sqlite3 "$tmp/week.db" 'PRAGMA integrity_check')" = ok ] && ok || bad "week: integrity_check"
# Every sample rolled up (raw samples older than 48 h are trimmed by retention): 60,480 steps x
# 4 GPUs in 168 x 4 hour rows; process samples (84 + 168 + 20 + 2) h x 360 = 98,640.
[ "$(sqlite3 "$tmp/week.db" 'SELECT count(*), sum(samples) FROM gpu_hour')" = "672|241920" ] && ok || bad "week: gpu hours"
[ "$(sqlite3 "$tmp/week.db" 'SELECT sum(samples) FROM process_hour')" = 98640 ] && ok || bad "week: process hours"
# The raw window kept: the last 48 h (retention runs once an hour of samples: up to 49 h),
# 48 x 360 x 4 = 69,120 to 49 x 360 x 4 = 70,560 samples.
raw=$(sqlite3 "$tmp/week.db" 'SELECT count(*) FROM gpu_sample')
[ "$raw" -ge 69120 ] && [ "$raw" -le 70560 ] && ok || bad "week: raw window $raw"
expect_exit 0 "report the week" -- "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 --json
json_is '[.groups[] | select(.gpu == 3)][0].idle_hours' 166
json_is '[.groups[] | select(.gpu == 3)][0].busy_hours' 2
json_is '[.groups[] | select(.gpu == 0)][0].busy_hours' 84
json_is '[.groups[] | select(.gpu == 0)][0].idle_hours' 84
json_is '[.groups[] | select(.gpu == 1)][0].busy_hours' 168
json_is '[.groups[] | select(.gpu == 1)][0].active_hours' 84
json_is '[.groups[] | select(.gpu == 2)][0].busy_hours' 20
json_is '[.groups[] | select(.gpu == 2)][0].idle_hours' 148
json_is '.total.observed_hours' 672
json_is '[.idle[] | select(.gpu == 3)][0].hours' 166
# The report's header states the rates it bills (issue 25 req 12): on demand 50 x 1.06 add-on
# = 53 an hour by day, 53 x 0.7 = 37.1 at night 22:00-08:00.
expect_exit 0 "priced report header" -- "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 \
  --offers "$data/offers/nanjing-a100.yaml" --offer nj-a100-on-demand
grep -qF "billed 53 CNY per instance-hour by day, 37.1 CNY at night 22:00-08:00 (add-ons included)" "$tmp/out" && ok ||
  bad "priced report header lacks the day and night rates: $(head -3 "$tmp/out")"
# A reserved offer's month projects to its contract bill: the replayed week holds 4 GPUs, so 4
# monthly terms of 21,900 x 1.06 + 500 GB x 0.35 = 23,389: 93,556 for March 2026.
expect_exit 0 "reserved projection" -- "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 \
  --offers "$data/offers/nanjing-a100.yaml" --offer nj-a100-monthly --json
jq -e '(.projection.projected - 93556 | fabs) < 0.01 and .projection.whole_term' "$tmp/out" >/dev/null && ok ||
  bad "reserved projection: $(jq -c .projection "$tmp/out")"
# What would be sent (issue 25 req 13): the example week's 482 alerts (398 hourly idle reminders
# and 84 low-use ones) are 16 incidents; each is one start (its one alert that is not a reminder),
# escalations at 4 h and 24 h, an end, plus one digest a day: at most 100 notifications.
expect_exit 0 "notifications of the week" -- "$bin" meter alerts --db "$tmp/week.db" --from 2026-03-02T00:00Z \
  --to 2026-03-09T00:00Z --json
json_is '.counts.notifications <= 100' true
json_is '[.notifications[] | select(.type == "start")] | length' "$(jq '[.alerts[] | select(.repeat == false)] | length' "$tmp/out")"
json_is '[.notifications[] | select(.type == "digest")] | length' 7
json_is '[.notifications[] | select(.type == "end" and .kind == "idle_no_process")] | all(.summary | contains("ended by"))' true
expect_exit 0 "report by user" -- "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 --by user --json
json_is '[.groups[] | select(.key == "alice")][0].busy_hours' 84
json_is '[.groups[] | select(.key == "carol")][0].busy_hours' 2
expect_exit 0 "report by pod" -- "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 --by pod --json
json_is '[.groups[] | select(.key == "uid:8e0b7a2c-1d3f-4e5a-9b6c-7d8e9f0a1b2c")][0].busy_hours' 168
expect_exit 0 "report text" -- "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09
grep -q "GPU 3: 166 h" "$tmp/out" && ok || bad "text report lacks 'GPU 3: 166 h': $(cat "$tmp/out")"
# The week by day (UTC): busy 274 h and idle 398 h in all (README); Monday: GPU 0 busy 09-24,
# GPU 1 all day: 39 h busy, 9 + 24 + 24 = 57 h idle.
expect_exit 0 "timeline by day" -- "$bin" meter timeline --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 --step day --json
json_is '.slots | length' 7
json_is '[.slots[].total.busy_hours] | add' 274
json_is '[.slots[].total.idle_hours] | add' 398
json_is '.slots[0].total.busy_hours' 39
json_is '.slots[0].total.idle_hours' 57
expect_exit 2 "timeline by week" -- "$bin" meter timeline --db "$tmp/week.db" --step week
# The week's alerts, live and stored: `meter run --alerts` logs each alert as it samples, `meter
# alerts` replays the stored week through the same rules and prints the same lines. The rules of
# meter_prometheus_test.sh (idle 60 min, under 5 % for 30 min, no repeat within the week): by
# hand from the schedule 8 idle stretches of an hour or more and GPU 1's 8 nights at 0 %: 16.
printf 'rules:\n  idle_minutes: 60\n  low_util_minutes: 30\n  repeat_minutes: 10080\n  gpu_hour_price: 30\n' >"$tmp/alerts.yaml"
expect_exit 0 "replay the week with alerts" -- "$bin" meter run --db "$tmp/alerts.db" --replay "$week" --speed 1e9 \
  --alerts "$tmp/alerts.yaml"
sed -n 's/^alert: //p' "$tmp/err" | sort >"$tmp/live-alerts"
[ "$(wc -l <"$tmp/live-alerts")" = 16 ] && ok || bad "live alerts: $(wc -l <"$tmp/live-alerts"), want 16"
expect_exit 0 "alerts of the stored week" -- "$bin" meter alerts --db "$tmp/alerts.db" --from 2026-03-02T00:00Z \
  --to 2026-03-09T00:00Z --alerts "$tmp/alerts.yaml"
sed '/notifications to send/,$d' "$tmp/out" | sed -E -n 's/^[^ ]+  [a-z]+ +//p' | sort >"$tmp/stored-alerts"
diff "$tmp/live-alerts" "$tmp/stored-alerts" >"$tmp/alerts.diff" && ok || bad "stored alerts differ from live: $(cat "$tmp/alerts.diff")"
expect_exit 0 "alerts as JSON" -- "$bin" meter alerts --db "$tmp/alerts.db" --from 2026-03-02T00:00Z \
  --to 2026-03-09T00:00Z --alerts "$tmp/alerts.yaml" --json
json_is '.counts.idle_no_process' 8
json_is '.counts.low_utilization' 8
json_is '[.alerts[] | select(.gpu == 3) | .at] | join(" ")' "2026-03-02T01:00+00:00 2026-03-07T13:00+00:00"
expect_exit 2 "alerts with a bad rules file" -- "$bin" meter alerts --db "$tmp/alerts.db" --alerts "$tmp/usage-missing.yaml"
expect_exit 0 "export the week" -- "$bin" meter export --db "$tmp/week.db"
cp "$tmp/out" "$tmp/usage.csv"
[ "$(head -1 "$tmp/usage.csv" | cut -d, -f1-2)" = "timestamp,gpus" ] && ok || bad "export header: $(head -1 "$tmp/usage.csv")"
[ "$(tail -n +2 "$tmp/usage.csv" | wc -l)" = 168 ] && ok || bad "export: want 168 hourly rows"
# Busy GPUs by hour: Mon 00:00 the pod only (1); Tue 10:00 train + pod + notebook (3); Sat 10:00 pod + eval (2).
grep -q "^2026-03-02T00:00[^,]*,1$" "$tmp/usage.csv" && ok || bad "export: Mon 00:00 want 1"
grep -q "^2026-03-03T10:00[^,]*,3$" "$tmp/usage.csv" && ok || bad "export: Tue 10:00 want 3"
grep -q "^2026-03-07T10:00[^,]*,2$" "$tmp/usage.csv" && ok || bad "export: Sat 10:00 want 2"
expect_exit 0 "optimize on measured use" -- "$bin" cost optimize --offers "$data/offers/nanjing-a100.yaml" \
  --usage "$tmp/usage.csv" --extrapolate month --month 2026-04 --json
json_is '.solver.status' optimal
json_is '.total_cost > 0' true

# SIGKILL during writes: a 1 Hz trace replayed in real time, killed after about 8 s. The database
# passes integrity_check, holds a gap-free prefix of the trace, and lacks at most 10 s of what
# was sampled (the last tick printed before the kill).
python3 - "$tmp/hz.jsonl" <<'PY'
import json, sys
start = 1772409600000
lines = [json.dumps({"format": "gpuplan-meter-trace", "version": 1, "host": "k", "interval_seconds": 1,
                     "gpus": [{"index": i, "uuid": "GPU-%d" % i} for i in range(2)]})]
for k in range(600):
    lines.append(json.dumps({"time_ms": start + 1000 * k, "gpus": [
        {"gpu": i, "utilization_gpu": (k * 7 + i) % 100, "power": 100 + k % 50,
         "processes": [{"pid": 1000 + i, "user": "u", "gpu_memory": 1 << 30}]} for i in range(2)]}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
"$bin" meter run --db "$tmp/kill.db" --replay "$tmp/hz.jsonl" --speed 1 --verbose >"$tmp/ticks" 2>"$tmp/kill.err" &
agent=$!
sleep 8
kill -9 "$agent"
wait "$agent" 2>/dev/null
[ "$(sqlite3 "$tmp/kill.db" 'PRAGMA integrity_check')" = ok ] && ok || bad "after SIGKILL: integrity_check"
last_tick=$(grep -o 'time_ms [0-9]*' "$tmp/ticks" | tail -1 | cut -d' ' -f2)
stored=$(sqlite3 "$tmp/kill.db" 'SELECT count(*) FROM gpu_sample')
newest=$(sqlite3 "$tmp/kill.db" 'SELECT coalesce(max(time_ms), 0) FROM gpu_sample')
if [ -n "$last_tick" ] && [ "$last_tick" -ge 1772409605000 ]; then ok; else bad "kill: too few ticks ($last_tick)"; fi
# Gap-free: 2 GPUs per step from the first step to the newest stored.
[ "$stored" = $(( (newest - 1772409600000) / 1000 * 2 + 2 )) ] && ok || bad "kill: $stored samples up to $newest: gaps"
lost_ms=$(( last_tick - newest ))
[ "$lost_ms" -le 10000 ] && ok || bad "kill: lost $lost_ms ms of samples (tick $last_tick, stored $newest)"
echo "SIGKILL: sampled up to $last_tick, stored up to $newest: $((lost_ms / 1000)) s lost"

# A report from a store on read-only media (a read-only bind mount of the folder): read through
# SQLite's immutable mode, the same report as from the writable copy.
mkdir -p "$tmp/ro-src" "$tmp/ro"
cp "$tmp/week.db" "$tmp/ro-src/week.db"
if mount --bind -o ro "$tmp/ro-src" "$tmp/ro" 2>/dev/null; then
  expect_exit 0 "report from read-only media" -- "$bin" meter report --db "$tmp/ro/week.db" --from 2026-03-02 --to 2026-03-09 --json
  jq 'del(.db)' "$tmp/out" >"$tmp/ro.json"
  "$bin" meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 --json | jq 'del(.db)' >"$tmp/rw.json"
  cmp -s "$tmp/ro.json" "$tmp/rw.json" && ok || bad "read-only report differs: $(diff "$tmp/ro.json" "$tmp/rw.json" | head -3)"
  umount "$tmp/ro"
else
  echo "SKIP: read-only media: a read-only bind mount is not permitted here"
  ro_skipped=1
fi

# meter watch: the command's own exit code, the JSON's keys, and compare over two results.
expect_exit 5 "watch passes the exit code" -- env GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  "$bin" meter watch --interval 0.1 --json "$tmp/w1.json" -- sh -c 'sleep 0.5; exit 5'
jq -e '.duration_seconds >= 0.5 and .exit_code == 5 and (.diagnosis.bound | type == "string") and (.series.t | length) >= 3' \
  "$tmp/w1.json" >/dev/null && ok || bad "watch JSON: $(head -c 300 "$tmp/w1.json")"
grep -q "^Diagnosis: waiting" "$tmp/err" && ok || bad "a sleeping command is waiting: $(cat "$tmp/err")"
grep -q "SKIP: not measured: no NVIDIA driver" "$tmp/err" && ok || bad "watch GPU part SKIP"
expect_exit 127 "watch a missing command" -- "$bin" meter watch -- /nonexistent/train.py
cp "$tmp/w1.json" "$tmp/w2.json"
expect_exit 0 "compare two results" -- "$bin" meter compare "$tmp/w1.json" "$tmp/w2.json"
[ "$(grep -c ' waiting$' "$tmp/out")" = 2 ] && ok || bad "compare table: $(cat "$tmp/out")"
echo '{"schema":"other"}' >"$tmp/w3.json"
expect_exit 2 "compare a file that is not a watch result" -- "$bin" meter compare "$tmp/w3.json"

echo "meter cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
[ -z "${ro_skipped:-}" ] || exit 77
