#!/usr/bin/env python3
"""Issue 13 requirement 3: a measured validation set for `gpuplan fit`, from one GPU.

For each case it builds a model from one of gpuplan's preset config.json files (random weights,
no downloads; large models layer-reduced, which keeps every layer's shapes), runs a few steps of
the task and records what PyTorch and the driver say:

  peak_allocated   torch.cuda.max_memory_allocated() over the steady-state steps
  peak_reserved    torch.cuda.max_memory_reserved() over the same steps
  nvidia_smi       the process's memory as nvidia-smi lists it after those steps (the caching
                   allocator keeps its reserve, so this is the CUDA context plus the reserve)
  context          the CUDA context alone (device memory used after CUDA initialised, before any
                   tensor), for the record
  step_seconds     the median time of the timed steps (CUDA events), and tokens per second

Steady state: the first steps (optimizer state creation, cuDNN/cuBLAS workspaces, autotuning) are
run before the peak counters are reset, so the rows are what a long run sees, as
torch.cuda.max_memory_allocated() reports it in a training loop.

One worker process per model family (a fresh CUDA context and allocator for each), cases of that
family in order; the parent writes:

  $OUT/measured_h200.jsonl   the environment (GPU, driver, torch, transformers, peft, CUDA
                             versions) on its first line, then one JSON object per row, as measured

and nothing else (the device machine returns few files). Back here, `python3
scripts/device/fit_validation.py --yaml measured_h200.jsonl` writes tests/validation/measured_h200.yaml
and the config.json each row was built from (tests/validation/measured-configs/<id>.json), both
derived from the JSONL and data/models, so the raw JSONL is committed beside them as the fixture.

Usage on the device machine, from the repository root:  OUT=/some/dir python3 scripts/device/fit_validation.py
Options: --quick (a handful of cases, for a dry run), --only ID-PREFIX.

Conventions a row states so `gpuplan fit` can be asked the same question (docs/validation-memory.md):
bf16 weights (torch default dtype set to bfloat16, so parameters, gradients and AdamW's two states
are bf16: gpuplan's `--precision bf16`, pure); loss through transformers' own loss (logits upcast to
fp32: framework `generic`, loss `full`); attention through PyTorch SDPA where transformers allows it
(the row records the implementation it used); recomputation = transformers'
gradient_checkpointing_enable() (full, per layer); `op` = the same per-layer checkpoint with
torchtitan's op-level policy as its context_fn (the output of every second aten.mm of a layer
recomputed, the other matmuls' and SDPA's kept: gpuplan's `--recompute op`, docs/memory-model.md
§4.3); LoRA through peft on the attention projections. Everything runs eager (no torch.compile):
gpuplan's `--compile off`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
MODELS = os.path.join(ROOT, "data", "models")

# (family, preset, layers kept or None, attention projections for LoRA)
FAMILIES = [
    ("llama-gqa-tied", "Llama-3.2-1B-Instruct", None, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("qwen3-gqa-tied", "Qwen3-0.6B", None, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("qwen2-gqa-untied", "Qwen2.5-7B", 4, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("mistral-sliding", "Mistral-7B-v0.1", 4, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("phi3-mha", "Phi-3-mini-128k-instruct", 4, ["qkv_proj", "o_proj"]),
    ("gemma2-sliding-tied", "gemma-2-2b", 6, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("qwen2moe-moe", "Qwen1.5-MoE-A2.7B", 4, ["q_proj", "k_proj", "v_proj", "o_proj"]),
    ("mixtral-moe", "Mixtral-8x7B-v0.1", 2, ["q_proj", "k_proj", "v_proj", "o_proj"]),
]

# (task, micro_batch, seq, recompute); inference: (task, batch, prompt, decode tokens)
TRAIN_MATRIX = [
    ("full", 1, 1024, "none"),
    ("full", 2, 2048, "none"),
    ("full", 2, 2048, "full"),
    ("lora", 1, 2048, "none"),
    ("lora", 4, 1024, "full"),
    ("full", 2, 2048, "op"),   # last: a new case must not delay the others if a run is cut short
]
INFER_MATRIX = [
    ("infer", 1, 2048, 32),
    ("infer", 8, 1024, 32),
]


def cases_of(family, quick):
    train = TRAIN_MATRIX[:2] if quick else TRAIN_MATRIX
    infer = INFER_MATRIX[:1] if quick else INFER_MATRIX
    out = []
    for task, mb, seq, rc in train:
        out.append({"task": task, "micro_batch": mb, "seq": seq, "recompute": rc})
    for task, batch, prompt, decode in infer:
        out.append({"task": task, "micro_batch": batch, "seq": prompt, "decode": decode, "recompute": "none"})
    return out


def row_id(family, c):
    rid = f"h200-{family}-{c['task']}-mb{c['micro_batch']}-s{c['seq']}"
    if c["recompute"] == "full":
        rid += "-ac"
    elif c["recompute"] != "none":
        rid += "-" + c["recompute"]  # -op
    return rid


def op_level_context(torch):
    """The context_fn of torch.utils.checkpoint for torchtitan's op-level policy: inside one
    checkpointed layer, count the aten.mm calls (forward and recompute separately) and keep the
    outputs of the odd ones and of SDPA; recompute everything else. (torchtitan's list also keeps
    reduce-scatters, which one GPU does not run.)"""
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    ops = torch.ops.aten
    keep = {ops.mm.default, ops._scaled_dot_product_efficient_attention.default,
            ops._scaled_dot_product_flash_attention.default}
    if hasattr(ops, "_scaled_dot_product_cudnn_attention"):
        keep.add(ops._scaled_dot_product_cudnn_attention.default)

    def context():
        count = {"forward": 0, "recompute": 0}

        def policy(ctx, func, *args, **kwargs):
            key = "recompute" if ctx.is_recompute else "forward"
            if func == ops.mm.default:
                count[key] += 1
            kept = func in keep and not (func == ops.mm.default and count[key] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if kept else CheckpointPolicy.PREFER_RECOMPUTE

        return create_selective_checkpoint_contexts(policy)

    return context


def reduced_config(preset, layers):
    with open(os.path.join(MODELS, preset + ".json")) as f:
        cfg = json.load(f)
    if layers is not None:
        cfg["num_hidden_layers"] = layers
        for key in ("layer_types", "mlp_only_layers"):  # per-layer lists must match the count
            if isinstance(cfg.get(key), list) and len(cfg[key]) > layers:
                cfg[key] = cfg[key][:layers]
    cfg.pop("auto_map", None)  # the native transformers class, no remote code
    cfg["use_cache"] = True
    return cfg


# ------------------------------------------------------------------------------------------------
# Worker: one family, in its own process.


def nvidia_smi_process_mib(pid):
    try:
        out = subprocess.run(
            ["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
            capture_output=True, text=True, timeout=20).stdout
    except Exception:  # noqa: BLE001 - the row records the absence
        return None
    for line in out.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 2 and parts[0] == str(pid):
            try:
                return int(parts[1])
            except ValueError:
                return None
    return None


def run_worker(family, preset, layers, lora_targets, cases, out_dir):
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM

    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the context
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    context_bytes = total - free - torch.cuda.memory_reserved()
    rows = []
    cfg_dict = reduced_config(preset, layers)
    for c in cases:
        rid = row_id(family, c)
        row = {"id": rid, "family": family, "preset": preset, "layers": cfg_dict.get("num_hidden_layers"),
               "model_config": f"tests/validation/measured-configs/{rid}.json", **c}
        try:
            row.update(measure_case(torch, AutoConfig, AutoModelForCausalLM, cfg_dict, c, lora_targets))
            free, total = torch.cuda.mem_get_info()
            row["device_used_after"] = total - free
            row["context"] = context_bytes
            row["status"] = "ok"
        except torch.cuda.OutOfMemoryError as e:  # a row that did not fit is a finding too
            row["status"] = "oom: " + str(e).splitlines()[0]
        except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
            row["status"] = f"error: {type(e).__name__}: {e}"
        print(json.dumps(row), flush=True)
        rows.append(row)
        torch.cuda.empty_cache()
    return rows


def measure_case(torch, AutoConfig, AutoModelForCausalLM, cfg_dict, c, lora_targets):
    import gc

    model_type = cfg_dict["model_type"]
    cfg = AutoConfig.for_model(model_type, **{k: v for k, v in cfg_dict.items() if k != "model_type"})
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa")
    except (ValueError, ImportError):
        with torch.device("cuda"):
            model = AutoModelForCausalLM.from_config(cfg)
    torch.set_default_dtype(torch.float32)
    if any(p.dtype != torch.bfloat16 for p in model.parameters()):
        model.to(torch.bfloat16)
    torch.cuda.empty_cache()
    attn = getattr(model.config, "_attn_implementation", None)
    vocab = cfg_dict["vocab_size"]
    mb, seq = c["micro_batch"], c["seq"]
    result = {"attn_implementation": attn,
              "params": sum(p.numel() for p in model.parameters())}

    def tokens(n_batch, n_seq):
        return torch.randint(0, vocab, (n_batch, n_seq), device="cuda")

    def timed(fn, warm, steps):
        for _ in range(warm):
            fn()
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(steps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / 1000)
        return statistics.median(times)

    if c["task"] in ("full", "lora"):
        model.train()
        if c["task"] == "lora":
            from peft import LoraConfig, get_peft_model

            model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0,
                                                     target_modules=lora_targets))
            result["lora_rank"] = 16
            result["lora_targets"] = ",".join(lora_targets)
        if c["recompute"] in ("full", "op"):
            kwargs = {"use_reentrant": False}
            if c["recompute"] == "op":
                kwargs["context_fn"] = op_level_context(torch)
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=kwargs)
            if c["task"] == "lora":
                model.enable_input_require_grads()
        trainable = [p for p in model.parameters() if p.requires_grad]
        result["trainable_params"] = sum(p.numel() for p in trainable)
        opt = torch.optim.AdamW(trainable, lr=1e-5)
        ids = tokens(mb, seq)

        def step():
            out = model(input_ids=ids, labels=ids, use_cache=False)
            out.loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)

        result["step_seconds"] = timed(step, warm=2, steps=3)
        result["tokens_per_second"] = mb * seq / result["step_seconds"]
        result["optimizer"] = "adamw"
    else:
        model.eval()
        prompt = tokens(mb, seq)

        @torch.no_grad()
        def generate():
            out = model(input_ids=prompt, use_cache=True)
            past = out.past_key_values
            nxt = out.logits[:, -1:].argmax(-1)
            for _ in range(c["decode"]):
                out = model(input_ids=nxt, past_key_values=past, use_cache=True)
                past = out.past_key_values
                nxt = out.logits[:, -1:].argmax(-1)

        result["step_seconds"] = timed(generate, warm=1, steps=2)
        result["context_tokens"] = seq + c["decode"]
        result["optimizer"] = "none"
    torch.cuda.synchronize()
    result["peak_allocated"] = torch.cuda.max_memory_allocated()
    result["peak_reserved"] = torch.cuda.max_memory_reserved()
    mib = nvidia_smi_process_mib(os.getpid())
    result["nvidia_smi"] = mib * 1048576 if mib is not None else None
    del model
    gc.collect()
    return result


# ------------------------------------------------------------------------------------------------
# Parent: one worker per family, then the files.


def yaml_rows(rows, env):
    lines = ["# Measured on one GPU by scripts/device/fit_validation.py (issue 13, requirement 3).",
             "# Provenance: " + json.dumps(env, sort_keys=True), "cases:"]
    for r in rows:
        lines.append("  - id: " + json.dumps(r["id"]))
        for k in sorted(r):
            if k != "id":
                lines.append(f"    {k}: {json.dumps(r[k])}")
    return "\n".join(lines) + "\n"


def to_yaml(jsonl):
    """tests/validation/measured_h200.yaml and tests/validation/measured-configs/<id>.json from a run's
    JSONL (its first line may be the environment): no GPU needed."""
    rows, env = [], {}
    with open(jsonl) as f:
        for line in f:
            if line.strip():
                obj = json.loads(line)
                if "environment" in obj:
                    env = obj["environment"]
                else:
                    rows.append(obj)
    cfg_dir = os.path.join(ROOT, "tests", "validation", "measured-configs")
    os.makedirs(cfg_dir, exist_ok=True)
    for r in rows:
        fam = next(f for f in FAMILIES if f[0] == r["family"])
        with open(os.path.join(cfg_dir, r["id"] + ".json"), "w") as f:
            json.dump(reduced_config(fam[1], fam[2]), f, indent=2)
            f.write("\n")
    with open(os.path.join(ROOT, "tests", "validation", "measured_h200.yaml"), "w") as f:
        f.write(yaml_rows(rows, env))
    print(f"{len(rows)} rows -> tests/validation/measured_h200.yaml, configs -> {cfg_dir}")
    return 0


def environment():
    env = {"harness": "scripts/device/fit_validation.py"}
    try:
        import peft
        import torch
        import transformers

        env.update({"torch": torch.__version__, "cuda": torch.version.cuda, "transformers": transformers.__version__,
                    "peft": peft.__version__, "gpu": torch.cuda.get_device_name(0)})
    except Exception as e:  # noqa: BLE001
        env["import_error"] = str(e)
    try:
        env["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                       capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception:  # noqa: BLE001
        env["driver"] = None
    return env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--worker", default="")
    ap.add_argument("--yaml", default="", help="here, after the run: JSONL -> measured_h200.yaml and the configs")
    args = ap.parse_args()
    out_dir = os.environ.get("OUT", "./device-out")
    os.makedirs(out_dir, exist_ok=True)
    if args.yaml:
        return to_yaml(args.yaml)
    if args.worker:
        fam = next(f for f in FAMILIES if f[0] == args.worker)
        cases = [c for c in cases_of(fam[0], args.quick) if row_id(fam[0], c).startswith(args.only or "h200-")]
        run_worker(fam[0], fam[1], fam[2], fam[3], cases, out_dir)
        return 0
    env = environment()
    print("environment:", json.dumps(env), flush=True)
    rows = []
    t0 = time.time()
    for fam in FAMILIES:
        prefix = f"h200-{fam[0]}"
        if args.only and not (prefix.startswith(args.only) or args.only.startswith(prefix)):
            continue
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", fam[0]]
        if args.quick:
            cmd.append("--quick")
        if args.only:
            cmd += ["--only", args.only]
        print(f"== {fam[0]} ({fam[1]}) +{time.time() - t0:.0f} s", flush=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"))
        sys.stderr.write(proc.stderr[-4000:])
        for line in proc.stdout.splitlines():
            if line.startswith("{"):
                rows.append(json.loads(line))
                print(line, flush=True)
        if proc.returncode != 0:
            print(f"worker {fam[0]} exited {proc.returncode}", flush=True)
    with open(os.path.join(out_dir, "measured_h200.jsonl"), "w") as f:
        f.write(json.dumps({"environment": env}) + "\n")
        for r in rows:
            f.write(json.dumps(r) + "\n")
    ok = sum(1 for r in rows if r.get("status") == "ok")
    print(f"{ok} of {len(rows)} rows measured in {time.time() - t0:.0f} s", flush=True)
    return 0 if ok > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
