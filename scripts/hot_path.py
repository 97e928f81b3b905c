#!/usr/bin/env python
"""Host cost of one SpMV call on a tiny matrix: spla.spmv's hot path vs a bare launch vs lean cuSPARSE.

On a matrix small enough that the kernel takes a few microseconds, a loop of
back-to-back calls is bound by what the host spends per call. Timed per
call (wall time of ``--calls`` calls between two synchronisations, median of
``--repeat`` rounds, each round timing every call in turn):

- ``bare RawKernel``: the CuPy ``RawKernel`` spla's scalar kernel is, called
  with prebuilt arguments (CuPy converts each argument on every call);
- ``bare packed``: the same kernel through CuPy's binding of ``cuLaunchKernel``
  with its arguments packed once (``spla.backends.cuda.runtime.PackedLaunch``,
  which spla's launchers use), rewriting only the x and y slots a call;
- ``spla.spmv(A, x, out=y)`` for each kernel, after a first call bound and
  cached the launcher on A (the hot path: a dict lookup, a few checks, four
  slot writes and one driver call);
- ``cusparse``: the lean ``cusparseSpMV`` call (descriptors, buffer and output
  built once), called directly;
- ``device``: the scalar kernel's device time (calls queued behind a held stream),
  so the host cost is per call minus nothing the GPU does.

The issue's target: the hot path at most 6 us a call (a bare RawKernel call was 5 us).

With ``--k K`` (K > 1) the same is done for ``spla.spmm(A, X, out=Y)`` with X of K columns: a bare
launch of the ``subwarp`` kernel (a RawKernel call, and packed), each SpMM kernel through
``spla.spmm``, the lean cuSPARSE SpMM (descriptors and buffer built once, called directly) and
``cupyx``'s ``A @ X``, each result checked against SciPy's first; their "over bare" is over the
bare RawKernel call of the SpMM kernel.

``--matrix SOURCE`` times another matrix (a file or a ``gen:`` spec) in place of the Poisson one, e.g. a
power law with a row past SpMM's segment cut (fused's and adaptive's runs then start with the long rows'
init); a kernel that refuses it (dia off a few diagonals) is left out and named.

    PYTHONPATH=. python scripts/hot_path.py                  # ~10 s on an H200
    PYTHONPATH=. python scripts/hot_path.py --json $OUT/hot_path.json
    PYTHONPATH=. python scripts/hot_path.py --k 8 --matrix gen:powerlaw:4096:4:3000
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

KERNELS = ("auto", "scalar", "warp", "vector", "adaptive2", "segmented", "staged", "blocked", "cusparse")
SPMM_KERNELS = ("auto", "dia", "subwarp", "regk", "warp", "fused", "adaptive", "cusparse")


def per_call_us(cupy, runs: dict, calls: int, repeat: int) -> dict:
    """Median per-call microseconds of each run, its loops interleaved in rounds (the host drifts)."""
    stream = cupy.cuda.get_current_stream()
    samples: dict = {label: [] for label in runs}
    for _ in range(repeat):
        for label, fn in runs.items():
            fn()
            stream.synchronize()
            began = time.perf_counter()
            for _ in range(calls):
                fn()
            stream.synchronize()
            samples[label].append((time.perf_counter() - began) / calls * 1e6)
    return {label: statistics.median(values) for label, values in samples.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side", type=int, default=32, help="2-D Laplacian of side N (default 32: 1024 rows)")
    parser.add_argument("--matrix", default=None, help="time this matrix instead (a file or a gen: spec)")
    parser.add_argument("--calls", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=11, help="rounds, every call timed once a round")
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    parser.add_argument("--k", type=int, default=0, help="also time SpMM with X of K columns (default: SpMV only)")
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.k == 1:
        parser.error("--k 1 is an SpMV; give K > 1 (or leave it out)")

    import cupy

    import spla
    from spla.backends.cuda import cusparse, runtime
    from spla.backends.cuda import spmv as cuda_spmv
    from spla.bench.spmv import device_seconds
    from spla.bench.timing import environment
    from spla.io import generators

    A = (generators.poisson2d(args.side).astype(args.dtype) if args.matrix is None
         else spla.load(args.matrix, dtype=args.dtype)).to_device()
    x = cupy.asarray(np.random.default_rng(0).uniform(-1, 1, A.n_cols).astype(args.dtype))
    y = cupy.empty(A.n_rows, dtype=A.dtype)
    one, zero = A.dtype.type(1), A.dtype.type(0)

    kernel = cuda_spmv.function(cupy, "scalar", A.dtype, A.index_dtype)
    grid, block = (max(1, -(-A.n_rows // cuda_spmv.ROW_BLOCK)),), (cuda_spmv.ROW_BLOCK,)
    bare_args = (np.int64(A.n_rows), A.indptr, A.indices, A.data, x, y, one, zero)
    packed = runtime.PackedLaunch(cupy, kernel, grid[0], block[0], bare_args)

    def bare_packed():
        packed.set_pointer(4, x)
        packed.set_pointer(5, y)
        packed.launch()

    anchor = cusparse.spmv_anchor(A)
    runs: dict[str, Callable[[], object]] = {"bare RawKernel launch": lambda: kernel(grid, block, bare_args),
                                             "bare packed launch": bare_packed,
                                             "cusparse (lean call, direct)": lambda: anchor(x, y, one, zero)}

    def hot(name: str) -> Callable[[], object]:
        return lambda: spla.spmv(A, x, out=y, kernel=name)

    for name in KERNELS:
        runs[f"spla.spmv(A, x, out=y, kernel={name!r})"] = hot(name)
    results = checked(runs, y, A.to_host().to_scipy() @ x.get())
    spmm_labels: set = set()
    if args.k > 1:
        spmm_runs, spmm_results = spmm_calls(cupy, spla, A, args.k)
        runs.update(spmm_runs)
        results.update(spmm_results)
        spmm_labels = set(spmm_runs)
    for label in [label for label, r in results.items() if "refused" in r]:
        print(f"left out: {label}: {results[label]['refused']}")
        del runs[label], results[label]
    wrong = [label for label, r in results.items() if not r["max_rel_error"] <= 1e-5]
    if wrong:
        print(f"wrong results, nothing timed: {wrong}", file=sys.stderr)
        return 1
    for label, us in per_call_us(cupy, runs, args.calls, args.repeat).items():
        results[label]["per_call_us"] = us
    device_us = device_seconds(cupy, runs["bare RawKernel launch"], 1000) * 1e6
    bare = results["bare RawKernel launch"]["per_call_us"]
    print(f"{A.n_rows} x {A.n_cols}, {A.nnz} nnz, {args.dtype}; scalar kernel device time {device_us:.2f} us; "
          f"median of {args.repeat} rounds of {args.calls} calls")
    spmm_device_us = None
    if args.k > 1:
        spmm_device_us = device_seconds(cupy, runs[SPMM_BARE], 1000) * 1e6
        print(f"SpMM, X of {args.k} columns: subwarp kernel device time {spmm_device_us:.2f} us")
    print(f"{'call':<48} {'us/call':>8} {'over bare':>10}")
    for label, r in results.items():
        r["over_bare_us"] = r["per_call_us"] - (results[SPMM_BARE]["per_call_us"] if label in spmm_labels else bare)
        print(f"{label:<48} {r['per_call_us']:8.2f} {r['over_bare_us']:+10.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": environment(), "matrix": {"source": args.matrix or f"poisson2d:{args.side}",
                                                                 "rows": A.n_rows, "nnz": A.nnz, "dtype": args.dtype},
                       "device_us": device_us, "k": args.k, "spmm_device_us": spmm_device_us, "calls": args.calls,
                       "repeat": args.repeat, "results": results}, f, indent=1)
    return 0


def checked(runs: dict, out, want) -> dict:
    """Each run's largest error against ``want`` (writing ``out``), before anything is timed; a run
    whose kernel refuses the matrix gets the reason instead."""
    from spla.errors import KernelError

    results: dict = {}
    for label, fn in runs.items():
        out.fill(np.nan)
        try:
            fn()
        except KernelError as error:
            results[label] = {"refused": str(error)}
            continue
        got = out.get()
        results[label] = {"max_rel_error": float(np.abs(got - want).max() / max(np.abs(want).max(), 1e-30))}
    return results


SPMM_BARE = "bare RawKernel launch (SpMM subwarp)"


def spmm_calls(cupy, spla, A, k: int) -> tuple[dict, dict]:
    """The SpMM runs (labels to calls writing one (rows, k) block) and their checked errors."""
    from spla.backends.cuda import cusparse, runtime, spmm_launch
    from spla.planning import spmm as planning

    X = cupy.asarray(np.random.default_rng(1).uniform(-1, 1, (A.n_cols, k)).astype(A.dtype))
    Y = cupy.empty((A.n_rows, k), dtype=A.dtype)
    one, zero = A.dtype.type(1), A.dtype.type(0)
    x = spmm_launch.as_operand(X, allow_colmajor=False)
    vec = spmm_launch.warp_vector(A, x, k, Y, None)
    cl, j, tiles = planning.warp_shape(k, vec)
    value, index = spmm_launch.types(A)
    kernel = spmm_launch.SUBWARP_SOURCES[(value, index)].function(spmm_launch.subwarp_name(value, index, vec, cl, j))
    grid = (spmm_launch.grid_1d(A.n_rows * cl, planning.BLOCK), tiles)
    bare_args = (A.indptr, A.indices, A.data, X, np.int64(k), np.int64(k), A.indptr, np.int32(0), np.int64(A.n_rows),
                 one, zero, Y, np.int64(0), np.int32(0), Y, np.int64(k))
    # one grid dimension where there is one column tile (a packed launch took only x before session 58)
    packed = runtime.PackedLaunch(cupy, kernel, grid[0] if tiles == 1 else grid, planning.BLOCK, bare_args)
    anchor = cusparse.spmm_anchor(A, X, Y)
    cupyx_A = A.to_cupyx()

    def cupyx_call():
        Y[...] = cupyx_A @ X

    runs: dict[str, Callable[[], object]] = {SPMM_BARE: lambda: kernel(grid, (planning.BLOCK,), bare_args),
                                             "bare packed launch (SpMM subwarp)": packed.launch,
                                             "cusparse SpMM (lean call, direct)": lambda: anchor(X, Y, one, zero),
                                             "cupyx A @ X (into Y)": cupyx_call}
    for name in SPMM_KERNELS:
        runs[f"spla.spmm(A, X, out=Y, kernel={name!r})"] = (lambda name=name: spla.spmm(A, X, out=Y, kernel=name))
    return runs, checked(runs, Y, A.to_host().to_scipy() @ X.get())


if __name__ == "__main__":
    sys.exit(main())
