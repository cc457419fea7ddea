#!/usr/bin/env bash
# The meter store never loses what it holds (docs/meter-store.md §6): the example week replayed
# without interruption is the reference; the same week replayed into another store and killed
# with SIGKILL 50 times at random moments, each time continued with --resume, must give the same
# `meter report --json` and `meter export`. A replay that reaches no step (a header-only trace,
# exit 0; a bad first step, exit 2) must leave an existing store's report unchanged, and the
# week replayed afterwards must write every row.
# usage: meter_kill_test.sh GPUPLAN DATA_DIR [KILLS=50]
set -uo pipefail
bin=$1
data=$2
kills_wanted=${3:-50}
export GPUPLAN_DATA=$data
source "$(dirname "$0")/harness.sh"
week=$data/traces/lab-4xa100-week.jsonl
range=(--from 2026-03-02 --to 2026-03-09)

report() {  # report DB OUT: the week's report (JSON, by GPU and by user; the file's own name
  # dropped) and its export
  "$bin" meter report --db "$1" "${range[@]}" --json 2>>"$tmp/report.err" | jq 'del(.db)' >"$2.report" &&
    "$bin" meter report --db "$1" "${range[@]}" --by user --json 2>>"$tmp/report.err" | jq 'del(.db)' >"$2.users" &&
    "$bin" meter export --db "$1" "${range[@]}" >"$2.csv" 2>>"$tmp/report.err"
}
same() {  # same A B WHAT
  if cmp -s "$1" "$2"; then ok; else bad "$3 differs: $(diff "$1" "$2" | head -5)"; fi
}

# The reference: one uninterrupted replay.
"$bin" meter run --db "$tmp/whole.db" --replay "$week" --speed 1e9 >"$tmp/whole.out" 2>&1 || bad "reference replay failed"
report "$tmp/whole.db" "$tmp/whole" || bad "reference report failed: $(cat "$tmp/report.err")"

# 50 kills. The killed runs are paced (--speed 15000: the week in 40 s) and commit every 0.2 s,
# so a kill lands at a random point of the writing: each run is killed after 300-800 ms (a fixed
# seed), 50 runs cover about 25 of the 40 s, and the loop ends before the week does. A run that
# ends on its own before its kill is continued like the others.
RANDOM=20261203
kills=0
runs=0
marks=""
while [ "$kills" -lt "$kills_wanted" ] && [ "$runs" -lt $((kills_wanted * 3)) ]; do
  runs=$((runs + 1))
  "$bin" meter run --db "$tmp/killed.db" --replay "$week" --speed 15000 --flush-seconds 0.2 --resume \
    >"$tmp/run.out" 2>&1 &
  agent=$!
  delay_ms=$(( 300 + RANDOM % 500 ))
  sleep "$(printf "%d.%03d" $((delay_ms / 1000)) $((delay_ms % 1000)))"
  if kill -KILL "$agent" 2>/dev/null; then
    wait "$agent" 2>/dev/null
    kills=$((kills + 1))
    marks+=" $(sqlite3 "$tmp/killed.db" "SELECT value FROM meta WHERE key = 'samples_complete_ms'" 2>/dev/null)"
  else
    wait "$agent"
    rc=$?
    [ "$rc" = 0 ] || bad "run $runs ended by itself with exit $rc: $(cat "$tmp/run.out")"
  fi
done
[ "$kills" = "$kills_wanted" ] && ok || bad "only $kills kills in $runs runs"
[ "$(sqlite3 "$tmp/killed.db" 'PRAGMA integrity_check')" = ok ] && ok || bad "integrity_check after $kills kills"
"$bin" meter run --db "$tmp/killed.db" --replay "$week" --speed 1e9 --resume >"$tmp/last.out" 2>&1 ||
  bad "the last resume failed: $(cat "$tmp/last.out")"
grep -q "resumed" "$tmp/last.out" && ok || bad "the last run did not resume: $(cat "$tmp/last.out")"
report "$tmp/killed.db" "$tmp/killed" || bad "report after kills failed: $(cat "$tmp/report.err")"
same "$tmp/whole.report" "$tmp/killed.report" "report after $kills kills and resumes"
same "$tmp/whole.users" "$tmp/killed.users" "report by user after $kills kills"
same "$tmp/whole.csv" "$tmp/killed.csv" "export after $kills kills"
resume_points=$(echo $marks | tr ' ' '\n' | sort -u | wc -l)
echo "$kills kills in $runs runs; $resume_points distinct resume points; the last run: $(grep -o 'resumed: [0-9]* steps' "$tmp/last.out")"
# The kills must have landed while the store was being written, not all before its first commit.
[ "$resume_points" -ge 10 ] && ok || bad "only $resume_points distinct resume points in $kills kills"

# A replay that reaches no step leaves the store as it was.
cp "$tmp/whole.db" "$tmp/kept.db"
head -n 1 "$week" >"$tmp/header-only.jsonl"
expect_exit 0 "a header-only replay" -- "$bin" meter run --db "$tmp/kept.db" --replay "$tmp/header-only.jsonl" --speed 1e9
{ head -n 1 "$week"; echo '{"time_ms": "soon"}'; } >"$tmp/bad-first.jsonl"
expect_exit 2 "a replay whose first step is bad" -- "$bin" meter run --db "$tmp/kept.db" --replay "$tmp/bad-first.jsonl" --speed 1e9
grep -q "bad-first.jsonl:2" "$tmp/err" && ok || bad "the bad step's file:line: $(cat "$tmp/err")"
report "$tmp/kept.db" "$tmp/kept" || bad "report after the empty replays failed"
same "$tmp/whole.report" "$tmp/kept.report" "report after a header-only and a bad-first-step replay"
same "$tmp/whole.csv" "$tmp/kept.csv" "export after the empty replays"
# The same on a fresh store first: then the week writes every row, dropping none.
expect_exit 0 "a header-only replay into a new store" -- "$bin" meter run --db "$tmp/fresh.db" --replay "$tmp/header-only.jsonl" --speed 1e9
expect_exit 0 "the week after it" -- "$bin" meter run --db "$tmp/fresh.db" --replay "$week" --speed 1e9
grep -q ", 0 dropped" "$tmp/out" && ok || bad "the week after an empty replay dropped rows: $(cat "$tmp/out")"
report "$tmp/fresh.db" "$tmp/fresh" || bad "report of the fresh store failed"
same "$tmp/whole.report" "$tmp/fresh.report" "report of the week after an empty replay"

echo "meter kill: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
