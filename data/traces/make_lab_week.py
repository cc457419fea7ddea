#!/usr/bin/env python3
"""Writes lab-4xa100-week.jsonl: one week of a 4-GPU lab server as a gpuplan meter trace
(docs/meter-trace.md), every 10 s, from the fixed schedule below. The figures in README.md are
worked out by hand from SCHEDULE, not from gpuplan's output; tests assert them.

Usage: python3 make_lab_week.py [OUT]   (default: lab-4xa100-week.jsonl next to this script)
"""
import json
import os
import sys

START_MS = 1772409600000  # 2026-03-02T00:00:00Z, a Monday
HOUR_MS = 3600 * 1000
INTERVAL_S = 10
STEPS = 7 * 24 * 3600 // INTERVAL_S  # 60,480 steps: the last at Sunday 23:59:50
MEMORY_TOTAL = 85899345920  # 80 GiB
IDLE_MEMORY_USED = 4 * 2**20  # 4 MiB: the driver's own, no process

ALICE_TRAIN = {  # Slurm job on GPU 0
    "pid": 41230, "user": "alice", "command": "python train.py --config llama8b-lora.yaml",
    "slurm_job_id": "4711", "gpu_memory": 71 * 2**30,
}
INFER_POD = {  # a Kubernetes pod (burstable QoS) serving a model on GPU 1
    "pid": 52001, "user": "root", "command": "python -m vllm.entrypoints.openai.api_server --model qwen2.5-7b",
    "container_id": "3f4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071829",
    "pod_uid": "8e0b7a2c-1d3f-4e5a-9b6c-7d8e9f0a1b2c", "gpu_memory": 62 * 2**30,
}
BOB_NOTEBOOK = {  # a Docker container running Jupyter on GPU 2
    "pid": 61877, "user": "bob", "command": "/opt/conda/bin/python -m ipykernel_launcher -f kernel-1.json",
    "container_id": "9a8b7c6d5e4f30211f2e3d4c5b6a79880a9b8c7d6e5f40312a3b4c5d6e7f8091", "gpu_memory": 20 * 2**30,
}
CAROL_EVAL = {  # a plain process on GPU 3
    "pid": 70315, "user": "carol", "command": "python eval.py --ckpt runs/7/last.pt", "gpu_memory": 30 * 2**30,
}

# (gpu, first hour, end hour (exclusive), process, utilisation by day (08:00-20:00), by night)
# Hours count from Monday 00:00 UTC. Outside these periods a GPU has no process and 0 %.
SCHEDULE = [
    (0, 9, 93, ALICE_TRAIN, 95, 95),                # Mon 09:00 - Thu 21:00: 84 h
    (1, 0, 168, INFER_POD, 60, 0),                  # the whole week, idle-held at night
    (2, 24 + 10, 24 + 18, BOB_NOTEBOOK, 40, 40),    # Tue 10:00-18:00: 8 h
    (2, 48 + 10, 48 + 18, BOB_NOTEBOOK, 40, 40),    # Wed 10:00-18:00: 8 h
    (2, 96 + 13, 96 + 17, BOB_NOTEBOOK, 40, 40),    # Fri 13:00-17:00: 4 h
    (3, 120 + 10, 120 + 12, CAROL_EVAL, 88, 88),    # Sat 10:00-12:00: 2 h
]


def gpu_state(gpu, ms):
    hour = (ms - START_MS) // HOUR_MS
    half = ((ms - START_MS) // (HOUR_MS // 2)) % 2  # values wobble every 30 minutes
    for g, first, end, proc, day_util, night_util in SCHEDULE:
        if g == gpu and first <= hour < end:
            util = day_util if 8 <= hour % 24 < 20 else night_util
            if util > 0:
                util -= 2 * half
            power = 80 + 3 * util + (half * 5 if util else 0)  # W, whole watts
            return {
                "gpu": gpu, "utilization_gpu": util, "utilization_memory": util // 2,
                "memory_used": proc["gpu_memory"] + 600 * 2**20, "power": power,
                "temperature": 34 + util // 3, "sm_clock": 1410 if util else 210,
                "clock_event_reasons": 0 if util else 1,
                "processes": [proc],
            }
    return {
        "gpu": gpu, "utilization_gpu": 0, "utilization_memory": 0, "memory_used": IDLE_MEMORY_USED,
        "power": 62, "temperature": 31, "sm_clock": 210, "clock_event_reasons": 1,
    }


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "lab-4xa100-week.jsonl")
    header = {
        "format": "gpuplan-meter-trace", "version": 1, "host": "lab-a100x4", "interval_seconds": INTERVAL_S,
        "driver_version": "550.54.15",
        "gpus": [{"index": i, "name": "NVIDIA A100-SXM4-80GB", "uuid": "GPU-5e0c1a7%d-4b2d-8c3e-9f10-a1b2c3d4e5f6" % i,
                  "memory_total": MEMORY_TOTAL} for i in range(4)],
    }
    energy = [1_000_000_000 + i * 1_000_000 for i in range(4)]  # mJ since the driver loaded
    previous = None
    repeats = 0
    lines = [json.dumps(header, separators=(",", ":"))]
    for step in range(STEPS):
        ms = START_MS + step * INTERVAL_S * 1000
        states = [gpu_state(g, ms) for g in range(4)]
        if states == previous:
            repeats += 1
        else:
            if repeats:
                lines.append(json.dumps({"repeat": repeats}))
                repeats = 0
            gpus = []
            for g, s in enumerate(states):
                entry = dict(s)
                entry["energy_mj"] = energy[g]
                gpus.append(entry)
            lines.append(json.dumps({"time_ms": ms, "gpus": gpus}, separators=(",", ":")))
        # The counter advances by power x interval (W x s x 1000 = mJ), as a repeat line implies.
        for g, s in enumerate(states):
            energy[g] += s["power"] * INTERVAL_S * 1000
        previous = states
    if repeats:
        lines.append(json.dumps({"repeat": repeats}))
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
