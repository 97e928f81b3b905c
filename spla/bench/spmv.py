"""The SpMV measurement protocol and the report behind ``spla spmv``.

One protocol for the CLI, the scripts and BENCHMARKS.md (:func:`compare`):

- the anchor is the lean cuSPARSE call (descriptors, buffer and output built
  once); both ``CSR_ALG1`` and the deterministic ``CSR_ALG2`` are timed and
  "cuSPARSE" is the faster of the two per matrix;
- spla runs under the same output policy: ``spla.spmv(A, x, out=y)`` into a
  preallocated y;
- two figures per kernel: the time of one call from Python in a loop of
  back-to-back calls (what a user pays; on small matrices mostly host cost) and
  the device time of the kernel alone (back-to-back calls queued behind a held
  stream, then released and timed between two events: no host gaps, and the
  same method for cuSPARSE, which CuPy cannot graph-capture);
- kernels are timed in round-robin rounds (lent machines drift by several
  percent between calls) and each result is checked against a float64 SciPy
  product (:mod:`spla.bench.check`) before it is timed.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from .. import device as _device
from ..csr import as_csr
from ..errors import SplaError
from ..io.values import nonfinite_counts
from ..planning.spmv import choose_kernel, describe_choice
from . import check, report, timing

ANCHORS = ("cusparse:1", "cusparse:2")
X_SEED = 12345


def per_call_seconds(cupy, fn, calls: int) -> float:
    """Wall time of one call in a loop of ``calls`` back-to-back calls (synchronised at both ends)."""
    stream = cupy.cuda.get_current_stream()
    stream.synchronize()
    began = time.perf_counter()
    for _ in range(calls):
        fn()
    stream.synchronize()
    return (time.perf_counter() - began) / calls


def device_seconds(cupy, fn, launches: int) -> float:
    """Device time of one call: ``launches`` calls queued behind a held stream, then released
    and timed between two events (host cost excluded; the same method for spla and cuSPARSE,
    whose calls CuPy cannot graph-capture). See :mod:`spla.backends.cuda.timing`."""
    from ..backends.cuda.timing import queued_device_seconds

    with cupy.cuda.Stream(non_blocking=True):
        return queued_device_seconds(fn, launches)


def _calls_for(seconds_once: float, budget_s: float, lo: int = 5, hi: int = 2000) -> int:
    return int(min(hi, max(lo, budget_s / max(seconds_once, 1e-7))))


def time_rounds(cupy, runs: dict, rounds: int, budget_s: float) -> tuple[dict, dict]:
    """Per-call and device microseconds of each call in ``runs`` ({name: call}), round-robin:
    ``rounds`` rounds, each timing every call once both ways within about ``budget_s`` (drift
    between lent machines and over a run lands on all of them alike). Returns ``(per_call,
    device)``, each {name: [one figure a round]}."""
    per_call: dict[str, list] = {n: [] for n in runs}
    device: dict[str, list] = {n: [] for n in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            once = device_seconds(cupy, run, 3)
            per_call[name].append(per_call_seconds(cupy, run, _calls_for(once + 5e-6, budget_s)) * 1e6)
            device[name].append(device_seconds(cupy, run, _calls_for(once, budget_s / 2, hi=1000)) * 1e6)
    return per_call, device


def compare(A, kernels, *, dtype="float32", rounds: int = 5, budget_s: float = 0.02, seed: int = X_SEED) -> dict:
    """Check, then time ``kernels`` and both cuSPARSE algorithms on A in round-robin rounds (GPU).

    Returns a dict with the matrix, the anchor (``cusparse:1`` or ``:2``, the
    faster by device time) and one row per kernel (``auto``'s row also says
    which kernel it ``runs``, fixed before any ``tune`` row tunes A): ``status`` ("ok", "wrong",
    "failed"), ``error`` (scaled), ``per_call_us`` and ``device_us`` (medians over
    rounds, with every round kept), ``speedup`` (anchor per-call time / the
    kernel's) and ``device_speedup`` (the same by device time).
    """
    from ..ops.spmv import bind, spmv

    cupy = _device.require_cupy()
    dtype = np.dtype(dtype)
    host = as_csr(A).to_host()
    A_run = host.astype(dtype).to_device()
    verify = check.SpmvCheck.for_matrix(host.astype(np.float64))
    x = cupy.asarray(np.asarray(verify.x).astype(dtype))
    out = cupy.empty(A_run.n_rows, dtype=dtype)
    names = list(ANCHORS) + [k for k in kernels if k not in ANCHORS]
    rows: dict[str, dict] = {}
    runs = {}
    for name in names:
        row = rows[name] = {"kernel": name}
        kernel = name
        if name == "auto":  # pin what auto runs now, so a later "tune" row cannot change the auto row
            try:
                bind(A_run, "auto")  # takes a tuned choice from the tuning cache, if any
                kernel = row["runs"] = choose_kernel(A_run)
            except Exception:  # noqa: BLE001  (the check below records the failure)
                pass

        def run(kernel=kernel):
            return spmv(A_run, x, kernel=kernel, out=out)

        out.fill(np.nan)  # poison: a kernel that skips a row fails the check
        if verify.record(row, lambda run=run: run().copy(), dtype, name):
            runs[name] = run
    per_call, device = time_rounds(cupy, runs, rounds, budget_s)
    for name in runs:
        rows[name].update(per_call_us=statistics.median(per_call[name]), device_us=statistics.median(device[name]),
                          per_call_rounds_us=per_call[name], device_rounds_us=device[name])
    ok_anchors = [a for a in ANCHORS if a in runs]
    if not ok_anchors:
        raise SplaError("cuSPARSE failed on this matrix; there is no anchor to compare with")
    anchor = min(ok_anchors, key=lambda a: rows[a]["device_us"])
    for row in rows.values():
        if "per_call_us" in row:
            row["speedup"] = rows[anchor]["per_call_us"] / row["per_call_us"]
            row["device_speedup"] = rows[anchor]["device_us"] / row["device_us"]
    nbytes = timing.spmv_bytes(host.n_rows, host.n_cols, host.nnz, dtype.itemsize, A_run.index_dtype.itemsize)
    return {"matrix": {"rows": host.n_rows, "cols": host.n_cols, "nnz": host.nnz}, "dtype": dtype.name,
            "index_dtype": A_run.index_dtype.name, "bytes": nbytes, "anchor": anchor, "rounds": rounds,
            "rows": list(rows.values())}


def spmv_report(A, *, device: str = "cpu", kernel: str = "auto", dtype="float32", repeat: int | None = None,
                seed: int = X_SEED, source: str | None = None) -> dict:
    """Measure ``y = A @ x`` for each kernel beside the anchor; the report as a dict.

    Parameters
    ----------
    A : CSRMatrix or anything :func:`spla.as_csr` accepts
    device : 'cpu' | 'gpu' | 'auto'
    kernel : a kernel name, 'auto' or 'all' (see :func:`spla.bench.report.kernel_names`)
    dtype : 'float32' | 'float64'
        Value type of the matrix and x; the reference is always float64.
    repeat : int, optional
        CPU: timed runs per kernel (default 20). GPU: rounds of the protocol
        of :func:`compare` (default 5).
    seed : int
        Seed of x (float32-representable values in [-1, 1), never zeros).

    Returns
    -------
    dict
        ``device``, ``device_name``, ``dtype``, ``index_dtype``, ``anchor``,
        ``matrix``, ``bytes``, ``flops``, ``tolerance``, ``copy_bandwidth_gbps``
        (GPU) and ``rows``: one dict per kernel with ``kernel``, ``ms`` (per call
        from Python), ``device_ms`` (GPU), ``gflops``, ``gbps``, ``error`` (scaled
        by |A||x|), ``ok``, ``speedup_vs_anchor``, or ``failed`` when it raised.
    """
    device = report.resolve_device(device)
    dtype = report.check_dtype(dtype)
    names = report.kernel_names(device, kernel)
    A = as_csr(A).to_host()
    A_run = A.astype(dtype)
    nbytes = timing.spmv_bytes(A.n_rows, A.n_cols, A.nnz, value_bytes=dtype.itemsize,
                               index_bytes=A_run.index_dtype.itemsize)
    flops = timing.spmv_flops(A.nnz)
    result = {"device": device, "device_name": report.device_name(device), "dtype": dtype.name,
              "index_dtype": A_run.index_dtype.name, "matrix": {"source": source, "rows": A.n_rows,
                                                                 "cols": A.n_cols, "nnz": A.nnz},
              "bytes": nbytes, "flops": flops, "x_seed": seed, "tolerance": check.TOLERANCE[dtype.name]}
    counts = nonfinite_counts(A.data)
    if counts["nan"] or counts["inf"]:
        result["note"] = (f"A holds {counts['nan']:,} NaN and {counts['inf']:,} Inf values: each kernel must put "
                          "NaN/Inf in exactly the rows SciPy does (else its error is inf), and its error is "
                          "measured over the other rows")
    if device == "cpu":
        return _cpu_report(A, A_run, names, dtype, report.check_repeat(device, repeat), result)
    measured = compare(A, [n for n in names if not n.startswith("cusparse")] + ["cusparse-cupy"] *
                       ("cusparse-cupy" in names), dtype=dtype, rounds=repeat or 5, seed=seed)
    result["auto"] = describe_choice(A_run.to_device())  # what auto ran and why (rule or measurement)
    result["copy_bandwidth_gbps"] = timing.copy_bandwidth_gbps()
    result["anchor"] = "cusparse"
    result["anchor_algorithm"] = measured["anchor"]
    result["repeat"] = measured["rounds"]
    rows = []
    for row in measured["rows"]:
        name = row["kernel"]
        if name in ANCHORS and name != measured["anchor"]:
            continue
        if name == measured["anchor"]:
            name = "cusparse"
        if row.get("status") != "ok":
            rows.append({"kernel": name, "failed": row.get("message") or f"wrong result ({row['error_vs_abs']:.3g})"})
            continue
        ms = row["per_call_us"] / 1e3
        rate = timing.throughput(row["device_us"] / 1e6, flops, nbytes)
        rows.append({"kernel": name, "ms": ms, "device_ms": row["device_us"] / 1e3, "gflops": rate["gflops"],
                     "gbps": rate["gbps"], "error": row["error_vs_abs"], "ok": True,
                     "speedup_vs_anchor": row["speedup"], "device_speedup_vs_anchor": row["device_speedup"],
                     "fraction_of_copy": rate["gbps"] / result["copy_bandwidth_gbps"]})
    rows.sort(key=lambda r: r["kernel"] != "cusparse")
    result["rows"] = rows
    return result


def _cpu_report(A, A_run, names, dtype, repeat, result) -> dict:
    from ..backends import cpu
    from ..ops.spmv import spmv

    x = np.random.default_rng(result["x_seed"]).uniform(-1.0, 1.0, A.n_cols).astype(dtype)
    A64 = A.astype(np.float64).to_scipy()
    reference = A64 @ x.astype(np.float64)
    result.update(anchor=names[0], repeat=repeat)
    if "auto" in names:
        result["auto_runs"] = cpu.spmv_runs(A_run)
    S = A_run.to_scipy()  # the anchor is SciPy's own call, without spla's front door

    def run(name):
        return S @ x if name == report.CPU_KERNEL else spmv(A_run, x, kernel=name)

    result["rows"] = report.measure_kernels(
        names, run, reference, device="cpu", repeat=repeat,
        flops=result["flops"], nbytes=result["bytes"], tolerance=result["tolerance"],
        error=lambda y: check.scaled_error(A64, x, reference, y))
    for row in result["rows"]:
        if "ms" in row:
            row["speedup_vs_anchor"] = result["rows"][0]["ms"] / row["ms"] if row["ms"] else float("nan")
    return result


def format_report(result: dict) -> str:
    """The report as an aligned text table."""
    gpu = result["device"] == "gpu"
    extra_head, extra_cells = ((["device ms", "dev. vs anchor"],
                                lambda row: [f"{row['device_ms']:.4f}", f"{row['device_speedup_vs_anchor']:.2f}x"])
                               if gpu else ((), None))
    lines = report.table_lines(result, extra_head, extra_cells)
    m = result["matrix"]
    how = (f"per call from Python (out= preallocated) and device time, median of {result['repeat']} "
           f"round-robin rounds; cusparse is the lean call, {result['anchor_algorithm']} (the faster CSR "
           "algorithm here)") if gpu else f"median of {result['repeat']} runs"
    if result.get("auto_runs"):
        lines.append("auto runs: " + result["auto_runs"])
    if result.get("note"):
        lines.append("note: " + result["note"])
    title = (f"SpMV y = A @ x on {result['device_name']}, {result['dtype']} values / {result['index_dtype']} "
             f"indices, {how}; bytes model {result['bytes'] / 1e6:.1f} MB, {m['nnz']:,} nnz; error = "
             f"||y - y64|| / || |A| |x| || (tolerance {result['tolerance']:g})")
    return title + "\n" + "\n".join(lines)
