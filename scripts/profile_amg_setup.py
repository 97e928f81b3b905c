#!/usr/bin/env python
"""Where the GPU AMG set-up's time goes: the device's busy time against the wall time.

Builds ``spla.linalg.amg(A, setup="spla")`` for 2D Poisson N^2 (after one set-up
of the same size, so nothing is compiled or first used in the traced one) under
PyTorch's profiler, whose CUPTI trace holds every kernel, copy and memset of the
process, CuPy's and cuSPARSE's included. From the trace:

- wall time of the set-up, and the time the GPU was busy (the union of the
  kernels', copies' and memsets' intervals): the gap is host time the GPU waited on;
- how many kernels, device-to-host copies and memsets it took;
- the kernels by total device time, and the idle gaps by the step they fall in.

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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", type=int, default=2048, help="2D Poisson of side N (default 2048)")
    parser.add_argument("--top", type=int, default=25, help="kernels listed by device time")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    import cupy
    import torch
    from torch.profiler import ProfilerActivity, profile

    from spla import linalg
    from spla.io import generators

    A = generators.poisson2d(args.side).astype("float64").to_device()
    torch.zeros(1, device="cuda")  # torch's context is CuPy's (the primary one)
    linalg.amg(A, setup="spla")  # compile, first uses, pool growth
    cupy.cuda.Device().synchronize()
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
        "top_kernels": [{"name": n, "count": c, "ms": t / 1e3} for n, (c, t) in top],
    }
    print(f"{report['problem']}: set-up wall {report['wall_ms']:.1f} ms, GPU busy {report['gpu_busy_ms']:.1f} ms "
          f"(idle {report['gpu_idle_ms']:.1f}); {report['kernels']} kernels ({report['kernel_ms']:.1f} ms), "
          f"{report['copies']} copies ({report['device_to_host']} to the host), {report['memsets']} memsets; "
          f"{M.setup_reads} counted host reads")
    print("steps (ms): " + ", ".join(f"{k} {v:.1f}" for k, v in report["setup_times_ms"].items()))
    print(f"{'kernel':<112} {'count':>6} {'ms':>8}")
    for item in report["top_kernels"]:
        print(f"{item['name']:<112} {item['count']:6d} {item['ms']:8.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
