#!/usr/bin/env python
"""Where the GPU AMG set-up's time goes: the device's busy time against the wall time.

Builds ``spla.linalg.amg(A, setup="spla")`` for 2D Poisson N^2 (after one set-up
of the same size, so nothing is compiled or first used in the traced one) under
PyTorch's profiler, whose CUPTI trace holds every kernel, copy and memset of the
process, CuPy's and cuSPARSE's included. From the trace:

- wall time of the set-up, and the time the GPU was busy (the union of the
  kernels', copies' and memsets' intervals): the gap is host time the GPU waited on;
- how many kernels, device-to-host copies and memsets it took;
- per step and per level: the host time spent in it, the kernels launched from it,
  their device time and the copies to the host (each a wait for the GPU), matched
  through the trace's correlation ids;
- the kernels by total device time.

Needs PyTorch (the GPU machine's ``python3`` has it); CuPy and torch share the
device's primary context, so one trace sees both.

    PYTHONPATH=. python3 scripts/profile_amg_setup.py --side 2048 --json $OUT/amg_profile.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager

GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")


def busy_time(intervals: list) -> float:
    """Length of the union of (start, end) intervals."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end <= reach:
            continue
        total += end - max(start, reach)
        reach = end
    return total


def annotate_steps(record_function):
    """Wrap the set-up's step timer so each step also opens a profiler range "L<level> <step>"
    (a level starts where "strength" follows another step)."""
    from spla.linalg import _amg_setup

    original = _amg_setup._Timer.__call__
    state = {"level": -1, "last": None}

    @contextmanager
    def timed(self, name):
        if name == "strength" and state["last"] != "strength":
            state["level"] += 1
        state["last"] = name
        with record_function(f"L{state['level']} {name}"), original(self, name):
            yield

    _amg_setup._Timer.__call__ = timed


def by_range(events: list) -> dict:
    """Per profiler range: host ms, kernels, their device ms, copies to the host, memsets."""
    ranges = [e for e in events if e.get("cat") == "user_annotation" and e["name"][:1] == "L"]
    launches = {e["args"]["correlation"]: e["ts"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {})}
    table: dict = defaultdict(lambda: {"host_ms": 0.0, "kernels": 0, "device_ms": 0.0, "to_host": 0, "memsets": 0})
    for r in ranges:
        table[r["name"]]["host_ms"] += r["dur"] / 1e3
    for e in events:
        if e.get("cat") not in GPU_CATEGORIES:
            continue
        ts = launches.get(e.get("args", {}).get("correlation"))
        if ts is None:
            continue
        inside = [r for r in ranges if r["ts"] <= ts <= r["ts"] + r["dur"]]
        if not inside:
            continue
        row = table[min(inside, key=lambda r: r["dur"])["name"]]
        if e["cat"] == "kernel":
            row["kernels"] += 1
            row["device_ms"] += e["dur"] / 1e3
        elif e["cat"] == "gpu_memset":
            row["memsets"] += 1
        elif "DtoH" in e.get("name", ""):
            row["to_host"] += 1
    return dict(table)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", type=int, default=2048, help="2D Poisson of side N (default 2048)")
    parser.add_argument("--top", type=int, default=25, help="kernels listed by device time")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    import cupy
    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from spla import linalg
    from spla.io import generators

    A = generators.poisson2d(args.side).astype("float64").to_device()
    torch.zeros(1, device="cuda")  # torch's context is CuPy's (the primary one)
    linalg.amg(A, setup="spla")  # compile, first uses, pool growth
    cupy.cuda.Device().synchronize()
    annotate_steps(record_function)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        began = time.perf_counter()
        M = linalg.amg(A, setup="spla")
        cupy.cuda.Device().synchronize()
        wall = time.perf_counter() - began
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    events = [e for e in trace.get("traceEvents", []) if e.get("ph") == "X"]
    gpu = [e for e in events if e.get("cat") in GPU_CATEGORIES]
    kernels = [e for e in gpu if e["cat"] == "kernel"]
    copies = [e for e in gpu if e["cat"] == "gpu_memcpy"]
    to_host = [e for e in copies if "DtoH" in e.get("name", "")]
    busy_us = busy_time([(e["ts"], e["ts"] + e["dur"]) for e in gpu])
    by_name: dict = defaultdict(lambda: [0, 0.0])
    for e in kernels:
        entry = by_name[e["name"][:110]]
        entry[0] += 1
        entry[1] += e["dur"]
    top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:args.top]
    report = {
        "problem": f"poisson2d {args.side}^2", "rows": A.n_rows, "nnz": A.nnz,
        "wall_ms": wall * 1e3, "gpu_busy_ms": busy_us / 1e3, "gpu_idle_ms": wall * 1e3 - busy_us / 1e3,
        "kernels": len(kernels), "kernel_ms": sum(e["dur"] for e in kernels) / 1e3,
        "copies": len(copies), "device_to_host": len(to_host), "memsets": sum(e["cat"] == "gpu_memset" for e in gpu),
        "setup_reads": M.setup_reads, "setup_times_ms": {k: v * 1e3 for k, v in M.setup_times.items()},
        "steps": by_range(events),
        "top_kernels": [{"name": n, "count": c, "ms": t / 1e3} for n, (c, t) in top],
    }
    print(f"{report['problem']}: set-up wall {report['wall_ms']:.1f} ms, GPU busy {report['gpu_busy_ms']:.1f} ms "
          f"(idle {report['gpu_idle_ms']:.1f}); {report['kernels']} kernels ({report['kernel_ms']:.1f} ms), "
          f"{report['copies']} copies ({report['device_to_host']} to the host), {report['memsets']} memsets; "
          f"{M.setup_reads} counted host reads")
    print("steps (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in report["setup_times_ms"].items()))
    print(f"{'level step':<22} {'host ms':>8} {'kernels':>8} {'device ms':>10} {'to host':>8} {'memsets':>8}")
    for name, row in sorted(report["steps"].items(), key=lambda kv: (int(kv[0].split()[0][1:]), kv[0])):
        print(f"{name:<22} {row['host_ms']:8.2f} {row['kernels']:8d} {row['device_ms']:10.2f} {row['to_host']:8d} "
              f"{row['memsets']:8d}")
    print(f"{'kernel':<112} {'count':>6} {'ms':>8}")
    for item in report["top_kernels"]:
        print(f"{item['name']:<112} {item['count']:6d} {item['ms']:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
