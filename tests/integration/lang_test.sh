#!/usr/bin/env bash
# The CLI in Chinese (issue 12, requirement 3): one fit, one cost, one error, one check and one
# meter report rendered in each language, chosen by --lang or the locale; --json never changes.
# The Chinese words are those of data/messages.json (cli.* keys and the templates of the library's
# own messages). usage: lang_test.sh GPUPLAN DATA_DIR FIXTURES_DIR FAKE_NVML_LIB
set -uo pipefail
bin=$1
export GPUPLAN_DATA=$2
fixtures=$3
fake=$4
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
# Qwen2.5-7B's config.json: model_type qwen2, 28 layers, hidden size 3584.
has out "模型       Qwen2.5-7B（qwen2），28 层，隐藏维度 3584"
has out "任务       全参数微调，精度 混合精度（"
has out "每步耗时（"
has out "吞吐 "
lacks out "time per step"
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
# Every cost output in Chinese (issue 25 req 10): after removing offer ids, file names, dates,
# currency codes, option names and the solver's name, no English word of three letters or more is left.
no_english() {  # no_english LABEL: the last command's stdout
  local left
  left=$(sed -E 's/--[a-z-]+//g; s/nj-a100-[a-z-]+//g; s#[A-Za-z0-9_./-]*\.(csv|yaml)##g; s/CNY|GLPK|GPU|MILP|A100|SXM|80GB//g' "$tmp/out" |
    grep -oE '[A-Za-z]{3,}' | sort -u | tr '\n' ' ')
  if [ -z "$left" ]; then ok; else bad "$1 has English words left: $left"; fi
}
no_english "cost compare, Chinese"
offers=$2/offers/nanjing-a100.yaml
expect_exit 0 "breakeven, Chinese" -- "$bin" --lang zh cost breakeven --offers "$offers" --month 2027-03 \
  --usage "$(dirname "$0")/../scenarios/cost/inputs/two-weeks-weekdays.csv"
no_english "cost breakeven, Chinese"
expect_exit 0 "optimize, Chinese" -- "$bin" --lang zh cost optimize --offers "$offers" --hours-per-month 400 --gpus 4 --month 2027-03
no_english "cost optimize, Chinese"
expect_exit 0 "tco, Chinese" -- "$bin" --lang zh cost tco --offers "$offers" --hours-per-month 400 --gpus 4 --month 2027-03
no_english "cost tco, Chinese"

# An error: an unknown task. The kind of error in the language; the message names the flag.
expect_exit 2 "error, English" -- "$bin" fit --model Qwen2.5-7B --task lorra
has err "gpuplan: error: field '--task':"
expect_exit 2 "error, Chinese" -- "$bin" --lang zh fit --model Qwen2.5-7B --task lorra
has err "gpuplan: 输入有误：字段 '--task'："
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

# The library's own messages in Chinese, the location as it is: an unknown GPU in an offers file
# (line 3, the offer's gpu field), a malformed usage line (line 3, gpus).
cat >"$tmp/badgpu.yaml" <<'YAML'
currency: CNY
offers:
  - {id: m, gpu: A100 80GB SXMM, mode: monthly, price: 21900}
YAML
expect_exit 2 "unknown GPU, Chinese" -- env LANG=zh_CN.UTF-8 "$bin" cost breakeven --offers "$tmp/badgpu.yaml" --month 2027-03
has err "gpuplan: 输入有误：$tmp/badgpu.yaml:3: 字段 'offers[m].gpu'：未知的 GPU 'A100 80GB SXMM'；是否指 "
has err "？（gpuplan gpus 列出全部显卡）"
printf 'timestamp,gpus\n2026-01-05T09:00,2\n2026-01-05T10:00,two\n' >"$tmp/usage.csv"
expect_exit 2 "bad usage line, Chinese" -- "$bin" --lang zh cost compare --offers "$2/offers/nanjing-a100.yaml" --usage "$tmp/usage.csv"
has err "gpuplan: 输入有误：$tmp/usage.csv:3: 字段 'gpus'：应为 GPU 数量（0 或以上），实际为 'two'"
expect_exit 2 "bad usage line, English" -- "$bin" cost compare --offers "$2/offers/nanjing-a100.yaml" --usage "$tmp/usage.csv"
has err "gpuplan: error: $tmp/usage.csv:3: field 'gpus': expected a number of GPUs (0 or more), got 'two'"
# No driver: the environment's kind and message in Chinese, exit 3 all the same.
expect_exit 3 "meter run without a driver, Chinese" -- env LANG=zh_CN.UTF-8 GPUPLAN_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  "$bin" meter run --db "$tmp/none.db" --duration 1
has err "gpuplan: 环境问题：没有 NVIDIA 驱动：找不到 /nonexistent/libnvidia-ml.so.1（dlopen："
has err "；没有 GPU 时，可回放录制的轨迹：gpuplan meter run --replay FILE（docs/meter-trace.md）"

# gpuplan check on the fake NVML (tests/fake_nvml) serving a recorded H100 SXM with one XID 79:
# exit 1 in both languages. The H100 SXM is a PCIe Gen 5 x16 card (data/gpus.yaml); "1x H100
# SXM" ordered, CUDA 12.4 asked.
printf 'storage_seconds_quick: 0.3\ncpu_seconds_quick: 0.2\n' >"$tmp/fast.yaml"
mkdir -p "$tmp/data"
check=(check --quick --thresholds "$tmp/fast.yaml" --data "$tmp/data" --expect "1x H100 SXM" --cuda 12.4)
nv=(env GPUPLAN_NVML_LIBRARY="$fake" GPUPLAN_FAKE_NVML="$fixtures/nvml/h100-590.recording.json")
expect_exit 1 "check, English" -- "${nv[@]}" "$bin" "${check[@]}" --json "$tmp/check-en.json"
cp "$tmp/out" "$tmp/check-en.txt"
has check-en.txt "gpuplan check (quick): "
has check-en.txt "ordered: 1x H100 SXM"
has check-en.txt "verdict: FAIL ("
expect_exit 1 "check, LANG=zh_CN.UTF-8" -- env LANG=zh_CN.UTF-8 "${nv[@]}" "$bin" "${check[@]}" --json "$tmp/check-zh.json"
cp "$tmp/out" "$tmp/check-zh.txt"
has check-zh.txt "gpuplan check（快速）："
has check-zh.txt "订购：1x H100 SXM"
has check-zh.txt "检测项："
has check-zh.txt "结论：不通过（通过 "
has check-zh.txt "；退出码 1）"
has check-zh.txt "PCI 设备 ID 0x2330 正是订购的 H100 SXM 80GB"
has check-zh.txt "不通过 health_delta"
has check-zh.txt "测试中显卡报错：请退还"
lacks check-zh.txt "verdict:"
lacks check-zh.txt "PASS "
# The GPUs' results have the same statuses in both runs (the host's depend on the moment): each
# English status word and its Chinese (verdict.* keys).
for pair in "PASS:通过" "WARN:警告" "FAIL:不通过" "SKIP:跳过" "ERROR:错误"; do
  en_n=$(grep -cE "^  ${pair%%:*} +[a-z0-9_]+ +GPU [0-9]+ " "$tmp/check-en.txt")
  zh_n=$(grep -cE "^  ${pair##*:} +[a-z0-9_]+ +GPU [0-9]+ " "$tmp/check-zh.txt")
  [ "$en_n" = "$zh_n" ] && ok || bad "${pair%%:*}: $en_n lines in English, $zh_n in Chinese"
done
# (13 inventory results for the one GPU, and health_delta: docs/check.md §3.)
[ "$(grep -cE "^  [A-Z]+ +[a-z0-9_]+ +GPU 0 " "$tmp/check-en.txt")" -ge 14 ] && ok || bad "too few GPU results: $(cat "$tmp/check-en.txt")"
# The report file keeps English keys and values: the same but for the run's own clock (when it
# started, how long each test took, when an event was seen) and the host's measurements.
norm='del(.started, .finished, .curves, .host) | .tests |= map(select(.gpu >= 0))
  | walk(if type == "object" then del(.seconds, .at_seconds) else . end)'
if [ "$(jq -S "$norm" "$tmp/check-en.json")" = "$(jq -S "$norm" "$tmp/check-zh.json")" ]; then ok; else
  bad "check --json differs between the languages: $(diff <(jq -S "$norm" "$tmp/check-en.json") <(jq -S "$norm" "$tmp/check-zh.json") | head -20)"
fi
# The two reports side by side and merged (one H100 SXM each, at x16 like the recorded board).
expect_exit 0 "check compare, Chinese" -- "$bin" --lang zh check compare "$tmp/check-en.json" "$tmp/check-zh.json"
has out "机器 "
has out "结论                        不通过                  不通过"
has out "pcie_link_width             通过 16 条通道          通过 16 条通道"
expect_exit 1 "check merge, Chinese" -- "$bin" --lang zh check merge "$tmp/check-en.json" "$tmp/check-zh.json"
has out "2 个节点，2 块 GPU，"
has out "结论：不通过（通过 "
# A provider's capture, judged twice: the JSON on standard output is byte for byte the same.
"$bin" check --from-nvidia-smi "$fixtures/nvml/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt" --expect "1x H100 SXM" \
  --json - 2>/dev/null | jq -S 'del(.started, .finished) | .tests |= map(del(.seconds))' >"$tmp/cap-en.json"
env LANG=zh_CN.UTF-8 "$bin" check --from-nvidia-smi "$fixtures/nvml/linux-x86_64__nvidia-h100-80gb-hbm3__590.48.01.txt" \
  --expect "1x H100 SXM" --json - 2>"$tmp/cap-zh.txt" | jq -S 'del(.started, .finished) | .tests |= map(del(.seconds))' >"$tmp/cap-zh.json"
[ -s "$tmp/cap-en.json" ] && cmp -s "$tmp/cap-en.json" "$tmp/cap-zh.json" && ok || bad "capture --json differs between the languages"
has cap-zh.txt "nvidia-smi 抓取文件："

# gpuplan meter report over the example week (data/traces/README.md: GPU 3 is held 166 h with no
# process, GPU 0 84 h busy and 84 h idle); without offers the times are UTC.
expect_exit 0 "replay the week" -- "$bin" meter run --db "$tmp/week.db" --replay "$2/traces/lab-4xa100-week.jsonl" --speed 1e9
report=(meter report --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09)
expect_exit 0 "meter report, English" -- "$bin" "${report[@]}"
cp "$tmp/out" "$tmp/meter-en.txt"
has meter-en.txt "idle time:"
has meter-en.txt "  GPU 3: 166 h allocated with no process"
expect_exit 0 "meter report, LANG=zh_CN.UTF-8" -- env LANG=zh_CN.UTF-8 "$bin" "${report[@]}"
cp "$tmp/out" "$tmp/meter-zh.txt"
has meter-zh.txt "计量报告 2026-03-02T00:00+00:00 .. 2026-03-09T00:00+00:00（168 小时），4 块 GPU，分组：GPU"
has meter-zh.txt "未计价（没有 --offers）"
has meter-zh.txt "空闲时间："
has meter-zh.txt "  GPU 3：166 小时已占用但无进程"
has meter-zh.txt "  GPU 0：84 小时已占用但无进程"
has meter-zh.txt "注：换卡建议需要 --offers 和 --offer"
lacks meter-zh.txt "allocated with no process"
[ "$(grep -o '[0-9][0-9.]*' "$tmp/meter-en.txt" | sort)" = "$(grep -o '[0-9][0-9.]*' "$tmp/meter-zh.txt" | sort)" ] && ok ||
  bad "meter report: the figures differ between the languages"
"$bin" "${report[@]}" --json >"$tmp/meter-en.json"
"$bin" --lang zh "${report[@]}" --json >"$tmp/meter-zh.json"
[ -s "$tmp/meter-en.json" ] && cmp -s "$tmp/meter-en.json" "$tmp/meter-zh.json" && ok || bad "meter report --json differs between the languages"

# meter alerts and meter timeline over the same week, default rules (data/traces/README.md): an
# idle stretch of L whole hours alerts L times (30 min, then every 60 min): 398 idle-hour alerts;
# GPU 1's nights under 5 % with a process: 8 + 6 x 12 + 4 = 84. Monday by day: 39 busy, 57 idle h.
expect_exit 0 "meter alerts, Chinese" -- "$bin" --lang zh meter alerts --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09
cp "$tmp/out" "$tmp/alerts-zh.txt"
has alerts-zh.txt "计量告警 2026-03-02T00:00+00:00 .. 2026-03-09T00:00+00:00：482 条 (398 计费但无进程, 84 利用率过低)"
has alerts-zh.txt "规则：空闲 30 分钟，利用率低于 5% 持续 30 分钟"
has alerts-zh.txt "（持续中）"
lacks alerts-zh.txt "(still)"
expect_exit 0 "meter alerts, English" -- "$bin" meter alerts --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09
has out "meter alerts 2026-03-02T00:00+00:00 .. 2026-03-09T00:00+00:00: 482 alerts (398 idle_no_process, 84 low_utilization)"
expect_exit 0 "meter timeline, Chinese" -- "$bin" --lang zh meter timeline --db "$tmp/week.db" --from 2026-03-02 --to 2026-03-09 --step day
cp "$tmp/out" "$tmp/timeline-zh.txt"
has timeline-zh.txt "计量时间线 2026-03-02T00:00+00:00 .. 2026-03-09T00:00+00:00，每格一天"
grep -qE '^2026-03-02T00:00\+00:00 +39 +57$' "$tmp/timeline-zh.txt" && ok || bad "timeline: Monday is not 39 busy, 57 idle: $(head -c 300 "$tmp/timeline-zh.txt")"
expect_exit 0 "frameworks, Chinese" -- "$bin" --lang zh frameworks
has out "GGUF 类型（--gguf-type，每权重比特数）："
has out "推理"

# meter watch: the summary on standard error in Chinese, the command's output as it is.
expect_exit 0 "meter watch, Chinese" -- env LANG=zh_CN.UTF-8 GPUPLAN_NVML_LIBRARY=/nonexistent "$bin" meter watch \
  --interval 0.1 --json "$tmp/watch.json" -- sh -c 'echo hello; sleep 0.3'
has out "hello"
has err "sh -c echo hello; sleep 0.3（"
has err "，退出码 0"
has err "诊断："
has err "跳过：未测量："

# Every Say("key", "English") of the renderers has that English in the catalogue: the fallback
# and the catalogue cannot drift apart.
python3 - "$2/.." <<'PY' && ok || bad "the catalogue's English differs from the renderers' fallbacks"
import glob, json, re, sys
root = sys.argv[1]
messages = json.load(open(root + "/data/messages.json", encoding="utf-8"))["messages"]
call = re.compile(r'Say(?:Format)?\(\s*"([a-z0-9_.\-]+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')
literal = re.compile(r'"((?:[^"\\]|\\.)*)"')
bad = 0
seen = 0
for path in glob.glob(root + "/src/**/*.cc", recursive=True) + glob.glob(root + "/apps/gpuplan/*.cc"):
    for key, english in call.findall(open(path, encoding="utf-8").read()):
        seen += 1
        english = "".join(literal.findall(english)).encode().decode("unicode_escape")
        if key not in messages or messages[key].get("en") != english:
            print(f"{path}: {key}: {english!r} vs {messages.get(key, {}).get('en')!r}")
            bad += 1
print(f"{seen} Say calls checked")
sys.exit(1 if bad or seen < 80 else 0)
PY

echo "lang_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
