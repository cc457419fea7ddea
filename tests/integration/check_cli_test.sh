#!/usr/bin/env bash
# gpuplan check from the command line: exit codes, report files, captures, the fake NVML library,
# compare, merge and the cluster manifests (docs/check.md).
# usage: check_cli_test.sh GPUPLAN DATA_DIR FIXTURES_DIR FAKE_NVML_LIB DEPLOY_DIR [STAND_IN_DIR]
set -uo pipefail
bin=$1
data=$2
fixtures=$3
fake=$4
deploy=$5
stand=${6:-}
export GPUPLAN_DATA=$data
source "$(dirname "$0")/harness.sh"
json_is() {  # json_is FILE JQ_FILTER EXPECTED
  local got
  got=$(jq -r "$2" "$1" 2>&1)
  if [ "$got" = "$3" ]; then ok; else bad "$1: $2 = $got, want $3"; fi
}
has() {  # has FILE TEXT
  if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2': $(head -c 400 "$1")"; fi
}
smi=$fixtures/nvidia-smi
printf 'storage_seconds_quick: 0.3\ncpu_seconds_quick: 0.2\n' >"$tmp/fast.yaml"
mkdir -p "$tmp/data"

# A check stopped by SIGTERM while its storage test writes its test file (the folder holds no
# data) is gone within 5 s and leaves no .gpuplan-* file in the user's folder (core/stop_cleanup.h).
mkdir -p "$tmp/stopdata"
GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$bin" check --data "$tmp/stopdata" >"$tmp/stop.out" 2>&1 &
checker=$!
for _ in $(seq 1 200); do
  if ls -A "$tmp/stopdata" | grep -q '^\.gpuplan-'; then break; fi
  sleep 0.05
done
if ls -A "$tmp/stopdata" | grep -q '^\.gpuplan-'; then ok; else bad "no storage test file appeared: $(ls -A "$tmp/stopdata")"; fi
kill -TERM "$checker"
for _ in $(seq 1 50); do kill -0 "$checker" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$checker" 2>/dev/null; then bad "check still running 5 s after SIGTERM"; kill -KILL "$checker"; fi
wait "$checker"
rc=$?
if [ "$rc" = 143 ]; then ok; else bad "check exit $rc after SIGTERM, want 143 (128 + SIGTERM)"; fi
left=$(ls -A "$tmp/stopdata")
if [ -z "$left" ]; then ok; else bad "files left after SIGTERM: $left"; fi

# 1. No driver: one line says so, host and storage still run, the report is written, exit 3.
expect_exit 3 "no driver" -- env GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$bin" check --quick \
  --thresholds "$tmp/fast.yaml" --data "$tmp/data" --json "$tmp/nodriver.json" --markdown "$tmp/nodriver.md"
[ "$(grep -c '^note: no NVIDIA driver' "$tmp/out")" = 1 ] && ok || bad "no one-line driver note: $(cat "$tmp/out")"
json_is "$tmp/nodriver.json" .verdict ERROR
json_is "$tmp/nodriver.json" .exit_code 3
json_is "$tmp/nodriver.json" .complete true
json_is "$tmp/nodriver.json" '[.tests[].name] | (index("cpu_steal") != null) and (index("storage_random_read") != null)' true
json_is "$tmp/nodriver.json" '[.tests[] | keys | contains(["name","gpu","status","measured","expected","unit","evidence"])] | all' true
has "$tmp/nodriver.md" "# GPU check: ERROR"
# The Markdown renders as GitHub-flavoured Markdown (cmark-gfm): every table row a row.
if command -v cmark-gfm >/dev/null; then
  cmark-gfm -e table "$tmp/nodriver.md" >"$tmp/nodriver.html"
  tables=$(grep -c '^| *-\{3,\}' "$tmp/nodriver.md")
  rows=$(($(grep -c '^| ' "$tmp/nodriver.md") - tables))
  [ "$(grep -o '<table>' "$tmp/nodriver.html" | wc -l)" = "$tables" ] && [ "$tables" -ge 2 ] && ok || bad "markdown tables: $tables"
  [ "$(grep -o '<tr>' "$tmp/nodriver.html" | wc -l)" = "$rows" ] && ok || bad "markdown rows: want $rows"
  grep -q '<td>storage_seq_read</td>' "$tmp/nodriver.html" && ok || bad "markdown results table lacks storage_seq_read"
else
  missing_dep "cmark-gfm not installed: the Markdown report is not rendered (scripts/install-deps.sh installs it)"
fi
[ -z "$(ls -A "$tmp/data")" ] && ok || bad "storage test left files: $(ls -A "$tmp/data")"
# This machine's own driver state, without the override: no driver here means exit 3 as well.
if ! ldconfig -p | grep -q libnvidia-ml.so.1; then
  expect_exit 3 "no driver on this machine" -- "$bin" check --quick --thresholds "$tmp/fast.yaml" --json "$tmp/here.json"
  json_is "$tmp/here.json" .environment_problem true
fi

# 1b. What training reads, from a fit: samples/s = tokens/s / seq, bytes/sample = seq x 4 (int32
# token ids), so the need is tokens/s x 4 bytes/s; a LoRA checkpoint is the adapter in bf16 (2
# bytes) plus Adam's fp32 master and two moments (12 bytes) per trainable parameter; disk_free
# wants 3 of them (docs/check.md §5).
"$bin" fit --model Llama-3.1-8B --task lora --gpu H100 --json >"$tmp/fit.json"
expect_exit 3 "check --fit" -- env GPUPLAN_NVML_LIBRARY=/none "$bin" check --quick --thresholds "$tmp/fast.yaml" \
  --data "$tmp/data" --fit "$tmp/fit.json" --json "$tmp/withfit.json"
need=$(jq '.time.tokens_per_second * 4 / 1e9' "$tmp/fit.json")
json_is "$tmp/withfit.json" "[.tests[] | select(.name == \"storage_feeds_training\")][0].expected - $need | fabs < 1e-12" true
json_is "$tmp/withfit.json" '[.tests[] | select(.name == "storage_feeds_training")][0].status' PASS
ck=$(jq '3 * 14 * .model.params_trainable / 1e9' "$tmp/fit.json")
json_is "$tmp/withfit.json" "[.tests[] | select(.name == \"disk_free\")][0].expected - $ck | fabs < 1e-6" true
expect_exit 2 "check --fit not a fit" -- "$bin" check --fit "$tmp/nodriver.json"
has "$tmp/err" "--fit"

# 2. Before renting: two nodes' captures, one with an x8 link: one report, FAIL, exit 1. The
# report on stdout (--json -) moves the live view to stderr.
expect_exit 1 "captures" -- "$bin" check --from-nvidia-smi "$smi/a100-sxm4-mig.xml" "$smi/edited/a100-x8-link.xml" \
  --expect "A100 40GB SXM" --allow-mig --json -
cp "$tmp/out" "$tmp/captures.json"
json_is "$tmp/captures.json" '.nodes | length' 2
json_is "$tmp/captures.json" '.gpus | length' 2
json_is "$tmp/captures.json" '[.tests[] | select(.name == "pcie_link_width" and .status == "FAIL")] | length' 1
json_is "$tmp/captures.json" '[.tests[] | select(.name == "pcie_link_width" and .status == "FAIL")][0].measured' 8
json_is "$tmp/captures.json" '[.tests[] | select(.name == "cpu_steal")] | length' 0
has "$tmp/err" "pcie_link_width"
# A PCIe card sold as SXM, an RTX 4090 D sold as an RTX 4090: FAIL, exit 1.
expect_exit 1 "pcie sold as sxm" -- "$bin" check --from-nvidia-smi "$smi/edited/a100-pcie-id-in-sxm.xml" --expect "A100 40GB SXM"
has "$tmp/out" "FAIL  gpu_identity"
expect_exit 1 "4090D as 4090" -- "$bin" check --from-nvidia-smi "$smi/edited/rtx4090d-sold-as-4090.xml" --expect "RTX 4090"
has "$tmp/out" "RTX 4090 D"

# 2b. A healthy capture of what was ordered: PASS (or WARN), exit 0. The internal-error hook: exit 4.
expect_exit 0 "healthy capture" -- "$bin" check --from-nvidia-smi "$smi/a100-sxm4-mig.xml" --expect "1x A100 40GB SXM" --allow-mig --json -
json_is "$tmp/out" '.verdict | test("^(PASS|WARN)$")' true
json_is "$tmp/out" .exit_code 0
expect_exit 4 "internal error" -- env GPUPLAN_TEST_INTERNAL_ERROR=1 "$bin" check --from-nvidia-smi "$smi/a100-sxm4-mig.xml"
has "$tmp/err" "please report"

# 3. Bad input: exit 2, one line naming the flag or file and line, nothing written.
expect_exit 2 "unknown card" -- "$bin" check --expect "8x H100 SXN" --json "$tmp/never.json"
has "$tmp/err" "--expect"
[ ! -e "$tmp/never.json" ] && ok || bad "a report was written on bad input"
expect_exit 2 "malformed capture" -- "$bin" check --from-nvidia-smi "$smi/edited/a100-malformed.xml"
has "$tmp/err" "a100-malformed.xml:156"
expect_exit 2 "quick and full" -- "$bin" check --quick --full
expect_exit 2 "bad thresholds" -- "$bin" check --thresholds "$tmp/fast.yaml" --storage-threads 0
has "$tmp/err" "--storage-threads"
printf 'steal_warn_fraction: 0.5\nsteal_fail_fraction: 0.1\n' >"$tmp/inverted.yaml"
expect_exit 2 "inverted thresholds" -- "$bin" check --thresholds "$tmp/inverted.yaml"
has "$tmp/err" "inverted.yaml"

# 4. The real dlopen path against the fake libnvidia-ml serving a recorded H100 (one synthetic
# XID 79 in the recording): the XID is a FAIL tied to the test that was running.
expect_exit 1 "fake nvml" -- env GPUPLAN_NVML_LIBRARY="$fake" GPUPLAN_FAKE_NVML="$fixtures/nvml/h100-590.recording.json" \
  "$bin" check --quick --thresholds "$tmp/fast.yaml" --expect "1x H100 SXM" --cuda 12.4 --json "$tmp/fake.json" \
  --record "$tmp/rec.json" --markdown "$tmp/fake.md"
# The inventory row ends with the temperature and the NUMA node with its CPUs (the capture:
# GPU Current Temp 41 C; topo -m: CPU Affinity 0-19, NUMA Affinity 0).
grep -q '| 41 C | 0 (0-19) |$' "$tmp/fake.md" && ok || bad "inventory lacks temperature / NUMA: $(grep '^| 0 |' "$tmp/fake.md")"
json_is "$tmp/fake.json" '.gpus[0].pci_device_id' $((0x233010DE))
json_is "$tmp/fake.json" '[.tests[] | select(.name == "gpu_identity")][0].status' PASS
json_is "$tmp/fake.json" '[.tests[] | select(.name == "driver_cuda")][0].status' PASS
json_is "$tmp/fake.json" '[.tests[] | select(.name == "health_delta")][0].evidence | test("during the inventory test.*XID 79")' true
json_is "$tmp/rec.json" '.snapshots | length >= 2' true
# The real gpu-worker, built next to gpuplan wherever nvcc is, on this GPU-less machine: CUDA
# finds no driver, the worker prints its error line and exits 3, and each GPU test is that GPU's
# FAIL naming the CUDA error (the fake NVML says there is a GPU; CUDA knows better).
if [ -x "$(dirname "$bin")/gpu-worker" ] && ! command -v nvidia-smi >/dev/null; then
  json_is "$tmp/fake.json" '[.tests[] | select(.name == "gemm" and .gpu == 0)][0] | [.status, (.evidence | test("reported cuda error cuda[A-Za-z]+ in cudaGetDeviceCount"))] | map(tostring) | join(",")' "FAIL,true"
fi
expect_exit 1 "replay" -- "$bin" check --quick --thresholds "$tmp/fast.yaml" --replay "$tmp/rec.json" --expect "1x H100 SXM" --json "$tmp/replay.json"
json_is "$tmp/replay.json" '.gpus[0].uuid' "$(jq -r '.gpus[0].uuid' "$tmp/fake.json")"

# 5. Compare two machines' reports with prices: ranked by money per measured storage TB/s.
cat >"$tmp/offers.yaml" <<'YAML'
currency: CNY
offers:
  - id: a-od
    gpu: H100 SXM
    mode: on_demand
    price: 20
    terms: {sla_response_minutes: 15}
  - id: b-monthly
    gpu: H100 SXM
    gpus_per_instance: 8
    mode: monthly
    price: 58400
    cpu_cores: 4096
YAML
expect_exit 3 "node a" -- env GPUPLAN_NVML_LIBRARY=/none "$bin" check --quick --thresholds "$tmp/fast.yaml" --data "$tmp/data" --json "$tmp/a.json"
expect_exit 3 "node b" -- env GPUPLAN_NVML_LIBRARY=/none "$bin" check --quick --thresholds "$tmp/fast.yaml" --data "$tmp/data" --json "$tmp/b.json"
expect_exit 0 "compare" -- "$bin" check compare "$tmp/a.json" "$tmp/b.json" --offers "$tmp/offers.yaml" \
  --offer-of "$tmp/a.json=a-od" --offer-of "$tmp/b.json=b-monthly" --json "$tmp/cmp.json" --html "$tmp/cmp.html"
json_is "$tmp/cmp.json" .rank_basis "price per measured storage TB/s-hour"
json_is "$tmp/cmp.json" '[.machines[].rank] | sort | map(tostring) | join(",")' "1,2"
json_is "$tmp/cmp.json" '.machines[1].price_per_hour' 80   # 58,400 CNY / 730 h for one 8-GPU instance (the report saw no GPU)
json_is "$tmp/cmp.json" '.machines[0].terms.sla_response_minutes' 15
has "$tmp/cmp.html" "not stated"
expect_exit 2 "compare: unknown offer" -- "$bin" check compare "$tmp/a.json" "$tmp/b.json" --offers "$tmp/offers.yaml" --offer-of "$tmp/a.json=a-odd"
has "$tmp/err" "a-od"
echo '{"schema": "gpuplan-check-report/1", "verdict": "PASS", "tests": [{"name": "x", "status": "FAIL"}]}' >"$tmp/edited.json"
expect_exit 2 "compare: edited verdict" -- "$bin" check compare "$tmp/a.json" "$tmp/edited.json"
has "$tmp/err" "verdict"

# 5b. What was paid for, from the offer: its card, its 8 GPUs per instance, its 4,096 CPU cores.
expect_exit 3 "offer" -- env GPUPLAN_NVML_LIBRARY=/none "$bin" check --quick --thresholds "$tmp/fast.yaml" \
  --offers "$tmp/offers.yaml" --offer b-monthly --json "$tmp/offer.json"
json_is "$tmp/offer.json" .offer_id b-monthly
json_is "$tmp/offer.json" .expected_card "H100 SXM 80GB"
json_is "$tmp/offer.json" '[.tests[] | select(.name == "cpu_cores_promised")][0] | [.status, .expected] | map(tostring) | join(",")' "FAIL,4096"
expect_exit 2 "unknown offer" -- "$bin" check --offers "$tmp/offers.yaml" --offer b-montly
has "$tmp/err" "b-monthly"
expect_exit 1 "capture against the offer" -- "$bin" check --from-nvidia-smi "$smi/h100-590-q.txt" --offers "$tmp/offers.yaml" --offer b-monthly --json -
json_is "$tmp/out" '[.tests[] | select(.name == "gpu_count")][0] | [.status, .measured, .expected] | map(tostring) | join(",")' "FAIL,1,8"

# 6. Merge: three nodes' reports into one; its exit code is the worst node's.
expect_exit 3 "merge" -- "$bin" check merge "$tmp/a.json" "$tmp/b.json" "$tmp/captures.json" --json "$tmp/merged.json" --markdown "$tmp/merged.md"
json_is "$tmp/merged.json" '.merge.nodes' 3
json_is "$tmp/merged.json" '.nodes | length' 2   # the two capture nodes; a and b had no GPUs
json_is "$tmp/merged.json" .verdict ERROR
has "$tmp/merged.md" "pcie_link_width"
expect_exit 1 "merge of captures" -- "$bin" check merge "$tmp/captures.json"

# 6b. Incomplete or empty node reports (docs/check.md §7), written here by hand: node-a complete
# and PASS; node-b killed after one PASS ("complete": false, no finished time); node-c complete
# with an empty test list; node-d killed on a node without a driver (environment_problem).
# Expected by the rule: an incomplete or empty report makes merge and compare incomplete, named,
# exit 1, or 3 when that report was an environment problem; two complete PASS nodes exit 0.
node_json() {  # node_json HOST COMPLETE FINISHED ENV TESTS_JSON
  printf '{"schema": "gpuplan-check-report/1", "mode": "quick", "started": "2026-12-01T10:00:00Z", "complete": %s, "finished": %s, "environment_problem": %s, "host": {"hostname": "%s"}, "tests": %s}\n' \
    "$2" "$3" "$4" "$1" "$5"
}
pass_test='[{"name": "cpu_steal", "gpu": null, "status": "PASS", "measured": 0.001, "expected": 0.05, "unit": "fraction"}]'
node_json node-a true '"2026-12-01T10:05:00Z"' false "$pass_test" >"$tmp/node-a.json"
node_json node-e true '"2026-12-01T10:05:00Z"' false "$pass_test" >"$tmp/node-e.json"
node_json node-b false null false "$pass_test" >"$tmp/node-b.json"
node_json node-c true '"2026-12-01T10:05:00Z"' false '[]' >"$tmp/node-c.json"
node_json node-d false null true "$pass_test" >"$tmp/node-d.json"
expect_exit 0 "merge of two complete nodes" -- "$bin" check merge "$tmp/node-a.json" "$tmp/node-e.json" --json "$tmp/m-ok.json"
json_is "$tmp/m-ok.json" .complete true
json_is "$tmp/m-ok.json" '.merge.incomplete | length' 0
expect_exit 1 "merge with a killed node" -- "$bin" check merge "$tmp/node-a.json" "$tmp/node-b.json" \
  --json "$tmp/m-killed.json" --markdown "$tmp/m-killed.md" --html "$tmp/m-killed.html"
has "$tmp/out" "incomplete node report: node-b ($tmp/node-b.json)"
json_is "$tmp/m-killed.json" .complete false
json_is "$tmp/m-killed.json" .verdict FAIL
json_is "$tmp/m-killed.json" .exit_code 1
json_is "$tmp/m-killed.json" '[.merge.incomplete[] | .node] | join(",")' node-b
json_is "$tmp/m-killed.json" '[.tests[] | select(.name == "node_report") | "\(.node):\(.status)"] | join(",")' node-b:FAIL
has "$tmp/m-killed.md" "## Incomplete node reports"
has "$tmp/m-killed.md" "- node-b ($tmp/node-b.json): the check did not finish"
has "$tmp/m-killed.html" "<li>node-b ($tmp/node-b.json): the check did not finish"
expect_exit 1 "merge with an empty node" -- "$bin" check merge "$tmp/node-a.json" "$tmp/node-c.json" --json -
json_is "$tmp/out" '[.merge.incomplete[] | .node] | join(",")' node-c
json_is "$tmp/out" .complete false
expect_exit 3 "merge with a killed no-driver node" -- "$bin" check merge "$tmp/node-a.json" "$tmp/node-b.json" "$tmp/node-d.json" --json "$tmp/m-env.json"
json_is "$tmp/m-env.json" '[.tests[] | select(.name == "node_report") | "\(.node):\(.status)"] | join(",")' node-b:FAIL,node-d:ERROR
json_is "$tmp/m-env.json" .exit_code 3
expect_exit 0 "compare of two complete nodes" -- "$bin" check compare "$tmp/node-a.json" "$tmp/node-e.json" --json "$tmp/c-ok.json"
json_is "$tmp/c-ok.json" '[.machines[].complete] | all' true
expect_exit 1 "compare with a killed node" -- "$bin" check compare "$tmp/node-a.json" "$tmp/node-b.json" --json "$tmp/c-killed.json" --markdown "$tmp/c-killed.md"
has "$tmp/out" "node-b ($tmp/node-b.json): not a complete report"
json_is "$tmp/c-killed.json" .exit_code 1
json_is "$tmp/c-killed.json" '[.incomplete[] | .label] | join(",")' node-b
json_is "$tmp/c-killed.json" '[.machines[] | "\(.label):\(.verdict):\(.complete)"] | join(",")' node-a:PASS:true,node-b:FAIL:false
has "$tmp/c-killed.md" "| complete | yes | no: the check did not finish"
expect_exit 1 "compare with an empty node" -- "$bin" check compare "$tmp/node-a.json" "$tmp/node-c.json"
has "$tmp/out" "node-c ($tmp/node-c.json): not a complete report"
expect_exit 3 "compare with a killed no-driver node" -- "$bin" check compare "$tmp/node-a.json" "$tmp/node-d.json"
# A report whose "complete" contradicts its "finished" is bad input naming the file and the key.
node_json node-f false '"2026-12-01T10:05:00Z"' false "$pass_test" >"$tmp/node-f.json"
expect_exit 2 "merge: complete contradicts finished" -- "$bin" check merge "$tmp/node-a.json" "$tmp/node-f.json"
has "$tmp/err" "node-f.json"
has "$tmp/err" "complete"

# 7. The cluster manifests.
if command -v yq >/dev/null; then
  m=$deploy/check-job.yaml
  [ "$(yq -r .kind "$m")" = Job ] && ok || bad "manifest kind"
  [ "$(yq -r .spec.completionMode "$m")" = Indexed ] && ok || bad "manifest completionMode"
  [ "$(yq -r '.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey' "$m")" = kubernetes.io/hostname ] && ok || bad "manifest anti-affinity"
  yq -r '.spec.template.spec.containers[0].args[0]' "$m" | grep -q 'gpuplan check .*--json "/reports/${NODE_NAME}.json"' && ok || bad "manifest command"
  [ "$(yq -r '.spec.template.spec.restartPolicy' "$m")" = Never ] && ok || bad "manifest restartPolicy"
else
  missing_dep "yq not installed: the cluster manifest is not read (scripts/install-deps.sh installs it)"
fi
bash -n "$deploy/slurm-check.sh" && ok || bad "slurm script syntax"
grep -q 'srun --ntasks-per-node=1' "$deploy/slurm-check.sh" && ok || bad "slurm script srun"

# 8. The GPU tests (docs/check.md §11) on this GPU-less machine: the fake NVML serves the recorded
# H100 and stand-in workers (tests/stand_in_worker) play gpu-worker. A worker that aborts, hangs,
# prints garbage or a CUDA error line is a FAIL of that test for GPU 0 with the evidence, and the
# rest of the suite still runs and the report is still complete. (The recording's XID 79 makes
# every run here exit 1 through the inventory's health delta, so exit codes are not what these
# cases tell apart.)
if [ -n "$stand" ]; then
  printf 'storage_seconds_quick: 0.3\ncpu_seconds_quick: 0.2\nstorage_seconds_default: 0.3\ncpu_seconds_default: 0.2\nmemory_test_seconds_default: 1\n' >"$tmp/fastgpu.yaml"
  nv=(env GPUPLAN_NVML_LIBRARY="$fake" GPUPLAN_FAKE_NVML="$fixtures/nvml/h100-590.recording.json")
  run_gpu() {  # run_gpu NAME WORKER [ENV=V...] -- [gpuplan check args]
    local name=$1 worker=$2
    shift 2
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    expect_exit 1 "gpu tests: $name" -- "${nv[@]}" "${envs[@]}" "$bin" check --thresholds "$tmp/fastgpu.yaml" \
      --expect "1x H100 SXM" --cuda 12.4 --worker "$stand/stand_in_worker_$worker" --sample-interval 0.2 "$@"
  }
  # Good lines: every GPU result measured and judged; STREAM copy 2^31 bytes in 0.7 ms = 3067.8 GB/s,
  # bf16 2 x 8192^3 FLOP in 1.5 ms = 733.0 TFLOPS (stand_in_worker.cc); no worker FAIL; curves kept.
  run_gpu good good -- --quick --json "$tmp/gpu-good.json"
  json_is "$tmp/gpu-good.json" '[.tests[] | select(.name == "stream_copy")][0] | [.status, (.measured | floor)] | map(tostring) | join(",")' "PASS,3067"
  json_is "$tmp/gpu-good.json" '[.tests[] | select(.name == "gemm_bf16")][0] | [.status, (.measured * 10 | floor)] | map(tostring) | join(",")' "PASS,7330"
  json_is "$tmp/gpu-good.json" '[.tests[] | select(.name == "gpu_memory" or .name == "gemm" or .name == "pcie" or .name == "gpu_bandwidth")] | length' 0
  json_is "$tmp/gpu-good.json" '[.tests[] | select(.name == "pcie_h2d_pinned")][0].status' PASS
  json_is "$tmp/gpu-good.json" '[.tests[] | select(.name == "memory_pattern_errors")][0].status' PASS
  json_is "$tmp/gpu-good.json" '[.curves[].test] | index("gemm") != null' true
  json_is "$tmp/gpu-good.json" '[.tests[].name] | index("cpu_steal") < index("gpu_memory_usable") and index("gpu_memory_usable") < rindex("health_delta")' true
  # A worker that aborts in the gemm test: GPU 0's gemm FAILs with the signal and stderr; memory,
  # bandwidth and PCIe still pass; the report is complete.
  run_gpu abort abort STAND_IN_FAULT_TEST=gemm -- --quick --json "$tmp/gpu-abort.json" --markdown "$tmp/gpu-abort.md"
  json_is "$tmp/gpu-abort.json" '[.tests[] | select(.name == "gemm" and .gpu == 0)][0].status' FAIL
  json_is "$tmp/gpu-abort.json" '[.tests[] | select(.name == "gemm" and .gpu == 0)][0].evidence | test("died of SIGABRT.*aborting in the gemm test")' true
  json_is "$tmp/gpu-abort.json" '[.tests[] | select(.name == "stream_triad")][0].status' PASS
  json_is "$tmp/gpu-abort.json" .complete true
  json_is "$tmp/gpu-abort.json" '[.tests[].name] | index("health_delta") != null' true
  has "$tmp/gpu-abort.md" "died of SIGABRT"
  # A worker that hangs in the PCIe test: killed at --test-timeout with its process group.
  run_gpu hang hang STAND_IN_FAULT_TEST=pcie -- --quick --test-timeout 2 --json "$tmp/gpu-hang.json"
  json_is "$tmp/gpu-hang.json" '[.tests[] | select(.name == "pcie" and .gpu == 0)][0] | [.status, .measured_text] | join(",")' "FAIL,hang"
  json_is "$tmp/gpu-hang.json" '[.tests[] | select(.name == "gemm_bf16")][0].status' PASS
  # Garbage on stdout, and a CUDA error line: FAIL with the line and with the CUDA error named.
  run_gpu garbage garbage STAND_IN_FAULT_TEST=bandwidth -- --quick --json "$tmp/gpu-garbage.json"
  json_is "$tmp/gpu-garbage.json" '[.tests[] | select(.name == "gpu_bandwidth")][0].evidence | test("unreadable line")' true
  run_gpu cuda-error cuda_error STAND_IN_FAULT_TEST=memory -- --quick --json "$tmp/gpu-cuda.json"
  json_is "$tmp/gpu-cuda.json" '[.tests[] | select(.name == "gpu_memory")][0].evidence | test("cudaErrorECCUncorrectable in cudaMemcpy.*memory_test.cu:142")' true
  # Default mode on one GPU: P2P and NCCL are SKIP with the reason; a 2 s burn-in keeps its curve.
  run_gpu default good -- --duration 2 --json "$tmp/gpu-default.json"
  json_is "$tmp/gpu-default.json" '[.tests[] | select(.name == "p2p")][0] | [.status, (.evidence | test("1 GPU"))] | map(tostring) | join(",")' "SKIP,true"
  json_is "$tmp/gpu-default.json" '[.tests[] | select(.name == "nccl")][0].status' SKIP
  json_is "$tmp/gpu-default.json" '[.tests[] | select(.name == "burn_in_errors")][0].status' PASS
  json_is "$tmp/gpu-default.json" '[.tests[] | select(.name == "gemm_fp8")][0].status' SKIP
  json_is "$tmp/gpu-default.json" '[.curves[] | select(.test == "burn_in")][0] | (.t | length) >= 2 and (.t | length) == (.power_w | length)' true
  # Two GPUs (the recording's H100 twice, on buses 09 and 0A): GPU 1's memory worker aborts, GPU 0's
  # passes; P2P and NCCL run in one process for both GPUs, matched to NVML by PCI bus id. The
  # stand-in's all_reduce of 1 GiB takes 10 us + 2^30 / 1e11 s: busbw = algbw x 2(2-1)/2 =
  # 99.907 GB/s (the time printed to 9 digits), under 0.3 x NVLink4's 450 GB/s per direction: FAIL; all_gather's factor is 1/2.
  jq '.snapshots[0].gpus[0].pci_bus_id = "00000000:09:00.0" | .snapshots[0].gpus += [.snapshots[0].gpus[0] | .index = 1 | .pci_bus_id = "00000000:0A:00.0" | .uuid = "GPU-11111111-0000-0000-0000-000000000000"]' \
    "$fixtures/nvml/h100-590.recording.json" >"$tmp/two-h100.json"
  expect_exit 1 "gpu tests: two GPUs" -- env GPUPLAN_NVML_LIBRARY="$fake" GPUPLAN_FAKE_NVML="$tmp/two-h100.json" \
    STAND_IN_DEVICES=2 STAND_IN_FAULT_DEVICE=1 STAND_IN_FAULT_TEST=memory "$bin" check --thresholds "$tmp/fastgpu.yaml" \
    --expect "2x H100 SXM" --cuda 12.4 --worker "$stand/stand_in_worker_abort" --duration 1 --sample-interval 0.2 --json "$tmp/gpu-two.json"
  json_is "$tmp/gpu-two.json" '[.tests[] | select(.name == "gpu_memory") | .gpu] | map(tostring) | join(",")' "1"
  json_is "$tmp/gpu-two.json" '[.tests[] | select(.name == "gpu_memory_usable") | .gpu] | map(tostring) | join(",")' "0"
  json_is "$tmp/gpu-two.json" '[.tests[] | select(.name == "p2p_bandwidth") | "\(.gpu):\(.status):\(.measured)"] | join(",")' "0:PASS:335.54432,1:PASS:335.54432"
  json_is "$tmp/gpu-two.json" '[.tests[] | select(.name == "nccl_all_reduce_busbw")][0] | (.measured - 1073741824 / (0.00001 + 1073741824 / 1e11) / 1e9 | fabs < 1e-5) and .status == "FAIL"' true
  json_is "$tmp/gpu-two.json" '[.tests[] | select(.name == "nccl_all_gather_busbw")][0].measured - 1073741824 / (0.00001 + 1073741824 / 1e11) / 1e9 / 2 | fabs < 1e-5' true
  json_is "$tmp/gpu-two.json" '[.tests[] | select(.name == "burn_in_errors") | .gpu] | map(tostring) | join(",")' "0,1"
  # SIGTERM to a check whose GPU worker hangs: gpuplan is gone within 5 s and so is the worker (it
  # runs in its own process group, which the stop handler kills).
  "${nv[@]}" "$bin" check --thresholds "$tmp/fastgpu.yaml" --expect "1x H100 SXM" --cuda 12.4 \
    --worker "$stand/stand_in_worker_hang" --sample-interval 0.2 >"$tmp/hang-stop.out" 2>&1 &
  checker=$!
  for _ in $(seq 1 300); do pgrep -f "^[^ ]*stand_in_worker_hang" >/dev/null && break; sleep 0.05; done
  if pgrep -f "^[^ ]*stand_in_worker_hang" >/dev/null; then ok; else bad "the hanging worker never started: $(tail -3 "$tmp/hang-stop.out")"; fi
  kill -TERM "$checker"
  for _ in $(seq 1 50); do kill -0 "$checker" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$checker" 2>/dev/null; then bad "check still running 5 s after SIGTERM"; kill -KILL "$checker"; fi
  wait "$checker"
  for _ in $(seq 1 20); do pgrep -f "^[^ ]*stand_in_worker_hang" >/dev/null || break; sleep 0.1; done
  if pgrep -f "^[^ ]*stand_in_worker_hang" >/dev/null; then bad "the worker outlived gpuplan's SIGTERM"; pkill -KILL -f "^[^ ]*stand_in_worker_hang"; else ok; fi
  # No worker: the GPU tests are SKIP "not measured", never PASS.
  expect_exit 1 "gpu tests: no worker" -- "${nv[@]}" "$bin" check --quick --thresholds "$tmp/fastgpu.yaml" \
    --worker /nonexistent/gpu-worker --json "$tmp/gpu-none.json"
  json_is "$tmp/gpu-none.json" '[.tests[] | select(.name == "gemm")][0] | [.status, (.evidence | test("^not measured: no gpu-worker"))] | map(tostring) | join(",")' "SKIP,true"
  # compare ranks by the measured bf16 GEMM (summed over GPUs) once every report has it.
  expect_exit 0 "gpu tests: compare" -- "$bin" check compare "$tmp/gpu-good.json" "$tmp/gpu-default.json" \
    --offers "$tmp/offers.yaml" --offer-of "$tmp/gpu-good.json=a-od" --offer-of "$tmp/gpu-default.json=b-monthly" --json "$tmp/gpu-cmp.json"
  json_is "$tmp/gpu-cmp.json" .rank_basis "price per measured bf16 PFLOP-hour"
else
  echo "SKIP: no stand-in workers given (GPU test cases)"
fi

finish check_cli
