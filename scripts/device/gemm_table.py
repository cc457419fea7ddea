#!/usr/bin/env python3
"""The measured GEMM-efficiency table of the time model, from `gpu-worker --test gemm-sweep` lines.

Reads the worker's JSON lines (the raw file h200-measure.sh brings back, committed as
tests/fixtures/device/gemm-sweep-<slug>.jsonl) and writes data/gemm/<slug>.yaml:

    # Measured by scripts/device/h200-measure.sh (gpu-worker --test gemm-sweep); raw lines: tests/fixtures/device/gemm-sweep-<slug>.jsonl
    gpu: "NVIDIA H200"
    sm_count: 132
    cublaslt_version: 130000
    measured: "2026-12-02"
    bf16:
      # [m, n, k, tflops]
      - [128, 1024, 1024, 12.3]
    fp8:
      - [...]
    fp8_fast_accum:
      - [...]

(the raw lines' path: the input's when it lies in this repository, else that default), then
one row per measured shape (m tokens, n output features, k input features), sorted by m, n, k,
TFLOPS with one decimal: bf16, fp8, and the worker's fp8-fast (fp8 with cuBLASLt's fast
accumulation, the mode of the forward fp8 GEMM) as `fp8_fast_accum`; a precision the time model
does not read (fp16, tf32, ...) is reported and left out. A precision with no row (fp8 below
compute capability 8.9: the worker's skip line) has no section.

The slug comes from the GPU catalog (data/gpus.yaml): the entry whose name or alias is the device
name, lower-cased, memory size dropped where no other entry then has the same slug ("NVIDIA H200"
-> "H200 SXM 141GB" -> "h200-sxm"; the two A100 SXM keep theirs: "a100-40gb-sxm").

Refuses (exit 1) input with an error line, no `done` line (a sweep cut short: --partial writes the
rows there are), or a shape whose sampled entries did not match the CPU reference.

Usage: python3 scripts/device/gemm_table.py gemm-sweep-h200.jsonl [--out FILE] [--slug S]
       [--measured YYYY-MM-DD] [--partial]
Python 3 standard library only.
"""
import argparse
import datetime
import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
# The worker's precision names and the table's keys for them (src/fit/gemm_table.h), in order.
SECTIONS = {"bf16": "bf16", "fp8": "fp8", "fp8-fast": "fp8_fast_accum"}


def read_lines(path):
    """The JSON objects of `path`, one a line; lines that are not JSON objects are reported and skipped."""
    out = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                print(f"{path}:{number}: not JSON, skipped: {line[:120]}", file=sys.stderr)
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def catalog_entries(path):
    """(name, [aliases]) for each entry of data/gpus.yaml, read without a YAML library."""
    entries = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^  - name:\s*(.+?)\s*$", line)
            if m:
                entries.append((m.group(1).strip("\"'"), []))
                continue
            m = re.match(r"^    aliases:\s*(\[.*\])\s*$", line)
            if m and entries:
                entries[-1][1].extend(re.findall(r'"([^"]*)"', m.group(1)))
    return entries


def slugify(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def short_slug(name):
    return slugify(re.sub(r"\b\d+\s*GB\b", " ", name, flags=re.IGNORECASE))


def device_slug(device, catalog_path):
    entries = catalog_entries(catalog_path) if os.path.exists(catalog_path) else []
    want = device.strip().lower()
    for name, aliases in entries:
        if want == name.lower() or want in (a.lower() for a in aliases):
            short = short_slug(name)
            clashes = [n for n, _ in entries if n != name and short_slug(n) == short]
            return slugify(name) if clashes else short
    print(f"'{device}' is not in {catalog_path}: slug from the name itself", file=sys.stderr)
    return slugify(re.sub(r"^nvidia\s+", "", device, flags=re.IGNORECASE))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("jsonl", help="gpu-worker --test gemm-sweep output")
    ap.add_argument("--out", help="the YAML file (default data/gemm/<slug>.yaml)")
    ap.add_argument("--slug", help="the GPU's slug (default from data/gpus.yaml)")
    ap.add_argument("--measured", help="the date measured, YYYY-MM-DD (default the worker's date line, else today UTC)")
    ap.add_argument("--catalog", default=os.path.join(ROOT, "data", "gpus.yaml"), help=argparse.SUPPRESS)
    ap.add_argument("--partial", action="store_true", help="write the rows there are when the sweep did not finish")
    args = ap.parse_args()

    lines = read_lines(args.jsonl)
    errors = [l for l in lines if l.get("type") == "error"]
    for e in errors:
        print(f"worker error: {e.get('api')} {e.get('error')} in {e.get('expr')} at {e.get('where')}", file=sys.stderr)
    sweeps = [l for l in lines if l.get("type") == "gemm_sweep"]
    if not sweeps:
        sys.exit(f"{args.jsonl}: no gemm_sweep line (is this `gpu-worker --test gemm-sweep` output?)")
    sweep = sweeps[0]
    for other in sweeps[1:]:
        for key in ("device", "sm_count", "cublaslt_version"):
            if other.get(key) != sweep.get(key):
                sys.exit(f"{args.jsonl}: two sweeps with different {key}: {sweep.get(key)!r} and {other.get(key)!r}")
    device = sweep.get("device")
    if not isinstance(device, str):  # the device line names it too
        device = next((l.get("name") for l in lines if l.get("type") == "device"), None)
    if not device:
        sys.exit(f"{args.jsonl}: no device name")

    finished = any(l.get("type") == "done" for l in lines)
    if (errors or not finished) and not args.partial:
        sys.exit(f"{args.jsonl}: the sweep did not finish ({'an error line' if errors else 'no done line'}); "
                 "--partial writes the rows there are")

    for s in lines:
        if s.get("type") == "skip":
            where = f" {s['m']},{s['n']},{s['k']}" if "m" in s else ""
            print(f"skipped {s.get('precision')}{where}: {s.get('reason')}", file=sys.stderr)

    rows = {}  # precision -> {(m, n, k): tflops}
    wrong = []
    for l in lines:
        if l.get("type") != "gemm_shape":
            continue
        prec = l["precision"]
        key = (int(l["m"]), int(l["n"]), int(l["k"]))
        if l.get("mismatches", 0):
            wrong.append(f"{prec} {key}: {l['mismatches']} of {l.get('samples_checked')} sampled entries wrong")
            continue
        table = rows.setdefault(prec, {})
        if key in table:
            print(f"{prec} {key} measured twice: the later line kept", file=sys.stderr)
        table[key] = float(l["tflops"])
    if wrong:
        sys.exit("results that did not match the CPU reference (a faulty GPU or a worker bug):\n  " + "\n  ".join(wrong))
    if not rows:
        sys.exit(f"{args.jsonl}: no gemm_shape line")

    slug = args.slug or device_slug(device, args.catalog)
    out = args.out or os.path.join(ROOT, "data", "gemm", f"{slug}.yaml")
    measured = args.measured or sweep.get("date") or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", measured):
        sys.exit(f"measured date '{measured}' is not YYYY-MM-DD")

    # The raw lines' path in the repository: the input itself when it is committed there already.
    raw = os.path.relpath(os.path.abspath(args.jsonl), ROOT)
    if raw.startswith(".."):
        raw = f"tests/fixtures/device/gemm-sweep-{slug}.jsonl"
    text = [
        f"# Measured by scripts/device/h200-measure.sh (gpu-worker --test gemm-sweep); raw lines: {raw}",
        f"gpu: {json.dumps(device)}",
        f"sm_count: {int(sweep['sm_count'])}",
        f"cublaslt_version: {int(sweep['cublaslt_version'])}",
        f"measured: {json.dumps(measured)}",
    ]
    for prec in rows:
        if prec not in SECTIONS:
            print(f"{prec}: not a precision the time model reads ({', '.join(SECTIONS)}): left out", file=sys.stderr)
    order = [p for p in SECTIONS if p in rows]
    if not order:
        sys.exit(f"{args.jsonl}: no {', '.join(SECTIONS)} rows")
    if "fp8-fast" in order and "fp8" not in order:
        sys.exit(f"{args.jsonl}: fp8-fast rows without fp8 rows (the gradient GEMMs' mode): not a table")
    for i, prec in enumerate(order):
        text.append(f"{SECTIONS[prec]}:")
        if i == 0:
            text.append("  # [m, n, k, tflops]")
        for (m, n, k), tflops in sorted(rows[prec].items()):
            text.append(f"  - [{m}, {n}, {k}, {tflops:.1f}]")
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(text) + "\n")
    counts = ", ".join(f"{p} {len(rows[p])}" for p in order)
    print(f"wrote {out}: {device}, {counts} shapes", file=sys.stderr)


if __name__ == "__main__":
    main()
