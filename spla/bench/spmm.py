"""The SpMM report: throughput of Y = A @ X for a dense block X of k columns.

Mirrors the SpMV report (:mod:`spla.report`): each kernel runs on the same
random X (fixed seed, values in [-1, 1)), is checked against a float64 SciPy
product by the scaled error ``||Y - ref|| / || |A| |X| ||`` (per dtype, see
:mod:`spla.bench.scaled`) and timed (median of repeats); rows give ms,
GFLOP/s (2*nnz*k/t), effective GB/s (A once, X and Y once), the speed-up over
the anchor measured in the same run (SciPy on the CPU, cuSPARSE SpMM on the
GPU) and over k separate SpMVs. Used by ``spla spmm`` and scripts/bench_spmm.py;
benchmark variants (:mod:`spla.bench.variants`) run through the same hooks.
"""

from __future__ import annotations

import numpy as np

from .. import bench
from ..device import require_cupy
from ..errors import InputError, KernelError
from ..planning import spmm as planning
from . import report
from .check import TOLERANCE as SCALED_TOLERANCE
from .check import scaled_error
from .variants import SPMM_VARIANTS, spmm_kernel, spmm_names

CPU_KERNEL = report.CPU_KERNEL  # the CPU anchor, SciPy's kernel
GPU_ANCHOR = "cusparse"
X_SEED = 12345
MAX_K = 256


def gpu_kernels() -> list:
    """Every name ``--kernel`` accepts on the GPU: the public kernels, then the benchmark variants."""
    return spmm_names()


def kernel_names(device: str, kernel: str) -> list:
    """The kernels a report runs for ``--kernel``, anchor first ("all": the public kernels)."""
    if device == "cpu":
        return report.cpu_kernel_names(kernel)
    if kernel == "all":
        chosen = list(planning.KERNELS)
    elif kernel == "tune":
        chosen = [kernel]
    else:
        try:
            spmm_kernel(kernel)
        except KernelError:
            raise KernelError(f"unknown SpMM kernel {kernel!r}; choose one of {', '.join(gpu_kernels())}, "
                              "fused:N, tune or all") from None
        chosen = [kernel]
    return [GPU_ANCHOR] + [name for name in chosen if name != GPU_ANCHOR]


def run_kernel(A_dev, X, name: str, Y=None, *, alpha=1.0, beta=0.0, dense_gemm: str | None = None):
    """``alpha * A_dev @ X + beta * Y`` on the GPU with a public kernel or a variant (the backend's plan hook).

    ``dense_gemm`` forces the GEMM engine of the dense panels (a GEMM kernel
    name or ``"auto"``) for ``adaptive``/``fused`` and their variants.
    """
    from ..backends.cuda import spmm as cuda_spmm

    kernel, options = spmm_kernel(name)
    if dense_gemm is not None:
        options["dense_gemm"] = dense_gemm
    return cuda_spmm.spmm(A_dev, X, Y, alpha=alpha, beta=beta, kernel=kernel, **options)


def plan_for(A_dev, k: int, name: str = "auto", **options) -> planning.SpmmPlan:
    """The plan a kernel or variant name runs for device matrix A at k (with the device's SM count)."""
    from ..backends.cuda import spmm as cuda_spmm

    kernel, variant = spmm_kernel(name)
    return cuda_spmm.plan(A_dev, k, kernel, **{**variant, **options})


def adaptive_summary(A_dev, k: int) -> list:
    """What ``adaptive`` (and ``fused``, where it does not run adaptive) does with this matrix at this k."""
    lines = plan_for(A_dev, k, "adaptive").summary()
    fused = plan_for(A_dev, k, "fused")
    if fused.kernel == "fused":
        lines += fused.summary()
    return lines


def spmm_report(A, *, k: int = 8, device: str = "cpu", kernel: str = "auto", dtype="float32",
                order: str = "C", repeat: int | None = None, seed: int = X_SEED, source: str | None = None) -> dict:
    """Measure Y = A @ X for each kernel; return the report as a dict.

    Parameters
    ----------
    A : CSRMatrix or anything :func:`spla.as_csr` accepts
    k : int
        Columns of X (1..256).
    device, kernel, dtype, repeat, seed, source
        As :func:`spla.report.spmv_report`; ``kernel`` may also name a
        benchmark variant.
    order : 'C' | 'F'
        Memory order of X.

    Returns
    -------
    dict
        The keys of ``spmv_report`` plus ``k``, ``order``, ``spmv_ms`` (one
        ``auto`` SpMV) and per row ``error`` (the scaled error, the judge) and
        ``speedup_vs_spmvs`` (k * spmv_ms / ms).

    See Also
    --------
    scipy.sparse.csr_matrix.dot, cupyx.scipy.sparse.csr_matrix.dot
    """
    from .. import spmv  # the public name survives the SpMV move
    from ..csr import as_csr
    from ..ops.spmm import spmm

    device = report.resolve_device(device)
    dtype = report.check_dtype(dtype)
    if not 1 <= int(k) <= MAX_K:
        raise InputError(f"k must be in 1..{MAX_K}, got {k}")
    if order not in ("C", "F"):
        raise InputError(f"order must be C or F, got {order!r}")
    k = int(k)
    names = kernel_names(device, kernel)
    repeat = report.check_repeat(device, repeat)
    tolerance = SCALED_TOLERANCE[dtype.name]

    A = as_csr(A).to_host()
    A_run = A.astype(dtype)
    X = np.random.default_rng(seed).uniform(-1.0, 1.0, (A.n_cols, k)).astype(dtype)
    X = np.asfortranarray(X) if order == "F" else np.ascontiguousarray(X)
    A64 = A.astype(np.float64)
    reference = A64.to_scipy() @ X.astype(np.float64)
    nbytes = bench.spmv_bytes(A.n_rows, A.n_cols, A.nnz, value_bytes=dtype.itemsize,
                              index_bytes=A_run.index_dtype.itemsize, k=k)
    flops = bench.spmv_flops(A.nnz, k)
    out = {
        "device": device, "device_name": report.device_name(device), "dtype": dtype.name,
        "index_dtype": A_run.index_dtype.name, "k": k, "order": order, "repeat": repeat, "anchor": names[0],
        "matrix": {"source": source, "rows": A.n_rows, "cols": A.n_cols, "nnz": A.nnz},
        "bytes": nbytes, "flops": flops, "x_seed": seed, "tolerance": tolerance,
        "error_model": "||Y - ref|| / || |A| |X| ||",
    }
    if device == "gpu":
        cupy = require_cupy()
        A_side, X_side = A_run.to_device(), cupy.asarray(X, order=order)
        out["copy_bandwidth_gbps"] = bench.copy_bandwidth_gbps()
        column = cupy.ascontiguousarray(X_side[:, 0])
    else:
        A_side, X_side = A_run, X
        column = np.ascontiguousarray(X[:, 0])
    out["spmv_ms"] = bench.time_on(device, lambda: spmv(A_side, column, kernel="auto"), repeat=repeat).ms

    S = A_side.to_scipy() if device == "cpu" else None  # the CPU anchor is SciPy's own call

    def run(name):
        if device == "cpu":
            return S @ X_side if name == CPU_KERNEL else spmm(A_side, X_side, kernel=name)
        if name in SPMM_VARIANTS:
            return run_kernel(A_side, X_side, name)
        return spmm(A_side, X_side, kernel=name)  # a public kernel, fused:N or tune

    rows = report.measure_kernels(names, run, reference, device=device, repeat=repeat, flops=flops, nbytes=nbytes,
                                  tolerance=tolerance, error=lambda Y: scaled_error(A64, X, reference, Y))
    anchor_ms = rows[0]["ms"]
    for row in rows:
        if "ms" in row:
            row["speedup_vs_anchor"] = anchor_ms / row["ms"] if row["ms"] else float("nan")
            row["speedup_vs_spmvs"] = k * out["spmv_ms"] / row["ms"] if row["ms"] else float("nan")
            if device == "gpu":
                row["fraction_of_copy"] = row["gbps"] / out["copy_bandwidth_gbps"]
    out["rows"] = rows
    if device == "gpu":
        out["plan"] = adaptive_summary(A_side, k)
        out["anchor_algorithm"], out["anchor_timings_us"] = anchor_algorithm(A_side, k)
        out["auto"] = planning.describe_choice(A_side, k)
    return out


def format_spmm_report(r: dict) -> str:
    """The report as an aligned text table (the layout of ``spla spmv``'s, plus "vs k SpMVs")."""
    lines = report.table_lines(r, extra_head=[f"vs {r['k']} SpMVs"],
                               extra_cells=lambda row: [f"{row['speedup_vs_spmvs']:.2f}x"])
    m = r["matrix"]
    title = (f"SpMM Y = A @ X (k={r['k']}, {r['order']}-order X) on {r['device_name']}, {r['dtype']} values / "
             f"{r['index_dtype']} indices, median of {r['repeat']} runs; bytes model {r['bytes'] / 1e6:.1f} MB, "
             f"{m['nnz']:,} nnz; one auto SpMV {r['spmv_ms']:.4f} ms; checked against SciPy float64 by "
             f"{r['error_model']} (tolerance {r['tolerance']:g})"
             + (f"; cusparse is SpMM's {r['anchor_algorithm']}, the fastest of its CSR algorithms here"
                if r.get("anchor_algorithm") else ""))
    text = title + "\n" + "\n".join(lines)
    if r.get("plan"):
        text += "\nadaptive schedule:\n" + "\n".join("  " + line for line in r["plan"])
    return text


# ---------------------------------------------------------------- hooks for scripts/bench_spmm.py
SMALL_K_MAX = planning.REGK_MAX_K  # regk (and fused's k <= 16 kernel) hold k columns in registers up to this k
to_json = report.to_json


def anchor_algorithm(A_dev, k: int) -> tuple[str | None, dict]:
    """The cuSPARSE CSR algorithm the ``cusparse`` anchor kept for A at k, and every candidate's device
    microseconds a call as it timed them ((None, {}) before its first run)."""
    from ..backends.cuda.cusparse import kept_spmm_anchor

    anchor = kept_spmm_anchor(A_dev, k)
    if anchor is None:
        return None, {}
    return anchor.name, {alg: seconds * 1e6 for alg, seconds in anchor.timings.items()}


def auto_choice(A_dev, k: int) -> str:
    """The kernel ``auto`` runs for A at k."""
    return planning.choose_kernel(A_dev, k)


def spmv_auto_choice(A_dev) -> str:
    """The kernel the SpMV ``auto`` rule runs for A (the SpMV planner's)."""
    from ..planning.spmv import choose_kernel

    return choose_kernel(A_dev)


def split_k_engines() -> list:
    """GEMM kernels for skinny, long-K products (the dense panels' candidates besides cuBLAS and dbuf)."""
    from ..planning.gemm import ALL_KERNELS

    return [name for name in ALL_KERNELS if "split" in name]


def load_matrix(spec: str, dtype=np.float64):
    """A generator spec or file as a host CSRMatrix of ``dtype``."""
    from ..io import generators

    if spec.startswith("gen:"):
        return generators.from_spec(spec, dtype=dtype)
    from .. import io

    return io.load(spec).astype(dtype)
