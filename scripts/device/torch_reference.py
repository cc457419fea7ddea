#!/usr/bin/env python3
"""The same measurements as gpu-worker, with PyTorch, for docs/check.md §11.10.

GEMM TFLOPS at fp32, tf32, bf16 and fp16 for the shapes gpu-worker uses (square 4096, 8192,
16384 and one Llama-3.1-8B layer for 8192 tokens); fp8 (E4M3, bf16 out) at the same shapes through
torch._scaled_mm with and without fast accumulation (the path of the published H100 table and of
torchao, against gpu-worker's direct cuBLASLt calls, Transformer Engine's path: docs/time-model.md
§3.1); device-to-device copy bandwidth (bytes read +
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


def measure(run, a, b, c, m, n, k):
    """Times `run` (the best of as many calls as fill about 0.3 s, 3 to 50) and checks one entry of
    its output c against a float64 dot product on the CPU."""
    one = timed(run, 1)
    reps = int(max(3, min(50, 0.3 / max(one, 1e-6))))
    s = timed(run, reps)
    ref = float((a[0, :].double().cpu() * b[:, 0].double().cpu()).sum())
    got = float(c[0, 0].double().cpu())
    return {"m": m, "n": n, "k": k, "seconds": s, "tflops": 2.0 * m * n * k / s / 1e12, "repetitions": reps,
            "checked": abs(got - ref) <= abs(ref) / 64 + 1e-6}


class Tally:
    """The best square shape's TFLOPS and the layer shapes' FLOPs over their summed time."""

    def __init__(self):
        self.layer_flop, self.layer_s, self.best_square = 0.0, 0.0, 0.0

    def add(self, role, r):
        if role == "layer":
            self.layer_flop += 2.0 * r["m"] * r["n"] * r["k"]
            self.layer_s += r["seconds"]
        else:
            self.best_square = max(self.best_square, r["tflops"])

    def record(self, results, key, what):
        layer = self.layer_flop / self.layer_s / 1e12
        results["summary"][key] = self.best_square
        results["summary"][f"{key}_layer"] = layer
        print(f"{what}: best square {self.best_square:.1f} TFLOPS, layer {layer:.1f}", flush=True)


def gemm(results):
    gen = torch.Generator(device="cuda")
    gen.manual_seed(1)
    for name, (dtype, tf32) in PRECISIONS.items():
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        tally = Tally()
        for label, role, m, n, k in SHAPES:
            a = quarters(m, k, dtype, gen)
            b = quarters(k, n, dtype, gen)
            c = torch.matmul(a, b)
            torch.cuda.synchronize()
            r = measure(lambda: torch.matmul(a, b, out=c), a, b, c, m, n, k)
            results["gemm"].append({"precision": name, "shape": label, "role": role, **r})
            tally.add(role, r)
            del a, b, c
            torch.cuda.empty_cache()
        tally.record(results, f"gemm_{name}", name)
    torch.backends.cuda.matmul.allow_tf32 = False


def gemm_fp8(results):
    """fp8 E4M3 x E4M3 -> bf16 through torch._scaled_mm (cuBLASLt underneath), per-tensor scales of 1,
    the second operand column-major (the TN layout cuBLASLt's fp8 kernels require), once with the
    default accumulation and once with use_fast_accum=True (CUBLASLT_MATMUL_DESC_FAST_ACCUM)."""
    results["gemm_fp8"] = []
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        results["summary"]["gemm_fp8"] = "SKIP: this torch has no _scaled_mm"
        print("fp8: SKIP (no torch._scaled_mm)", flush=True)
        return
    gen = torch.Generator(device="cuda")
    gen.manual_seed(2)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    for fast in (False, True):
        mode = "fast_accum" if fast else "default"
        tally = Tally()
        for label, role, m, n, k in SHAPES:
            # q/4 with q in -4..4 is exact in E4M3 (as the other precisions' inputs are in theirs).
            a = quarters(m, k, torch.bfloat16, gen).to(torch.float8_e4m3fn)
            b_rows = quarters(n, k, torch.bfloat16, gen).to(torch.float8_e4m3fn)  # B^T, row-major
            b = b_rows.t()  # k x n, column-major

            def run():
                return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16, use_fast_accum=fast)

            try:
                c = run()
            except (RuntimeError, TypeError) as e:
                results["summary"][f"gemm_fp8_{mode}"] = f"SKIP: {type(e).__name__}: {e}"[:300]
                print(f"fp8 {mode}: SKIP ({e})", flush=True)
                break
            torch.cuda.synchronize()
            r = measure(run, a, b, c, m, n, k)  # checked on the first call's output
            results["gemm_fp8"].append({"precision": "fp8_e4m3", "accumulation": mode, "shape": label, "role": role, **r})
            tally.add(role, r)
            del a, b, b_rows, c
            torch.cuda.empty_cache()
        else:
            tally.record(results, f"gemm_fp8_{mode}", f"fp8 {mode}")


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
    gemm_fp8(results)
    copies(results)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
