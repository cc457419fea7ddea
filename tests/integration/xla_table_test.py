#!/usr/bin/python3
"""scripts/gemm/xla_table.py against an excerpt of OpenXLA's matmul perf table (docs/time-model.md §3.1).

Expected rates worked by hand from the excerpt's integers (FLOP/s / 10^12, one decimal):
- b=1 m=4096: bf16 1,416,867,213,789,406 -> 1416.9, fp8 2,764,981,863,158,106 -> 2765.0 at m 4096;
  the b=4 m=1024 entry (1413.9 / 2671.0, also b x m = 4096) comes first in the file and must lose
  to it (the smallest b is kept);
- b=2 m=4096 -> m 8192: 1466.6 / 3123.5; b=4 m=4096 -> m 16384: 1670.5 / 3279.7.
Refusals: the sm_90 fp8 rate 2,423.8 TFLOP/s above a 1,979 peak; a misspelt field (file:line:column);
a device key that is not in the file.
Usage: xla_table_test.py SCRIPT FIXTURE
"""
import os
import subprocess
import sys
import tempfile

import yaml


def run(script, txtpb, out, key="sm_100_B200", peak_fp8="4500"):
    return subprocess.run([script, txtpb, "--key", key, "--gpu", "NVIDIA B200", "--sm-count", "148",
                           "--source", "test excerpt", "--measured", "test", "--peak-bf16", "2250",
                           "--peak-fp8", peak_fp8, "--out", out], capture_output=True, text=True)


def main():
    script, fixture = sys.argv[1], sys.argv[2]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "b200.yaml")
        r = run(script, fixture, out)
        if r.returncode != 0:
            sys.exit(f"conversion failed: {r.stderr}")
        with open(out, encoding="utf-8") as fh:
            table = yaml.safe_load(fh)
        want = {
            "bf16": [[4096, 4096, 4096, 1416.9], [8192, 4096, 4096, 1466.6], [16384, 4096, 4096, 1670.5]],
            "fp8": [[4096, 4096, 4096, 2765.0], [8192, 4096, 4096, 3123.5], [16384, 4096, 4096, 3279.7]],
        }
        for dtype, rows in want.items():
            if table.get(dtype) != rows:
                failures.append(f"{dtype}: got {table.get(dtype)}, want {rows}")
        if table.get("gpu") != "NVIDIA B200" or table.get("peak_tflops_fp8") != 4500:
            failures.append(f"header: {table}")

        # Above the card's peak: refused, nothing written.
        bad_out = os.path.join(tmp, "h100.yaml")
        r = run(script, fixture, bad_out, key="sm_90", peak_fp8="1979")
        if r.returncode == 0 or "above the card's dense peak" not in r.stderr or os.path.exists(bad_out):
            failures.append(f"sm_90 fp8 over the peak: rc {r.returncode}, {r.stderr!r}")

        # A misspelt field: protobuf's parser names the line and column.
        with open(fixture, encoding="utf-8") as fh:
            text = fh.read()
        misspelt = os.path.join(tmp, "misspelt.txtpb")
        with open(misspelt, "w", encoding="utf-8") as fh:
            fh.write(text.replace("      n: 4096\n", "      nn: 4096\n", 1))
        line = text[: text.index("      n: 4096\n")].count("\n") + 1
        r = run(script, misspelt, os.path.join(tmp, "m.yaml"))
        if r.returncode == 0 or f"misspelt.txtpb:{line}:" not in r.stderr or "nn" not in r.stderr:
            failures.append(f"misspelt field (line {line}): rc {r.returncode}, {r.stderr!r}")

        r = run(script, fixture, os.path.join(tmp, "k.yaml"), key="sm_80")
        if r.returncode == 0 or "sm_100_B200" not in r.stderr:
            failures.append(f"missing key: rc {r.returncode}, {r.stderr!r}")
    if failures:
        sys.exit("xla_table: " + "; ".join(failures))
    print("xla_table: ok")


if __name__ == "__main__":
    main()
