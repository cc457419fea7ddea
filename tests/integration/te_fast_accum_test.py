#!/usr/bin/env python3
"""scripts/gemm/te_fast_accum.py against a hand-worked table, and the repository's table held to it.

1. A table whose bf16 rows are 500 TFLOP/s and fp8 rows 800 at every corner of a 2 x 2 x 2 grid
   (1024 and 32768 on each axis: every shape of the guide's model inside it, so every rate read
   is 500 or 800) has an fp8 / bf16 time ratio of 1.6. Transformer Engine's guide: bf16 10.632 +
   10.747 + 10.530 = 31.909 ms, fp8 with fast accumulation 5.577 + 5.661 + 5.547 = 16.785 ms, a
   ratio of 1.901043; the scale is 1.901043 / 1.6 = 1.188152, written `fp8_fast_accum_scale: 1.1882`
   after the fp8 rows (the reader derives the rows from it and caps them at the fp8 peak:
   tests/unit/op_model_test.cc GemmTable.FastAccumulationScaleOfTheFp8Rows). A file with rows of the
   earlier format (`fp8_fast_accum:` rows) gets the key in their place.
2. Writing twice leaves the file as the first write did; --check passes on it and fails (exit 1)
   once the scale is changed by hand; a row that is not four numbers (line 5 of the
   synthetic file) and a missing file exit 1 with a message, the file untouched.
3. The repository's data/gemm/h100-sxm.yaml is what the script writes (--check).
Usage: te_fast_accum_test.py SCRIPT REPO_TABLE
"""
import os
import subprocess
import sys
import tempfile

GRID = (1024, 32768)


def table(old_rows=False):
    lines = ['gpu: "Synthetic"', "sm_count: 132", 'measured: "2026-12-07"']
    for name, rate in (("bf16", 500.0), ("fp8", 800.0)):
        lines.append(f"{name}:")
        lines += [f"  - [{m}, {n}, {k}, {rate}]" for m in GRID for n in GRID for k in GRID]
    if old_rows:
        lines.append("fp8_fast_accum:  # 8 shapes, scale 1.1882")
        lines += [f"  - [{m}, {n}, {k}, 950.5]" for m in GRID for n in GRID for k in GRID]
    return "\n".join(lines) + "\n"


def run(script, *args):
    return subprocess.run([sys.executable, script, *args], capture_output=True, text=True)


def scale_lines(path):
    return [line for line in open(path, encoding="utf-8") if line.startswith("fp8_fast_accum")]


def main():
    script, repo_table = sys.argv[1], sys.argv[2]
    failures = 0

    def expect(ok, what):
        nonlocal failures
        if not ok:
            failures += 1
            print("FAIL", what)

    scale = (31.909 / 16.785) / 1.6
    expect(abs(scale - 1.188152) < 5e-7, f"hand-worked scale {scale}")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "t.yaml")
        open(path, "w").write(table())
        r = run(script, path)
        expect(r.returncode == 0 and "scale written, 1.1882" in r.stdout, f"write: {r.returncode} {r.stdout} {r.stderr}")
        keys = scale_lines(path)
        expect(len(keys) == 1 and keys[0].startswith("fp8_fast_accum_scale: 1.1882  #"), f"the scale key: {keys}")
        first = open(path).read()
        expect(first.startswith(table().split("fp8:")[0]), "the bf16 rows and header are kept")
        run(script, path)
        expect(open(path).read() == first, "a second write changes nothing")
        expect(run(script, "--check", path).returncode == 0, "--check on a current file")
        expect(first.endswith(keys[0]), "the key after the fp8 rows, at the end")
        open(path, "w").write(first.replace("scale: 1.1882", "scale: 1.1883", 1))
        expect(run(script, "--check", path).returncode == 1, "--check on a scale changed by hand")
        # A row that is not four numbers: refused with its file and line, the file left as it was.
        bad = table().replace("  - [1024, 1024, 1024, 500.0]", "  - [1024, 1024, 1024, fast]", 1)
        open(path, "w").write(bad)
        r = run(script, path)
        expect(r.returncode == 1 and f"{path}:5: not a row" in r.stderr and open(path).read() == bad,
               f"a bad row: {r.returncode} {r.stderr}")
        r = run(script, os.path.join(d, "missing.yaml"))
        expect(r.returncode == 1 and "cannot be read" in r.stderr, f"a missing file: {r.returncode} {r.stderr}")
        # The earlier format, rows of the fast mode: --check fails on it, a write replaces them by the key.
        open(path, "w").write(table(old_rows=True))
        expect(run(script, "--check", path).returncode == 1, "--check on the rows of the earlier format")
        run(script, path)
        expect(open(path).read() == first, f"the earlier format rewritten: {scale_lines(path)}")
    r = run(script, "--check", repo_table)
    expect(r.returncode == 0, f"{repo_table}: {r.stdout} {r.stderr}")
    print("te_fast_accum: ok" if failures == 0 else f"te_fast_accum: {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
