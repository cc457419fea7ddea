#!/usr/bin/env python3
"""scripts/gemm/wave_check.py against hand-worked cases (docs/time-model.md §3.1).

1. The useful share of a wave-quantised GEMM, worked by hand: 1024 x 1024 on 132 SMs with
   256 x 128 tiles is 4 x 8 = 32 tiles in one wave, 1,048,576 / (132 x 32,768) = 0.24242; 4096 x
   4096 is 16 x 32 = 512 tiles, 4 waves, 16,777,216 / (4 x 132 x 32,768) = 0.96970.
2. A table whose rates ARE the 256 x 128 formula (rate = 500 x share) leaves no spread after
   division (coefficient of variation 0.000), while the rates alone vary; a flat table is the
   other way round.
Usage: wave_check_test.py SCRIPT
"""
import importlib.util
import os
import subprocess
import sys
import tempfile


def main():
    script = sys.argv[1]
    spec = importlib.util.spec_from_file_location("wave_check", script)
    wc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(wc)
    tile = [(256, 128)]
    checks = [
        (wc.useful_share(1024, 1024, 132, tile), 1048576 / (132 * 32768)),
        (wc.useful_share(4096, 4096, 132, tile), 16777216 / (4 * 132 * 32768)),
    ]
    for got, want in checks:
        if abs(got - want) > 1e-12:
            sys.exit(f"useful_share {got} != {want}")
    shapes = [(m, n, 8192) for m in (1024, 2048, 3072, 5120) for n in (1024, 3072, 4096, 7168)]
    with tempfile.TemporaryDirectory() as d:
        for name, rate in (("formula", lambda m, n: 500.0 * wc.useful_share(m, n, 132, tile)), ("flat", lambda m, n: 600.0)):
            path = os.path.join(d, name + ".yaml")
            with open(path, "w", encoding="utf-8") as f:
                f.write("sm_count: 132\nbf16:\n")
                for m, n, k in shapes:
                    f.write(f"  - [{m}, {n}, {k}, {rate(m, n):.6f}]\n")
            out = subprocess.run([sys.executable, script, path], check=True, capture_output=True, text=True).stdout
            lines = {l.split(":")[0].strip(): float(l.rsplit(" ", 1)[1]) for l in out.splitlines()[1:]}
            alone = lines["measured rates alone"]
            explained = lines["rate / useful share, 256x128"]
            if name == "formula" and not (explained < 0.0005 and alone > 0.05):
                sys.exit(f"formula table: {out}")
            if name == "flat" and not (alone < 0.0005 and explained > 0.05):
                sys.exit(f"flat table: {out}")
    print("wave_check: ok")


if __name__ == "__main__":
    main()
