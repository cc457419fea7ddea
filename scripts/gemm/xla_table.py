#!/usr/bin/python3
"""A published GEMM table for the time model, from OpenXLA's default matmul perf table (docs/time-model.md §3.1).

OpenXLA ships the GEMM rates it measured per device as a protobuf text file,
xla/service/gpu/model/default_matmul_perf_table.txtpb (message xla.GemmPerfTable): per device key
("sm_100_B200", ...) entries of a batched dot b x [m x k] . [k x n] with, per datatype key
("bf16xbf16->bf16", "f8e4m3fnxf8e4m3fn->bf16", ...), the rate in FLOP/s: 2 b m n k over the median
kernel time of the dot (xla/tools/matmul_perf_table_gen.cc, 5 runs on each of two argument sets).

This writes data/gemm/<slug>.yaml for one device key in the format of the other tables: rows
[m, n, k, TFLOP/s] under bf16 (bf16xbf16->bf16) and fp8 (f8e4m3fnxf8e4m3fn->bf16). A batch of b
dots of m rows is taken as one GEMM of b x m rows: in the sweep their rates agree (on the B200,
b x m = 4,096 at n = k = 4,096 runs at 1,417, 1,417 and 1,414 TFLOP/s for b = 1, 2, 4), so the
b = 2 and b = 4 rows at m = 4,096 extend the m axis to 8,192 and 16,384. Where several (b, m) give
the same b x m, the smallest b (the plainest GEMM) is kept. A rate above the card's dense peak
(--peak-bf16, --peak-fp8) is refused: no GEMM beats its peak, and a kernel timer that caught the
wrong kernel does (the same file's sm_90 fp8 rows reach 2,424 TFLOP/s on a card of 1,979).

The text file is read with protobuf's own text-format parser (Debian's python3-protobuf) against
the schema of the three messages written out below from xla/xla_data.proto; an unknown field is
an error.

Usage: xla_table.py --key sm_100_B200 --gpu "NVIDIA B200" --sm-count 148 --source TEXT
           --measured TEXT --peak-bf16 2250 --peak-fp8 4500 --out data/gemm/b200.yaml TXTPB
"""
import argparse
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from table_file import write_lines  # noqa: E402 (scripts/table_file.py)

DTYPES = {"bf16": "bf16xbf16->bf16", "fp8": "f8e4m3fnxf8e4m3fn->bf16"}
MAX_SIDE = 10**7  # a matrix side, as src/fit/gemm_table.cc bounds it


def _message_class():
    """xla.GemmPerfTable: entries map<string, GemmPerfTableEntryValues>; GemmPerfTableEntryValues:
    repeated GemmPerfTableEntry entries; GemmPerfTableEntry: int64 b, m, n, k and map<string, int64> flops."""
    f = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="gpuplan_xla_gemm.proto", package="xla", syntax="proto3")

    def field(msg, name, number, ftype, label=f.LABEL_OPTIONAL, type_name=None):
        fd = msg.field.add(name=name, number=number, type=ftype, label=label)
        if type_name:
            fd.type_name = type_name

    def map_entry(msg, name, value_type, value_type_name=None):
        entry = msg.nested_type.add(name=name)
        entry.options.map_entry = True
        field(entry, "key", 1, f.TYPE_STRING)
        field(entry, "value", 2, value_type, type_name=value_type_name)

    e = fdp.message_type.add(name="GemmPerfTableEntry")
    for number, name in enumerate(("b", "m", "n", "k"), 1):
        field(e, name, number, f.TYPE_INT64)
    map_entry(e, "FlopsEntry", f.TYPE_INT64)
    field(e, "flops", 5, f.TYPE_MESSAGE, f.LABEL_REPEATED, ".xla.GemmPerfTableEntry.FlopsEntry")
    v = fdp.message_type.add(name="GemmPerfTableEntryValues")
    field(v, "entries", 1, f.TYPE_MESSAGE, f.LABEL_REPEATED, ".xla.GemmPerfTableEntry")
    t = fdp.message_type.add(name="GemmPerfTable")
    map_entry(t, "EntriesEntry", f.TYPE_MESSAGE, ".xla.GemmPerfTableEntryValues")
    field(t, "entries", 1, f.TYPE_MESSAGE, f.LABEL_REPEATED, ".xla.GemmPerfTable.EntriesEntry")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("xla.GemmPerfTable"))


def read_table(path, key):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError) as err:
        sys.exit(f"{path}: cannot be read as a text file: {err}")
    table = _message_class()()
    try:
        text_format.Parse(text, table)
    except text_format.ParseError as err:
        # The parser's message carries "line:column".
        sys.exit(f"{path}:{err}")
    if key not in table.entries:
        sys.exit(f"{path}: no device key {key!r} (keys: {', '.join(sorted(table.entries))})")
    return table.entries[key].entries


def rows_of(entries, path, peaks):
    """{dtype: {(m, n, k): TFLOP/s}} with b x m folded into m, the smallest b kept."""
    out = {d: {} for d in DTYPES}
    chosen_b = {d: {} for d in DTYPES}
    for i, e in enumerate(entries):
        if min(e.b, e.m, e.n, e.k) < 1 or max(e.b * e.m, e.n, e.k) > MAX_SIDE:
            sys.exit(f"{path}: entry {i}: b, m, n and k must be positive and b x m, n, k at most {MAX_SIDE:,} "
                     f"(b={e.b} m={e.m} n={e.n} k={e.k}), the sizes gpuplan's table reader takes")
        for dtype, name in DTYPES.items():
            if name not in e.flops:
                continue
            tflops = e.flops[name] / 1e12
            shape = (e.b * e.m, e.n, e.k)
            where = f"{path}: entry {i} (b={e.b} m={e.m} n={e.n} k={e.k}) {name}"
            if not tflops > 0:
                sys.exit(f"{where}: rate {e.flops[name]} is not positive")
            if peaks[dtype] and tflops > peaks[dtype]:
                sys.exit(f"{where}: {tflops:.1f} TFLOP/s is above the card's dense peak {peaks[dtype]:g}: "
                         "not a rate a GEMM can run at")
            if shape in chosen_b[dtype] and chosen_b[dtype][shape] <= e.b:
                continue
            chosen_b[dtype][shape] = e.b
            out[dtype][shape] = tflops
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("txtpb")
    ap.add_argument("--key", required=True, help='device key in the file, e.g. "sm_100_B200"')
    ap.add_argument("--gpu", required=True, help="the device name as the card reports it")
    ap.add_argument("--sm-count", type=int, required=True)
    ap.add_argument("--source", required=True, help="repository, commit and path of the file")
    ap.add_argument("--measured", required=True, help="when, as far as the source says")
    ap.add_argument("--peak-bf16", type=float, required=True, help="the card's dense bf16 peak, TFLOP/s")
    ap.add_argument("--peak-fp8", type=float, required=True, help="its dense fp8 peak, TFLOP/s")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    entries = read_table(a.txtpb, a.key)
    rows = rows_of(entries, a.txtpb, {"bf16": a.peak_bf16, "fp8": a.peak_fp8})
    if not rows["bf16"] and not rows["fp8"]:
        sys.exit(f"{a.txtpb}: key {a.key!r} has no {' or '.join(DTYPES.values())} rates")
    out = [
        f"# Published, not measured here: OpenXLA's matmul perf table, device key {a.key} ({a.source}).",
        "# Each rate: 2 b m n k over the median kernel time of XLA's dot (xla/tools/matmul_perf_table_gen.cc);",
        "# a batch of b dots of m rows taken as one GEMM of b x m rows, the smallest b kept",
        f"# (scripts/gemm/xla_table.py --key {a.key}; docs/time-model.md §3.1).",
        f'gpu: "{a.gpu}"',
        f"sm_count: {a.sm_count}",
        f'measured: "{a.measured}"',
        f'source: "{a.source}"',
        f"peak_tflops_bf16: {a.peak_bf16:g}",
        f"peak_tflops_fp8: {a.peak_fp8:g}",
    ]
    for dtype in ("bf16", "fp8"):
        shapes = rows[dtype]
        if not shapes:
            continue
        out.append(f"{dtype}:  # {DTYPES[dtype]}, {len(shapes)} shapes")
        out.append("  # [m, n, k, tflops]")
        for shape in sorted(shapes):
            out.append(f"  - [{shape[0]}, {shape[1]}, {shape[2]}, {shapes[shape]:.1f}]")
    write_lines(a.out, out)


if __name__ == "__main__":
    main()
