#!/usr/bin/python3
"""A published fused-attention table for the time model, from cuDNN's SDPA training benchmark (docs/time-model.md §3.2).

NVIDIA publishes the rates its fused attention reaches per GPU in the cudnn-frontend repository
(benchmark/sdpa_benchmark_training/results/<config>/<gpu>/<config>_<date>.csv, written by
benchmark_single_sdpa.py): one line per case with the median forward and backward kernel times and
the TFLOP/s they make. Its FLOP count is the one the time model uses: for a causal (top-left)
mask s(s + 1)/2 scores a head, 2 (d_qk + d_vo) FLOPs a score forward and 2 (3 d_qk + 2 d_vo)
backward (benchmark_single_sdpa.py, `flops`).

This writes data/attention/<slug>.yaml: rows [seq, forward TFLOP/s, backward TFLOP/s] for the
cuDNN backend, bf16, causal mask, non-deterministic backward (the training default), one row per
sequence length. Two layouts of the CSV exist: one line per case with `profile_pass` = both (the
H200 files), or one line per pass (`fwd`, `bwd`; the GB200 files, `time_ms`, `tflops`). Every rate
is checked against the one its time gives (within 1%: the CSV rounds), the shape must be one
(batch, heads, head dims) throughout, and a rate above the card's dense peak (--peak-bf16) is
refused. The CSV is read with Python's csv module; an unknown backend or mask is skipped, a
missing column is an error.

Usage: cudnn_sdpa_table.py --architecture hopper --peak-bf16 989.4 --source TEXT --out FILE CSV
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_file import write_lines  # noqa: E402 (scripts/table_file.py)

MAX_SEQ = 10**7  # a sequence length, as src/fit/attention_table.cc bounds it


def fail(msg):
    print(f"cudnn_sdpa_table.py: {msg}", file=sys.stderr)
    sys.exit(1)


def causal_flops(batch, seq, heads, dqk, dvo, backward):
    scores = batch * heads * seq * (seq + 1) // 2
    return scores * 2 * ((3 * dqk + 2 * dvo) if backward else (dqk + dvo))


def read_rows(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        fail(f"{path}: {e}")
    if not rows:
        fail(f"{path}: no rows")
    return rows


def field(row, key, path, line, kind=str):
    if key not in row or row[key] is None:
        fail(f"{path}:{line}: column {key!r} missing")
    try:
        return kind(row[key])
    except ValueError:
        fail(f"{path}:{line}: column {key!r}: expected a number, got {row[key]!r}")


def convert(path, peak):
    """{seq: [fwd, bwd]} and the facts every kept line shares (gpu, cuDNN version, shape)."""
    rates = {}
    facts = {}
    for i, row in enumerate(read_rows(path)):
        line = i + 2  # the header is line 1
        if row.get("backend") != "cudnn" or row.get("data_type") != "bfloat16" or row.get("attn_mask") != "top_left":
            continue
        if row.get("success") != "True" or row.get("deterministic_bwd") != "False":
            continue
        if row.get("sliding_window_size"):
            continue
        shape = tuple(field(row, k, path, line, int) for k in ("batch_size", "num_q_heads", "num_kv_heads",
                                                              "head_dim_qk", "head_dim_vo"))
        seq = field(row, "q_seqlen", path, line, int)
        if field(row, "kv_seqlen", path, line, int) != seq:
            fail(f"{path}:{line}: q_seqlen {seq} and kv_seqlen differ")
        if not 0 < seq <= MAX_SEQ:
            fail(f"{path}:{line}: q_seqlen {seq} out of (0, {MAX_SEQ}]")
        these = {"gpu": row.get("gpu_name", ""), "cudnn": row.get("cudnn_backend_version", ""), "shape": shape}
        for k, v in these.items():
            if facts.setdefault(k, v) != v:
                fail(f"{path}:{line}: {k} {v!r} differs from the first line's {facts[k]!r}")
        batch, heads, _, dqk, dvo = shape
        passes = field(row, "profile_pass", path, line)
        if passes == "both":
            measured = [("fwd", "fwd_time_ms", "fwd_tflops"), ("bwd", "bwd_time_ms", "bwd_tflops")]
        elif passes in ("fwd", "bwd"):
            measured = [(passes, "time_ms", "tflops")]
        else:
            fail(f"{path}:{line}: profile_pass {passes!r} (expected both, fwd or bwd)")
        slot = rates.setdefault(seq, [None, None])
        for which, time_key, rate_key in measured:
            ms = field(row, time_key, path, line, float)
            tflops = field(row, rate_key, path, line, float)
            if not (ms > 0 and tflops > 0):
                fail(f"{path}:{line}: {time_key} / {rate_key} must be positive")
            from_time = causal_flops(batch, seq, heads, dqk, dvo, which == "bwd") / (ms * 1e-3) / 1e12
            if abs(from_time - tflops) > 0.01 * tflops + 1:
                fail(f"{path}:{line}: {rate_key} {tflops:g} is not what {time_key} {ms:g} gives ({from_time:.1f})")
            if tflops > peak:
                fail(f"{path}:{line}: {rate_key} {tflops:g} TFLOP/s is above the card's dense peak {peak:g}")
            index = 0 if which == "fwd" else 1
            if slot[index] is not None:
                fail(f"{path}:{line}: a second {which} rate for seq {seq}")
            slot[index] = tflops
    if not rates:
        fail(f"{path}: no cuDNN bf16 causal line")
    for seq, (fwd, bwd) in rates.items():
        if fwd is None or bwd is None:
            fail(f"{path}: seq {seq} lacks its {'forward' if fwd is None else 'backward'} rate")
    return rates, facts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--architecture", required=True, help="the architecture the table stands for (hopper, blackwell)")
    ap.add_argument("--peak-bf16", type=float, required=True, help="the measured card's dense bf16 peak, TFLOP/s")
    ap.add_argument("--measured", required=True, help="the date of the CSV")
    ap.add_argument("--source", required=True, help="where the CSV comes from")
    ap.add_argument("--out", required=True)
    ap.add_argument("csv")
    a = ap.parse_args()
    if not 0 < a.peak_bf16 <= 100000:
        fail("--peak-bf16 must be in (0, 100000]")
    rates, facts = convert(a.csv, a.peak_bf16)
    batch, heads, kv_heads, dqk, dvo = facts["shape"]
    version = facts["cudnn"].split(".")[0]
    cudnn = f"{int(version) // 10000}.{int(version) // 100 % 100}.{int(version) % 100}" if version.isdigit() else version
    out = [
        f"# Published, not measured here: cuDNN's SDPA training benchmark, {os.path.basename(a.csv)}",
        "# (scripts/attention/cudnn_sdpa_table.py; docs/time-model.md §3.2). Rows: [seq, forward TFLOP/s,",
        "# backward TFLOP/s] of the cuDNN backend, bf16, causal (top-left) mask, non-deterministic backward;",
        "# FLOPs over the causal half, s(s + 1)/2 scores a head, the backward 2.5x the forward's.",
        "kernel: cudnn",
        f"gpu: \"{facts['gpu']}\"",
        f"architecture: {a.architecture}",
        f"peak_tflops_bf16: {a.peak_bf16:g}",
        f"cudnn: \"{cudnn}\"",
        f"measured: \"{a.measured}\"",
        f"source: \"{a.source}\"",
        f"shape: \"batch {batch}, {heads} query heads, {kv_heads} KV heads, head dim {dqk} / {dvo}\"",
        "causal_bf16:",
    ]
    for seq in sorted(rates):
        fwd, bwd = rates[seq]
        out.append(f"  - [{seq}, {fwd:g}, {bwd:g}]")
    write_lines(a.out, out)


if __name__ == "__main__":
    main()
