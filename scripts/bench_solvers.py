"""Benchmark spla's GPU solvers and PageRank against their anchors, measured in the same run.

1. CG, 2-D Poisson 2048^2 (4.2M unknowns, float64) to rtol 1e-8: time per
   iteration vs (one ``auto`` SpMV + CG's vector traffic at the measured copy
   bandwidth), and vs ``cupyx.scipy.sparse.linalg.cg`` on the same problem.
2. CG on a web-Google-sized SPD matrix: graph Laplacian of gen:weblike
   symmetrised, plus I; spla vs cupyx per iteration.
3. PageRank on gen:weblike: spla GPU vs networkx.pagerank (timed once, from
   a networkx graph: what a networkx user pays; the graph's construction is
   not counted) at tol 1e-6, top-100 compared. spla is timed end to end on
   the host matrix, split into upload, build, iterate and download: a first
   call on a new matrix (GPU build, the headline; and the round-1 host
   build for comparison) and a repeat call (build cached on the matrix).
   Per-iteration time vs one ``auto`` SpMV of the matrix the iteration uses
   (A^T) at tol 1e-10, where there are enough iterations to measure
   (networkx's test is ``L1 change < N * tol``, so at 1e-6 with N = 916k it
   stops after one).

Writes solvers.json to --out (default $OUT or ./bench-out) and prints a
markdown table last. Run: ``PYTHONPATH=. python scripts/bench_solvers.py --out $OUT``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import spla  # noqa: E402
from spla import bench, cuda, linalg  # noqa: E402
from spla.csr import CSRMatrix  # noqa: E402
from spla.io import generators  # noqa: E402

CG_VECTOR_PASSES = 11  # p.q: 2 reads; fused step: x, r read+write, p, q read; direction: r, p read, p write


def _sync():
    import cupy

    cupy.cuda.get_current_stream().synchronize()


def _timed(fn):
    _sync()
    start = time.perf_counter()
    out = fn()
    _sync()
    return out, time.perf_counter() - start


def _counting_solve(solver, A, b, **kwargs):
    """Solve, timed, and count the iterations with ``spla.linalg.IterationCounter``: spla's cg
    knows it and keeps the path a caller without a callback gets (captured or one-launch
    iterations); a plain function would make it stop in Python after every iteration. Other
    solvers (cupyx's) call it once an iteration, as any callback."""
    counter = linalg.IterationCounter()
    (x, info), seconds = _timed(lambda: solver(A, b, callback=counter, **kwargs))
    return x, info, counter.iterations, seconds


def _relative_residual(A_dev, x, b):
    import cupy

    return float(cupy.linalg.norm(b - spla.spmv(A_dev, x)) / cupy.linalg.norm(b))


def bench_cg(name, A_host: CSRMatrix, rtol, maxiter, cupyx_maxiter, bandwidth_gbps):
    import cupy
    import cupyx.scipy.sparse.linalg as csla

    A = A_host.to_device()
    n = A.n_rows
    # random b: ones is an eigenvector of a graph Laplacian (CG would stop after one step)
    b = cupy.asarray(np.random.default_rng(0).standard_normal(n).astype(A.dtype))
    spmv_time = bench.time_gpu(lambda: spla.spmv(A, b), repeat=50)
    vector_seconds = CG_VECTOR_PASSES * n * A.dtype.itemsize / (bandwidth_gbps * 1e9)
    anchor = spmv_time.median + vector_seconds
    linalg.cg(A, b, rtol=rtol, maxiter=2)  # compile kernels, plan the SpMV
    x, info, iterations, seconds = _counting_solve(linalg.cg, A, b, rtol=rtol, maxiter=maxiter)
    spla_per_iteration = seconds / max(iterations, 1)
    residual = _relative_residual(A, x, b)

    dA = A.to_cupyx()

    def cupyx_cg(A_, b_, **kwargs):
        try:
            return csla.cg(A_, b_, rtol=rtol, **kwargs)
        except TypeError:  # CuPy releases before SciPy's rename call it tol
            return csla.cg(A_, b_, tol=rtol, **kwargs)

    cupyx_cg(dA, b, maxiter=2)
    _, cupyx_info, cupyx_iterations, cupyx_seconds = _counting_solve(cupyx_cg, dA, b, maxiter=cupyx_maxiter)
    cupyx_per_iteration = cupyx_seconds / max(cupyx_iterations, 1)
    return {
        "problem": name, "n": n, "nnz": A.nnz, "dtype": A.dtype.name, "rtol": rtol,
        "spla_info": int(info), "spla_iterations": iterations, "spla_seconds": seconds,
        "spla_us_per_iteration": spla_per_iteration * 1e6, "relative_residual": residual,
        "spmv_auto_us": spmv_time.median * 1e6, "vector_passes": CG_VECTOR_PASSES,
        "vector_us_at_copy_bandwidth": vector_seconds * 1e6, "anchor_us": anchor * 1e6,
        "ratio_to_anchor": spla_per_iteration / anchor, "target_ratio_to_anchor": 1.3,
        "cupyx_iterations": cupyx_iterations, "cupyx_info": int(cupyx_info),
        "cupyx_us_per_iteration": cupyx_per_iteration * 1e6,
        "speedup_vs_cupyx": cupyx_per_iteration / spla_per_iteration,
    }


def weblike_spd(W: CSRMatrix) -> CSRMatrix:
    """Graph Laplacian of the symmetrised pattern, plus I: SPD with web-Google's row lengths (doubled)."""
    S = W.to_scipy()
    S = ((S + S.T) != 0).astype(np.float64)
    S.setdiag(0)
    S.eliminate_zeros()
    degrees = np.asarray(S.sum(axis=1)).ravel()
    return CSRMatrix.from_scipy((sp.diags(degrees + 1.0) - S).tocsr())


def _fresh(W: CSRMatrix) -> CSRMatrix:
    """W's arrays in a new CSRMatrix with an empty cache: what a first PageRank call on a loaded matrix sees."""
    return CSRMatrix(W.data, W.indices, W.indptr, W.shape, validate=False)


_BREAKDOWN = ("upload_seconds", "build_seconds", "seconds", "download_seconds", "total_seconds")


def _pagerank_run(W, **kwargs):
    (ranks, info), seconds = _timed(lambda: spla.pagerank(W, device="gpu", full_output=True, **kwargs))
    run = {"end_to_end_seconds": seconds, "iterations": info["iterations"], "gpu_build": info["gpu_build"]}
    run.update({key: info[key] for key in _BREAKDOWN})
    return ranks, run


def bench_pagerank(W: CSRMatrix, skip_networkx: bool):
    import cupy

    from spla.graph import device_google_parts
    from spla.planning import spmv as rules

    result = {"n": W.n_rows, "nnz": W.nnz, "errors": {}}
    # compile the kernels and bind the SpMV once on a small graph, so "cold" below is a first
    # call on a new matrix (upload + build + iterate + download), not NVRTC's first compile
    small = generators.random(2000, 4)
    try:
        spla.pagerank(small, device="gpu", tol=1e-6)
    except Exception as exc:  # one GPU run: record and go on (the timed run below fails the same way)
        result["errors"]["warmup"] = repr(exc)
    ranks = None
    try:
        ranks, cold = _pagerank_run(_fresh(W), tol=1e-6)
        result["cold_device"] = cold
    except Exception as exc:  # one GPU run: record and go on
        result["errors"]["cold_device"] = repr(exc)
    try:
        spla.pagerank(W, device="gpu", tol=1e-6)  # builds W's cache
        _, warm = _pagerank_run(W, tol=1e-6)
        result["warm_device"] = warm
    except Exception as exc:
        result["errors"]["warm_device"] = repr(exc)
    (cpu_ranks, cpu_info), cpu_seconds = _timed(lambda: spla.pagerank(W, device="cpu", tol=1e-6,
                                                                      full_output=True))
    result.update(tol_1e6_iterations=cpu_info["iterations"], spla_cpu_seconds_end_to_end=cpu_seconds)
    if ranks is not None:
        result["max_abs_diff_gpu_vs_cpu"] = float(np.abs(ranks - cpu_ranks).max())
        headline = result["cold_device"]
        result["spla_gpu_seconds_end_to_end"] = headline["end_to_end_seconds"]
        result["headline_build"] = headline["gpu_build"]

    if not skip_networkx:
        import networkx as nx

        build_start = time.perf_counter()
        G = nx.from_scipy_sparse_array(W.to_scipy(), create_using=nx.DiGraph)
        result["networkx_graph_build_seconds"] = time.perf_counter() - build_start
        nx_start = time.perf_counter()
        reference = nx.pagerank(G, tol=1e-6)
        result["networkx_seconds"] = time.perf_counter() - nx_start
        del G
        reference = np.array([reference[i] for i in range(W.n_rows)])
        compared = ranks if ranks is not None else cpu_ranks
        top_spla = np.argsort(-compared, kind="stable")[:100]
        top_nx = np.argsort(-reference, kind="stable")[:100]
        result.update(
            max_abs_diff_vs_networkx=float(np.abs(compared - reference).max()),
            top100_identical_order=bool(np.array_equal(top_spla, top_nx)),
            top100_identical_set=bool(set(top_spla) == set(top_nx)),
            target_speedup_vs_networkx=50)
        if ranks is not None:
            result["speedup_vs_networkx"] = result["networkx_seconds"] / result["spla_gpu_seconds_end_to_end"]
        if "warm_device" in result:
            result["speedup_vs_networkx_warm"] = result["networkx_seconds"] / result["warm_device"]["end_to_end_seconds"]

    # per iteration: a tolerance that takes tens of iterations; setup is outside info["seconds"]
    try:
        runs = [spla.pagerank(W, device="gpu", tol=1e-10, max_iter=500, full_output=True)[1] for _ in range(5)]
        check1 = [spla.pagerank(W, device="gpu", tol=1e-10, max_iter=500, check_every=1, full_output=True)[1]
                  for _ in range(3)]
        ranks_tight = spla.pagerank(W, device="gpu", tol=1e-10, max_iter=500)
        AT = device_google_parts(W, np.float64).matrix  # the matrix the iteration multiplies by
        x = cupy.asarray(ranks_tight)
        spmv_time = bench.time_gpu(lambda: spla.spmv(AT, x), repeat=100)
        per_iteration = float(np.median([r["seconds_per_iteration"] for r in runs]))
        result.update(tol_1e10_iterations=runs[0]["iterations"], us_per_iteration=per_iteration * 1e6,
                      us_per_iteration_runs=[r["seconds_per_iteration"] * 1e6 for r in runs],
                      us_per_iteration_check_every_1=float(np.median([r["seconds_per_iteration"]
                                                                      for r in check1])) * 1e6,
                      spmv_auto_us=spmv_time.median * 1e6,
                      spmv_auto_kernel=rules.choose_kernel(AT),
                      iteration_over_spmv=per_iteration / spmv_time.median, target_iteration_over_spmv=3.0)
    except Exception as exc:
        result["errors"]["per_iteration"] = repr(exc)
    return result


def _table(results) -> str:
    rows = ["| benchmark | spla | anchor | ratio | target |", "| --- | --- | --- | --- | --- |"]
    for cg in results["cg"]:
        rows.append(f"| CG {cg['problem']} ({cg['spla_iterations']} it, rel. res. {cg['relative_residual']:.1e}) "
                    f"| {cg['spla_us_per_iteration']:.1f} us/it | SpMV {cg['spmv_auto_us']:.1f} us + vectors "
                    f"{cg['vector_us_at_copy_bandwidth']:.1f} us = {cg['anchor_us']:.1f} us "
                    f"| {cg['ratio_to_anchor']:.2f}x | <= 1.3x |")
        rows.append(f"| CG {cg['problem']} vs cupyx cg | {cg['spla_us_per_iteration']:.1f} us/it "
                    f"| cupyx {cg['cupyx_us_per_iteration']:.1f} us/it | {cg['speedup_vs_cupyx']:.2f}x faster "
                    f"| > 1x |")
    pr = results["pagerank"]
    for key, label in (("cold_device", "first call, GPU build"),
                       ("warm_device", "repeat call (cached build)")):
        run = pr.get(key)
        if run is None:
            continue
        speedup = (f"{pr['networkx_seconds'] / run['end_to_end_seconds']:.0f}x faster"
                   if "networkx_seconds" in pr else "")
        rows.append(f"| PageRank weblike tol 1e-6 ({run['iterations']} it), {label}: upload "
                    f"{run['upload_seconds'] * 1e3:.1f} + build {run['build_seconds'] * 1e3:.1f} + iterate "
                    f"{run['seconds'] * 1e3:.1f} + download {run['download_seconds'] * 1e3:.1f} ms "
                    f"| {run['end_to_end_seconds'] * 1e3:.1f} ms end to end "
                    f"| networkx {pr.get('networkx_seconds', float('nan')):.2f} s | {speedup} | >= 50x |")
    if "top100_identical_order" in pr:
        rows.append(f"| PageRank top-100 vs networkx | order {'identical' if pr['top100_identical_order'] else 'DIFFERS'}"
                    f", max abs diff {pr['max_abs_diff_vs_networkx']:.1e} | | | identical |")
    if "us_per_iteration" in pr:
        rows.append(f"| PageRank weblike per iteration (tol 1e-10, {pr['tol_1e10_iterations']} it; check every "
                    f"iteration: {pr['us_per_iteration_check_every_1']:.1f} us) "
                    f"| {pr['us_per_iteration']:.1f} us/it | SpMV ({pr['spmv_auto_kernel']}) {pr['spmv_auto_us']:.1f} us "
                    f"| {pr['iteration_over_spmv']:.2f}x | <= 3x |")
    for key, error in pr.get("errors", {}).items():
        rows.append(f"| PageRank {key} | FAILED: {error[:120]} | | | |")
    return "\n".join(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.environ.get("OUT", "bench-out"))
    parser.add_argument("--grid", type=int, default=2048, help="Poisson grid side (default 2048)")
    parser.add_argument("--maxiter", type=int, default=20000, help="spla CG iteration cap")
    parser.add_argument("--cupyx-maxiter", type=int, default=1000,
                        help="cupyx CG iteration cap (per-iteration timing only; keeps the run short)")
    parser.add_argument("--skip-networkx", action="store_true", help="Skip the (tens of seconds) networkx run")
    args = parser.parse_args(argv)
    cuda.require_cupy()

    started = time.perf_counter()
    bandwidth = bench.copy_bandwidth_gbps()
    results = {**bench.environment(), "copy_bandwidth_gbps": bandwidth, "cg": []}
    poisson = generators.poisson2d(args.grid)
    results["cg"].append(bench_cg(f"poisson2d {args.grid}^2", poisson, 1e-8, args.maxiter, args.cupyx_maxiter,
                                  bandwidth))
    del poisson
    W = generators.weblike()
    results["cg"].append(bench_cg("weblike Laplacian + I", weblike_spd(W), 1e-8, args.maxiter,
                                  args.cupyx_maxiter, bandwidth))
    try:
        results["pagerank"] = bench_pagerank(W, args.skip_networkx)
    except Exception as exc:  # still write the CG results
        results["pagerank"] = {"errors": {"bench_pagerank": repr(exc)}}
    results["script_seconds"] = time.perf_counter() - started
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "solvers.json").write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))
    print()
    print(_table(results))


if __name__ == "__main__":
    main()
