#!/usr/bin/python3
"""scripts/attention/cudnn_sdpa_table.py against cuDNN's published SDPA benchmark CSVs (docs/time-model.md §3.2).

1. The committed tables are what the script writes from the committed CSVs with the arguments in
   data/attention/README.md (byte for byte), and hold the CSVs' own rates, read here by hand from
   the files: H200 causal bf16 seq 8,192: 644 / 541 TFLOP/s; GB200 seq 8,192: 1,574 / 1,332.
2. Refusals, each exit 1 and no file written: a rate its time does not give (a CSV edited by hand),
   a rate above --peak-bf16, a missing column, a forward rate without its backward.
Usage: attention_table_test.py SCRIPT FIXTURE_DIR DATA_DIR
"""
import csv
import io
import os
import subprocess
import sys
import tempfile

import yaml

TABLES = {
    "hopper-cudnn.yaml": ("cudnn-h200-llama3.1-20260227.csv", "hopper", "989.4", "2026-02-27",
                          "github.com/NVIDIA/cudnn-frontend@3929da2 benchmark/sdpa_benchmark_training/results/"
                          "h200_919_only_cudnn/llama3.1_20260227_034703.csv (one NVIDIA H200)"),
    "blackwell-cudnn.yaml": ("cudnn-gb200-llama3.1-20260424.csv", "blackwell", "2500", "2026-04-24",
                             "github.com/NVIDIA/cudnn-frontend@3929da2 benchmark/sdpa_benchmark_training/results/"
                             "llama3.1/gb200/llama3.1_20260424_100750.csv (one NVIDIA GB200 GPU, 1,200 W)"),
}


def run(script, csv_path, out, arch="hopper", peak="989.4", measured="m", source="s"):
    return subprocess.run([script, "--architecture", arch, "--peak-bf16", peak, "--measured", measured,
                           "--source", source, "--out", out, csv_path], capture_output=True, text=True)


def main():
    script, fixtures, data = sys.argv[1], sys.argv[2], sys.argv[3]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (fixture, arch, peak, measured, source) in TABLES.items():
            out = os.path.join(tmp, name)
            r = run(script, os.path.join(fixtures, fixture), out, arch, peak, measured, source)
            if r.returncode != 0:
                failures.append(f"{fixture}: {r.stderr.strip()}")
                continue
            with open(out, encoding="utf-8") as a, open(os.path.join(data, "attention", name), encoding="utf-8") as b:
                if a.read() != b.read():
                    failures.append(f"data/attention/{name} is not what the script writes from {fixture}")
        want = {"hopper-cudnn.yaml": [8192, 644, 541], "blackwell-cudnn.yaml": [8192, 1574, 1332]}
        for name, row in want.items():
            with open(os.path.join(data, "attention", name), encoding="utf-8") as fh:
                rows = yaml.safe_load(fh)["causal_bf16"]
            if row not in rows:
                failures.append(f"{name}: no row {row} in {rows}")

        # A copy of the H200 CSV, changed one way at a time.
        with open(os.path.join(fixtures, TABLES["hopper-cudnn.yaml"][0]), newline="", encoding="utf-8") as fh:
            original = list(csv.DictReader(fh))
        fields = list(original[0].keys())

        def write(rows, columns=fields):
            path = os.path.join(tmp, "changed.csv")
            buf = io.StringIO()
            w = csv.DictWriter(buf, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(buf.getvalue())
            return path

        def refused(label, path, words, peak="989.4"):
            out = os.path.join(tmp, "refused.yaml")
            r = run(script, path, out, peak=peak)
            if r.returncode != 1 or words not in r.stderr or os.path.exists(out):
                failures.append(f"{label}: rc {r.returncode}, stderr {r.stderr.strip()!r}, "
                                f"file written: {os.path.exists(out)}")

        edited = [dict(row) for row in original]
        edited[8]["fwd_tflops"] = "700.000"  # the seq 8,192 causal bf16 line: its time gives 644
        refused("a rate its time does not give", write(edited), "is not what fwd_time_ms")
        refused("a rate above the peak", write(original), "above the card's dense peak", peak="600")
        refused("a missing column", write(original, [f for f in fields if f != "bwd_time_ms"]), "'bwd_time_ms' missing")
        # The per-pass layout with the backward line of a length removed.
        gb200 = os.path.join(fixtures, TABLES["blackwell-cudnn.yaml"][0])
        with open(gb200, newline="", encoding="utf-8") as fh:
            per_pass = list(csv.DictReader(fh))
        gb_fields = list(per_pass[0].keys())
        kept = [row for row in per_pass if not (row["q_seqlen"] == "4096" and row["profile_pass"] == "bwd")]
        refused("a forward without its backward", write(kept, gb_fields), "lacks its backward", peak="2500")
    if failures:
        print("\n".join(failures))
        sys.exit(1)
    print("attention tables: as converted, and every refusal held")


if __name__ == "__main__":
    main()
