#!/usr/bin/env python3
"""A published GEMM table for the time model, from mamf-finder logs (docs/time-model.md §3.1).

mamf-finder (S. Bekman, ml-engineering, compute/accelerator/benchmarks) times torch.mm at every
shape of an m x n x k grid and prints one line a shape:

       1 |  134.8(mean)  134.9(median)  140.1(max) @ 1024x1024x1024       | best: ...

Given the logs of one node's GPUs (each GPU its own file, one datatype a file), this writes
data/gemm/<slug>.yaml in the format scripts/device/gemm_table.py writes for our own sweeps: per
shape the median over the GPUs of each GPU's median TFLOP/s (mean and max are not used: the
median of 100 timed runs is the sustained rate, the max a burst). The device name, datatype,
torch and CUDA versions are read from each log's header; logs that disagree on the device are
refused, as is a grid point missing from any log.

Usage: python3 scripts/gemm/mamf_table.py --gpu-slug h100-sxm --source TEXT --measured YYYY-MM-DD
           --out data/gemm/h100-sxm.yaml [--architecture hopper --peak-bf16 989.4 --peak-fp8 1978.9] LOG...
Python 3 standard library only.
"""
import argparse
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_file import write_lines  # noqa: E402 (scripts/table_file.py)

LINE = re.compile(r"^\s*\d+\s*\|\s*([\d.]+)\(mean\)\s+([\d.]+)\(median\)\s+([\d.]+)\(max\)\s*@\s*(\d+)x(\d+)x(\d+)\s*\|")
DTYPES = {"torch.bfloat16": "bf16", "torch.float8_e4m3fn": "fp8"}


def read_log(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
    except (OSError, UnicodeDecodeError) as e:
        sys.exit(f"{path}: cannot be read as a text log: {e}")
    device = dtype = torch = cuda = None
    rows = {}
    for number, line in enumerate(lines, 1):
        m = re.search(r"_CudaDeviceProperties\(name='([^']+)'.*multi_processor_count=(\d+)", line)
        if m:
            device, sms = m.group(1), int(m.group(2))
            continue
        m = re.match(r"^\*\* Dtype: (\S+)", line)
        if m:
            if m.group(1) not in DTYPES:
                sys.exit(f"{path}:{number}: datatype {m.group(1)} is not one the time model reads (bf16, fp8)")
            dtype = DTYPES[m.group(1)]
            continue
        m = re.match(r"^torch=(\S+)", line)
        if m:
            torch = m.group(1)
            continue
        m = re.match(r"^cuda=(\S+)", line)
        if m:
            cuda = m.group(1)
            continue
        m = LINE.match(line)
        if m:
            mean, median, mx = (float(m.group(i)) for i in (1, 2, 3))
            shape = tuple(int(m.group(i)) for i in (4, 5, 6))
            if not (0 < median <= mx) or shape in rows:
                sys.exit(f"{path}:{number}: implausible or repeated row: {line.strip()}")
            rows[shape] = median
    if device is None or dtype is None or not rows:
        sys.exit(f"{path}: no device line, datatype or timed shapes: not a mamf-finder log")
    return {"device": device, "sms": sms, "dtype": dtype, "torch": torch, "cuda": cuda, "rows": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--gpu-slug", required=True)
    ap.add_argument("--source", required=True, help="where the logs were published (repository, commit, folder)")
    ap.add_argument("--measured", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--architecture", help="the table stands for every card of this architecture without its own")
    ap.add_argument("--peak-bf16", type=float, help="the measured card's dense bf16 peak, TFLOP/s (with --architecture)")
    ap.add_argument("--peak-fp8", type=float, help="its dense fp8 peak, TFLOP/s")
    a = ap.parse_args()
    if a.architecture and not a.peak_bf16:
        sys.exit("--architecture needs --peak-bf16 (and --peak-fp8 for fp8 rows): cards are scaled by their peaks")
    logs = [read_log(p) for p in a.logs]
    devices = {l["device"] for l in logs}
    if len(devices) != 1:
        sys.exit(f"logs from different devices: {sorted(devices)}")
    by_dtype = {}
    for log in logs:
        by_dtype.setdefault(log["dtype"], []).append(log)
    out = [
        f"# Published, not measured here: mamf-finder sweeps of {len(logs)} logs ({a.source}),",
        f"# {', '.join(sorted({'torch ' + str(l['torch']) + ' CUDA ' + str(l['cuda']) for l in logs}))}.",
        "# Each row: the median over the GPUs of each GPU's median TFLOP/s at that shape",
        f"# (scripts/gemm/mamf_table.py --gpu-slug {a.gpu_slug}; docs/time-model.md §3.1).",
        f'gpu: "{devices.pop()}"',
        f"sm_count: {logs[0]['sms']}",
        f'measured: "{a.measured}"',
        f'source: "{a.source}"',
    ]
    if a.architecture:
        out += [f"architecture: {a.architecture}", f"peak_tflops_bf16: {a.peak_bf16:g}"]
        if a.peak_fp8:
            out.append(f"peak_tflops_fp8: {a.peak_fp8:g}")
    for dtype in ("bf16", "fp8"):
        group = by_dtype.get(dtype)
        if not group:
            continue
        shapes = set(group[0]["rows"])
        for log in group[1:]:
            if set(log["rows"]) != shapes:
                sys.exit(f"{dtype}: the logs do not cover the same shapes")
        out.append(f"{dtype}:  # {len(group)} GPUs, {len(shapes)} shapes")
        out.append("  # [m, n, k, tflops]")
        for shape in sorted(shapes):
            value = statistics.median(log["rows"][shape] for log in group)
            out.append(f"  - [{shape[0]}, {shape[1]}, {shape[2]}, {value:.1f}]")
    write_lines(a.out, out)


if __name__ == "__main__":
    main()
