#!/usr/bin/env python3
"""scripts/device/gemm_table.py on gemm-sweep lines written here in the worker's format (the
stand-in for the GPU this machine lacks; apps/gpu-worker/README.md gives the lines).

1. bf16, fp8 and fp8-fast lines become the sections bf16, fp8 and fp8_fast_accum, rows sorted by
   m, n, k, TFLOPS to one decimal (1,234.56 -> 1234.6), an fp16 line left out with a note; only
   keys src/fit/gemm_table.cc reads (its unit tests load such a file: GemmTable.*).
2. fp8-fast lines without fp8 lines: refused; a sweep without its `done` line: refused.
Usage: gemm_table_test.py SCRIPT
"""
import json
import os
import subprocess
import sys
import tempfile

import_yaml = None
try:
    import yaml as import_yaml  # Debian's python3-yaml (scripts/install-deps.sh)
except ImportError:
    pass


def lines(precisions, done=True):
    out = [
        {"type": "hello", "worker": "gpu-worker"},
        {"type": "gemm_sweep", "test": "gemm-sweep", "device": "NVIDIA H200", "device_index": 0, "cc": "9.0",
         "sm_count": 132, "clock_mhz": 1980, "cublaslt_version": 130000, "min_ms": 100, "shapes": 2,
         "date": "2026-12-07"},
    ]
    rates = {"bf16": [(8192, 4096, 4096, 700.04), (2048, 4096, 4096, 650.0)],
             "fp8": [(8192, 4096, 4096, 1234.56), (2048, 4096, 4096, 1100.0)],
             "fp8-fast": [(8192, 4096, 4096, 1400.0), (2048, 4096, 4096, 1250.0)],
             "fp16": [(8192, 4096, 4096, 690.0)]}
    for p in precisions:
        for m, n, k, tf in rates[p]:
            out.append({"type": "gemm_shape", "test": "gemm-sweep", "device": 0, "precision": p, "m": m, "n": n,
                        "k": k, "calls": 10, "seconds_per_call": 2 * m * n * k / tf / 1e12, "tflops": tf,
                        "verified": True, "samples_checked": 16, "mismatches": 0, "max_error": 0})
    if done:
        out.append({"type": "done"})
    return "\n".join(json.dumps(l) for l in out) + "\n"


def run(script, tmp, text):
    src = os.path.join(tmp, "sweep.jsonl")
    out = os.path.join(tmp, "table.yaml")
    if os.path.exists(out):
        os.remove(out)
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    r = subprocess.run([sys.executable, script, src, "--out", out, "--slug", "h200-sxm"], capture_output=True, text=True)
    return r, out


def main():
    script = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        r, out = run(script, tmp, lines(["bf16", "fp8", "fp8-fast", "fp16"]))
        if r.returncode != 0:
            sys.exit(f"conversion failed: {r.stderr}")
        with open(out, encoding="utf-8") as f:
            text = f.read()
        sections = [l[:-1] for l in text.splitlines() if l.endswith(":") and not l.startswith(" ")]
        if sections != ["bf16", "fp8", "fp8_fast_accum"]:
            failures.append(f"sections {sections}")
        want = ["  - [2048, 4096, 4096, 1100.0]", "  - [8192, 4096, 4096, 1234.6]",
                "  - [2048, 4096, 4096, 1250.0]", "  - [8192, 4096, 4096, 1400.0]"]
        rows = [l for l in text.splitlines() if l.startswith("  - ")]
        if rows[2:] != want:
            failures.append(f"fp8 and fast rows {rows[2:]}")
        if "fp16: not a precision the time model reads" not in r.stderr:
            failures.append(f"no note for fp16: {r.stderr!r}")
        if import_yaml is not None:
            table = import_yaml.safe_load(text)
            allowed = {"gpu", "sm_count", "cublaslt_version", "measured", "bf16", "fp8", "fp8_fast_accum"}
            if set(table) - allowed:
                failures.append(f"keys gpuplan's reader refuses: {set(table) - allowed}")

        r, out = run(script, tmp, lines(["bf16", "fp8-fast"]))
        if r.returncode == 0 or "without fp8 rows" not in r.stderr or os.path.exists(out):
            failures.append(f"fast rows alone: rc {r.returncode} {r.stderr!r}")
        r, out = run(script, tmp, lines(["bf16", "fp8"], done=False))
        if r.returncode == 0 or "did not finish" not in r.stderr:
            failures.append(f"no done line: rc {r.returncode} {r.stderr!r}")
    if failures:
        sys.exit("gemm_table: " + "; ".join(failures))
    print("gemm_table: ok")


if __name__ == "__main__":
    main()
