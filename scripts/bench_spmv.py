#!/usr/bin/env python
"""SpMV suite: every spla kernel beside the lean cuSPARSE call, in one run.

For each matrix (generated through spla.io.generators, plus real .mtx.gz files
given with --real DIR): the adaptive plans are built once (their time reported
apart), then every kernel goes through spla.bench.spmv.compare: checked against
the float64 SciPy reference BEFORE it is timed, then timed in round-robin rounds
beside both cuSPARSE CSR algorithms (the faster is "cusparse"), per call from
Python and by device time (a CUDA graph of back-to-back launches). The ms
columns are device time. Writes JSON (GPU, versions, date, copy bandwidth,
every figure) to --out and prints a markdown table last.

    PYTHONPATH=. python scripts/bench_spmv.py --out $OUT            # ~4.5 min on an H200
    PYTHONPATH=. python scripts/bench_spmv.py --quick               # small set, ~30 s
    PYTHONPATH=. python scripts/bench_spmv.py --real ./shared-matrices
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

SUITE = [
    # (name, generator spec, what it stands for)
    ("poisson2d-4096", "gen:poisson2d:4096", "regular short rows, 16.7M rows / 84M nnz"),
    ("poisson3d-160", "gen:poisson3d:160", "regular 7-point rows, 4.1M rows"),
    ("random-4M-16", "gen:random:4000000:16", "uniform random columns: x-gather bound"),
    ("weblike", "gen:weblike", "web-Google-sized power law (916k rows), L2 resident"),
    ("powerlaw-16M", "gen:powerlaw:16000000:8:34000", "power law, 16M rows / 128M nnz, max row 34k"),
    ("hugerows-2M", "gen:hugerows:2000000:64:1000000", "64 rows of 0.45-1M nnz among short rows"),
    ("banded-1M-20", "gen:banded:1000000:20", "FEM-like band, 41 nnz per row"),
    ("blockdense-1M", "gen:blockdense:1000000:256:20000:0.8", "256 rows 80% dense over 20k columns"),
]
QUICK = [
    ("poisson2d-1024", "gen:poisson2d:1024", "regular short rows"),
    ("random-500k-16", "gen:random:500000:16", "uniform random columns"),
    ("weblike", "gen:weblike", "web-Google-sized power law"),
    ("powerlaw-1M", "gen:powerlaw:1000000:8:5000", "power law"),
    ("hugerows-200k", "gen:hugerows:200000:8:200000", "a few huge rows"),
    ("banded-200k-20", "gen:banded:200000:20", "FEM-like band"),
]
F32_KERNELS = ["scalar", "warp", "vector", "adaptive", "adaptive2", "segmented", "staged", "blocked", "auto",
               "cusparse", "cusparse-cupy"]
# float64: auto, the kernels auto may run on irregular matrices, the anchor
F64_KERNELS = ["auto", "vector", "adaptive", "adaptive2", "segmented", "staged", "blocked", "cusparse"]
TIME_BUDGET_S = 0.02  # per figure of a kernel in a round (spla.bench.spmv.compare)
ROUNDS = 3


def _load_matrices(args):
    from spla.io import generators

    suite = QUICK if args.quick else SUITE
    if args.only:
        suite = [entry for entry in suite if entry[0] in args.only]
    for name, spec, what in suite:
        began = time.perf_counter()
        A = generators.from_spec(spec, dtype=np.float64)
        yield name, spec, what, A, time.perf_counter() - began
    if args.real:
        from spla import io

        for path in sorted(Path(args.real).glob("*.mtx*")):
            began = time.perf_counter()
            A = io.load(str(path), dtype=np.float64, cache=False)  # leave the folder as it is
            yield path.name.split(".")[0], str(path), "SuiteSparse", A, time.perf_counter() - began


def run_matrix(name, spec, what, A64, gen_s, kernel_lists, copy_gbps, log):
    """Every kernel of each dtype through spla.bench.spmv.compare: checked, then timed in
    round-robin rounds beside the lean cuSPARSE call (the faster of ALG1/ALG2)."""
    import cupy

    from spla import bench
    from spla.bench import spmv as bench_spmv
    from spla.planning import adaptive
    from spla.planning import spmv as rules

    record = {"name": name, "source": spec, "what": what, "shape": list(A64.shape), "nnz": A64.nnz,
              "load_s": gen_s, "results": []}
    for dtype, kernels in kernel_lists.items():
        A = A64.astype(dtype)
        began = time.perf_counter()
        plan = adaptive.plan_for(A)
        record[f"plan_{dtype}"] = {"build_s": time.perf_counter() - began, **plan.summary()}
        began = time.perf_counter()
        plan2 = adaptive.plan2_for(A)
        record[f"plan2_{dtype}"] = {"build_s": time.perf_counter() - began, **plan2.summary()}
        record[f"auto_{dtype}"] = rules.describe_choice(A)
        measured = bench_spmv.compare(A, [k for k in kernels if k != "cusparse"], dtype=dtype, rounds=ROUNDS,
                                      budget_s=TIME_BUDGET_S)
        record[f"anchor_{dtype}"] = measured["anchor"]
        for row in measured["rows"]:
            kernel = "cusparse" if row["kernel"] == measured["anchor"] else row["kernel"]
            result = {"kernel": kernel, "dtype": dtype, "status": row.get("status"),
                      "error_vs_abs": row.get("error_vs_abs"), "message": row.get("message")}
            if "device_us" in row:
                result.update(ms=row["device_us"] / 1e3, per_call_ms=row["per_call_us"] / 1e3,
                              speedup_vs_cusparse=row["device_speedup"], per_call_speedup=row["speedup"],
                              **bench.throughput(row["device_us"] / 1e6, bench.spmv_flops(A.nnz), measured["bytes"]))
                result["copy_fraction"] = result["gbps"] / copy_gbps
            elif row.get("status") != "ok":
                log(f"  {name} {dtype} {kernel}: {row.get('status')} {row.get('message') or row.get('error_vs_abs')}")
            record["results"].append(result)
        del A
        cupy.get_default_memory_pool().free_all_blocks()
    return record


def _cell(record, kernel, dtype="float32", field="ms"):
    for r in record["results"]:
        if r["kernel"] == kernel and r["dtype"] == dtype:
            if r.get("status") != "ok":
                return r.get("status", "?")
            value = r.get(field)
            return "-" if value is None else (f"{value:.3f}" if field == "ms" else f"{value:.2f}")
    return "-"


def markdown(report) -> str:
    f32, f64 = report["kernels"]["float32"], report["kernels"]["float64"]
    lines = [f"SpMV on {report['gpu']} ({report['date']}), CuPy {report['cupy']}, "
             f"copy bandwidth {report['copy_gbps']:.0f} GB/s; ms per call, float32 unless noted",
             "",
             "| matrix | rows | nnz | " + " | ".join(f32) + " | auto picks | auto GB/s | auto / cuSPARSE | "
             + " | ".join(f"f64 {k}" for k in f64) + " | f64 speed-up |",
             "|" + " --- |" * (len(f32) + len(f64) + 7)]
    for rec in report["matrices"]:
        lines.append(
            f"| {rec['name']} | {rec['shape'][0]:,} | {rec['nnz']:,} | "
            + " | ".join(_cell(rec, k) for k in f32)
            + f" | {rec['auto_float32']['kernel']} ({rec['auto_float32'].get('class', '?')})"
            + f" | {_cell(rec, 'auto', field='gbps')}"
            + f" | {_cell(rec, 'auto', field='speedup_vs_cusparse')}x | "
            + " | ".join(_cell(rec, k, "float64") for k in f64)
            + f" | {_cell(rec, 'auto', 'float64', 'speedup_vs_cusparse')}x |")
    g = report["geomean_speedup_vs_cusparse"]
    lines += ["", "Geometric-mean device-time speed-up over the lean cuSPARSE call (faster of CSR ALG1/ALG2): "
              + ", ".join(f"{k} {v:.2f}x" for k, v in g.items() if math.isfinite(v)),
              f"Slowest auto/cuSPARSE (float32): {report['worst_auto_float32']}"]
    plans = [f"{rec['name']} {rec['plan_float32']['build_s'] * 1e3:.0f}/{rec['plan2_float32']['build_s'] * 1e3:.0f} ms"
             for rec in report["matrices"]]
    lines.append("Plan build (host, once per matrix, adaptive/adaptive2): " + ", ".join(plans))
    lines += _class_table(report)
    return "\n".join(lines)


def _class_table(report) -> list:
    """Geomean speed-up over cuSPARSE of each kernel per auto class: what
    spla.planning.spmv.AUTO_RULE should name for each class."""
    from spla import bench
    from spla.planning import spmv as rules

    lines = ["", "Per auto class, float32 geomean speed-up over cuSPARSE (set AUTO_RULE to the best):"]
    for klass in rules.AUTO_RULE:
        recs = [rec for rec in report["matrices"] if rec["auto_float32"].get("class") == klass]
        if not recs:
            continue
        cells = []
        for kernel in report["kernels"]["float32"]:
            values = [r["speedup_vs_cusparse"] for rec in recs for r in rec["results"]
                      if r["kernel"] == kernel and r["dtype"] == "float32" and "speedup_vs_cusparse" in r]
            if values and kernel not in ("cusparse", "auto"):
                cells.append(f"{kernel} {bench.geomean(values):.2f}x")
        lines.append(f"- {klass} ({len(recs)} matrices, rule: {rules.AUTO_RULE[klass]}): " + ", ".join(cells))
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"), help="directory for the JSON")
    parser.add_argument("--quick", action="store_true", help="small matrices only (~30 s)")
    parser.add_argument("--real", metavar="DIR", help="also run every *.mtx(.gz) in DIR")
    parser.add_argument("--only", nargs="*", help="suite entries by name")
    parser.add_argument("--extra", nargs="*", default=[], metavar="KERNEL",
                        help="more kernels to run in both dtypes, e.g. segmented:4 segmented:16")
    args = parser.parse_args(argv)

    from spla import bench

    def log(message):
        print(message, file=sys.stderr, flush=True)

    kernel_lists = {"float32": F32_KERNELS + args.extra, "float64": F64_KERNELS + args.extra}
    copy_gbps = bench.copy_bandwidth_gbps()
    report = {**bench.environment(), "copy_gbps": copy_gbps, "kernels": kernel_lists, "matrices": []}
    began = time.perf_counter()
    for name, spec, what, A64, load_s in _load_matrices(args):
        log(f"{name}: {A64.shape[0]:,} x {A64.shape[1]:,}, {A64.nnz:,} nnz (loaded in {load_s:.1f} s)")
        report["matrices"].append(run_matrix(name, spec, what, A64, load_s, kernel_lists, copy_gbps, log))
        del A64
    report["seconds"] = time.perf_counter() - began

    def speedups(kernel, dtype):
        return [r["speedup_vs_cusparse"] for rec in report["matrices"] for r in rec["results"]
                if r["kernel"] == kernel and r["dtype"] == dtype and "speedup_vs_cusparse" in r]

    report["geomean_speedup_vs_cusparse"] = {
        f"{k} {dtype[0]}{dtype[-2:]}": bench.geomean(speedups(k, dtype))
        for dtype, kernels in kernel_lists.items() for k in kernels if k != "cusparse"}
    auto = [(r["speedup_vs_cusparse"], rec["name"]) for rec in report["matrices"] for r in rec["results"]
            if r["kernel"] == "auto" and r["dtype"] == "float32" and "speedup_vs_cusparse" in r]
    report["worst_auto_float32"] = (f"{min(auto)[1]} {min(auto)[0]:.2f}x" if auto else "n/a")

    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "bench_spmv.json"
    path.write_text(json.dumps(report, indent=1, default=float))
    log(f"wrote {path} ({report['seconds']:.0f} s)")
    print(markdown(report))


if __name__ == "__main__":
    main()
