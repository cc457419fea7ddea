#!/usr/bin/env bash
# gpuplan check from the command line: exit codes, report files, captures, the fake NVML library,
# compare, merge and the cluster manifests (docs/check.md).
# usage: check_cli_test.sh GPUPLAN DATA_DIR FIXTURES_DIR FAKE_NVML_LIB DEPLOY_DIR
set -uo pipefail
bin=$1
data=$2
fixtures=$3
fake=$4
deploy=$5
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
  echo "SKIP: cmark-gfm not installed (scripts/install-deps.sh installs it)"
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

# 7. The cluster manifests.
if command -v yq >/dev/null; then
  m=$deploy/check-job.yaml
  [ "$(yq -r .kind "$m")" = Job ] && ok || bad "manifest kind"
  [ "$(yq -r .spec.completionMode "$m")" = Indexed ] && ok || bad "manifest completionMode"
  [ "$(yq -r '.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey' "$m")" = kubernetes.io/hostname ] && ok || bad "manifest anti-affinity"
  yq -r '.spec.template.spec.containers[0].args[0]' "$m" | grep -q 'gpuplan check .*--json "/reports/${NODE_NAME}.json"' && ok || bad "manifest command"
  [ "$(yq -r '.spec.template.spec.restartPolicy' "$m")" = Never ] && ok || bad "manifest restartPolicy"
else
  echo "SKIP: yq not installed (scripts/install-deps.sh installs it)"
fi
bash -n "$deploy/slurm-check.sh" && ok || bad "slurm script syntax"
grep -q 'srun --ntasks-per-node=1' "$deploy/slurm-check.sh" && ok || bad "slurm script srun"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
