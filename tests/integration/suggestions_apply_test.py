#!/usr/bin/env python3
"""A fit suggestion is the flags to add to the user's command: added, they give its layout.

For each scenario, `gpuplan fit --json` lists the changes that would make the job fit. Each
change's flags are taken from its text, put into the same command (replacing a flag given
there), and the command is run again: the CLI's own reading of those flags (dp = gpus / (tp x pp
x cp), the global batch dividing into micro-batch x dp) must give the suggested layout, fit, and
the same memory per GPU. Before this test the advisor said "--tp 2" for a job on one GPU (the
command then stopped: 1 GPU cannot be split into tp=2) and "--zero 3 + --tp 8" for 512 GPUs
when the user's command kept 64.

usage: suggestions_apply_test.py GPUPLAN DATA_DIR
"""
import json
import os
import shlex
import subprocess
import sys

SWITCHES = {"--offload-optimizer", "--offload-params", "--sp"}
LAYOUT_KEYS = ("gpu", "gpus", "tp", "pp", "dp", "cp", "zero", "offload_optimizer", "micro_batch", "recompute")

# Each training command pins recompute and micro-batch (and vpp where a suggestion adds pipeline
# stages), so a re-run chooses nothing the suggestion did not: fit would otherwise pick, within
# memory, the settings the user left unstated (docs/time-model.md §10).
SCENARIOS = [
    # 64 GPUs given: pairs of changes, tensor / pipeline parallelism on the same GPUs and on more.
    "--model Llama-3.1-70B --task pretrain --gpu H100 --gpus 64 --seq 8192 --global-batch 64"
    " --recompute none --micro-batch 1",
    # One GPU: every layout change adds GPUs.
    "--model Llama-3.1-8B --task full --gpu A100 --recompute none --micro-batch 1",
    "--model Llama-3.1-70B --task infer --gpu A100",
    # tp 2 given: ZeRO-3 over more data-parallel ranks needs gpus = dp x tp.
    "--model Llama-3.1-70B --task full --gpu A100 --gpus 8 --tp 2 --recompute full --micro-batch 1"
    " --vpp 1",
    # Four inference replicas: tensor parallelism inside them on the same four GPUs.
    "--model Llama-3.1-70B --task infer --gpu A100 --gpus 4 --context 8192 --concurrency 8",
    # Long sequences: context parallelism on the same GPUs.
    "--model Llama-3.1-8B --task pretrain --gpu H100 --gpus 8 --zero 3 --seq 131072"
    " --recompute full --micro-batch 1",
]


def parse_flags(tokens):
    """[(flag, value or None)] from command or change tokens; prose around the flags is skipped."""
    out = []
    i = 0
    while i < len(tokens):
        t = tokens[i].strip("()")
        if t.startswith("--"):
            if t in SWITCHES:
                out.append((t, None))
            elif i + 1 < len(tokens):
                out.append((t, tokens[i + 1].strip("()")))
                i += 1
        i += 1
    return out


def run(binary, flags):
    args = [binary, "fit"]
    for f, v in flags:
        args += [f] if v is None else [f, v]
    args.append("--json")
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if p.returncode not in (0, 1):  # 0 fits, 1 does not; anything else refused the command
        return None, f"exit {p.returncode}: {p.stderr.strip()}"
    return json.loads(p.stdout), ""


def main():
    binary, data = sys.argv[1], sys.argv[2]
    os.environ["GPUPLAN_DATA"] = data
    failures = []
    checked = 0
    gpus_added = same_gpus_layout = 0
    for scenario in SCENARIOS:
        base = parse_flags(shlex.split(scenario))
        result, error = run(binary, base)
        if result is None:
            failures.append(f"{scenario}: {error}")
            continue
        suggestions = result.get("suggestions") or []
        if result.get("fits") is not False or not suggestions:
            failures.append(f"{scenario}: expected a job that does not fit, with suggestions")
            continue
        for s in suggestions:
            change = parse_flags(shlex.split(s["change"]))
            if not change:
                failures.append(f"{scenario}: suggestion '{s['change']}' names no flag")
                continue
            names = {f for f, _ in change}
            flags = [(f, v) for f, v in base if f not in names] + change
            again, error = run(binary, flags)
            checked += 1
            where = f"'{s['change']}' added to: {scenario}"
            if again is None:
                failures.append(f"{where}: {error}")
                continue
            if again.get("fits") is not True:
                failures.append(f"{where}: the command does not fit")
                continue
            for k in LAYOUT_KEYS:
                if again["layout"].get(k) != s["layout"].get(k):
                    failures.append(f"{where}: layout.{k} is {again['layout'].get(k)}, the suggestion says "
                                    f"{s['layout'].get(k)}")
            if again["memory_per_gpu"]["total"] != s["memory_per_gpu_total"]:
                failures.append(f"{where}: {again['memory_per_gpu']['total']} bytes a GPU, the suggestion says "
                                f"{s['memory_per_gpu_total']}")
            if "--gpus" in names:
                gpus_added += 1
            elif s["layout"]["tp"] != result["layout"]["tp"] or s["layout"]["pp"] != result["layout"]["pp"] \
                    or s["layout"]["cp"] != result["layout"]["cp"]:
                same_gpus_layout += 1
    # The scenarios reach both kinds of layout change, or the test proves nothing about them.
    if gpus_added == 0:
        failures.append("no suggestion added GPUs (--gpus): the scenarios no longer test that")
    if same_gpus_layout == 0:
        failures.append("no suggestion changed tp, pp or cp on the same GPUs: the scenarios no longer test that")
    for f in failures:
        print("FAIL", f)
    print(f"{checked} suggestions applied; {gpus_added} with more GPUs, {same_gpus_layout} re-laid on the same GPUs")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
