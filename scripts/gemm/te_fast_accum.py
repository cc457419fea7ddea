#!/usr/bin/env python3
"""A GEMM table's fp8 rows with fast accumulation, from Transformer Engine's published GEMM profile.

A published sweep such as data/gemm/h100-sxm.yaml times fp8 through torch._scaled_mm with its
default accumulation (CUBLASLT_MATMUL_DESC_FAST_ACCUM = 0, partial sums promoted to fp32), the
mode of the two gradient GEMMs of an fp8 layer. The forward GEMM runs with fast accumulation
(Transformer Engine's fp8 recipes: fp8_gemm_fprop use_split_accumulator=False; torchao: the
output GEMM use_fast_accum=True), which no published sweep by shape times.

Transformer Engine's GEMM profiling guide (docs/examples/gemm_profiling/gemm_profiling.rst,
github.com/NVIDIA/TransformerEngine@1609c890e, 2026-06-01, "Worked Example: 5B Model on H200",
pre-quantized mode) times the 12 GEMMs of one layer of a 5B model (hidden 4096, intermediate
16384, 32 heads, M = 31 x 512 = 15,872 tokens) on an NVIDIA H200 NVL in bf16 (torch.matmul) and
in fp8 E4M3 (tex.generic_gemm, use_split_accumulator False: fast accumulation, bf16 out, 32 MiB
workspace; benchmarks/gemm/benchmark_gemm.py at the same commit). Its per-layer times:

    bf16:  fprop 10.632 ms, dgrad 10.747 ms, wgrad 10.530 ms   (sum 31.909; the guide prints a
                                                                total of 31.968, 767.242 / 24)
    fp8:   fprop  5.577 ms, dgrad  5.661 ms, wgrad  5.547 ms   (sum 16.785)

so fast-accumulation fp8 took 31.909 / 16.785 = 1.901 times less time than bf16 there. The
table's own rates at the same 12 shapes (interpolated as the time model reads a table:
trilinear in log2 m, n, k, held at the grid's ends) give its fp8 / bf16 time ratio; the fast-
accumulation rows are the table's fp8 rows times

    scale = (guide's bf16 time / guide's fp8 time) / (table's bf16 time / table's fp8 time)

at every shape (the reader, src/fit/gemm_table.cc, derives them and caps each at the table's fp8
peak, so the file carries the scale, not 3,375 more rows). Dividing by bf16 on each side takes out what
the two measurements do not share (an H200 NVL at 600 W against the table's card, a newer cuBLAS
than the table's): what the scale keeps is how much faster fp8 with fast accumulation ran than
bf16, beside how much faster the table's fp8 ran. It also keeps whatever else differs between
Transformer Engine's cuBLASLt calls and torch 2.5.1's _scaled_mm; one scale for every shape, from
12 shapes of one model.

Usage: python3 scripts/gemm/te_fast_accum.py [--check] TABLE.yaml
Writes (or with --check, compares) the table's `fp8_fast_accum_scale:` key, after its `fp8:` rows
(an `fp8_fast_accum:` section of rows an earlier version wrote is replaced by it).
Python 3 standard library only.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_file import write_lines  # noqa: E402 (scripts/table_file.py)

# The guide's figures (see above): (operation, bf16 ms, fp8 fast-accumulation ms) per layer.
GUIDE = [("fprop", 10.632, 5.577), ("dgrad", 10.747, 5.661), ("wgrad", 10.530, 5.547)]
GUIDE_SOURCE = ("github.com/NVIDIA/TransformerEngine@1609c890e docs/examples/gemm_profiling/gemm_profiling.rst, "
                "'Worked Example: 5B Model on H200', pre-quantized (H200 NVL)")
HIDDEN, INTERMEDIATE, TOKENS = 4096, 16384, 31 * 512

ROW = re.compile(r"^\s*-\s*\[\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*,\s*([\d.]+)\s*\]\s*$")
SECTION = re.compile(r"^([a-z0-9_]+):")


def read_table(path):
    """The file's lines and its rows per section ({'bf16': {(m, n, k): rate}, ...})."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{path}: cannot be read as a text table: {e}")
    rows, section = {}, None
    for number, line in enumerate(lines, 1):
        m = SECTION.match(line)
        if m:
            section = m.group(1)
            continue
        r = ROW.match(line)
        if line.lstrip().startswith("-") and not r:
            sys.exit(f"{path}:{number}: not a row [m, n, k, TFLOP/s]: {line.strip()}")
        if r and section:
            m_, n_, k_, rate = (float(x) for x in r.groups())
            rows.setdefault(section, {})[(m_, n_, k_)] = rate
    for need in ("bf16", "fp8"):
        if not rows.get(need):
            sys.exit(f"{path}: no `{need}:` rows")
    return lines, rows


def rate_at(rows, m, n, k):
    """The time model's reading of a table (src/fit/gemm_table.cc): trilinear in log2 of each
    dimension between the grid's points, a dimension beyond the grid held at its end."""
    axes = [sorted({key[i] for key in rows}) for i in range(3)]
    want = (m, n, k)
    corners = []
    for i in range(3):
        a = axes[i]
        x = min(max(want[i], a[0]), a[-1])
        hi = next(j for j, v in enumerate(a) if v >= x)
        lo = hi if a[hi] == x or hi == 0 else hi - 1
        t = 0.0 if lo == hi else (math.log2(x) - math.log2(a[lo])) / (math.log2(a[hi]) - math.log2(a[lo]))
        corners.append(((a[lo], 1 - t), (a[hi], t)))
    total = 0.0
    for (mv, mw) in corners[0]:
        for (nv, nw) in corners[1]:
            for (kv, kw) in corners[2]:
                w = mw * nw * kw
                if w == 0:
                    continue
                if (mv, nv, kv) not in rows:
                    sys.exit(f"the table has no row at {mv:g} x {nv:g} x {kv:g} (a grid with holes: not handled here)")
                total += w * rows[(mv, nv, kv)]
    return total


def layer_seconds(rows):
    """One layer's 12 GEMMs of the guide's model at the table's rates: fprop (M, N, K) as
    [m, n, k] = tokens, outputs, inputs; dgrad [tokens, inputs, outputs]; wgrad [outputs, inputs,
    tokens] (the guide's QKV, attention out, MLP up and down)."""
    layers = [(3 * HIDDEN, HIDDEN), (HIDDEN, HIDDEN), (INTERMEDIATE, HIDDEN), (HIDDEN, INTERMEDIATE)]
    total = 0.0
    for out, inp in layers:
        for m, n, k in ((TOKENS, out, inp), (TOKENS, inp, out), (out, inp, TOKENS)):
            total += 2.0 * m * n * k / (rate_at(rows, m, n, k) * 1e12)
    return total


def fast_accum_lines(rows):
    guide_ratio = sum(b for _, b, _ in GUIDE) / sum(f for _, _, f in GUIDE)
    table_ratio = layer_seconds(rows["bf16"]) / layer_seconds(rows["fp8"])
    scale = guide_ratio / table_ratio
    out = [
        "# fp8 with fast accumulation (the forward GEMM's mode): the fp8 rows above times this scale (each capped at",
        f"# peak_tflops_fp8), from Transformer Engine's published GEMM profile ({GUIDE_SOURCE}):",
        f"# there fp8 with fast accumulation ran {guide_ratio:.4f} x as fast as bf16 over one layer's 12 GEMMs of a 5B model,",
        f"# here the fp8 rows {table_ratio:.4f} x at the same shapes (scripts/gemm/te_fast_accum.py; docs/time-model.md §3.1).",
        f"fp8_fast_accum_scale: {scale:.4f}  # one scale for every one of the {len(rows['fp8'])} fp8 shapes",
    ]
    return out, scale


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("table")
    ap.add_argument("--check", action="store_true", help="exit 1 if the file's fp8_fast_accum_scale differs")
    args = ap.parse_args()
    lines, rows = read_table(args.table)
    # The file without its fast-accumulation section (and the comment lines that open it).
    keep = []
    skipping = False
    for line in lines:
        m = SECTION.match(line)
        if m:
            skipping = m.group(1) in ("fp8_fast_accum", "fp8_fast_accum_scale")
            if skipping:
                continue
        if not skipping:
            keep.append(line)
    # Drop the comment block this script wrote before the key (it starts with its first line).
    for i in range(len(keep) - 1, -1, -1):
        if keep[i].startswith("# fp8 with fast accumulation (the forward GEMM's mode)"):
            del keep[i:i + 4]
            break
    section, scale = fast_accum_lines(rows)
    # After the fp8 rows: the section ends where the next top-level key starts, or at the end.
    start = next(i for i, line in enumerate(keep) if line.startswith("fp8:"))
    end = next((i for i in range(start + 1, len(keep)) if SECTION.match(keep[i])), len(keep))
    new = keep[:end] + section + keep[end:]
    if args.check:
        if new != lines:
            print(f"{args.table}: its fp8_fast_accum_scale is not what te_fast_accum.py writes ({scale:.4f})")
            return 1
        print(f"{args.table}: fp8_fast_accum_scale current ({scale:.4f})")
        return 0
    write_lines(args.table, new)
    print(f"{args.table}: fp8_fast_accum_scale written, {scale:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
