#!/usr/bin/env python3
"""The same measurements as gpu-worker, with PyTorch, for docs/check.md §11.10.

GEMM TFLOPS at fp32, tf32, bf16 and fp16 for the shapes gpu-worker uses (square 4096, 8192,
16384 and one Llama-3.1-8B layer for 8192 tokens), device-to-device copy bandwidth (bytes read +
written, as STREAM copy counts them) and host-to-device / device-to-host copies of 256 MiB
from pinned memory. Each timing is the best of several CUDA-event-timed repetitions after a
warm-up. Inputs are q/4 with q in -4..4, as in gpu-worker, so that results are exact and comparable.
Writes one JSON file (--out).
"""
import argparse
import json
import platform
import time

import torch

SHAPES = [
    ("square", "square", 4096, 4096, 4096),
    ("square", "square", 8192, 8192, 8192),
    ("square", "square", 16384, 16384, 16384),
    ("llama8b_qkv", "layer", 6144, 8192, 4096),
    ("llama8b_o", "layer", 4096, 8192, 4096),
    ("llama8b_gate_up", "layer", 28672, 8192, 4096),
    ("llama8b_down", "layer", 4096, 8192, 14336),
]
PRECISIONS = {
    "fp32": (torch.float32, False),
    "tf32": (torch.float32, True),
    "bf16": (torch.bfloat16, False),
    "fp16": (torch.float16, False),
}


def timed(fn, reps):
    """Best seconds of `reps` single calls, each timed with CUDA events."""
    best = float("inf")
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        best = min(best, start.elapsed_time(stop) / 1e3)
    return best


def quarters(rows, cols, dtype, gen):
    q = torch.randint(-4, 5, (rows, cols), generator=gen, device="cuda", dtype=torch.int32)
    return (q.to(torch.float32) * 0.25).to(dtype)


def gemm(results):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    for name, (dtype, tf32) in PRECISIONS.items():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        layer_flop, layer_s = 0.0, 0.0
        best_square = 0.0
        for label, role, m, n, k in SHAPES:
            a = quarters(m, k, dtype, gen)
            b = quarters(k, n, dtype, gen)
            c = torch.matmul(a, b)
            torch.cuda.synchronize()
            one = timed(lambda: torch.matmul(a, b, out=c), 1)
            reps = int(max(3, min(50, 0.3 / max(one, 1e-6))))
            s = timed(lambda: torch.matmul(a, b, out=c), reps)
            # Checked: one entry against a float64 dot product on the CPU.
            ref = float((a[0, :].double().cpu() * b[:, 0].double().cpu()).sum())
            got = float(c[0, 0].double().cpu())
            flop = 2.0 * m * n * k
            tflops = flop / s / 1e12
            results["gemm"].append({"precision": name, "shape": label, "role": role, "m": m, "n": n, "k": k,
                                    "seconds": s, "tflops": tflops, "repetitions": reps,
                                    "checked": abs(got - ref) <= abs(ref) / 64 + 1e-6})
            if role == "layer":
                layer_flop += flop
                layer_s += s
            else:
                best_square = max(best_square, tflops)
            del a, b, c
            torch.cuda.empty_cache()
        results["summary"][f"gemm_{name}"] = best_square
        results["summary"][f"gemm_{name}_layer"] = layer_flop / layer_s / 1e12
        print(f"{name}: best square {best_square:.1f} TFLOPS, layer {layer_flop / layer_s / 1e12:.1f}", flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False


def copies(results):
    n = 1 << 28  # floats: 1 GiB, as gpu-worker's STREAM arrays
    src = torch.arange(n, device="cuda", dtype=torch.float32).remainder_(1024).add_(1)
    dst = torch.empty_like(src)
    dst.copy_(src)
    s = timed(lambda: dst.copy_(src), 20)
    ok = bool(torch.equal(dst, src))
    results["copy"] = {"bytes_read_written": 2 * n * 4, "seconds": s, "gb_per_s": 2 * n * 4 / s / 1e9, "checked": ok}
    results["summary"]["d2d_copy_gb_s"] = 2 * n * 4 / s / 1e9
    print(f"d2d copy {2 * n * 4 / s / 1e9:.0f} GB/s (read + written)", flush=True)
    del src, dst
    nbytes = 256 << 20
    host = torch.randint(0, 255, (nbytes,), dtype=torch.uint8).pin_memory()
    back = torch.empty_like(host).pin_memory()
    dev = torch.empty(nbytes, dtype=torch.uint8, device="cuda")
    dev.copy_(host, non_blocking=True)
    h2d = timed(lambda: dev.copy_(host, non_blocking=True), 10)
    d2h = timed(lambda: back.copy_(dev, non_blocking=True), 10)
    torch.cuda.synchronize()
    ok = bool(torch.equal(back, host))
    results["pcie"] = {"bytes": nbytes, "h2d_pinned_seconds": h2d, "d2h_pinned_seconds": d2h,
                       "h2d_pinned_gb_s": nbytes / h2d / 1e9, "d2h_pinned_gb_s": nbytes / d2h / 1e9, "checked": ok}
    results["summary"]["pcie_h2d_pinned_gb_s"] = nbytes / h2d / 1e9
    results["summary"]["pcie_d2h_pinned_gb_s"] = nbytes / d2h / 1e9
    print(f"h2d {nbytes / h2d / 1e9:.1f} GB/s, d2h {nbytes / d2h / 1e9:.1f} GB/s (pinned)", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    results = {
        "schema": "gpuplan-torch-reference/1",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "torch": torch.__version__, "cuda": torch.version.cuda, "python": platform.python_version(),
        "device": props.name, "sms": props.multi_processor_count, "memory_bytes": props.total_memory,
        "gemm": [], "summary": {},
    }
    gemm(results)
    copies(results)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
