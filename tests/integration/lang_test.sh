#!/usr/bin/env bash
# The CLI in Chinese (issue 12, requirement 3): one fit, one cost and one error rendered in each
# language, chosen by --lang or the locale; --json never changes. The Chinese words are those of
# data/messages.json. usage: lang_test.sh GPUPLAN DATA_DIR
set -uo pipefail
bin=$1
export GPUPLAN_DATA=$2
unset LC_ALL LC_MESSAGES
export LANG=C.UTF-8
source "$(dirname "$0")/harness.sh"
has() {  # has FILE TEXT
  if grep -qF -- "$2" "$tmp/$1"; then ok; else bad "$1 lacks '$2': $(head -c 400 "$tmp/$1")"; fi
}
lacks() {
  if grep -qF -- "$2" "$tmp/$1"; then bad "$1 has '$2'"; else ok; fi
}

# A fit that does not fit: full fine-tuning of Qwen2.5-7B (16 bytes per parameter, 122 GB) on 80 GB.
fit=(fit --model Qwen2.5-7B --task full --gpu "A100 80GB SXM")
expect_exit 1 "fit, English" -- "$bin" "${fit[@]}"
has out "DOES NOT FIT"
has out "memory per GPU (GiB)"
expect_exit 1 "fit, --lang zh" -- "$bin" --lang zh "${fit[@]}"
has out "放不下"
has out "每卡显存 (GiB)"
has out "权重"
lacks out "DOES NOT FIT"
expect_exit 1 "fit, LANG=zh_CN.UTF-8" -- env LANG=zh_CN.UTF-8 "$bin" "${fit[@]}"
has out "放不下"
expect_exit 1 "fit, LANG=zh_CN.UTF-8 --lang en" -- env LANG=zh_CN.UTF-8 "$bin" "${fit[@]}" --lang en
has out "DOES NOT FIT"
# JSON keys and values stay English whatever the language.
"$bin" "${fit[@]}" --json >"$tmp/en.json"
env LANG=zh_CN.UTF-8 "$bin" "${fit[@]}" --json >"$tmp/zh.json"
cmp -s "$tmp/en.json" "$tmp/zh.json" && ok || bad "fit --json differs between the languages"

# A cost comparison: 100 hours a month on one GPU.
cost=(cost compare --offers "$2/offers/nanjing-a100.yaml" --hours-per-month 100 --month 2027-03)
expect_exit 0 "cost, English" -- "$bin" "${cost[@]}"
has out "usage: "
has out "all monthly:"
expect_exit 0 "cost, Chinese" -- "$bin" --lang zh "${cost[@]}"
has out "用量: "
has out "全部 包月:"
has out "卡时"

# An error: an unknown task. The kind of error in the language; the message names the flag.
expect_exit 2 "error, English" -- "$bin" fit --model Qwen2.5-7B --task lorra
has err "gpuplan: error: field '--task':"
expect_exit 2 "error, Chinese" -- "$bin" --lang zh fit --model Qwen2.5-7B --task lorra
has err "gpuplan: 输入有误：field '--task':"
expect_exit 2 "a language that is not there" -- "$bin" --lang fr fit --model Qwen2.5-7B

# Offers files accept the Chinese names of the billing modes.
cat >"$tmp/zh.yaml" <<'YAML'
currency: CNY
offers:
  - {id: m, gpu: A100 80GB SXM, mode: 包月, price: 21900}
  - {id: o, gpu: A100 80GB SXM, mode: 按量, price: 50}
YAML
expect_exit 0 "Chinese billing modes" -- "$bin" cost breakeven --offers "$tmp/zh.yaml" --month 2027-03 --json
grep -q '"to_mode": "monthly"' "$tmp/out" && ok || bad "包月 is not read as monthly: $(head -c 300 "$tmp/out")"

echo "lang_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
