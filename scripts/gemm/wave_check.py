#!/usr/bin/env python3
"""Does wave quantisation explain a GEMM table by shape? (docs/time-model.md §3.1)

NVIDIA's Matrix Multiplication Background User's Guide ("Dimension Quantization Effects") models
a GEMM's output as tiles of tm x tn spread over the SMs in waves: with T = ceil(m/tm) x ceil(n/tn)
tiles and W = ceil(T / SMs) waves, the useful share of the work done is m n / (W SMs tm tn). If
that explained the measured rates, a card without a sweep (A100: 108 SMs) could take its shape
dependence from the formula and its level from one published figure.

This script holds the formula against a table in data/gemm/ (bf16 rows with k at least --min-k,
so that the k loop is long and only m and n vary): for each tile set it divides every measured
rate by the formula's useful share and reports the spread of what is left (the coefficient of
variation, stdev / mean). A model that explains the shapes leaves a smaller spread than the
measured rates have on their own. Tile sets: 256 x 128 alone, and eight tile shapes (all values
of cuBLASLt's cublasLtMatmulTile_t) with the least-quantised one taken at each shape.

Usage: python3 scripts/gemm/wave_check.py data/gemm/h100-sxm.yaml [--min-k 8192]
Python 3 standard library only.
"""
import argparse
import math
import re
import statistics
import sys

ROW = re.compile(r"^\s*- \[(\d+), (\d+), (\d+), ([\d.]+)\]")
TILE_SETS = {
    "256x128": [(256, 128)],
    "eight tiles, least quantised": [(256, 128), (128, 256), (128, 128), (256, 64), (64, 256), (128, 64), (64, 128), (64, 64)],
}


def read(path):
    sms, rows, section = None, [], None
    try:
        f = open(path, encoding="utf-8")
    except OSError as e:
        sys.exit(f"{path}: cannot read: {e.strerror}")
    with f:
        for number, line in enumerate(f, 1):
            if line.startswith("sm_count:"):
                value = line.split(":", 1)[1].split("#")[0].strip()
                if not value.isdigit() or not 0 < int(value) <= 10000:
                    sys.exit(f"{path}:{number}: field 'sm_count': expected a whole number 1-10000, got '{value[:40]}'")
                sms = int(value)
            elif re.match(r"^[a-z0-9_]+:\s*(#.*)?$", line):
                section = line.split(":")[0]
            m = ROW.match(line)
            if m and section == "bf16":
                rows.append(tuple(float(x) for x in m.groups()))
    if not sms or not rows:
        sys.exit(f"{path}: needs sm_count and bf16 rows")
    return sms, rows


def useful_share(m, n, sms, tiles):
    best = 0.0
    for tm, tn in tiles:
        t = math.ceil(m / tm) * math.ceil(n / tn)
        waves = math.ceil(t / sms)
        best = max(best, m * n / (waves * sms * tm * tn))
    return best


def cv(values):
    return statistics.pstdev(values) / statistics.mean(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("--min-k", type=int, default=8192)
    a = ap.parse_args()
    sms, rows = read(a.table)
    sub = [r for r in rows if r[2] >= a.min_k and r[0] > 0 and r[1] > 0 and r[3] > 0]
    if len(sub) < 2:
        sys.exit(f"{a.table}: {len(sub)} bf16 shapes with k >= {a.min_k} and positive m, n and rate; need at least 2")
    rates = [r[3] for r in sub]
    print(f"{a.table}: {len(sub)} bf16 shapes with k >= {a.min_k}, {sms} SMs")
    print(f"  measured rates alone: coefficient of variation {cv(rates):.3f}")
    for name, tiles in TILE_SETS.items():
        left = [r[3] / useful_share(r[0], r[1], sms, tiles) for r in sub]
        print(f"  rate / useful share, {name}: coefficient of variation {cv(left):.3f}")


if __name__ == "__main__":
    main()
