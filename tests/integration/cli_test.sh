#!/usr/bin/env bash
# CLI integration test: runs the real gpuplan binary and checks exit codes, JSON contracts and
# error messages. usage: cli_test.sh GPUPLAN DATA_DIR FIXTURES_DIR
set -uo pipefail
bin=$1
data=$2
fixtures=$3
export GPUPLAN_DATA=$data
source "$(dirname "$0")/harness.sh"
stderr_has() {  # the last command's stderr contains TEXT and is one line
  if grep -qF -- "$1" "$tmp/err" && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok; else bad "stderr lacks '$1' or is not one line: $(cat "$tmp/err")"; fi
}
json_is() {  # json_is JQ_FILTER EXPECTED (on the last command's stdout)
  local got
  got=$(jq -r "$1" "$tmp/out" 2>&1)
  if [ "$got" = "$2" ]; then ok; else bad "$1 = $got, want $2"; fi
}

# Catalog listings.
expect_exit 0 "gpus" -- "$bin" gpus
grep -q "H100 SXM" "$tmp/out" && ok || bad "gpus table lacks H100 SXM"
expect_exit 0 "gpus --json" -- "$bin" gpus --json
json_is '[.[] | select(.name == "A100 80GB SXM")][0].memory_bytes' 85899345920
json_is 'length >= 25' true
expect_exit 0 "models --json" -- "$bin" models --json
json_is '[.[] | select(.name == "Llama-3.1-8B")][0].params_total' 8030261248

# fit: JSON contract. Llama-3.1-8B full fine-tune, mixed AdamW: 16 bytes x 8,030,261,248 params
# of model states alone = 119.66 GiB > 80 GiB, so it does not fit on one A100 (exit 1).
expect_exit 1 "fit does not fit" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100 --json
json_is '.model.params_total' 8030261248
json_is '.model.params_trainable' 8030261248
json_is '.memory_per_gpu.weights' 16060522496
json_is '.memory_per_gpu.optimizer' 96363134976
json_is '.fits' false
json_is '.gpu_memory' 85899345920
json_is '.layout | [.gpu, .gpus, .tp, .pp, .dp, .zero, .recompute, .micro_batch] | map(tostring) | join(",")' \
  "A100 80GB SXM,1,1,1,1,0,none,1"
json_is '.memory_per_gpu | [.weights, .gradients, .optimizer, .activations, .kv_cache, .overhead, .total] | map(type) | unique | join(",")' number
json_is '.suggestions | length > 0' true
json_is '[.suggestions[] | .memory_per_gpu_total <= .gpu_memory] | all' true
json_is '.model | [.name, .architecture, .params_active] | map(tostring) | join(",")' "Llama-3.1-8B,LlamaForCausalLM,8030261248"

# Same job with ZeRO-3 over 8 GPUs fits: optimizer = 12 x P / 8 bytes.
expect_exit 0 "fit zero3" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100 --gpus 8 --zero 3 --json
json_is '.fits' true
json_is '.memory_per_gpu.optimizer' 12045391872
json_is '.layout.dp' 8

# Beside a time, how far the model came from published runs (data/accuracy.yaml): the A100 has
# training rows of its own, fewer than all; no published run on an L40S was checked; with --mfu
# (the user's own efficiency) nothing is said; a broken accuracy.yaml names its file and line.
expect_exit 0 "fit accuracy A100" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100 --gpus 8 --zero 3 --json
json_is '.accuracy.kind' training
json_is '.accuracy.on_gpu.rows > 0 and .accuracy.on_gpu.rows < .accuracy.all.rows' true
json_is '(.accuracy.gpus_checked | index("A100 80GB SXM")) != null' true
expect_exit 0 "fit accuracy L40S" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu L40S --json
json_is '.accuracy.on_gpu' null
json_is '(.accuracy.gpus_checked | index("L40S")) == null' true
expect_exit 0 "fit accuracy text" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu L40S
grep -q "^time accuracy: no published training run on L40S was checked" "$tmp/out" && ok || bad "no accuracy line for L40S"
# Beside the card's figures, the card's runs of the request's precision and framework family
# (docs/validation.md "Which way it leans"): megatron-bridge is of megatron's family; torchtitan has
# no fp8 H100 rows of its own, so any framework's; no setup on a card with no run checked. Every
# one of the family's fp8 H100 rows was faster than modelled, and the text says so where the JSON does.
expect_exit 0 "fit accuracy setup" -- "$bin" fit --model Llama-3.1-8B --task pretrain --gpu H100 --gpus 8 --zero 1 --fp8 on --framework megatron-bridge --json
json_is '.accuracy.setup.precision' fp8
json_is '.accuracy.setup.framework' megatron
json_is '.accuracy.setup.rows >= 3 and .accuracy.setup.rows <= .accuracy.on_gpu.rows' true
json_is '.accuracy.setup.lowest_error <= .accuracy.setup.median_error and .accuracy.setup.median_error <= .accuracy.setup.highest_error' true
below=$(jq -r '.accuracy.setup.highest_error < 0' "$tmp/out")
expect_exit 0 "fit accuracy setup text" -- "$bin" fit --model Llama-3.1-8B --task pretrain --gpu H100 --gpus 8 --zero 1 --fp8 on --framework megatron-bridge
if [ "$below" = true ]; then
  grep -q "^time accuracy for fp8 with megatron's family on H100 SXM 80GB: on [0-9]* published training runs the modelled throughput was below every run's" "$tmp/out" && ok || bad "no 'below every run' line"
else
  grep -q "^time accuracy for fp8 with megatron's family on H100 SXM 80GB:" "$tmp/out" && ok || bad "no setup line"
fi
# A checked run off by half the time or more is said (AccuracyNote::worst_run_time_ratio): the one
# published MoE run on the H100 (Megatron-Bridge 25.11 Qwen3-30B-A3B, docs/validation.md) measured
# 5,275 tokens/s a GPU against 12,633 modelled: 12,633 / 5,275 = 2.395 times as long. A dense time
# (worst -16.8%) says nothing of the kind.
expect_exit 0 "fit accuracy MoE" -- "$bin" fit --model Qwen3-30B-A3B --task pretrain --gpu H100 --gpus 8 --ep 8 --zero 1 --json
json_is '.accuracy.kind' training_moe
json_is '.accuracy.worst_run_time_ratio > 2.39 and .accuracy.worst_run_time_ratio < 2.40' true
expect_exit 0 "fit accuracy MoE text" -- "$bin" fit --model Qwen3-30B-A3B --task pretrain --gpu H100 --gpus 8 --ep 8 --zero 1
grep -q "^warning: a checked run took 2.4 times as long as modelled: this time is for comparing layouts, not for booking" "$tmp/out" && ok || bad "no warning beside a MoE time"
# One run on the card has no median: its error alone (+139.5%, 12,633 / 5,275 - 1), in the singular.
grep -q "^time accuracy: on the one published MoE training run on H100 SXM 80GB that was checked the modelled throughput was off by +139.5%; on all 2 runs" "$tmp/out" && ok || bad "the one MoE run on the H100 is not said as one"
expect_exit 0 "fit accuracy dense, no warning" -- "$bin" fit --model Llama-3.1-8B --task pretrain --gpu H100 --gpus 8 --fp8 on --framework megatron-bridge --json
json_is '.accuracy.worst_run_time_ratio' null
expect_exit 0 "fit accuracy setup torchtitan" -- "$bin" fit --model Llama-3.1-8B --task pretrain --gpu H100 --gpus 8 --zero 3 --fp8 on --framework torchtitan --json
json_is '.accuracy.setup.framework' any
json_is '.accuracy.setup.precision' fp8
expect_exit 0 "fit accuracy setup L40S" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu L40S --json
json_is '.accuracy.setup' null
expect_exit 0 "fit accuracy --mfu" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu L40S --mfu 0.4 --json
json_is '.accuracy' null
expect_exit 0 "fit search accuracy" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu "A100,L40S" --max-gpus 8 --json
json_is '[.accuracy.gpus[] | select(.gpu == "L40S")][0].on_gpu' null
json_is '[.accuracy.gpus[] | select(.gpu == "A100 80GB SXM")][0].on_gpu.rows > 0' true
# A model with routed experts: its training time quotes the MoE rows (kind training_moe), not the
# dense ones; serving it, the inference rows.
expect_exit 0 "fit accuracy MoE" -- "$bin" fit --model Qwen3-30B-A3B --task pretrain --gpu H100 --gpus 16 --ep 8 --zero 1 --seq 4096 --global-batch 512 --json
json_is '.accuracy.kind' training_moe
json_is '.accuracy.on_gpu.worst_error > 0.5' true
expect_exit 0 "fit accuracy MoE text" -- "$bin" fit --model Qwen3-30B-A3B --task pretrain --gpu H100 --gpus 16 --ep 8 --zero 1 --seq 4096 --global-batch 512
grep -q "^time accuracy: on the one published MoE training run on H100 SXM 80GB that was checked" "$tmp/out" && ok || bad "no MoE accuracy line"
expect_exit 0 "fit accuracy MoE serving" -- "$bin" fit --model Qwen3-30B-A3B --task infer --gpu H100 --json
json_is '.accuracy.kind' inference
cp -r "$data" "$tmp/adata"
printf 'source: x\ntraining:\n  rows: 1\n  median_abs_error: 0.1\n  worst_error: 0.1\n  wrost: 1\ninference:\n  rows: 1\n  median_abs_error: 0\n  worst_error: 0\n' >"$tmp/adata/accuracy.yaml"
expect_exit 2 "fit, broken accuracy.yaml" -- "$bin" --data-dir "$tmp/adata" fit --model Llama-3.1-8B --task lora --gpu L40S
stderr_has "accuracy.yaml:6: field 'training.wrost'"

# Inference: KV cache = 2 x 32 layers x 8 heads x 128 x 2 bytes x 8192 tokens x 4 = 4 GiB.
expect_exit 0 "fit infer" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu L40S --context 8192 --concurrency 4 --json
json_is '.memory_per_gpu.kv_cache' 4294967296
json_is '.inference.max_concurrency > 4' true
json_is '.model.params_trainable' 0

# No GPU given: a search over the catalog; the best candidate's breakdown, ranked candidates.
expect_exit 0 "fit search" -- "$bin" fit --model Qwen3-30B-A3B --task lora --max-gpus 16 --json
json_is '.fits' true
json_is '.search.evaluated > 100' true
json_is '.candidates | length > 0' true
json_is '[.candidates[] | .memory_per_gpu_total <= 0.95 * .gpu_memory] | all' true
json_is '.candidates[0] | [.gpu, .gpus, .tp, .pp, .dp, .zero, .recompute, .micro_batch, .memory_per_gpu_total, .step_seconds, .cost.currency] | map(. != null) | all' true
json_is '[.candidates[].tokens_per_second] | . == (sort | reverse)' true
expect_exit 0 "fit table" -- "$bin" fit --model Llama-3.1-8B --task qlora --gpu "rtx-4090"
grep -q "^FITS" "$tmp/out" && ok || bad "table lacks FITS"
expect_exit 1 "fit table negative" -- "$bin" fit --model Llama-3.1-70B --task full --gpu A100
grep -q "^DOES NOT FIT" "$tmp/out" && ok || bad "table lacks DOES NOT FIT"
# A server whose card holds it but whose KV space does not hold the sequences asked for says why
# (the verdict line alone shows a total under the card): 64 x 2176 tokens against the lmdeploy
# KV cache the table prints; the sequences it holds are that capacity / 2176, rounded down.
expect_exit 1 "fit server kv short" -- "$bin" fit --model Llama-2-7b-hf --task infer --gpu "A100 80GB SXM" \
  --framework lmdeploy --concurrency 64 --context 2176 --weight-dtype fp16 --kv-dtype fp16
cap=$(sed -n 's/^  server KV cache: \([0-9]*\) tokens.*/\1/p' "$tmp/out")
held=$(( cap / 2176 ))
if [ -n "$cap" ] && [ "$held" -lt 64 ] && grep -q "^the server's KV cache ($cap tokens) holds $held sequences of 2176 tokens, not the 64 asked" "$tmp/out"; then
  ok
else
  bad "no line saying the server's KV cache holds fewer than the 64 sequences asked (capacity '$cap')"
fi

# A checkpoint folder: config.json + safetensors header.
mkdir -p "$tmp/ckpt"
cp "$fixtures/configs/gpt2.json" "$tmp/ckpt/config.json"
header='{"w":{"dtype":"F16","shape":[2,3],"data_offsets":[0,12]}}'
{ printf "\\x$(printf %02x ${#header})\\x00\\x00\\x00\\x00\\x00\\x00\\x00"; printf '%s' "$header"; head -c 12 /dev/zero; } >"$tmp/ckpt/model.safetensors"
expect_exit 0 "checkpoint dir" -- "$bin" fit --model "$tmp/ckpt" --task infer --json
json_is '.model_files.params' 6
json_is '.model.params_total' 124439808

# Bad input: one line naming file, line and field; exit 2.
printf '{\n  "model_type": "llama",\n  "hidden_size": 4096,,\n}\n' >"$tmp/bad.json"
# An argument that is not UTF-8 (a path's bytes): the error is still one JSON object, the byte
# written as U+FFFD, never an abort.
expect_exit 2 "a model name that is not UTF-8, --json" -- "$bin" fit --model $'bad\xffname' --task full --gpu A100 --json
jq -e '.error.field == "--model"' "$tmp/out" >/dev/null 2>&1 && ok || bad "non-UTF-8 error JSON: $(head -c 300 "$tmp/out")"
# A 100,000-character value is echoed in part, on one line (the whole value was printed).
long=$(head -c 100000 /dev/zero | tr '\0' x)
expect_exit 2 "a 100,000-character flag value" -- "$bin" fit --model Llama-3.1-8B --gpu A100 --dp-overlap "$long"
stderr_has "characters left out)"
[ "$(wc -c <"$tmp/err")" -lt 1100 ] && ok || bad "the error echoes $(wc -c <"$tmp/err") bytes"
expect_exit 2 "a 100,000-character model name" -- "$bin" fit --model "$long" --gpu A100
stderr_has "unknown model 'xxx"
[ "$(wc -c <"$tmp/err")" -lt 1100 ] && ok || bad "the error echoes $(wc -c <"$tmp/err") bytes"
expect_exit 2 "malformed config" -- "$bin" fit --model "$tmp/bad.json"
stderr_has "$tmp/bad.json:3:"
printf '{\n  "model_type": "llama",\n  "hidden_size": 40' >"$tmp/trunc.json"
expect_exit 2 "truncated config" -- "$bin" fit --model "$tmp/trunc.json"
stderr_has "malformed JSON"
printf '{\n "model_type": "llama",\n "hidden_size": 0,\n "num_hidden_layers": 2,\n "num_attention_heads": 2,\n "vocab_size": 10\n}\n' >"$tmp/zero.json"
expect_exit 2 "zero size" -- "$bin" fit --model "$tmp/zero.json"
stderr_has "$tmp/zero.json:3: field 'hidden_size'"
printf '{"model_type": "t5"}' >"$tmp/t5.json"
expect_exit 2 "unknown model_type" -- "$bin" fit --model "$tmp/t5.json"
stderr_has "deepseek_v3"
expect_exit 2 "unknown gpu" -- "$bin" fit --model Llama-3.1-8B --gpu H10
stderr_has "did you mean H100"
expect_exit 2 "unknown model" -- "$bin" fit --model llama-3.1-7b
stderr_has "Llama-3.1-8B"
expect_exit 2 "negative seq" -- "$bin" fit --model Llama-3.1-8B --seq -5
stderr_has "--seq"
expect_exit 2 "zero gpus" -- "$bin" fit --model Llama-3.1-8B --gpus 0
stderr_has "--gpus"
expect_exit 2 "bad task" -- "$bin" fit --model Llama-3.1-8B --task sft
stderr_has "--task"
mkdir -p "$tmp/data/models"
printf 'gpus:\n  - name: X\n    memory_bytes: [1\n' >"$tmp/data/gpus.yaml"
expect_exit 2 "yaml error" -- "$bin" --data-dir "$tmp/data" gpus
stderr_has "$tmp/data/gpus.yaml:"
expect_exit 2 "unknown option" -- "$bin" fit --model Llama-3.1-8B --frobnicate

# cost: break-even by hand. Monthly 21,900 x 1.06 + 500 GB x 0.35 storage = 23,389 per GPU-month
# against on-demand 50 x 1.06 = 53 per hour (+10 h of night discount a day at 0.7: average
# 53 x (1 - 10/24 x 0.3) = 46.375). The 12% retention fee is not paid: an idle on-demand
# instance is released (the offer allows it and re-creating costs nothing), so
# 46.375 H = 23,389  ->  H = 504.35 (in March 2027, 744 h; the month only matters for retention).
offers=$(dirname "$data")/data/offers/nanjing-a100.yaml
expect_exit 0 "cost breakeven" -- "$bin" cost breakeven --offers "$offers" --month 2027-03 --json
json_is '[.pairs[] | select(.from_mode == "on_demand" and .to_mode == "monthly")][0].hours_per_month * 100 | round' 50435
json_is '[.pairs[] | select(.from_mode == "yearly" and .to_mode == "monthly")][0].hours_per_month' null
json_is '.currency' CNY
# optimize: 4 GPUs x 730 h (all hours): reserving beats on-demand; the plan is never dearer than a pure strategy.
expect_exit 0 "cost optimize" -- "$bin" cost optimize --offers "$offers" --hours-per-month 730 --gpus 4 --month 2027-01 --json
json_is '.reserved | map(.instances) | add' 4
json_is '.total_cost <= .pure_strategies.on_demand and .total_cost <= .pure_strategies.monthly' true
json_is '.sensitivity.usage_plus_20pct.total_cost > .total_cost' true
json_is '.solver.status' optimal
printf 'timestamp,gpus\n2026-01-05T09:00,2\n2026-01-05T10:00,x\n' >"$tmp/u.csv"
expect_exit 2 "bad usage csv" -- "$bin" cost optimize --offers "$offers" --usage "$tmp/u.csv"
stderr_has "$tmp/u.csv:3: field 'gpus'"
printf 'currency: CNY\noffers:\n  - id: x\n    gpu: A100\n    mode: hourly\n    price: 1\n' >"$tmp/o.yaml"
expect_exit 2 "bad offers" -- "$bin" cost breakeven --offers "$tmp/o.yaml"
stderr_has "$tmp/o.yaml:5: field 'offers[x].mode'"
# A fee given twice (the second, 0.12, would be the one a reader of the file sees last): refused at
# the second key's line, never the first value kept without a word (YAML 1.2 §3.2.1.1).
printf 'currency: CNY\noffers:\n  - id: x\n    gpu: A100 80GB SXM\n    mode: on_demand\n    price: 50\n    stopped_fee_ratio: 0.05\n    stopped_fee_ratio: 0.12\n' >"$tmp/o2.yaml"
expect_exit 2 "offers with a fee given twice" -- "$bin" cost breakeven --offers "$tmp/o2.yaml"
stderr_has "$tmp/o2.yaml:8: field 'offers[0].stopped_fee_ratio'"
stderr_has "given twice in one mapping (first at line 7)"
# A fit --json result as usage: a job of layout.gpus x time.total_hours.
"$bin" fit --model Llama-3.1-8B --task full --gpu A100 --gpus 8 --zero 3 --tokens 1e9 --json >"$tmp/fit.json"
expect_exit 0 "cost compare from fit" -- "$bin" cost compare --offers "$offers" --usage "$tmp/fit.json" --json
json_is '.usage.peak_gpus' 8
json_is '.strategies.on_demand.cost.currency' CNY

# fit --offers: candidates only on cards the offers file rents, each priced by the rental optimiser.
expect_exit 0 "fit offers" -- "$bin" fit --model Llama-3.1-8B --task full --tokens 2e9 --objective cost --offers "$offers" --max-gpus 16 --json
json_is '[.candidates[].gpu] | unique | join(",")' "A100 80GB SXM"
json_is '.candidates[0].cost.basis | test("cheapest rental")' true
json_is '[.candidates[].cost.amount] | . == sort' true

# Issue 7: the user's options constrain the search. `--gpus 1 --zero 0` without --gpu: every
# candidate is one card without ZeRO (16 bytes x 8,030,261,248 = 128.5 GB of model states: only
# cards above 128.5 / 0.95 = 135.2 GB fit, the H200 and B200).
expect_exit 0 "search pinned gpus zero" -- "$bin" fit --model Llama-3.1-8B --task full --gpus 1 --zero 0 --json
json_is '[.candidates[] | .gpus == 1 and .zero == 0] | all' true
json_is '[.candidates[] | .gpu_memory > 135200000000] | all' true
json_is '.search.pinned | [.gpus, .zero] | map(tostring) | join(",")' "1,0"
json_is '.layout.gpus' 1
# `--gpu A100 --max-gpus 64` searches counts and layouts of the A100.
expect_exit 0 "one card, many counts" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100 --max-gpus 64 --json
json_is '[.candidates[].gpu] | unique | join(",")' "A100 80GB SXM"
json_is '[.candidates[].gpus] | (max <= 64 and (unique | length) >= 1 and max > 8)' true
json_is '.search.evaluated > 100' true
json_is '.best_per_gpu | length' 1
# A search over several cards shows the best layout of each.
expect_exit 0 "several cards" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100,H100,L40S --json
json_is '[.best_per_gpu[].gpu] | sort | join(",")' "A100 80GB SXM,H100 SXM 80GB,L40S"
json_is '[.best_per_gpu[].step_seconds] | length' 3
expect_exit 0 "several cards, table" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100,H100,L40S
[ "$(sed -n '/^best layout of each card:/,$p' "$tmp/out" | grep -cE '^ +[0-9]+ (A100|H100|L40S)')" = 3 ] && ok ||
  bad "table lacks the best layout of each of the 3 cards"

# Prefill is GPU time (docs/time-model.md §5). Qwen2.5-7B, 20 requests/s of 1,024 + 256 tokens on
# A100 80GB: prefill 2 x 7,070,619,136 x 1,024 + attention 28 x 1,024^2 x 28 x 256 = 14.69 TFLOP
# at 312 x 0.55 TFLOPS (--mfu 0.55: the flat rate, so the arithmetic holds by hand) = 85.6 ms; decode (compute bound at this concurrency) 256 x 14.60 GFLOP /
# 171.6 TFLOPS = 21.8 ms; 107.4 ms per request -> 9.31 requests/s per GPU -> 3 GPUs for 20/s.
expect_exit 0 "qps sizing" -- "$bin" fit --model Qwen2.5-7B --task infer --gpu A100 --qps 20 --prompt-tokens 1024 --output-tokens 256 --mfu 0.55 --json
json_is '.inference.sizing.replicas' 3
json_is '.inference.sizing.gpus_needed' 3
json_is '.inference.sizing.bound' compute
json_is '.inference.sizing.prefill_seconds_per_request * 1000 | round' 86
# With a QPS the times a request sees are at that load (docs/time-model.md §5.4): Little's law
# L = rate x (prefill + O x step) holds for the figures given, L is below the concurrency sized for,
# and ranked by time one A100 (8.8 ms a token at 2 requests/s) comes before a T4.
expect_exit 0 "qps at load" -- "$bin" fit --model Qwen2.5-7B --task infer --gpu "T4,A100" --max-gpus 1 --qps 2 --prompt-tokens 512 --output-tokens 128 --objective time --json
json_is '.candidates[0].gpu' "A100 80GB SXM"
json_is '.candidates[0].inference.sizing.at_load | (.in_flight - .requests_per_second_per_replica * (.time_to_first_token_seconds + 128 * .per_token_latency_seconds)) | fabs < 0.01' true
json_is '.candidates[0].inference.sizing | .at_load.in_flight < .concurrency_per_replica' true
expect_exit 0 "qps sizing table" -- "$bin" fit --model Qwen2.5-7B --task infer --gpu A100 --qps 20 --prompt-tokens 1024 --output-tokens 256 --mfu 0.55
grep -q "bound: compute" "$tmp/out" && ok || bad "qps table lacks the bound"

# Network by card: without --network an RTX 4090 server has 10 GbE, an H100 node 8 x 400G IB.
expect_exit 0 "network default" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu "RTX 4090" --gpus 16 --recompute full --json
json_is '.time.network' 10gbe
expect_exit 0 "network given" -- "$bin" fit --model Llama-3.1-8B --task lora --gpu "RTX 4090" --gpus 16 --recompute full --network ib-400g --json
json_is '.time.network' ib-400g

# Datatypes the card runs: a T4 has fp16, neither bf16 nor fp8.
expect_exit 1 "t4 inference" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu T4 --json
json_is '.workload.weight_dtype' fp16
json_is '[.suggestions[].change | test("fp8|bf16")] | any' false
json_is '[.suggestions[].change] | index("--weight-dtype int8") != null' true
expect_exit 0 "t4 training" -- "$bin" fit --model Llama-3.2-3B --task qlora --gpu T4 --json
json_is '.workload.compute_dtype' fp16

# Exit codes, one meaning in every subcommand (docs/cli.md): 0 success, 1 negative answer, 2 bad
# input or usage, 3 environment, 4 internal error. Each code each subcommand can produce.
expect_full() {  # expect_full CODE DESCRIPTION -- command...: stdout is /dev/full (cannot be written)
  local want=$1 what=$2
  shift 3
  if [ ! -w /dev/full ]; then echo "SKIP: $what (no /dev/full)"; return; fi
  "$@" >/dev/full 2>"$tmp/err"
  local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, want $want; stderr: $(cat "$tmp/err")"; fi
}
cost_args=(--offers "$offers" --hours-per-month 730 --gpus 4 --month 2027-01)
# Offers that are all spot cannot serve steady work (only interruptible work may run on spot).
printf 'currency: CNY\noffers:\n  - id: s\n    gpu: A100 80GB SXM\n    mode: spot\n    price: 12\n    spot: {interruptions_per_hour: 0.05, restart_minutes: 10}\n' >"$tmp/spot.yaml"
spot_args=(--offers "$tmp/spot.yaml" --hours-per-month 100 --month 2027-01)
mkdir -p "$tmp/mdata/models"
printf '{"model_type": "llama",,}' >"$tmp/mdata/models/Broken.json"
# 3: the output cannot be written (stdout is /dev/full), a real environment failure.
expect_full 3 "fit, stdout unwritable" -- "$bin" fit --model Llama-3.1-8B --task qlora --gpu A100
stderr_has "gpuplan: environment: cannot write the output"
expect_full 3 "gpus, stdout unwritable" -- "$bin" gpus
expect_full 3 "gpus --json, stdout unwritable" -- "$bin" gpus --json
stderr_has "gpuplan: environment:"
expect_full 3 "models, stdout unwritable" -- "$bin" models
expect_full 3 "breakeven, stdout unwritable" -- "$bin" cost breakeven --offers "$offers" --month 2027-03
expect_full 3 "compare, stdout unwritable" -- "$bin" cost compare "${cost_args[@]}"
expect_full 3 "optimize, stdout unwritable" -- "$bin" cost optimize "${cost_args[@]}" --json
expect_full 3 "tco, stdout unwritable" -- "$bin" cost tco "${cost_args[@]}"
# 4: an internal error (a bug), provoked by the test hook GPUPLAN_TEST_INTERNAL_ERROR=1.
for cmd in "fit --model Llama-3.1-8B" "gpus" "models" "cost breakeven --offers $offers" \
           "cost compare ${cost_args[*]}" "cost optimize ${cost_args[*]}" "cost tco ${cost_args[*]}"; do
  # shellcheck disable=SC2086  # word splitting wanted (no spaces in the paths of this test)
  expect_exit 4 "internal error: $cmd" -- env GPUPLAN_TEST_INTERNAL_ERROR=1 "$bin" $cmd
  stderr_has "gpuplan: internal error:"
  grep -qF "please report" "$tmp/err" && ok || bad "$cmd: the internal error does not ask for a report"
done
expect_exit 0 "hook off unless 1" -- env GPUPLAN_TEST_INTERNAL_ERROR=0 "$bin" gpus
# 2: bad input in each subcommand not covered above.
expect_exit 2 "models, broken preset" -- "$bin" --data-dir "$tmp/mdata" models
stderr_has "Broken.json:1:"
expect_exit 2 "compare, bad usage csv" -- "$bin" cost compare --offers "$offers" --usage "$tmp/u.csv"
stderr_has "$tmp/u.csv:3: field 'gpus'"
expect_exit 2 "tco, bad pue" -- "$bin" cost tco "${cost_args[@]}" --pue 0
stderr_has "field '--pue'"
expect_exit 2 "breakeven, unknown gpu" -- "$bin" cost breakeven --offers "$offers" --gpu H10
stderr_has "did you mean H100"
# 0 and 1 for the cost subcommands: 4 A100s all month can be served; all-spot offers cannot
# serve steady work, and optimize and tco both say so with exit 1, naming why.
expect_exit 0 "tco" -- "$bin" cost tco "${cost_args[@]}" --json
json_is '.horizon_months' 36
json_is '.rent.feasible' true
expect_exit 0 "compare" -- "$bin" cost compare "${cost_args[@]}"
expect_exit 1 "optimize, offers cannot serve" -- "$bin" cost optimize "${spot_args[@]}"
grep -qF "no feasible plan: the offers cannot serve the usage (they are all spot" "$tmp/out" && ok ||
  bad "optimize does not say why there is no plan: $(cat "$tmp/out")"
grep -qi "solver" "$tmp/out" && bad "an infeasible plan is not a solver failure: $(cat "$tmp/out")" || ok
expect_exit 1 "optimize --json, offers cannot serve" -- "$bin" cost optimize "${spot_args[@]}" --json
json_is '.feasible' false
json_is '.solver.status | startswith("no feasible plan")' true
expect_exit 1 "tco, offers cannot serve" -- "$bin" cost tco "${spot_args[@]}"
stderr_has "no feasible plan: the offers cannot serve the usage"
# compare agrees with optimize (issue 25): all-spot serves only interruptible work, and this usage
# is firm, so no strategy can serve it: exit 1 with the reason; --spot-for-all lets it, exit 0.
expect_exit 1 "compare, all-spot cannot serve firm work" -- "$bin" cost compare "${spot_args[@]}" --json
json_is '.strategies.spot.feasible' false
json_is '.strategies.spot.note | contains("spot may run only interruptible work")' true
expect_exit 0 "compare --spot-for-all" -- "$bin" cost compare "${spot_args[@]}" --spot-for-all --json
json_is '.strategies.spot.feasible' true

# --json errors: a JSON object on stdout, nothing on stderr, the same exit code.
json_error_is() {  # json_error_is KIND: stdout is exactly one error object of KIND, stderr empty
  json_is '.error | keys | join(",")' "field,file,kind,line,message,suggestions"
  json_is '.error.kind' "$1"
  json_is '.error.suggestions | type' array
  if [ -s "$tmp/err" ]; then bad "--json error also wrote stderr: $(cat "$tmp/err")"; else ok; fi
}
expect_exit 2 "json: unknown gpu" -- "$bin" fit --model Llama-3.1-8B --gpu H10 --json
json_error_is input
json_is '.error.field' gpu
json_is '.error.suggestions[0]' "H100 SXM 80GB"
json_is '[.error.file, .error.line] | map(tostring) | join(",")' "null,null"
json_is '.error.message | test("did you mean H100")' true
expect_exit 2 "json: unknown model" -- "$bin" fit --model llama-3.1-7b --json
json_error_is input
json_is '.error.suggestions | index("Llama-3.1-8B") != null' true
expect_exit 2 "json: bad offers" -- "$bin" cost breakeven --offers "$tmp/o.yaml" --json
json_error_is input
json_is '[.error.file, .error.line, .error.field] | map(tostring) | join(",")' "$tmp/o.yaml,5,offers[x].mode"
json_is '.error.message | startswith("'"$tmp"'")' false
expect_exit 2 "json: yaml error" -- "$bin" --data-dir "$tmp/data" gpus --json
json_error_is input
json_is '.error.file' "$tmp/data/gpus.yaml"
expect_exit 2 "json: unknown option" -- "$bin" fit --model Llama-3.1-8B --frobnicate --json
json_error_is usage
json_is '.error.message | test("frobnicate")' true
expect_exit 2 "json: missing option" -- "$bin" cost optimize --json
json_error_is usage
json_is '.error.message | test("--offers")' true
expect_exit 1 "json: tco, offers cannot serve" -- "$bin" cost tco "${spot_args[@]}" --json
json_error_is negative
json_is '.error.message | test("no feasible plan")' true
expect_exit 4 "json: internal error" -- env GPUPLAN_TEST_INTERNAL_ERROR=1 "$bin" cost optimize "${cost_args[@]}" --json
json_error_is internal
json_is '.error.message | test("please report")' true
# Without --json an error stays one line on stderr and stdout stays empty.
expect_exit 2 "text error" -- "$bin" fit --model Llama-3.1-8B --gpu H10
[ -s "$tmp/out" ] && bad "text error wrote stdout: $(cat "$tmp/out")" || ok

# --framework (docs/memory-model.md §8): the three numbers, a profile's convention, the server's KV.
expect_exit 0 "fit --framework generic keeps the numbers" -- "$bin" fit --model Llama-3.1-8B --task full --gpu A100 --gpus 8 --zero 3 --json
json_is '.memory_per_gpu.optimizer' 12045391872
json_is '.memory_per_gpu | [.peak_allocated, .nvidia_smi, .load_peak] | map(type) | unique | join(",")' number
json_is '.memory_per_gpu.nvidia_smi == .memory_per_gpu.total' true
json_is '.memory_per_gpu.peak_allocated < .memory_per_gpu.nvidia_smi' true
# DeepSpeed ZeRO-2 over 8 GPUs: one reduce bucket of 5e8 elements x 2 bytes (v0.19.5: no all-gather
# bucket, overlap_comm off below stage 3, as --dp-overlap off runs it).
expect_exit 0 "fit --framework deepspeed --dp-overlap off" -- "$bin" fit --model Llama-3.1-8B --task full --gpu H100 --gpus 8 --zero 2 --framework deepspeed --dp-overlap off --json
json_is '.memory_per_gpu.comm_buffers' 1000000000
# Not given, the overlap is chosen (it fits): overlap_comm on, a second bucket of 5e8 x 2 bytes.
expect_exit 0 "fit --framework deepspeed" -- "$bin" fit --model Llama-3.1-8B --task full --gpu H100 --gpus 8 --zero 2 --framework deepspeed --json
json_is '.memory_per_gpu.comm_buffers' 2000000000
json_is '[.unstated.choices[] | select(.name == "dp_overlap") | .chosen] | join(",")' on
# LitGPT of April 2024 QLoRA: load peak = 2 x 8,030,261,248 bf16 bytes + the Hopper context (550 MiB
# = 576,716,800); LitGPT 0.5.13 quantises tensor by tensor: no load peak above the steady state.
expect_exit 0 "fit --framework litgpt@58c5b18" -- "$bin" fit --model Llama-3.1-8B --task qlora --seq 256 --gpu H100 --framework litgpt@58c5b18 --json
json_is '.memory_per_gpu.load_peak' 16637239296
json_is '.framework' litgpt@58c5b18
expect_exit 0 "fit --framework litgpt" -- "$bin" fit --model Llama-3.1-8B --task qlora --seq 256 --gpu H100 --framework litgpt --json
json_is '.memory_per_gpu.load_peak == .memory_per_gpu.nvidia_smi' true
# vLLM 0.21 on an H100 (max_num_seqs 1024 and 8192 batched tokens on an 80 GB card; the context
# outside; 512 MiB of CUDA graphs): (0.92 x 85,520,809,984 - 16,060,522,496 - 2,057,306,112
# - 536,870,912) / 131,072 = 457,950.2 -> 457,936 tokens in 16-token blocks.
expect_exit 0 "fit --framework vllm" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu H100 --context 8192 --framework vllm --json
json_is '.inference.kv_cache_tokens' 457936
json_is '.inference.max_concurrency' 55
json_is '.framework' vllm@0.21
json_is '.inference.max_num_seqs' 1024
json_is '.inference.kv_fraction' 0.92
expect_exit 0 "fit --framework vllm text" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu H100 --context 8192 --framework vllm
grep -q "maximum concurrency for 8192 tokens per request: 55.90x" "$tmp/out" && ok || bad "vllm text: $(cat "$tmp/out")"
grep -q "vllm 0.21" "$tmp/out" && ok || bad "the vLLM version is not said: $(cat "$tmp/out")"
grep -q "margin (nvidia-smi view)" "$tmp/out" && ok || bad "no margin line"
expect_exit 0 "fit --framework llama.cpp" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu L40S --framework llama.cpp --gguf-type Q8_0 --json
json_is '.memory_per_gpu.weights' 8532152576
# torchtitan runs eager (no torch.compile) with op-level recomputation offered: Llama 3.1 8B,
# 2 x 8,192 tokens a micro-batch. Eager adds per token and layer 438,272 bytes forward (rerun
# once by op recomputation) and 675,840 backward, and 4,096 x (32 + 60) for the final norm
# (docs/time-model.md §3.3): 16,384 x (32 x 1,552,384 + 376,832) = 8.2007e11 bytes at 0.85 x
# 3,350 GB/s, over the step efficiency 0.77 (docs/time-model.md §3.5) = 0.3740 s more than --compile on.
tt=(fit --model Llama-3.1-8B --task pretrain --gpu "H100 SXM" --gpus 8 --zero 3 --micro-batch 2 --seq 8192 --framework torchtitan --recompute op --json)
expect_exit 0 "fit --framework torchtitan --compile on" -- "$bin" "${tt[@]}" --compile on
json_is '.time.kernels.elementwise_kernels' fused
fused_s=$(jq '.time.kernels.elementwise_seconds' "$tmp/out")
expect_exit 0 "fit --framework torchtitan (eager)" -- "$bin" "${tt[@]}"
json_is '.time.kernels.elementwise_kernels' eager
json_is '.layout.recompute' op
json_is "(.time.kernels.elementwise_seconds - $fused_s - 16384 * (32 * 1552384 + 376832) / (3350e9 * 0.85) / 0.77) | fabs < 1e-6" true
# Megatron's cross-entropy runs each step as its own op over the fp32 logits: 38 bytes a logit
# forward against PyTorch's 14 (docs/time-model.md §3.3). Llama 3.1 8B, one 4,096-token
# micro-batch: 24 x 4,096 x 128,256 bytes more at 0.85 x 3,350 GB/s, over the step efficiency
# 0.77 = 5.750 ms more elementwise time than the generic profile at the same layout.
mg=(fit --model Llama-3.1-8B --task pretrain --gpu "H100 SXM" --gpus 8 --micro-batch 1 --seq 4096 --zero 1 --recompute full --json)
expect_exit 0 "fit --framework generic (loss kernels)" -- "$bin" "${mg[@]}" --framework generic
json_is '.time.kernels.loss_kernels' log_softmax
generic_s=$(jq '.time.kernels.elementwise_seconds' "$tmp/out")
expect_exit 0 "fit --framework megatron (loss kernels)" -- "$bin" "${mg[@]}" --framework megatron
json_is '.time.kernels.loss_kernels' megatron_ops
json_is "(.time.kernels.elementwise_seconds - $generic_s - 24 * 4096 * 128256 / (3350e9 * 0.85) / 0.77) | fabs < 1e-6" true
# Megatron splits the layers evenly (data/frameworks.yaml MEG-PP-SPLIT): Llama 3.1 70B's 80 layers
# over pp 8 are 10 a stage, so vpp 4 is refused (exit 2 naming --vpp) and vpp 5 runs; left unstated,
# the fit tries 1, 2 and 5, not 4 or 8.
mp=(fit --model Llama-3.1-70B --task pretrain --gpu "H100 SXM" --gpus 64 --tp 8 --pp 8 --framework megatron)
expect_exit 2 "fit megatron vpp 4 over 10 layers a stage" -- "$bin" "${mp[@]}" --vpp 4
grep -q -- "--vpp.*10 layers a stage do not divide by vpp 4" "$tmp/err" && ok || bad "vpp refusal: $(cat "$tmp/err")"
expect_exit 0 "fit megatron vpp 5" -- "$bin" "${mp[@]}" --vpp 5 --json
json_is '.layout.vpp' 5
expect_exit 0 "fit megatron vpp unstated" -- "$bin" "${mp[@]}" --json
json_is '[.unstated.choices[] | select(.name == "vpp") | .tried[]] == ["1", "2", "5"]' true
# GEMM rates by shape (docs/time-model.md §3.1): an H100 takes the published sweep, an H800 the
# same table at its peak, an A100 (no table) the flat MAMF fraction.
json_is '.time.kernels.gemm_by_shape' true
json_is '.time.kernels.gemm_basis == "published sweep, data/gemm/h100-sxm.yaml"' true
expect_exit 0 "fit --framework megatron (loss kernels, text)" -- "$bin" "${mg[@]:0:${#mg[@]}-1}" --framework megatron
grep -q "(the loss as Megatron's separate ops over fp32 logits)" "$tmp/out" && ok || bad "no loss-kernels note: $(grep 'norms' "$tmp/out")"
expect_exit 0 "fit H800 gemm by shape" -- "$bin" fit --model Llama-3.1-8B --task pretrain --gpu "H800 SXM" --gpus 8 --zero 3 --json
json_is '.time.kernels.gemm_basis | test("h100-sxm.yaml .NVIDIA H100 80GB HBM3; the same fraction of this card.s peak")' true
expect_exit 0 "fit A100 flat gemm" -- "$bin" fit --model Llama-3.1-8B --task pretrain --gpu "A100 80GB SXM" --gpus 8 --zero 3
grep -q "matmuls (GEMM).*(large shapes at 85.9% of peak: MAMF A100 SXM" "$tmp/out" && ok || bad "A100 GEMM line: $(grep GEMM "$tmp/out")"
# vLLM's scheduler runs at most max_num_seqs sequences at once (256 on an A100, vllm/engine/arg_utils.py
# get_batch_defaults; data/frameworks.yaml VLLM-BATCH): a serving plan for Qwen2.5-7B, whose KV
# space holds several hundred 1,280-token requests, counts 256 in flight; the generic profile
# has no such cap and counts what the memory holds.
expect_exit 0 "fit vllm scheduler cap" -- "$bin" fit --model Qwen2.5-7B --task infer --gpu "A100 80GB SXM" --framework vllm --qps 50 --prompt-tokens 1024 --output-tokens 256 --json
json_is '[.. | objects | select(has("scheduler_cap"))][0] | [.scheduler_cap, .concurrency_per_replica, .max_concurrency] == [256, 256, 256]' true
# vLLM V1 runs prompt tokens inside its decode steps (docs/time-model.md §5.3): at 256 in flight,
# 256 / 256 requests finish a step, so 256 x 1,024 / 256 = 1,024 prompt tokens join each step,
# within the A100's 2,048-token budget (256 + 1,024); the generic profile runs prefills alone.
json_is '[.. | objects | select(has("mixed_steps"))][0] | [.mixed_steps, .prefill_tokens_per_step] == [true, 1024]' true
expect_exit 0 "fit generic no scheduler cap" -- "$bin" fit --model Qwen2.5-7B --task infer --gpu "A100 80GB SXM" --qps 50 --prompt-tokens 1024 --output-tokens 256 --json
json_is '[.. | objects | select(has("scheduler_cap"))][0] | (.scheduler_cap == null and .concurrency_per_replica > 256)' true
json_is '[.. | objects | select(has("mixed_steps"))][0] | [.mixed_steps, .prefill_tokens_per_step] == [false, null]' true
# docs/time-model.md §5.2: an engine that preempts (lmdeploy) keeps in flight what its KV pool
# holds at the average length (exit 1: 64 sequences of 2,176 tokens do not fit at full length,
# which the verdict judges). Llama-2-7b, 128 + 2,048 tokens on an A100 80GB: 109,760 tokens
# = 1,715 blocks of 64; a request holds 128 + 2,049 / 2 = 1,152.5 tokens on average, 18.01
# blocks + half a block = 18.51: 92 in flight; at full length ceil(2,176 / 64) = 34 blocks: 50.
# With --prompt-tokens / --output-tokens and no --context a sequence holds its own request's
# 128 + 2,048 = 2,176 tokens, not the 4,096 window: 2,176 x 32 layers x 2 x 4,096 x 2 bytes =
# 1,140,850,688 bytes of KV a sequence, and 109,760 / 2,176 = 50.44 sequences.
expect_exit 1 "fit lmdeploy preempt" -- "$bin" fit --model Llama-2-7b --task infer --gpu "A100 80GB SXM" --framework lmdeploy --concurrency 64 --prompt-tokens 128 --output-tokens 2048 --json
json_is '.inference.kv_overflow' preempt
json_is '.inference.kv_in_flight' 92
json_is '.workload.context' 2176
json_is '.inference.kv_cache_per_sequence' 1140850688
json_is '(.inference.max_concurrency_ratio - 109760 / 2176) | fabs < 1e-9' true
expect_exit 1 "fit lmdeploy --context keeps the window" -- "$bin" fit --model Llama-2-7b --task infer --gpu "A100 80GB SXM" --framework lmdeploy --concurrency 64 --prompt-tokens 128 --output-tokens 2048 --context 4096 --json
json_is '.workload.context' 4096
expect_exit 1 "fit lmdeploy preempt text" -- "$bin" fit --model Llama-2-7b --task infer --gpu "A100 80GB SXM" --framework lmdeploy --concurrency 64 --prompt-tokens 128 --output-tokens 2048
grep -q "preempts the newest when its KV cache runs short: with requests at every stage of their output about 92 stay in flight (50 at full length)" "$tmp/out" && ok || bad "lmdeploy preempt line: $(grep -i preempt "$tmp/out")"
# A single fit shows its time at what the server runs, not at more than it keeps in flight:
# vLLM on an L40S keeps its KV cache in blocks of 16 tokens; a request of 1,024 + 256 tokens holds
# (1,024 + 257 / 2) / 16 + 0.5 = 72.53 blocks on average, so kv_cache_tokens / 16 / 72.53 in
# flight (179 of the 256 asked), and the time equals the one asked at that concurrency.
vl=(fit --model Llama-3.1-8B --task infer --gpu L40S --framework vllm --context 8192 --json)
expect_exit 1 "fit vllm shown at what runs" -- "$bin" "${vl[@]}" --concurrency 256
json_is '(.inference.kv_in_flight == ((.inference.kv_cache_tokens / 16 / ((1024 + 257 / 2) / 16 + 0.5)) | floor))' true
json_is '[.inference.concurrency_asked, .inference.concurrency == .inference.kv_in_flight, .inference.concurrency < 256] == [256, true, true]' true
capped_tps=$(jq '.inference.decode_tokens_per_second' "$tmp/out")
capped_c=$(jq '.inference.concurrency' "$tmp/out")
expect_exit 1 "fit vllm at the concurrency it runs" -- "$bin" "${vl[@]}" --concurrency "$capped_c"
json_is "(.inference.decode_tokens_per_second - $capped_tps) | fabs < 1e-9" true
json_is '.inference.concurrency == .inference.concurrency_asked' true
expect_exit 1 "fit vllm shown at what runs, text" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu L40S --framework vllm --context 8192 --concurrency 256
grep -q "inference at concurrency $capped_c (256 asked; the server runs $capped_c: what its KV cache keeps in flight)" "$tmp/out" && ok || bad "capped line: $(grep 'inference at' "$tmp/out")"
# Counts have bounds: beyond 64 bits is refused (CLI11 would saturate it to the largest count),
# and the inference lengths and concurrency have their own ceilings.
expect_exit 2 "fit --concurrency beyond 64 bits" -- "$bin" fit --model Llama-2-7b --task infer --gpu L4 --concurrency 99999999999999999999 --json
json_is '[.error.field, .error.message] == ["--concurrency", "expected a whole number, got one beyond 64 bits"]' true
expect_exit 2 "fit --output-tokens over its ceiling" -- "$bin" fit --model Llama-2-7b --task infer --gpu L4 --output-tokens 20000000 --json
json_is '.error.field' --output-tokens
expect_exit 2 "fit --seq beyond 64 bits" -- "$bin" fit --model Llama-2-7b --gpu H100 --seq 99999999999999999999
stderr_has "--seq"
# A reserving engine (TGI) admits whole requests only: the same request reserves 2,176 tokens.
expect_exit 1 "fit tgi reserve" -- "$bin" fit --model Llama-2-7b --task infer --gpu "A100 80GB SXM" --framework tgi --concurrency 64 --prompt-tokens 128 --output-tokens 2048 --json
json_is '.inference.kv_overflow' reserve
json_is '(.inference.kv_in_flight == ((.inference.kv_cache_tokens / 2176) | floor))' true
expect_exit 2 "fit --compile bad" -- "$bin" "${tt[@]}" --compile maybe
json_is '.error.field' --compile
expect_exit 2 "fit --framework unknown" -- "$bin" fit --model Llama-3.1-8B --gpu A100 --framework deepspeeed
stderr_has "did you mean deepspeed"
expect_exit 2 "fit --framework unknown, json" -- "$bin" fit --model Llama-3.1-8B --gpu A100 --framework vlm --json
json_is '.error.suggestions | index("vllm") != null' true
expect_exit 2 "fit training profile for inference" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu A100 --framework torchtune
stderr_has "--framework"

# CLI manners: --version, a misspelt command, a missing command, a fractional count, --qps 0.
expect_exit 0 "--version" -- "$bin" --version
grep -qE '^gpuplan [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/out" && ok || bad "--version printed: $(cat "$tmp/out")"
expect_exit 2 "misspelt command" -- "$bin" cots
stderr_has "unknown command 'cots' for gpuplan; did you mean cost?"
expect_exit 2 "misspelt subcommand, json" -- "$bin" cost breakevn --json
json_is '.error.message | contains("did you mean breakeven?")' true
json_is '.error.kind' usage
expect_exit 2 "no command" -- "$bin"
stderr_has "gpuplan needs a command: fit, gpus, models, frameworks, cost, check, meter, plan, serve"
expect_exit 2 "no cost command" -- "$bin" cost
stderr_has "gpuplan cost needs a command: breakeven, compare, optimize, tco"
expect_exit 2 "no command, zh" -- "$bin" --lang zh meter
stderr_has "gpuplan meter 需要一个命令"
expect_exit 2 "fractional --gpus" -- "$bin" fit --model Llama-3.1-8B --gpu A100 --gpus 1.5
stderr_has "field '--gpus': expected a number (a whole number for counts), got '1.5'"
# An empty number is not 0 (CLI11 would read it so): the same error, naming the flag.
expect_exit 2 "empty --seq" -- "$bin" fit --model Llama-3.1-8B --gpu A100 --seq ""
stderr_has "field '--seq': expected a number (a whole number for counts), got ''"
expect_exit 2 "empty --link-gbps" -- "$bin" cost optimize --offers "$data/offers/three-providers.yaml" --hours-per-month 100 --link-gbps ""
stderr_has "field '--link-gbps': expected a number (a whole number for counts), got ''"
expect_exit 2 "--qps 0" -- "$bin" fit --model Llama-3.1-8B --task infer --gpu A100 --qps 0
stderr_has "field '--qps'"

# check --from-nvidia-smi: h100-590-q.txt's one GPU section (lines 9-257, 249 lines) pasted 8
# times is not 8 GPUs: the second copy's Bus Id (fixture line 71, 62 lines into the section) is
# line 258 + 62 = 320, an input error there.
h100q="$fixtures/nvidia-smi/h100-590-q.txt"
{ sed -n 1,8p "$h100q" | sed 's/Attached GPUs *: 1/Attached GPUs : 8/'; for i in 1 2 3 4 5 6 7 8; do sed -n '9,$p' "$h100q"; done; } >"$tmp/dup8.txt"
expect_exit 2 "check: one GPU section pasted 8 times" -- "$bin" check --from-nvidia-smi "$tmp/dup8.txt" --expect "8x H100 SXM"
grep -qF "dup8.txt:320" "$tmp/err" && grep -qF "PCI bus id 00000000:00:09.0 is listed twice" "$tmp/err" && ok || bad "dup8: $(cat "$tmp/err")"
# A capture with a banner and no GPU has nothing to check.
printf '==============NVSMI LOG==============\nDriver Version : 590.48.01\nAttached GPUs : 0\n' >"$tmp/nogpu.txt"
expect_exit 2 "check: a capture listing no GPU" -- "$bin" check --from-nvidia-smi "$tmp/nogpu.txt"
grep -qF "lists no GPU" "$tmp/err" && ok || bad "no GPU: $(cat "$tmp/err")"
# ESC [2J and BEL in the product name (line 10) reach the terminal escaped, never raw.
sed '10s/NVIDIA H100 80GB HBM3/NVIDIA \x1b[2J\x07H100/' "$h100q" >"$tmp/esc.txt"
expect_exit 0 "check: control characters in a capture" -- "$bin" --lang en check --from-nvidia-smi "$tmp/esc.txt"
grep -qF 'NVIDIA \x1b[2J\x07H100' "$tmp/out" && ! grep -q $'\x1b\\[2J' "$tmp/out" && ok || bad "esc: $(cat -v "$tmp/out" | head -5)"

# meter: one database keeps one server's GPUs. Server A's 3 steps, then server B's (another
# UUID) at the same times: exit 2 naming both UUIDs, and A's trace replayed again still works.
# --resume with B's trace is an error naming its header's uuid; a step 400 days after this
# machine's clock is an error naming its line (4) and time_ms.
mtrace() {  # mtrace FILE UUID FIRST_TIME_MS: a header and 3 steps 10 s apart
  { printf '{"format":"gpuplan-meter-trace","version":1,"host":"h","interval_seconds":10,"gpus":[{"index":0,"uuid":"%s"}]}\n' "$2"
    for i in 0 1 2; do printf '{"time_ms":%s,"gpus":[{"gpu":0,"utilization_gpu":50}]}\n' $(($3 + i * 10000)); done; } >"$1"
}
mtrace "$tmp/ma.jsonl" GPU-aaaa 1772409600000
mtrace "$tmp/mb.jsonl" GPU-bbbb 1772409600000
expect_exit 0 "meter: server A's trace" -- "$bin" meter run --replay "$tmp/ma.jsonl" --db "$tmp/ab.db" --speed 1e9
expect_exit 2 "meter: server B's trace into A's database" -- "$bin" meter run --replay "$tmp/mb.jsonl" --db "$tmp/ab.db" --speed 1e9
grep -qF "from GPU-aaaa; this sample is from GPU-bbbb: one store keeps one server's GPUs" "$tmp/err" && ok || bad "two servers: $(cat "$tmp/err")"
expect_exit 2 "meter: --resume with server B's trace" -- "$bin" meter run --replay "$tmp/mb.jsonl" --db "$tmp/ab.db" --speed 1e9 --resume
grep -qF "mb.jsonl:1: field 'gpus[0].uuid'" "$tmp/err" && grep -qF "another server's trace" "$tmp/err" && ok || bad "resume B: $(cat "$tmp/err")"
expect_exit 0 "meter: server A's trace again" -- "$bin" meter run --replay "$tmp/ma.jsonl" --db "$tmp/ab.db" --speed 1e9
future=$(( ($(date +%s) + 400 * 86400) * 1000 ))
{ head -3 "$tmp/ma.jsonl"; printf '{"time_ms":%s,"gpus":[{"gpu":0,"utilization_gpu":50}]}\n' "$future"; } >"$tmp/mfut.jsonl"
expect_exit 2 "meter: a step after this machine's clock" -- "$bin" meter run --replay "$tmp/mfut.jsonl" --db "$tmp/fut.db" --speed 1e9
grep -qF "mfut.jsonl:4: field 'time_ms'" "$tmp/err" && grep -qF "after this machine's clock" "$tmp/err" && ok || bad "future step: $(cat "$tmp/err")"

# meter report: a process's command line and user name are any user's own. ESC ] (retitle),
# BEL, ESC [ (colour, erase line, cursor up) and CR in them reach the terminal escaped, never raw;
# a 3,000-byte user name is cut at 2,000 bytes saying its length; --json keeps them as they were.
{ printf '{"format":"gpuplan-meter-trace","version":1,"host":"h","interval_seconds":10,"gpus":[{"index":0,"uuid":"GPU-esc"},{"index":1,"uuid":"GPU-long"}]}\n'
  long=$(printf 'u%.0s' $(seq 3000))
  for i in 0 1 2; do printf '{"time_ms":%s,"gpus":[{"gpu":0,"utilization_gpu":50,"processes":[{"pid":7,"user":"mallory","command":"\\u001b]0;pwned\\u0007\\u001b[31mpython\\u001b[2K\\r\\u001b[1Aalice-job"}]},{"gpu":1,"utilization_gpu":50,"processes":[{"pid":8,"user":"%s","command":"x"}]}]}\n' $((1772409600000 + i * 10000)) "$long"; done; } >"$tmp/mesc.jsonl"
expect_exit 0 "meter: a trace with control characters in a command" -- "$bin" meter run --replay "$tmp/mesc.jsonl" --db "$tmp/esc.db" --speed 1e9
expect_exit 0 "meter: report by job escapes the command" -- "$bin" --lang en meter report --db "$tmp/esc.db" --from 2026-03-02 --to 2026-03-03 --by job
grep -qF 'pid:7 \x1b]0;pwned\x07\x1b[31mpython\x1b[2K\x0d\x1b[1Aalice-job ' "$tmp/out" && ! grep -q $'[\x1b\x07\r]' "$tmp/out" && ok || bad "meter esc: $(cat -v "$tmp/out")"
expect_exit 0 "meter: report by user cuts a long user name" -- "$bin" --lang en meter report --db "$tmp/esc.db" --from 2026-03-02 --to 2026-03-03 --by user
grep -q "^u\{2000\}\.\.\. (3000 bytes in all) " "$tmp/out" && ! grep -q "u\{2001\}" "$tmp/out" && ok || bad "meter long user: $(cut -c1-120 "$tmp/out")"
expect_exit 0 "meter: report --json keeps the command" -- "$bin" meter report --db "$tmp/esc.db" --from 2026-03-02 --to 2026-03-03 --by job --json
grep -qF '"pid:7 \u001b]0;pwned\u0007\u001b[31mpython\u001b[2K\r\u001b[1Aalice-job"' "$tmp/out" && ok || bad "meter esc json: $(cat -v "$tmp/out" | head -5)"

# check: a capture over 256 MiB is refused from its size (a sparse 300 MiB file, never read), and
# /dev/zero after 256 MiB, not read to its end: exit 2 naming the file.
truncate -s 300M "$tmp/huge.xml"
expect_exit 2 "check: a 300 MiB capture" -- "$bin" check --from-nvidia-smi "$tmp/huge.xml"
grep -qF "huge.xml: the nvidia-smi capture is 314572800 bytes, more than the 268435456 bytes (256 MiB)" "$tmp/err" && ok || bad "huge capture: $(cat "$tmp/err")"
expect_exit 2 "check: /dev/zero as a capture" -- timeout 60 "$bin" check --from-nvidia-smi /dev/zero
grep -qF "/dev/zero: the nvidia-smi capture is not done after that many, more than the 268435456 bytes" "$tmp/err" && ok || bad "/dev/zero: $(cat "$tmp/err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
