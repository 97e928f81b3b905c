#!/usr/bin/env python
"""SpMM benchmark of issue 4: spla's SpMM kernels beside cuSPARSE SpMM, in one run.

For k = 8 and k = 32 on the SpMV suite (scripts/bench_spmv.py's matrices):
``auto`` and each spla kernel, cuSPARSE SpMM as a CuPy user calls it
(``cusparse-cupy``: cupyx csr_matrix @ X) and with descriptors built once
(``cusparse``), and k times one ``auto`` SpMV (what k separate SpMVs cost).
Then the hybrid matrix (about 1M short rows plus 2,000 rows 50% dense over
100k columns) with the dense-row panel (cuBLAS and the GEMM core) and without
it (``adaptive-sparse``). Every result is checked against a float64 cuSPARSE
product of the same float32-representable inputs BEFORE it is timed; times are
CUDA-event medians. float32 values, int32 indices, C-order X.

Writes JSON (GPU, versions, date, copy bandwidth, every figure) to --out and
prints a markdown table last.

    PYTHONPATH=. python scripts/bench_spmm.py --out $OUT     # ~2-3 min on an H200
    PYTHONPATH=. python scripts/bench_spmm.py --quick        # small set, ~30 s
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

SUITE = [
    ("poisson2d-4096", "gen:poisson2d:4096", "regular 5-point rows, 16.7M rows / 84M nnz"),
    ("poisson3d-160", "gen:poisson3d:160", "regular 7-point rows, 4.1M rows"),
    ("random-4M-16", "gen:random:4000000:16", "uniform random columns: X-gather bound"),
    ("weblike", "gen:weblike", "web-Google-sized power law (916k rows)"),
    ("powerlaw-16M", "gen:powerlaw:16000000:8:34000", "power law, 16M rows / 128M nnz, max row 34k"),
    ("hugerows-2M", "gen:hugerows:2000000:64:1000000", "64 rows of 0.45-1M nnz among short rows"),
    ("banded-1M-20", "gen:banded:1000000:20", "FEM-like band, 41 nnz per row"),
]
HYBRID = ("blockdense-1M", "gen:blockdense:1000000:2000:100000:0.5",
          "1M short rows + 2,000 rows 50% dense over 100k columns")
QUICK = [
    ("poisson2d-1024", "gen:poisson2d:1024", "regular short rows"),
    ("random-500k-16", "gen:random:500000:16", "uniform random columns"),
    ("weblike", "gen:weblike", "web-Google-sized power law"),
    ("hugerows-200k", "gen:hugerows:200000:8:200000", "a few huge rows"),
]
QUICK_HYBRID = ("blockdense-200k", "gen:blockdense:200000:400:20000:0.5", "400 rows 50% dense over 20k columns")
POISSON = "poisson2d-4096"
KS = (8, 32)
KERNELS = ["auto", "regk", "subwarp", "warp", "adaptive", "fused", "fused16", "dia", "cusparse", "cusparse-cupy"]
SMALL_K_ONLY = {"regk", "fused16"}  # regk refuses k past 16; fused16 is a variant of fused's k <= 16 kernel
# (label, kernel, panel engine, family): "vs no dense path" compares within a family
# (the same sparse schedule with and without the panel). Split-K GEMM-core
# kernels get rows of their own (spla.bench.spmm.split_k_engines).
HYBRID_RUNS = [("hybrid (cuBLAS panel)", "adaptive", "cublas", "adaptive"),
               ("hybrid (GEMM core dbuf)", "adaptive", "dbuf", "adaptive"),
               ("hybrid (GEMM core regblock)", "adaptive", "regblock", "adaptive"),
               ("hybrid (GEMM core auto)", "adaptive", "auto", "adaptive"),
               ("no dense path", "adaptive-sparse", None, "adaptive")]
FUSED_HYBRID_RUNS = [("fused hybrid (cuBLAS panel)", "fused", "cublas", "fused"),
                     ("fused hybrid (GEMM core auto)", "fused", "auto", "fused"),
                     ("fused, no dense path", "fused-sparse", None, "fused")]
TOLERANCE = 1e-4  # relative Frobenius error of float32 results vs the float64 reference
TIME_BUDGET_S = 0.12  # per timed kernel: repeats are sized to fit (spla.bench.time_gpu_budgeted)
MAX_REPEAT = 100
WARMUP = 2
TARGETS = {"geomean_vs_cusparse_cupy_k8": 4.0, "geomean_vs_cusparse_cupy_k32": 3.0, "poisson_k8_over_spmv": 3.0}


def _relative_error(cupy, Y, reference):
    """||Y - ref||_F / ||ref||_F on the device (no multi-GB copies to the host)."""
    diff = float(cupy.linalg.norm((Y.astype(np.float64) - reference).ravel()))
    scale = float(cupy.linalg.norm(reference.ravel()))
    if not math.isfinite(diff):
        return float("inf")
    return diff / scale if scale else diff


class Matrix:
    """One matrix on the device in float32 (timed) and float64 (reference), with its X blocks."""

    def __init__(self, cupy, A64, k_max, seed=12345):
        self.A = A64.astype(np.float32).to_device()
        self.A64 = A64.to_device()
        # float32-representable X, so the float64 reference multiplies the very same numbers
        self.X = {}
        self._full = cupy.random.RandomState(seed).uniform(-1, 1, (A64.n_cols, k_max), dtype=np.float32)
        self.cupyx64 = self.A64.to_cupyx()

    def x(self, cupy, k):
        if k not in self.X:
            self.X[k] = cupy.ascontiguousarray(self._full[:, :k])
        return self.X[k]

    def reference(self, cupy, k):
        return self.cupyx64 @ self.x(cupy, k).astype(np.float64)


def measure(cupy, run, reference, bench, k, nnz, nbytes):
    """Check ``run()`` against the reference, then time it; a row dict."""
    try:
        Y = run()
        error = _relative_error(cupy, Y, reference)
        del Y
        if not error <= TOLERANCE:
            return {"status": "wrong", "rel_error": error}
        timing = bench.time_gpu_budgeted(run, budget_s=TIME_BUDGET_S, max_repeat=MAX_REPEAT, warmup=WARMUP)
    except Exception as exc:  # one broken kernel must not sink the suite
        return {"status": "failed", "message": f"{type(exc).__name__}: {exc}"}
    return {"status": "ok", "rel_error": error, "ms": timing.ms, "min_ms": timing.min * 1e3,
            "repeat": timing.repeat, **bench.throughput(timing.median, bench.spmv_flops(nnz, k), nbytes)}


def run_matrix(cupy, name, spec, what, A64, gen_s, log, ks=KS, kernels=KERNELS):
    import spla
    from spla import bench
    from spla.bench import spmm as spmm_bench
    from spla.planning import dia

    m = Matrix(cupy, A64, max(ks))
    A = m.A
    record = {"name": name, "source": spec, "what": what, "shape": list(A.shape), "nnz": A.nnz, "load_s": gen_s,
              "results": []}
    began = time.perf_counter()
    spmm_bench.plan_for(A, ks[0], "adaptive")
    record["schedule_s"] = time.perf_counter() - began
    x1 = cupy.ascontiguousarray(m.x(cupy, 1)[:, 0])
    spmv_ref = m.cupyx64 @ x1.astype(np.float64)
    spmv_bytes = bench.spmv_bytes(A.n_rows, A.n_cols, A.nnz, 4, A.index_dtype.itemsize)
    spmv_row = measure(cupy, lambda: spla.spmv(A, x1, kernel="auto"), spmv_ref, bench, 1,
                       A.nnz, spmv_bytes)
    record["spmv_auto"] = {**spmv_row, "kernel": spmm_bench.spmv_auto_choice(A)}
    has_diagonals = dia.applies(A)  # dia runs only there
    if spmv_row["status"] != "ok":
        log(f"  {name} auto SpMV: {spmv_row['status'].upper()} {spmv_row.get('message', spmv_row.get('rel_error'))}")
    for k in ks:
        X = m.x(cupy, k)
        reference = m.reference(cupy, k)
        nbytes = bench.spmv_bytes(A.n_rows, A.n_cols, A.nnz, 4, A.index_dtype.itemsize, k=k)
        record[f"auto_k{k}"] = spmm_bench.auto_choice(A, k)
        record[f"schedule_k{k}"] = spmm_bench.plan_for(A, k, "adaptive").summary()
        record[f"fused_schedule_k{k}"] = spmm_bench.plan_for(A, k, "fused").summary()
        for kernel in kernels:
            if (kernel in SMALL_K_ONLY and k > spmm_bench.SMALL_K_MAX) or (kernel == "dia" and not has_diagonals):
                continue
            row = measure(cupy, lambda: spmm_bench.run_kernel(A, X, kernel), reference, bench, k, A.nnz, nbytes)
            row.update(kernel=kernel, k=k)
            record["results"].append(row)
            if row["status"] != "ok":
                log(f"  {name} k={k} {kernel}: {row['status'].upper()} {row.get('message', row.get('rel_error'))}")
        del reference
        record[f"cusparse_algorithm_k{k}"], record[f"cusparse_timings_us_k{k}"] = spmm_bench.anchor_algorithm(A, k)
        _speedups(record, k)
    del m
    cupy.get_default_memory_pool().free_all_blocks()
    return record


def _speedups(record, k):
    rows = [r for r in record["results"] if r["k"] == k and r["status"] == "ok"]
    anchors = {r["kernel"]: r["ms"] for r in rows if r["kernel"] in ("cusparse", "cusparse-cupy")}
    spmv = record["spmv_auto"]
    for r in rows:
        for anchor, ms in anchors.items():
            r[f"speedup_vs_{anchor}"] = ms / r["ms"]
        if spmv.get("status") == "ok":
            r["speedup_vs_k_spmvs"] = k * spmv["ms"] / r["ms"]
            r["over_one_spmv"] = r["ms"] / spmv["ms"]


def run_hybrid(cupy, name, spec, what, A64, gen_s, log, ks=KS):
    from spla import bench
    from spla.bench import spmm as spmm_bench

    m = Matrix(cupy, A64, max(ks))
    A = m.A
    began = time.perf_counter()
    schedule = spmm_bench.plan_for(A, ks[0], "adaptive").schedule
    spmm_bench.plan_for(A, ks[0], "adaptive-sparse")
    record = {"name": name, "source": spec, "what": what, "shape": list(A.shape), "nnz": A.nnz, "load_s": gen_s,
              "schedule_s": time.perf_counter() - began, "dense_rows": schedule.dense_rows,
              "panels": [{"rows": int(p.rows.size), "cols": p.col_end - p.col_begin, "density": p.density}
                         for p in schedule.panels], "results": []}
    if not schedule.panels:
        log(f"  {name}: the plan routed no rows to the dense panel; the hybrid comparison is void")
    for k in ks:
        X = m.x(cupy, k)
        reference = m.reference(cupy, k)
        nbytes = bench.spmv_bytes(A.n_rows, A.n_cols, A.nnz, 4, A.index_dtype.itemsize, k=k)
        record[f"schedule_k{k}"] = spmm_bench.plan_for(A, k, "adaptive").summary()
        record[f"sparse_schedule_k{k}"] = spmm_bench.plan_for(A, k, "adaptive-sparse").summary()
        engines = spmm_bench.split_k_engines()
        runs = HYBRID_RUNS + [(f"hybrid (GEMM core {e})", "adaptive", e, "adaptive") for e in engines]
        runs += FUSED_HYBRID_RUNS + [(f"fused hybrid (GEMM core {e})", "fused", e, "fused") for e in engines]
        runs += [("cuSPARSE (cached)", "cusparse", None, None), ("cuSPARSE (cupyx @)", "cusparse-cupy", None, None)]
        for label, kernel, engine, family in runs:
            run = (lambda: spmm_bench.run_kernel(A, X, kernel, dense_gemm=engine)) if engine else \
                (lambda: spmm_bench.run_kernel(A, X, kernel))
            row = measure(cupy, run, reference, bench, k, A.nnz, nbytes)
            row.update(label=label, kernel=kernel, engine=engine, family=family, k=k)
            if engine:
                panels = spmm_bench.plan_for(A, k, kernel, dense_gemm=engine).panels
                row["engine_runs"] = panels[0].name if panels else engine
            record["results"].append(row)
            if row["status"] != "ok":
                log(f"  {name} k={k} {label}: {row['status'].upper()} {row.get('message', row.get('rel_error'))}")
        del reference
        for family, baseline in (("adaptive", "no dense path"), ("fused", "fused, no dense path")):
            ok = {r["label"]: r["ms"] for r in record["results"]
                  if r["k"] == k and r["status"] == "ok" and r["family"] == family}
            if baseline not in ok:
                continue
            hybrid = [ms for label, ms in ok.items() if label != baseline]
            suffix = "" if family == "adaptive" else "_fused"
            record[f"best_hybrid_ratio{suffix}_k{k}"] = ok[baseline] / min(hybrid) if hybrid else float("nan")
            for r in record["results"]:
                if r["k"] == k and r["status"] == "ok" and r["family"] == family:
                    r["speedup_vs_no_dense"] = ok[baseline] / r["ms"]
    del m
    cupy.get_default_memory_pool().free_all_blocks()
    return record


def summarize(records, hybrid, ks=KS):
    from spla import bench

    summary = {}
    for k in ks:
        for anchor in ("cusparse-cupy", "cusparse"):
            values = [r.get(f"speedup_vs_{anchor}") for rec in records for r in rec["results"]
                      if r["k"] == k and r["kernel"] == "auto" and r["status"] == "ok"]
            summary[f"geomean_vs_{anchor}_k{k}"] = bench.geomean(values)
        kept = [rec.get(f"cusparse_algorithm_k{k}") for rec in records]
        summary[f"cusparse_algorithms_k{k}"] = {alg: kept.count(alg) for alg in sorted(set(kept) - {None})}
        # What-ifs for the policy decision, from the same rows: the best spla kernel per
        # matrix (an oracle), and auto with each skewed-row choice swapped for the other.
        spla_kernels = [kn for kn in KERNELS if kn not in ("auto", "cusparse", "cusparse-cupy")]
        for label, pick in (("oracle", None), ("skewed_adaptive", "adaptive"), ("skewed_fused", "fused"),
                            ("skewed_fused16", "fused16")):
            values = []
            for rec in records:
                by = {r["kernel"]: r for r in rec["results"] if r["k"] == k and r["status"] == "ok"}
                if pick is None:
                    best = [r for kn, r in by.items() if kn in spla_kernels]
                    row = min(best, key=lambda r: r["ms"]) if best else None
                elif rec.get(f"auto_k{k}") in ("adaptive", "fused", "fused16") and pick in by:
                    row = by[pick]
                else:
                    row = by.get("auto")
                if row is not None:
                    values.append(row.get("speedup_vs_cusparse-cupy"))
            summary[f"whatif_{label}_geomean_vs_cusparse-cupy_k{k}"] = bench.geomean(values)
    poisson = [rec for rec in records if rec["name"] == POISSON]
    if poisson:
        auto8 = [r for r in poisson[0]["results"] if r["k"] == 8 and r["kernel"] == "auto" and r["status"] == "ok"]
        if auto8 and "over_one_spmv" in auto8[0]:
            summary["poisson_k8_over_spmv"] = auto8[0]["over_one_spmv"]
    if hybrid:
        for k in ks:
            summary[f"hybrid_ratio_k{k}"] = hybrid.get(f"best_hybrid_ratio_k{k}")
            if f"best_hybrid_ratio_fused_k{k}" in hybrid:
                summary[f"hybrid_ratio_fused_k{k}"] = hybrid[f"best_hybrid_ratio_fused_k{k}"]
    met = {}
    for key, target in TARGETS.items():
        value = summary.get(key)
        if value is not None and math.isfinite(value):
            met[key] = value <= target if key == "poisson_k8_over_spmv" else value >= target
    for k in ks:
        for suffix in ("", "_fused"):
            ratio = summary.get(f"hybrid_ratio{suffix}_k{k}")
            if ratio is not None and math.isfinite(ratio):
                met[f"hybrid_faster{suffix}_k{k}"] = ratio > 1.0
    summary["targets_met"] = met
    return summary


def markdown(records, hybrid, summary, meta):
    def cell(r, key, fmt):
        return format(r[key], fmt) if r and r.get(key) is not None and r.get("status") == "ok" else "-"

    lines = [f"SpMM on {meta['gpu']} (CuPy {meta['cupy']}, {meta['date']}); float32, int32 indices, C-order X; "
             f"speed-ups of `auto` over cuSPARSE SpMM in the same run", "",
             "| matrix | k | auto picks | auto ms | vs cusparse-cupy | vs cusparse (cached) | vs k SpMVs | "
             "x one SpMV | GB/s | regk ms | subwarp ms | warp ms | adaptive ms | fused ms | fused16 ms | dia ms | "
             "cusparse ms | cusparse-cupy ms |",
             "| --- " * 18 + "|"]
    for rec in records:
        for k in meta["ks"]:
            by = {r["kernel"]: r for r in rec["results"] if r["k"] == k}
            a = by.get("auto")
            lines.append(" | ".join([
                f"| {rec['name']}", str(k), rec.get(f"auto_k{k}", "?"), cell(a, "ms", ".3f"),
                cell(a, "speedup_vs_cusparse-cupy", ".2f"), cell(a, "speedup_vs_cusparse", ".2f"),
                cell(a, "speedup_vs_k_spmvs", ".2f"), cell(a, "over_one_spmv", ".2f"), cell(a, "gbps", ".0f"),
                cell(by.get("regk"), "ms", ".3f"), cell(by.get("subwarp"), "ms", ".3f"), cell(by.get("warp"), "ms", ".3f"),
                cell(by.get("adaptive"), "ms", ".3f"), cell(by.get("fused"), "ms", ".3f"),
                cell(by.get("fused16"), "ms", ".3f"), cell(by.get("dia"), "ms", ".3f"), cell(by.get("cusparse"), "ms", ".3f"),
                cell(by.get("cusparse-cupy"), "ms", ".3f")]) + " |")
    lines.append("")
    for k in meta["ks"]:
        lines.append(f"- k={k}: geomean speed-up of auto over cusparse-cupy "
                     f"{summary.get(f'geomean_vs_cusparse-cupy_k{k}', float('nan')):.2f}x, over cached cuSPARSE "
                     f"{summary.get(f'geomean_vs_cusparse_k{k}', float('nan')):.2f}x"
                     + "".join(f"; cached cuSPARSE ran {alg} on {n}" for alg, n in
                               summary.get(f"cusparse_algorithms_k{k}", {}).items()))
        lines.append(f"  what-if (same rows): best spla kernel per matrix "
                     f"{summary.get(f'whatif_oracle_geomean_vs_cusparse-cupy_k{k}', float('nan')):.2f}x; skewed "
                     f"matrices on adaptive {summary.get(f'whatif_skewed_adaptive_geomean_vs_cusparse-cupy_k{k}', float('nan')):.2f}x"
                     f", on fused {summary.get(f'whatif_skewed_fused_geomean_vs_cusparse-cupy_k{k}', float('nan')):.2f}x"
                     + (f", on fused16 {summary.get(f'whatif_skewed_fused16_geomean_vs_cusparse-cupy_k{k}', float('nan')):.2f}x"
                        if k <= 16 else ""))
    if "poisson_k8_over_spmv" in summary:
        lines.append(f"- {POISSON}, k=8: auto SpMM costs {summary['poisson_k8_over_spmv']:.2f}x one auto SpMV "
                     f"(target <= 3x)")
    if hybrid:
        lines += ["", f"Hybrid: {hybrid['name']} ({hybrid['what']}), {hybrid['dense_rows']} rows in the dense panel",
                  "", "| path | k | GEMM runs | ms | vs no dense path (same family) | vs cusparse-cupy |",
                  "| --- | --- | --- | --- | --- | --- |"]
        cupy_ms = {r["k"]: r["ms"] for r in hybrid["results"] if r["kernel"] == "cusparse-cupy" and r["status"] == "ok"}
        for r in hybrid["results"]:
            vs_cupy = f"{cupy_ms[r['k']] / r['ms']:.2f}" if r["status"] == "ok" and r["k"] in cupy_ms else "-"
            lines.append(f"| {r['label']} | {r['k']} | {r.get('engine_runs') or '-'} | "
                         f"{cell(r, 'ms', '.3f') if r['status'] == 'ok' else r['status']}"
                         f" | {cell(r, 'speedup_vs_no_dense', '.2f')} | {vs_cupy} |")
    lines += ["", f"targets met: {summary['targets_met']}"]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"), help="directory for the JSON")
    parser.add_argument("--quick", action="store_true", help="small matrices (a smoke run)")
    parser.add_argument("--only", nargs="*", help="names of suite matrices to run (the hybrid one: 'hybrid')")
    parser.add_argument("--ks", type=int, nargs="+", default=list(KS),
                        help=f"columns of X to run (default {' '.join(map(str, KS))}; regk and fused16 up to 16)")
    args = parser.parse_args(argv)

    import cupy

    from spla import bench
    from spla.bench import spmm as spmm_bench

    def log(text):
        print(text, file=sys.stderr, flush=True)

    began = time.perf_counter()
    ks = tuple(args.ks)
    meta = {**bench.environment(), "copy_bandwidth_gbps": bench.copy_bandwidth_gbps(), "ks": list(ks),
            "tolerance": TOLERANCE}
    suite = QUICK if args.quick else SUITE
    hybrid_entry = QUICK_HYBRID if args.quick else HYBRID
    if args.only:
        suite = [entry for entry in suite if entry[0] in args.only]
    records = []
    for name, spec, what in suite:
        t0 = time.perf_counter()
        A64 = spmm_bench.load_matrix(spec, np.float64)
        gen_s = time.perf_counter() - t0
        log(f"{name}: {A64.n_rows:,} rows, {A64.nnz:,} nnz (generated in {gen_s:.1f} s)")
        records.append(run_matrix(cupy, name, spec, what, A64, gen_s, log, ks))
        del A64
    hybrid = None
    if not args.only or "hybrid" in args.only:
        name, spec, what = hybrid_entry
        t0 = time.perf_counter()
        A64 = spmm_bench.load_matrix(spec, np.float64)
        gen_s = time.perf_counter() - t0
        log(f"{name}: {A64.n_rows:,} rows, {A64.nnz:,} nnz (generated in {gen_s:.1f} s)")
        hybrid = run_hybrid(cupy, name, spec, what, A64, gen_s, log, ks)
    summary = summarize(records, hybrid, ks)
    meta["wall_s"] = time.perf_counter() - began
    result = {"meta": meta, "summary": summary, "matrices": records, "hybrid": hybrid}

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "bench_spmm.json"
    path.write_text(spmm_bench.to_json(result))
    log(f"wrote {path} ({meta['wall_s']:.0f} s)")
    print(markdown(records, hybrid, summary, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
